//! Reading the sidecar's newline-delimited frames as bytes: the size limit, the `id` of a
//! frame that did not parse (so the call it answers can fail at once), and skipping the
//! rest of an oversized line. Used by the reader task in `sidecar`.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Frames above this size are refused (large results arrive as `output` chunks).
pub(crate) const MAX_FRAME: u64 = 64 * 1024 * 1024;

/// The numeric `id` of a frame that did not parse, read from its text (the host writes
/// `{"jsonrpc":"2.0","id":<n>,…}`), so the call it answers can fail at once.
pub(crate) fn frame_id(line: &[u8]) -> Option<u64> {
    let head = &line[..line.len().min(256)];
    let key = b"\"id\":";
    let at = head.windows(key.len()).position(|w| w == key)? + key.len();
    let digits: Vec<u8> = head[at..]
        .iter()
        .skip_while(|b| **b == b' ')
        .take_while(|b| b.is_ascii_digit())
        .copied()
        .collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

pub(crate) async fn skip_line<R: AsyncBufRead + Unpin>(reader: &mut R) {
    loop {
        let buf = match reader.fill_buf().await {
            Ok([]) | Err(_) => return,
            Ok(b) => b,
        };
        match buf.iter().position(|b| *b == b'\n') {
            Some(i) => {
                reader.consume(i + 1);
                return;
            }
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_of_an_unparsable_frame_is_read_from_its_text() {
        assert_eq!(
            frame_id(br#"{"jsonrpc":"2.0","id":42,"result":{"output":"\ud800 x"}}"#),
            Some(42)
        );
        assert_eq!(
            frame_id(br#"{"jsonrpc":"2.0","id": 7,"error":{}}"#),
            Some(7)
        );
        assert_eq!(
            frame_id(br#"{"jsonrpc":"2.0","id":"js-3","method":"ctx.ask"}"#),
            None
        );
        assert_eq!(frame_id(b"not json at all"), None);
    }

    #[tokio::test]
    async fn skipping_an_oversized_line_stops_after_its_newline() {
        let mut input: &[u8] = b"aaaaaaaaaaaa\nnext\n";
        skip_line(&mut input).await;
        let mut rest = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut input, &mut rest)
            .await
            .unwrap();
        assert_eq!(rest, "next\n");
    }
}
