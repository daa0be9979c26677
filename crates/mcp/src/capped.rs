//! A stdio MCP server's output, read with bounded memory, and a size limit per message that
//! says what happened.
//!
//! `CappedReader` sits between the child's stdout and rmcp's line reader. A line up to
//! [`STREAM_AT`](crate::streamed::STREAM_AT) (or the limit, when smaller) passes through
//! untouched. A longer line goes to a `streamed::Streamer` as it arrives: the texts of a
//! `tools/call` result are written to a file and the rest, the message's skeleton, is what
//! rmcp gets (see `streamed`). When the skeleton itself is over `limit` (an image's data, an
//! error's message), a JSON-RPC error response for the same id takes the line's place, so
//! the waiting call fails at once with [`oversized_text`] (rmcp would drop the line without
//! a word and the call would wait for its whole timeout). When no id can be found (a line
//! that is not JSON), the size is kept and the waiting call gives the same text when it
//! times out. `ChildTransport` is the child process plus that reader as an rmcp transport
//! (the process is killed when the transport is dropped).

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

use crate::streamed::{Finished, STREAM_AT, Spills, Streamer, spill_failed_text};

/// The default limit for one message from a server: rmcp's own.
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 16 * 1024 * 1024;
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

/// The child's stdout with long lines streamed and oversized ones replaced; see the module doc.
pub struct CappedReader<R> {
    inner: R,
    server: String,
    limit: u64,
    /// Lines longer than this are streamed.
    stream_at: usize,
    /// The current line while it is short.
    line: Vec<u8>,
    /// The current line once it is long.
    streaming: Option<Streamer>,
    /// Bytes to hand out before reading more.
    pending: Vec<u8>,
    pending_at: usize,
    scratch: Vec<u8>,
    /// Where an oversized line whose id was not found leaves its size.
    unmatched: Arc<AtomicU64>,
    /// Where streamed texts wait for their call.
    spills: Arc<Spills>,
}

impl<R> CappedReader<R> {
    pub fn new(inner: R, server: &str, limit: u64, spills: Arc<Spills>) -> Self {
        let limit = limit.max(1);
        Self {
            inner,
            server: server.to_string(),
            limit,
            stream_at: usize::try_from(limit).unwrap_or(usize::MAX).min(STREAM_AT),
            line: Vec::new(),
            streaming: None,
            pending: Vec::new(),
            pending_at: 0,
            scratch: vec![0; 64 * 1024],
            unmatched: Arc::default(),
            spills,
        }
    }

    /// Processes `input`; appends what rmcp should see to `out`.
    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let mut rest = input;
        while !rest.is_empty() {
            let newline = memchr::memchr(b'\n', rest);
            let body = &rest[..newline.unwrap_or(rest.len())];
            rest = &rest[newline.map_or(rest.len(), |i| i + 1)..];
            if let Some(streamer) = &mut self.streaming {
                streamer.feed(body);
            } else {
                self.line.extend_from_slice(body);
                if self.line.len() > self.stream_at {
                    let mut streamer = Streamer::new(self.limit);
                    streamer.feed(&self.line);
                    // Let go of the buffer too, not just its contents.
                    self.line = Vec::new();
                    self.streaming = Some(streamer);
                }
            }
            if newline.is_some() {
                self.end_line(out);
            }
        }
    }

    fn end_line(&mut self, out: &mut Vec<u8>) {
        let Some(streamer) = self.streaming.take() else {
            // rmcp's serde_json refuses a lone surrogate escape (a string cut mid-emoji)
            // and drops the whole message; `\ufffd` takes the broken half's place.
            out.extend_from_slice(&podcode_protocol::repair_lone_surrogates(&self.line));
            out.push(b'\n');
            self.line.clear();
            return;
        };
        match streamer.finish(&self.spills) {
            Finished::Message(message) => {
                out.extend_from_slice(&message);
                out.push(b'\n');
            }
            Finished::Oversized {
                id: Some(id),
                bytes,
            } => {
                let message = oversized_text(&self.server, bytes, self.limit);
                let data =
                    json!({"podcode": "message_over_limit", "bytes": bytes, "limit": self.limit});
                out.extend_from_slice(&substitute(id, message, data));
                out.push(b'\n');
            }
            Finished::Oversized { id: None, bytes } => {
                // No call to fail now; the waiting call says it when it times out.
                self.unmatched.store(bytes, Ordering::Relaxed);
            }
            Finished::SpillFailed { id, why } => {
                if let Some(id) = id {
                    let message = spill_failed_text(&self.server, &why);
                    let data = json!({"podcode": "message_over_limit"});
                    out.extend_from_slice(&substitute(id, message, data));
                    out.push(b'\n');
                }
            }
        }
    }
}

/// A JSON-RPC error response for `id` that `is_oversized` recognises.
fn substitute(id: Value, message: String, data: Value) -> Vec<u8> {
    let response = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": CODE, "message": message, "data": data},
    });
    serde_json::to_vec(&response).unwrap_or_default()
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
                // The end: a last short line without its newline is handed out as it is.
                Poll::Ready(Ok(())) if filled == 0 && !this.line.is_empty() => {
                    this.pending = std::mem::take(&mut this.line);
                    this.pending_at = 0;
                    None
                }
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
            // Nothing to hand out yet (the middle of a line): read on.
        }
    }
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
        spills: Arc<Spills>,
    ) -> std::io::Result<(Self, Option<tokio::process::ChildStderr>)> {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // A server script saved a moment ago may still be "busy" (see `retry_while_busy`).
        let mut child = podcode_sandbox::retry_while_busy(|| cmd.spawn())?;
        let missing = || std::io::Error::other("the server's stdio was not captured");
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stderr = child.stderr.take();
        // Our reader enforces the limit (and says so); rmcp's own would drop silently.
        let mut reader = CappedReader::new(stdout, server, limit, spills);
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
        let mut r = CappedReader::new(&b""[..], "big", limit, Arc::default());
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
    fn a_long_line_within_the_limit_passes_whole() {
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"t\":\"{}\"}}}}\n",
            "z".repeat(5000)
        );
        for chunk in [7, 4096] {
            assert_eq!(run(10_000, line.as_bytes(), chunk), line.as_bytes());
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
            assert_eq!(lines.len(), 2, "{out}");
            let error: Value = serde_json::from_str(lines[0]).unwrap();
            assert_eq!(error["id"], 7);
            assert_eq!(error["error"]["data"]["bytes"], line.len() as u64 - 1);
            assert!(is_oversized(
                &serde_json::from_value(error["error"].clone()).unwrap()
            ));
            assert_eq!(lines[1].as_bytes(), &next[..next.len() - 1]);
        }
    }

    #[test]
    fn a_long_text_result_is_streamed_whatever_the_limit() {
        let body = "y".repeat(200_000);
        let line = format!(
            "{{\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{body}\"}}]}},\"jsonrpc\":\"2.0\",\"id\":\"req-3\"}}\n"
        );
        let out = String::from_utf8(run(1000, line.as_bytes(), 4096)).unwrap();
        let message: Value = serde_json::from_str(out.trim_end()).unwrap();
        assert_eq!(message["id"], "req-3");
        let text = message["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("\u{1}podcode-mcp-streamed:"), "{text}");
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
