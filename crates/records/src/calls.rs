//! The call log: one record per tool call, written when it starts and completed when it
//! ends. The pipeline's record stage is its only writer.

use std::sync::Arc;

use serde_json::Value;

use crate::RecordError;

pub use podcode_protocol::ToolCallState;

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
