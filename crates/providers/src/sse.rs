//! Incremental Server-Sent Events parsing (the subset model APIs use: `event:` and `data:`
//! fields, comments, blank-line dispatch). Bytes arrive in arbitrary chunks; a line split
//! across chunks (even inside a UTF-8 sequence) is reassembled before it is decoded.

/// One dispatched event: its `event:` name (empty when absent) and its joined `data:` lines.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SseEvent {
    pub event: String,
    pub data: String,
}

#[derive(Debug, Default)]
pub(crate) struct SseParser {
    buf: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// Feeds a chunk; returns the events it completed.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.buf.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(pos) = self.buf[start..].iter().position(|&b| b == b'\n') {
            let end = start + pos;
            let mut line = &self.buf[start..end];
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            let line = String::from_utf8_lossy(line).into_owned();
            if let Some(event) = self.line(&line) {
                events.push(event);
            }
            start = end + 1;
        }
        self.buf.drain(..start);
        events
    }

    /// The stream ended: dispatches a last event that had no trailing blank line.
    pub fn finish(&mut self) -> Option<SseEvent> {
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            let line = String::from_utf8_lossy(&rest)
                .trim_end_matches('\r')
                .to_string();
            self.line(&line);
        }
        self.dispatch()
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = std::mem::take(&mut self.event);
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_split_anywhere_are_reassembled() {
        let text = "event: a\ndata: {\"x\":\"é\"}\n\n: comment\r\ndata: one\r\ndata: two\r\n\r\ndata:[DONE]\n\n";
        let bytes = text.as_bytes();
        for split in 0..bytes.len() {
            let mut p = SseParser::default();
            let mut got = p.push(&bytes[..split]);
            got.extend(p.push(&bytes[split..]));
            assert_eq!(
                got,
                vec![
                    ev("a", "{\"x\":\"é\"}"),
                    ev("", "one\ntwo"),
                    ev("", "[DONE]")
                ],
                "split at {split}"
            );
            assert_eq!(p.finish(), None);
        }
    }

    #[test]
    fn a_final_event_without_blank_line_is_flushed_at_the_end() {
        let mut p = SseParser::default();
        assert!(p.push(b"event: e\ndata: x").is_empty());
        assert_eq!(p.finish(), Some(ev("e", "x")));
        // An event name without data dispatches nothing.
        assert!(p.push(b"event: lonely\n\n").is_empty());
    }
}
