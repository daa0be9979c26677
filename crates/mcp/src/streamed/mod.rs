//! Large `tools/call` results from a stdio MCP server, streamed to disk instead of held whole.
//!
//! rmcp parses one JSON-RPC message at a time from a whole line, so a 200 MB text result
//! would be read, parsed and copied whole. `capped::CappedReader` hands every line longer
//! than [`STREAM_AT`] to a [`Streamer`] instead: a small incremental JSON scanner that copies
//! the message to a "skeleton" byte for byte, except for each string at
//! `result.content[i].text`. Those it unescapes into one temporary file as they arrive and
//! replaces in the skeleton by a marker (`\u0001podcode-mcp-streamed:<token>:<n>`) whose
//! token is random per message. The skeleton (small: the envelope and any non-text content)
//! goes to rmcp as the message; the file's ranges wait in [`Spills`] under the token.
//!
//! `McpTool` hands the result to [`deliver`], which recognises the markers, takes the entry
//! (a server cannot forge one: it would need the token) and streams each text from the file
//! into the call's output sink, the same sink bash and plugin outputs go through, so the
//! model sees the truncated head or tail with the spill note and `read` of the spill file
//! gives everything. Anything else in a long message (an image's data, an error's message,
//! `structuredContent`) stays in the skeleton, which is capped at `max_message_bytes`: over
//! it, the call fails with the size, as before.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use podcode_protocol::ToolResult;
use podcode_tools::{ToolContext, ToolError};
use serde_json::{Value, json};

mod scan;
pub use scan::{Finished, Streamer};

/// Lines longer than this are stream-parsed instead of handed to rmcp whole.
pub const STREAM_AT: usize = 1024 * 1024;
/// The marker as the text reads after JSON decoding, and as it is written in the skeleton.
const MARKER: &str = "\u{1}podcode-mcp-streamed:";
const MARKER_JSON: &str = "\\u0001podcode-mcp-streamed:";
/// A streamed result nobody collected (its call timed out or was aborted) is removed after this.
const STALE: Duration = Duration::from_secs(3600);
const COPY_CHUNK: usize = 256 * 1024;

/// The text a call fails with when a streamed result could not be written to disk.
pub fn spill_failed_text(server: &str, why: &str) -> String {
    format!(
        "MCP server `{server}` answered with a large result that could not be saved to a temporary file ({why}), so it was dropped. Free some disk space or ask for less."
    )
}

/// The text a call fails with when the server flagged a streamed (large) result `isError`.
pub fn streamed_error_text(server: &str) -> String {
    format!("MCP server `{server}` reported an error; its message is the output below")
}

/// Streamed texts waiting for their call, by token. Files still here when it is dropped
/// (the server is gone) are removed.
#[derive(Default)]
pub struct Spills {
    entries: Mutex<HashMap<u64, Spilled>>,
}

struct Spilled {
    path: PathBuf,
    /// Each streamed text's offset and length in the file, by marker number.
    ranges: Vec<(u64, u64)>,
    at: Instant,
}

impl Spills {
    fn insert(&self, token: u64, path: PathBuf, ranges: Vec<(u64, u64)>) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|_, s| {
                let keep = s.at.elapsed() < STALE;
                if !keep {
                    let _ = std::fs::remove_file(&s.path);
                }
                keep
            });
            entries.insert(
                token,
                Spilled {
                    path,
                    ranges,
                    at: Instant::now(),
                },
            );
        }
    }

    fn take(&self, token: u64) -> Option<Spilled> {
        self.entries.lock().ok()?.remove(&token)
    }
}

impl Drop for Spills {
    fn drop(&mut self) {
        if let Ok(entries) = self.entries.get_mut() {
            for s in entries.values() {
                let _ = std::fs::remove_file(&s.path);
            }
        }
    }
}

/// The token and number of a marker text.
fn marker_of(item: &Value) -> Option<(u64, usize)> {
    let text = item.get("text")?.as_str()?.strip_prefix(MARKER)?;
    let (token, n) = text.split_once(':')?;
    Some((u64::from_str_radix(token, 16).ok()?, n.parse().ok()?))
}

/// For a result whose texts were streamed: writes its content, in order, into the call's
/// output sink (texts from the file, other items as `content::convert` renders them, joined
/// by blank lines) and returns the result around it. `None` for any other result.
pub fn deliver(
    result: &Value,
    spills: &Spills,
    server: &str,
    ctx: &ToolContext,
) -> Option<Result<ToolResult, ToolError>> {
    let items = result.get("content")?.as_array()?;
    let token = items.iter().find_map(marker_of)?.0;
    let spilled = spills.take(token)?;
    let copied = copy_out(items, token, &spilled, ctx);
    let _ = std::fs::remove_file(&spilled.path);
    let attachments = match copied {
        Ok(a) => a,
        Err(e) => {
            return Some(Err(ToolError::failed(format!(
                "could not read the large result of MCP server `{server}` back from {}: {e}",
                spilled.path.display()
            ))));
        }
    };
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return Some(Err(ToolError::failed(streamed_error_text(server))));
    }
    Some(Ok(ToolResult {
        attachments,
        ..ToolResult::default()
    }))
}

fn copy_out(
    items: &[Value],
    token: u64,
    spilled: &Spilled,
    ctx: &ToolContext,
) -> std::io::Result<Vec<podcode_protocol::Attachment>> {
    let mut file = File::open(&spilled.path)?;
    let mut buf = vec![0u8; COPY_CHUNK];
    let mut attachments = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            ctx.write_output(b"\n\n");
        }
        let range = marker_of(item)
            .filter(|(t, _)| *t == token)
            .and_then(|(_, n)| spilled.ranges.get(n));
        let Some(&(offset, len)) = range else {
            if let Ok(r) = crate::content::convert(&json!({ "content": [item] })) {
                ctx.write_output(r.output.as_bytes());
                attachments.extend(r.attachments);
            }
            continue;
        };
        file.seek(SeekFrom::Start(offset))?;
        let mut left = len;
        while left > 0 {
            let want = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
            file.read_exact(&mut buf[..want])?;
            ctx.write_output(&buf[..want]);
            left -= want as u64;
        }
    }
    Ok(attachments)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(line: &str, limit: u64, chunk: usize, spills: &Spills) -> Finished {
        let mut s = Streamer::new(limit);
        for piece in line.as_bytes().chunks(chunk) {
            s.feed(piece);
        }
        s.finish(spills)
    }

    /// The skeleton, and each streamed text read back from the file.
    fn texts(line: &str, chunk: usize) -> (Value, Vec<String>) {
        let spills = Spills::default();
        let Finished::Message(skeleton) = stream(line, 1 << 20, chunk, &spills) else {
            panic!("not a message");
        };
        let skeleton: Value = serde_json::from_slice(&skeleton).unwrap();
        let items = skeleton["result"]["content"].as_array().unwrap();
        let (token, _) = items.iter().find_map(marker_of).unwrap();
        let spilled = spills.take(token).unwrap();
        let all = std::fs::read(&spilled.path).unwrap();
        std::fs::remove_file(&spilled.path).unwrap();
        let out = spilled
            .ranges
            .iter()
            .map(|&(o, l)| String::from_utf8(all[o as usize..(o + l) as usize].to_vec()).unwrap())
            .collect();
        (skeleton, out)
    }

    #[test]
    fn result_texts_are_unescaped_into_the_file_and_the_rest_is_kept() {
        let text = "line \"one\"\n\ttab \\ slash / é ✓ 😀 \u{1}";
        let line = json!({
            "jsonrpc": "2.0",
            "id": 4,
            "result": {"content": [
                {"type": "text", "text": text},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "text", "text": "two"}
            ], "isError": false}
        })
        .to_string();
        // Escapes as other encoders write them: `\/`, `\u00e9`, a surrogate pair.
        let line = line
            .replace('/', "\\/")
            .replace('é', "\\u00e9")
            .replace('😀', "\\ud83d\\ude00");
        for chunk in [1, 2, 7, 4096] {
            let (skeleton, texts) = texts(&line, chunk);
            assert_eq!(texts, [text, "two"], "chunk {chunk}");
            assert_eq!(skeleton["id"], 4);
            assert_eq!(skeleton["result"]["content"][1]["data"], "AAAA");
            assert_eq!(skeleton["result"]["isError"], false);
            let first = skeleton["result"]["content"][0]["text"].as_str().unwrap();
            assert!(
                first.starts_with(MARKER) && first.ends_with(":0"),
                "{first}"
            );
        }
    }

    #[test]
    fn only_result_content_texts_are_streamed() {
        let spills = Spills::default();
        for line in [
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"text": "x"}]}}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"contents": [{"text": "x"}]}}),
            json!({"jsonrpc": "2.0", "id": 1, "params": {"content": [{"text": "x"}]}}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"resource": {"text": "x"}}]}}),
        ] {
            let line = line.to_string();
            assert_eq!(
                stream(&line, 1000, 3, &spills),
                Finished::Message(line.into_bytes())
            );
        }
        assert!(spills.entries.lock().unwrap().is_empty());
    }

    #[test]
    fn over_the_limit_without_its_texts_is_oversized_with_the_id_wherever_it_is() {
        let spills = Spills::default();
        let data = "A".repeat(5000);
        for (line, id) in [
            (
                json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "image", "data": data}]}}).to_string(),
                json!(7),
            ),
            (
                format!(r#"{{"result":{{"t":"{data}","id":9}},"id" : "a\"b","jsonrpc":"2.0"}}"#),
                json!("a\"b"),
            ),
            (
                format!(r#"{{"jsonrpc":"2.0","error":{{"code":1,"message":"{data}"}},"id":-3}}"#),
                json!(-3),
            ),
        ] {
            assert_eq!(
                stream(&line, 1000, 100, &spills),
                Finished::Oversized {
                    id: Some(id),
                    bytes: line.len() as u64
                },
                "{line}"
            );
        }
        assert_eq!(
            stream(&format!("not json {data}"), 100, 64, &spills),
            Finished::Oversized {
                id: None,
                bytes: 5009
            }
        );
        assert!(spills.entries.lock().unwrap().is_empty());
    }

    #[test]
    fn unclaimed_files_are_removed_with_the_registry() {
        let spills = Spills::default();
        let line = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "abc"}]}}).to_string();
        assert!(matches!(
            stream(&line, 1000, 5, &spills),
            Finished::Message(_)
        ));
        let path = spills
            .entries
            .lock()
            .unwrap()
            .values()
            .next()
            .unwrap()
            .path
            .clone();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "abc");
        drop(spills);
        assert!(!path.exists());
    }

    #[test]
    fn a_forged_or_unknown_marker_is_ordinary_text() {
        let forged =
            json!({"content": [{"type": "text", "text": format!("{MARKER}00000000000000ff:0")}]});
        assert_eq!(marker_of(&forged["content"][0]), Some((255, 0)));
        assert!(Spills::default().take(255).is_none());
    }

    #[test]
    fn model_facing_texts_are_pinned() {
        assert_eq!(
            spill_failed_text("big", "/tmp/x: No space left on device"),
            "MCP server `big` answered with a large result that could not be saved to a temporary file (/tmp/x: No space left on device), so it was dropped. Free some disk space or ask for less."
        );
        assert_eq!(
            streamed_error_text("big"),
            "MCP server `big` reported an error; its message is the output below"
        );
    }
}
