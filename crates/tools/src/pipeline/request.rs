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

#[derive(Debug, Clone)]
pub struct RuntimeOptions {
    pub max_lines: usize,
    pub max_bytes: usize,
    pub default_timeout: Duration,
    pub spill_dir: PathBuf,
    /// How long a tool gets to wind down after its abort signal fires.
    pub abort_grace: Duration,
    /// First retry delay for idempotent tools; it quadruples per try.
    pub retry_backoff: Duration,
    pub max_retries: u32,
    /// The sandbox spawned processes run in (`ToolContext::sandbox`); `None` runs them
    /// as they are.
    pub sandbox: Option<std::sync::Arc<podcode_sandbox::Sandbox>>,
    /// Values masked in every model-facing output (provider API keys).
    pub secrets: Vec<podcode_sandbox::Secret>,
}

impl RuntimeOptions {
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
        }
    }
}

/// Arguments as the model sent them: a JSON string (OpenAI) or an object (Anthropic).
#[derive(Debug, Clone)]
pub enum RawArgs {
    Text(String),
    Json(Value),
}

pub struct CallRequest {
    /// `identity.call_id` may be empty: the runtime then makes one.
    pub identity: CallIdentity,
    pub tool: String,
    pub args: RawArgs,
    pub abort: CancellationToken,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Completed,
    Failed,
    Denied,
    Aborted,
    TimedOut,
}

#[derive(Debug, Clone)]
pub struct CallOutcome {
    pub call_id: String,
    /// The resolved tool id (or the name the model used, when it resolved to nothing).
    pub tool: String,
    pub status: CallStatus,
    /// Exactly what the model reads for this call.
    pub model_text: String,
    /// Title, metadata and attachments for front ends (`output` is the untruncated kept text).
    pub result: ToolResult,
    pub truncated: Option<Truncated>,
    pub attempts: u32,
    pub duration: Duration,
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
