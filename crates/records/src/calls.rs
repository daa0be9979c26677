//! The call log: one record per tool call, written when it starts and completed when it
//! ends. The pipeline's record stage is its only writer.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::RecordError;

/// Where a tool call is: running, or how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCallState {
    /// Started, not finished (or the process died while it ran).
    Running,
    /// Returned a result.
    Completed,
    /// Returned an error (bad arguments, the tool's own failure).
    Failed,
    /// Refused by a permission rule or the user.
    Denied,
    /// Aborted (the user stopped the turn, or the session closed).
    Interrupted,
    /// Stopped at its time limit (not by the user).
    #[serde(rename = "timed_out")]
    TimedOut,
}

impl ToolCallState {
    /// The stored value (`timed_out` for `TimedOut`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Denied => "denied",
            Self::Interrupted => "interrupted",
            Self::TimedOut => "timed_out",
        }
    }

    /// Reads a stored value back; `None` for a value this version never writes.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "running" => Some(Self::Running),
            "completed" => Some(Self::Completed),
            "failed" => Some(Self::Failed),
            "denied" => Some(Self::Denied),
            "interrupted" => Some(Self::Interrupted),
            "timed_out" => Some(Self::TimedOut),
            _ => None,
        }
    }
}

impl fmt::Display for ToolCallState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TimedOut => f.write_str("timed out"),
            other => f.write_str(other.as_str()),
        }
    }
}

/// A call as it starts; the call id comes from the model/provider.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewToolCall<'a> {
    /// The call's id, from the model/provider.
    pub id: &'a str,
    /// The session it runs in.
    pub session_id: &'a str,
    /// The assistant message that asked for it, when there is one (`podcode tool call` has none).
    pub message_id: Option<&'a str>,
    /// The tool's id.
    pub tool: &'a str,
    /// The arguments as given.
    pub args: &'a Value,
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolCallEnd<'a> {
    /// How it ended.
    pub state: ToolCallState,
    /// The result's UI title.
    pub title: &'a str,
    /// The output the model received (after truncation).
    pub output: &'a str,
    /// The result's front-end metadata.
    pub metadata: &'a Value,
    /// The result's attachments as JSON (an array).
    pub attachments: &'a Value,
    /// The model-facing error text, for a call that did not complete.
    pub error: Option<&'a str>,
    /// The file holding the full output, when it was truncated.
    pub spill_path: Option<&'a str>,
}

/// Where the pipeline records each call's start and end.
pub trait CallLog: Send + Sync {
    /// Records a call as running. A second start with the same id is an error.
    fn start_call(&self, call: &NewToolCall<'_>) -> Result<(), RecordError>;
    /// Records how a started call ended; an error when it was never started.
    fn finish_call(&self, id: &str, end: &ToolCallEnd<'_>) -> Result<(), RecordError>;
}

impl<T: CallLog + ?Sized> CallLog for Arc<T> {
    fn start_call(&self, call: &NewToolCall<'_>) -> Result<(), RecordError> {
        (**self).start_call(call)
    }
    fn finish_call(&self, id: &str, end: &ToolCallEnd<'_>) -> Result<(), RecordError> {
        (**self).finish_call(id, end)
    }
}
