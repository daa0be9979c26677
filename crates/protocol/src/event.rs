//! The one API every front end uses: `Op`s go into the core, `Event`s stream out.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{PermissionReply, PermissionRequest, ToolResult};

/// Something a front end asks the core to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    Prompt {
        session_id: String,
        text: String,
    },
    PermissionReply {
        request_id: String,
        reply: PermissionReply,
    },
    Abort {
        session_id: String,
    },
    Revert {
        change_id: String,
        force: bool,
    },
}

/// Something that happened in the core, in order, for front ends to show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    ToolStarted {
        session_id: String,
        call_id: String,
        tool: String,
        args: Value,
    },
    /// Live title/metadata from `ctx.metadata()` while a call runs.
    ToolMetadata {
        call_id: String,
        title: Option<String>,
        metadata: Option<Value>,
    },
    ToolFinished {
        call_id: String,
        tool: String,
        result: ToolResult,
        /// Set when the output was truncated: the spill file with the full text.
        spill_path: Option<String>,
        duration_ms: u64,
    },
    ToolFailed {
        call_id: String,
        tool: String,
        /// The model-facing error text.
        error: String,
        duration_ms: u64,
    },
    PermissionAsked {
        request_id: String,
        call_id: String,
        tool: String,
        request: PermissionRequest,
    },
    ChangeRecorded {
        change_id: String,
        call_id: Option<String>,
        file: String,
    },
    /// Something the user should see that is not part of any call (hook errors, load problems).
    Warning { message: String },
}
