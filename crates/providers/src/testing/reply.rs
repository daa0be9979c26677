//! [`Reply`]: one scripted answer, built fluently.

use std::sync::Arc;
use std::time::Duration;

/// One scripted answer to one request. Content items (`text`, `reasoning`, `tool_call`) are
/// streamed in the order they were added; the other methods shape how the answer is served.
///
/// ```
/// use std::time::Duration;
/// use podcode_providers::testing::Reply;
/// let streamed = Reply::new()
///     .reasoning("Let me look.", Some("sig-1"))      // thinking block + signature
///     .text("Reading ").text("both files.")           // two text deltas
///     .tool_call("call_1", "read", r#"{"filePath":"a"}"#)
///     .tool_call("call_2", "read", r#"{"filePath":"b"}"#)
///     .split_args(3)                                  // each call's arguments in 3 fragments
///     .usage(1200, 80)
///     .pace(Duration::from_millis(5));                // between events
/// let rate_limited = Reply::http_error(429, Some(2)); // with `retry-after: 2`
/// let broken = Reply::new().text("partial ").text("answer").cut_after(3);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub(crate) items: Vec<Item>,
    pub(crate) split_args: usize,
    pub(crate) usage: ScriptUsage,
    pub(crate) finish: Option<String>,
    pub(crate) error: Option<ScriptError>,
    pub(crate) raw: Option<RawReply>,
    pub(crate) cut: Option<(usize, Cut)>,
    pub(crate) stall: Duration,
    pub(crate) pace: Duration,
    pub(crate) hold: Option<(usize, Gate)>,
    pub(crate) headers: Vec<(String, String)>,
}

/// A gate a reply can wait at ([`Reply::hold_after`]), closed until [`Gate::open`]. It lets a
/// test keep a turn mid-stream for exactly as long as it needs, however slow the machine
/// is, where a `pace` or `stall` would be a guess about how long the other side takes.
/// Clones share one gate.
#[derive(Clone)]
pub struct Gate(Arc<tokio::sync::watch::Sender<bool>>);

impl Gate {
    /// A closed gate.
    pub fn new() -> Self {
        Self(Arc::new(tokio::sync::watch::Sender::new(false)))
    }

    /// Opens the gate: replies held at it go on, now and later. Callable from any thread.
    pub fn open(&self) {
        self.0.send_replace(true);
    }

    /// Resolves once the gate is open.
    pub(crate) async fn passed(&self) {
        let mut open = self.0.subscribe();
        // The sender lives in `self`, so the channel cannot close while this waits.
        let _ = open.wait_for(|o| *o).await;
    }
}

impl Default for Gate {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Gate({})",
            if *self.0.borrow() { "open" } else { "closed" }
        )
    }
}

impl PartialEq for Gate {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    Text(String),
    Reasoning {
        text: String,
        signature: Option<String>,
    },
    ToolCall {
        id: String,
        name: String,
        arguments: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct ScriptUsage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub reasoning: u64,
    pub cost: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScriptError {
    pub status: u16,
    pub retry_after: Option<u64>,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawReply {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// The connection is reset (the HTTP body is aborted mid-way).
    Reset,
    /// The body ends cleanly, just without the protocol's terminal events.
    End,
}

impl Default for Reply {
    fn default() -> Self {
        Self::new()
    }
}

impl Reply {
    /// An empty streamed answer (a bare finish with reason `stop`); add content to it.
    pub fn new() -> Self {
        Self {
            items: Vec::new(),
            split_args: 1,
            usage: ScriptUsage::default(),
            finish: None,
            error: None,
            raw: None,
            cut: None,
            stall: Duration::ZERO,
            pace: Duration::ZERO,
            hold: None,
            headers: Vec::new(),
        }
    }

    /// A text delta. Consecutive `text` calls stream as separate deltas of one text block.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.items.push(Item::Text(text.into()));
        self
    }

    /// A reasoning block: OpenAI-compatible `delta.reasoning_content`; Anthropic `thinking`
    /// block with `thinking_delta` and, when given, a `signature_delta`.
    pub fn reasoning(mut self, text: impl Into<String>, signature: Option<&str>) -> Self {
        self.items.push(Item::Reasoning {
            text: text.into(),
            signature: signature.map(str::to_string),
        });
        self
    }

    /// A tool call with raw JSON `arguments`, streamed like the real APIs: a first fragment
    /// with id and name, then the arguments (see [`Reply::split_args`]).
    pub fn tool_call(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        self.items.push(Item::ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        });
        self
    }

    /// Streams each tool call's arguments in `chunks` fragments of near-equal size (split at
    /// character boundaries; default 1).
    pub fn split_args(mut self, chunks: usize) -> Self {
        self.split_args = chunks.max(1);
        self
    }

    /// Reported usage: total input tokens and output tokens (default 0 and 0).
    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage.input = input_tokens;
        self.usage.output = output_tokens;
        self
    }

    /// Cached input: `read` tokens read from the cache (OpenAI
    /// `prompt_tokens_details.cached_tokens`), `write` tokens written (Anthropic only). Both
    /// are part of the `usage` input total.
    pub fn cache(mut self, read: u64, write: u64) -> Self {
        self.usage.cache_read = read;
        self.usage.cache_write = write;
        self
    }

    /// Reasoning tokens, part of the output (OpenAI
    /// `completion_tokens_details.reasoning_tokens`; Anthropic does not report them).
    pub fn reasoning_tokens(mut self, tokens: u64) -> Self {
        self.usage.reasoning = tokens;
        self
    }

    /// A cost in USD, reported OpenRouter-style as `usage.cost` (OpenAI protocol only).
    pub fn cost(mut self, usd: f64) -> Self {
        self.usage.cost = Some(usd);
        self
    }

    /// The finish reason, in either vocabulary (`stop`/`end_turn`, `tool_calls`/`tool_use`,
    /// `length`/`max_tokens`, or anything else verbatim). Default: `tool_calls` when the
    /// reply has tool calls, else `stop`.
    pub fn finish(mut self, reason: impl Into<String>) -> Self {
        self.finish = Some(reason.into());
        self
    }

    /// An HTTP error instead of a stream, with the protocol's JSON error body and, when
    /// given, a `retry-after: <secs>` header.
    pub fn http_error(status: u16, retry_after_secs: Option<u64>) -> Self {
        let message = format!("scripted HTTP {status}");
        Self {
            error: Some(ScriptError {
                status,
                retry_after: retry_after_secs,
                message,
            }),
            ..Self::new()
        }
    }

    /// The message inside an [`Reply::http_error`] body.
    pub fn error_message(mut self, message: impl Into<String>) -> Self {
        if let Some(e) = &mut self.error {
            e.message = message.into();
        }
        self
    }

    /// A response served verbatim, whatever the protocol (for malformed or unusual answers).
    pub fn raw(status: u16, content_type: impl Into<String>, body: impl Into<String>) -> Self {
        let raw = RawReply {
            status,
            content_type: content_type.into(),
            body: body.into(),
        };
        Self {
            raw: Some(raw),
            ..Self::new()
        }
    }

    /// Resets the connection after `events` SSE events (no `[DONE]` / `message_stop`).
    pub fn cut_after(mut self, events: usize) -> Self {
        self.cut = Some((events, Cut::Reset));
        self
    }

    /// Ends the body cleanly after `events` SSE events, without the terminal events.
    pub fn end_after(mut self, events: usize) -> Self {
        self.cut = Some((events, Cut::End));
        self
    }

    /// Waits this long before sending anything (status line included).
    pub fn stall(mut self, wait: Duration) -> Self {
        self.stall = wait;
        self
    }

    /// An extra response header (e.g. `x-should-retry`, `retry-after-ms`), replacing one
    /// the reply would otherwise send.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Waits this long between SSE events.
    pub fn pace(mut self, wait: Duration) -> Self {
        self.pace = wait;
        self
    }

    /// After `events` SSE events, waits until `gate` is opened before sending the rest (a
    /// gate never opened holds the answer until the client goes away).
    pub fn hold_after(mut self, events: usize, gate: &Gate) -> Self {
        self.hold = Some((events, gate.clone()));
        self
    }
}
