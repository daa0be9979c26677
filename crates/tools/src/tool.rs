//! The `Tool` trait every source implements, and `ToolError`, the ways a call can fail
//! from inside `execute`. The pipeline turns each error into the model-facing text.

use async_trait::async_trait;
use podcode_protocol::{ToolResult, ToolSpec};
use serde_json::Value;

use crate::context::ToolContext;
use crate::schema::ArgIssue;

/// How a tool call failed, as the tool reports it; the pipeline turns it into model-facing text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// The tool threw. `transient` marks failures worth retrying (network, a restarting
    /// sidecar); only idempotent tools are ever retried.
    #[error("{message}")]
    Failed {
        /// What went wrong, for the model.
        message: String,
        /// Worth retrying.
        transient: bool,
    },
    /// A permission ask ended in deny or reject; the text is already model-facing.
    #[error("{0}")]
    Permission(String),
    /// The tool noticed its abort signal and stopped.
    #[error("aborted")]
    Aborted,
    /// The tool's own validator (e.g. a plugin's Zod schema) refused the arguments.
    #[error("invalid arguments")]
    InvalidArguments(Vec<ArgIssue>),
}

impl ToolError {
    /// A failure not worth retrying.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed {
            message: message.into(),
            transient: false,
        }
    }

    /// A failure worth retrying (an idempotent tool is run again).
    pub fn transient(message: impl Into<String>) -> Self {
        Self::Failed {
            message: message.into(),
            transient: true,
        }
    }
}

/// A tool the model can call, from any source; the pipeline around `execute` does validation,
/// permission, timeouts, truncation and recording.
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// What the model sees of the tool: id, description, parameter schema, truncation, retries,
    /// timeout.
    fn spec(&self) -> &ToolSpec;

    /// True for tools that carry their permission gate inside `execute` (the built-ins);
    /// all others are gated by the pipeline with permission `<id>` and pattern `*`.
    fn gates_itself(&self) -> bool {
        false
    }

    /// Tools with their own validator (plugins validate with their Zod schema) return
    /// `Some`; `None` means the pipeline validates against `spec().parameters`.
    async fn validate(&self, _args: &Value) -> Option<Result<Value, Vec<ArgIssue>>> {
        None
    }

    /// Runs the call with validated `args`. Output streamed through `ctx.write_output` comes
    /// first in what the model reads, then the result's own `output`.
    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError>;
}
