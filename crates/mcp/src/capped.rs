//! A stdio MCP server's output with a size limit per message that says what happened.
//!
//! rmcp drops a line over its limit without a word, so the call it answered waits for the
//! whole timeout. `CappedReader` sits between the child's stdout and rmcp's line reader:
//! lines within `limit` pass through untouched; a longer line is read to its end without
//! being kept (only its first and last 64 KiB, to find its JSON-RPC `id`), then its
//! forwarded start is cut off with a newline (rmcp ignores the unparsable fragment) and a
//! JSON-RPC error response for the same id takes its place, so the waiting call fails at
//! once with [`oversized_text`]. When no id can be found (a server that writes it in the
//! middle), the size is kept and the waiting call gives the same text when it times out.
//! `ChildTransport` is the child process plus that reader as an
//! rmcp transport (the process is killed when the transport is dropped).

use std::collections::VecDeque;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// The default limit for one message from a server: rmcp's own.
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 16 * 1024 * 1024;
/// How much of an oversized line's start and end is kept to find its id.
const EDGE: usize = 64 * 1024;
/// The error code of the substitute response (JSON-RPC "internal error").
const CODE: i64 = -32603;

/// The text a call fails with when the server's answer is over the limit.
pub fn oversized_text(server: &str, bytes: u64, limit: u64) -> String {
    format!(
        "MCP server `{server}` answered with a message of {} ({bytes} bytes), over the {} limit for one message, so the result was dropped. Ask for less (a narrower query, one page or range at a time); the user can raise `max_message_bytes` under [mcp.{server}].",
        human(bytes),
        human(limit)
    )
}

/// Whether `error` is the substitute response this reader made.
pub fn is_oversized(error: &rmcp::model::ErrorData) -> bool {
    error
        .data
        .as_ref()
        .and_then(|d| d.get("podcode"))
        .and_then(Value::as_str)
        == Some("message_over_limit")
}

fn human(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB {
        let mib = bytes as f64 / MIB as f64;
        if bytes.is_multiple_of(MIB) {
            format!("{} MiB", bytes / MIB)
        } else {
            format!("{mib:.1} MiB")
        }
    } else if bytes >= 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{bytes} bytes")
    }
}

/// The child's stdout with oversized lines replaced; see the module doc.
pub struct CappedReader<R> {
    inner: R,
    server: String,
    limit: u64,
    /// Bytes of the current line seen so far.
    line_len: u64,
    /// The current line's first bytes (up to `EDGE`).
    head: Vec<u8>,
    /// Set once the current line went over the limit: its last `EDGE` bytes.
    tail: Option<VecDeque<u8>>,
    /// Bytes to hand out before reading more (the substitute response).
    pending: Vec<u8>,
    pending_at: usize,
    scratch: Vec<u8>,
    /// Where an oversized line whose id was not found leaves its size.
    unmatched: Arc<AtomicU64>,
}

impl<R> CappedReader<R> {
    pub fn new(inner: R, server: &str, limit: u64) -> Self {
        Self {
            inner,
            server: server.to_string(),
            limit: limit.max(1),
            line_len: 0,
            head: Vec::new(),
            tail: None,
            pending: Vec::new(),
            pending_at: 0,
            scratch: vec![0; 64 * 1024],
            unmatched: Arc::default(),
        }
    }

    /// Processes `input`; appends what rmcp should see to `out`.
    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let mut rest = input;
        while !rest.is_empty() {
            let newline = rest.iter().position(|b| *b == b'\n');
            let (chunk, ends) = match newline {
                Some(i) => (&rest[..i + 1], true),
                None => (rest, false),
            };
            rest = &rest[chunk.len()..];
            let body = if ends {
                &chunk[..chunk.len() - 1]
            } else {
                chunk
            };
            if self.head.len() < EDGE {
                let take = (EDGE - self.head.len()).min(body.len());
                self.head.extend_from_slice(&body[..take]);
            }
            let before = self.line_len;
            self.line_len += body.len() as u64;
            if self.tail.is_none() && self.line_len > self.limit {
                // Forward up to the limit, then stop: the rest is counted, not kept.
                let room = self.limit.saturating_sub(before) as usize;
                out.extend_from_slice(&body[..room.min(body.len())]);
                self.tail = Some(VecDeque::with_capacity(EDGE));
            } else if self.tail.is_none() {
                out.extend_from_slice(body);
            }
            if let Some(tail) = &mut self.tail {
                for b in body.iter().skip(body.len().saturating_sub(EDGE)) {
                    if tail.len() == EDGE {
                        tail.pop_front();
                    }
                    tail.push_back(*b);
                }
            }
            if ends {
                if let Some(tail) = self.tail.take() {
                    let tail: Vec<u8> = tail.into_iter().collect();
                    out.push(b'\n');
                    if let Some(id) = head_id(&self.head).or_else(|| tail_id(&tail)) {
                        out.extend_from_slice(&self.substitute(id));
                        out.push(b'\n');
                    } else {
                        // No call to fail now; the waiting call says it when it times out.
                        self.unmatched.store(self.line_len, Ordering::Relaxed);
                    }
                } else {
                    out.push(b'\n');
                }
                self.line_len = 0;
                self.head.clear();
            }
        }
    }

    fn substitute(&self, id: Value) -> Vec<u8> {
        let response = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {
                "code": CODE,
                "message": oversized_text(&self.server, self.line_len, self.limit),
                "data": {"podcode": "message_over_limit", "bytes": self.line_len, "limit": self.limit},
            },
        });
        serde_json::to_vec(&response).unwrap_or_default()
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for CappedReader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.pending_at < this.pending.len() {
                let n = (this.pending.len() - this.pending_at).min(buf.remaining());
                buf.put_slice(&this.pending[this.pending_at..this.pending_at + n]);
                this.pending_at += n;
                return Poll::Ready(Ok(()));
            }
            let mut scratch = std::mem::take(&mut this.scratch);
            let mut read = ReadBuf::new(&mut scratch);
            let polled = Pin::new(&mut this.inner).poll_read(cx, &mut read);
            let filled = read.filled().len();
            let result = match polled {
                Poll::Ready(Ok(())) if filled == 0 => Some(Poll::Ready(Ok(()))),
                Poll::Ready(Ok(())) => {
                    let mut out = Vec::new();
                    this.feed(&scratch[..filled], &mut out);
                    this.pending = out;
                    this.pending_at = 0;
                    None
                }
                other => Some(other),
            };
            this.scratch = scratch;
            if let Some(r) = result {
                return r;
            }
            // Nothing to hand out yet (all of it was an oversized line's middle): read on.
        }
    }
}

/// The top-level `id` in the start of a JSON-RPC message, when it comes before the body.
fn head_id(head: &[u8]) -> Option<Value> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < head.len() {
        match head[i] {
            b'"' => {
                let end = string_end(head, i)?;
                if depth == 1 && &head[i..=end] == b"\"id\"" {
                    let mut j = end + 1;
                    while head.get(j).is_some_and(u8::is_ascii_whitespace) {
                        j += 1;
                    }
                    if head.get(j) == Some(&b':') {
                        return scalar_at(head, j + 1);
                    }
                }
                i = end + 1;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The top-level `id` at the very end of a message (`…,"id":7}` or
/// `…,"id":7,"jsonrpc":"2.0"}`), for servers that write it after the body.
fn tail_id(tail: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(tail);
    let mut end = text.trim_end().strip_suffix('}')?.trim_end();
    if let Some(before) = end.strip_suffix("\"2.0\"") {
        end = before
            .trim_end()
            .strip_suffix(':')?
            .trim_end()
            .strip_suffix("\"jsonrpc\"")?
            .trim_end()
            .strip_suffix(',')?
            .trim_end();
    }
    let at = end.rfind("\"id\"")?;
    let after = end[at + 4..].trim_start().strip_prefix(':')?;
    serde_json::from_str::<Value>(after.trim())
        .ok()
        .filter(|v| v.is_number() || v.is_string())
}

/// The index of the closing quote of the string starting at `start`.
fn string_end(s: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// A number or string value starting at `from` (after whitespace).
fn scalar_at(s: &[u8], from: usize) -> Option<Value> {
    let mut i = from;
    while s.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    let end = if s.get(i) == Some(&b'"') {
        string_end(s, i)? + 1
    } else {
        let mut j = i;
        while s
            .get(j)
            .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
        {
            j += 1;
        }
        j
    };
    serde_json::from_slice::<Value>(s.get(i..end)?)
        .ok()
        .filter(|v| v.is_number() || v.is_string())
}

/// A stdio server process and its capped transport. Dropping it kills the process.
pub struct ChildTransport {
    child: Child,
    transport: AsyncRwTransport<RoleClient, CappedReader<ChildStdout>, ChildStdin>,
}

impl ChildTransport {
    /// Spawns `cmd` with piped stdin/stdout and `stderr` as given.
    pub fn spawn(
        mut cmd: tokio::process::Command,
        server: &str,
        limit: u64,
        unmatched: Arc<AtomicU64>,
    ) -> std::io::Result<(Self, Option<tokio::process::ChildStderr>)> {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn()?;
        let missing = || std::io::Error::other("the server's stdio was not captured");
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stderr = child.stderr.take();
        // Our reader enforces the limit (and says so); rmcp's own would drop silently.
        let mut reader = CappedReader::new(stdout, server, limit);
        reader.unmatched = unmatched;
        let transport =
            AsyncRwTransport::new_client(reader, stdin).with_max_line_length(usize::MAX);
        Ok((Self { child, transport }, stderr))
    }

    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    /// Closes stdin (the MCP stdio shutdown), waits a little for the server to exit, then
    /// kills it.
    async fn close(&mut self) -> Result<(), Self::Error> {
        self.transport.close().await?;
        let waited =
            tokio::time::timeout(std::time::Duration::from_secs(2), self.child.wait()).await;
        if waited.is_err() {
            self.child.kill().await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(limit: u64, input: &[u8], chunk: usize) -> Vec<u8> {
        let mut r = CappedReader::new(&b""[..], "big", limit);
        let mut out = Vec::new();
        for piece in input.chunks(chunk) {
            r.feed(piece, &mut out);
        }
        out
    }

    #[test]
    fn lines_within_the_limit_pass_untouched() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"a\":1}\n";
        for chunk in [1, 3, 64] {
            assert_eq!(run(40, input, chunk), input);
        }
    }

    #[test]
    fn an_oversized_line_becomes_an_error_for_its_id() {
        let body = "x".repeat(5000);
        let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{\"t\":\"{body}\"}}}}\n");
        let next = b"{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}\n";
        let input = [line.as_bytes(), next].concat();
        for chunk in [7, 100, 10_000] {
            let out = String::from_utf8(run(1000, &input, chunk)).unwrap();
            let lines: Vec<&str> = out.lines().collect();
            assert_eq!(lines.len(), 3, "{out}");
            assert_eq!(lines[0].len(), 1000);
            let error: Value = serde_json::from_str(lines[1]).unwrap();
            assert_eq!(error["id"], 7);
            assert_eq!(error["error"]["data"]["bytes"], line.len() as u64 - 1);
            assert_eq!(lines[2].as_bytes(), &next[..next.len() - 1]);
        }
    }

    #[test]
    fn an_id_after_the_body_is_found_too() {
        let body = "y".repeat(200_000);
        let line = format!(
            "{{\"result\":{{\"t\":\"{body}\",\"id\":99}},\"jsonrpc\":\"2.0\",\"id\":\"req-3\"}}\n"
        );
        let out = String::from_utf8(run(1000, line.as_bytes(), 4096)).unwrap();
        let error: Value = serde_json::from_str(out.lines().nth(1).unwrap()).unwrap();
        assert_eq!(error["id"], "req-3");
        assert!(is_oversized(
            &serde_json::from_value(error["error"].clone()).unwrap()
        ));
    }

    #[test]
    fn ids_are_read_only_at_the_top_level() {
        assert_eq!(
            head_id(br#"{"params":{"id":5},"id" : "a\"b","#),
            Some(json!("a\"b"))
        );
        assert_eq!(head_id(br#"{"result":{"id":5,"x":"#), None);
        assert_eq!(tail_id(br#"..."x":{"id":4}}"#), None);
        assert_eq!(tail_id(br#"...","id":12}"#), Some(json!(12)));
    }

    #[test]
    fn the_model_facing_text_is_pinned() {
        assert_eq!(
            oversized_text("big", 104_857_600 + 1234, 16 * 1024 * 1024),
            "MCP server `big` answered with a message of 100.0 MiB (104858834 bytes), over the 16 MiB limit for one message, so the result was dropped. Ask for less (a narrower query, one page or range at a time); the user can raise `max_message_bytes` under [mcp.big]."
        );
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(12), "12 bytes");
    }
}
