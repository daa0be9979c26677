//! Where a running command's output goes. Every chunk read from the process is streamed
//! straight into the call's truncating sink (`ctx.write_output`, which keeps the tail and
//! spills the rest to a file); this module only keeps a small tail of its own (at most
//! `TAIL_BYTES`) to show the last lines in the call's live metadata, sent at most every
//! `LIVE_INTERVAL`. Memory stays bounded however much the command prints.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use podcode_tools::ToolContext;
use serde_json::json;

/// How much output the live view remembers.
pub const TAIL_BYTES: usize = 4096;
/// How many lines of it the live view shows.
pub const TAIL_LINES: usize = 30;
/// The shortest gap between two live metadata updates.
pub const LIVE_INTERVAL: Duration = Duration::from_millis(100);

pub struct LiveOutput {
    ctx: ToolContext,
    title: String,
    description: Option<String>,
    tail: VecDeque<u8>,
    total: u64,
    dirty: bool,
    last_sent: Option<Instant>,
}

impl LiveOutput {
    pub fn new(ctx: ToolContext, title: String, description: Option<String>) -> Self {
        Self {
            ctx,
            title,
            description,
            tail: VecDeque::with_capacity(TAIL_BYTES),
            total: 0,
            dirty: false,
            last_sent: None,
        }
    }

    /// Bytes of output seen so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The last few KB of output, as text (what denial detection reads).
    pub fn tail_text(&self) -> String {
        let (head, tail) = self.tail.as_slices();
        String::from_utf8_lossy(&[head, tail].concat()).into_owned()
    }

    /// Streams a chunk to the sink and the live view.
    pub fn push(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        self.ctx.write_output(data);
        self.total += data.len() as u64;
        push_tail(&mut self.tail, data);
        self.dirty = true;
        self.send_if_due();
    }

    /// Sends the live view if something changed and the last update is old enough.
    pub fn send_if_due(&mut self) {
        if self.dirty && self.last_sent.is_none_or(|t| t.elapsed() >= LIVE_INTERVAL) {
            self.send();
        }
    }

    /// The last lines of output, as the live view shows them.
    pub fn preview(&self) -> String {
        let (head, tail) = self.tail.as_slices();
        last_lines(&[head, tail].concat(), TAIL_LINES)
    }

    /// Sends the live view now (the first update, and the last one).
    pub fn send(&mut self) {
        self.dirty = false;
        self.last_sent = Some(Instant::now());
        let metadata = json!({
            "output": self.preview(),
            "description": self.description,
        });
        self.ctx.metadata(Some(self.title.clone()), Some(metadata));
    }
}

/// Appends `data` to `tail`, keeping only the last `TAIL_BYTES` bytes.
fn push_tail(tail: &mut VecDeque<u8>, data: &[u8]) {
    let data = &data[data.len().saturating_sub(TAIL_BYTES)..];
    let excess = (tail.len() + data.len()).saturating_sub(TAIL_BYTES);
    tail.drain(..excess.min(tail.len()));
    tail.extend(data);
}

/// The last `n` lines of `bytes` as text, starting at a character boundary.
fn last_lines(bytes: &[u8], n: usize) -> String {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let mut start = 0;
    let mut seen = 0;
    for (i, b) in body.iter().enumerate().rev() {
        if *b == b'\n' {
            seen += 1;
            if seen == n {
                start = i + 1;
                break;
            }
        }
    }
    while start < body.len() && (body[start] & 0xC0) == 0x80 {
        start += 1;
    }
    String::from_utf8_lossy(&body[start..]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_stays_bounded() {
        let mut tail = VecDeque::new();
        for i in 0..1000 {
            push_tail(&mut tail, format!("line {i}\n").as_bytes());
            assert!(tail.len() <= TAIL_BYTES);
        }
        push_tail(&mut tail, &vec![b'x'; 3 * TAIL_BYTES]);
        assert_eq!(tail.len(), TAIL_BYTES);
        assert!(tail.iter().all(|b| *b == b'x'));
    }

    #[test]
    fn last_lines_keeps_the_end_and_whole_characters() {
        let text: String = (1..=50).map(|i| format!("line {i}\n")).collect();
        let shown = last_lines(text.as_bytes(), 3);
        assert_eq!(shown, "line 48\nline 49\nline 50");
        let cut = &"ééé".as_bytes()[1..];
        assert_eq!(last_lines(cut, 30), "éé");
        assert_eq!(last_lines(b"", 30), "");
    }
}
