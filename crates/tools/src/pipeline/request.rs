//! The pipeline's public vocabulary: the options a runtime is built with, a call as a
//! caller asks for it (`CallRequest`, `RawArgs`) and how it ended (`CallOutcome`,
//! `CallStatus`).

use std::path::PathBuf;
use std::time::Duration;

use podcode_protocol::ToolResult;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::context::CallIdentity;
use crate::truncate::Truncated;

/// Limits and settings every call of a runtime runs with.
#[derive(Clone)]
pub struct RuntimeOptions {
    /// Most output lines the model gets.
    pub max_lines: usize,
    /// Most output bytes the model gets.
    pub max_bytes: usize,
    /// Timeout for tools that set none.
    pub default_timeout: Duration,
    /// Where truncated outputs are spilled in full.
    pub spill_dir: PathBuf,
    /// How long a tool gets to wind down after its abort signal fires.
    pub abort_grace: Duration,
    /// First retry delay for idempotent tools; it quadruples per try.
    pub retry_backoff: Duration,
    /// Retries of an idempotent tool after a failure.
    pub max_retries: u32,
    /// The sandbox spawned processes run in (`ToolContext::sandbox`); `None` runs them
    /// as they are.
    pub sandbox: Option<std::sync::Arc<podcode_sandbox::Sandbox>>,
    /// Values masked in every model-facing output (provider API keys).
    pub secrets: Vec<podcode_sandbox::Secret>,
    /// Where the runtime's events go, called in the order they happen: a session's one
    /// writer, which numbers them with everything else the session says. `None` keeps
    /// them on the runtime's own channel (`ToolRuntime::subscribe`).
    pub events: Option<EventSink>,
    /// Told the files each completed call changed; its text joins the model's output
    /// (language-server diagnostics).
    pub after_edit: Option<std::sync::Arc<dyn crate::AfterEdit>>,
}

/// A function that takes events in order (called synchronously by whoever emits).
pub type EventSink = std::sync::Arc<dyn Fn(podcode_protocol::Event) + Send + Sync>;

impl RuntimeOptions {
    /// The defaults (2000 lines, 50 KiB, 300 s, 2 retries), spilling to `spill_dir`.
    pub fn new(spill_dir: PathBuf) -> Self {
        Self {
            max_lines: 2000,
            max_bytes: 50 * 1024,
            default_timeout: Duration::from_secs(300),
            spill_dir,
            abort_grace: Duration::from_secs(3),
            retry_backoff: Duration::from_millis(100),
            max_retries: 2,
            sandbox: None,
            secrets: Vec::new(),
            events: None,
            after_edit: None,
        }
    }
}

/// Arguments as the model sent them: a JSON string (OpenAI) or an object (Anthropic).
#[derive(Debug, Clone)]
pub enum RawArgs {
    /// JSON text, parsed by the pipeline.
    Text(String),
    /// An already parsed value.
    Json(Value),
}

/// One call to run: who calls, which tool, the raw arguments and the abort signal.
pub struct CallRequest {
    /// `identity.call_id` may be empty: the runtime then makes one.
    pub identity: CallIdentity,
    /// The tool's id as the model named it.
    pub tool: String,
    /// The arguments as the model sent them.
    pub args: RawArgs,
    /// Fires when the user aborts.
    pub abort: CancellationToken,
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// The tool returned a result.
    Completed,
    /// Unknown tool, bad arguments, a hook's block, or the tool's error.
    Failed,
    /// A rule or the user refused it.
    Denied,
    /// The abort signal fired.
    Aborted,
    /// It ran past its timeout.
    TimedOut,
}

/// Everything about a finished call: status, the model's text, the result, truncation, timing and
/// changes.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The call's id.
    pub call_id: String,
    /// The resolved tool id (or the name the model used, when it resolved to nothing).
    pub tool: String,
    /// How it ended.
    pub status: CallStatus,
    /// Exactly what the model reads for this call.
    pub model_text: String,
    /// Title, metadata and attachments for front ends (`output` is the untruncated kept text).
    pub result: ToolResult,
    /// Set when the output was cut: how, and where the full text is.
    pub truncated: Option<Truncated>,
    /// Runs of the tool (more than 1 after retries).
    pub attempts: u32,
    /// Wall time from start to end.
    pub duration: Duration,
    /// Ids of the journaled changes it made.
    pub changes: Vec<String>,
}

impl CallOutcome {
    /// A call that ended before its tool ran: no result, no attempts, no changes.
    pub(crate) fn stopped(
        call_id: &str,
        tool: &str,
        status: CallStatus,
        text: String,
        duration: Duration,
    ) -> Self {
        Self {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            status,
            model_text: text,
            result: ToolResult::default(),
            truncated: None,
            attempts: 0,
            duration,
            changes: Vec::new(),
        }
    }
}
