//! Stage 8, record: the `tool_calls` row when a call starts and ends, and the matching
//! `ToolStarted` / `ToolFinished` / `ToolFailed` events for front ends. This is the only
//! writer of `tool_calls`: a call the agent settles without running it (a rejected
//! `doom_loop` ask, an abort before it started, a call in the final tool-less step) is
//! recorded through `ToolRuntime::record_settled`, with the same rows, events and policy.
//! Store failures are warnings: a full disk must not turn a finished call into a failed
//! one, nor end the turn.

use std::time::Duration;

use podcode_protocol::{Event, ToolResult};
use podcode_records::{NewToolCall, ToolCallEnd, ToolCallState};
use serde_json::Value;

use super::{CallOutcome, CallStatus, ToolRuntime};
use crate::context::CallIdentity;

impl ToolRuntime {
    /// Records a call that was settled without running: started and ended at once with
    /// `status` (not `Completed`) and `text` as what the model read. `identity` needs the
    /// session, message and call ids; the call's `tool` is the name the model used.
    pub fn record_settled(
        &self,
        identity: &CallIdentity,
        tool: &str,
        args: &Value,
        status: CallStatus,
        text: &str,
    ) {
        let out = CallOutcome::stopped(
            &identity.call_id,
            tool,
            status,
            text.to_string(),
            Duration::ZERO,
        );
        self.record_unstarted(identity, args, out);
    }

    pub(super) fn record_start(&self, id: &CallIdentity, tool: &str, args: &Value) {
        let call = NewToolCall {
            id: &id.call_id,
            session_id: &id.session_id,
            message_id: (!id.message_id.is_empty()).then_some(id.message_id.as_str()),
            tool,
            args,
        };
        if let Err(e) = self.shared.records.calls.start_call(&call) {
            self.shared
                .warn(format!("could not record tool call {}: {e}", id.call_id));
        }
        self.shared.emit(Event::ToolStarted {
            session_id: id.session_id.clone(),
            call_id: id.call_id.clone(),
            tool: tool.to_string(),
            args: args.clone(),
        });
    }

    /// A call that ended before it started: both halves of the record at once.
    pub(super) fn record_unstarted(
        &self,
        id: &CallIdentity,
        args: &Value,
        out: CallOutcome,
    ) -> CallOutcome {
        self.record_start(id, &out.tool, args);
        self.finish(out)
    }

    /// Records how a started call ended and hands the outcome back.
    pub(super) fn finish(&self, out: CallOutcome) -> CallOutcome {
        self.write_end(&out);
        self.emit_end(&out);
        out
    }

    fn write_end(&self, out: &CallOutcome) {
        let state = state_of(out.status);
        let attachments = serde_json::to_value(&out.result.attachments).unwrap_or(Value::Null);
        let spill = out
            .truncated
            .as_ref()
            .filter(|t| t.spill_error.is_none())
            .map(|t| t.spill_path.to_string_lossy().into_owned());
        let end = ToolCallEnd {
            state,
            title: &out.result.title,
            output: &out.model_text,
            metadata: &out.result.metadata,
            attachments: &attachments,
            error: (out.status != CallStatus::Completed).then_some(out.model_text.as_str()),
            spill_path: spill.as_deref(),
        };
        if let Err(e) = self.shared.records.calls.finish_call(&out.call_id, &end) {
            self.shared.warn(format!(
                "could not record the end of tool call {}: {e}",
                out.call_id
            ));
        }
    }

    fn emit_end(&self, out: &CallOutcome) {
        let duration_ms = out.duration.as_millis() as u64;
        let event = if out.status == CallStatus::Completed {
            Event::ToolFinished {
                call_id: out.call_id.clone(),
                tool: out.tool.clone(),
                result: ToolResult {
                    output: out.model_text.clone(),
                    ..out.result.clone()
                },
                spill_path: out
                    .truncated
                    .as_ref()
                    .filter(|t| t.spill_error.is_none())
                    .map(|t| t.spill_path.to_string_lossy().into_owned()),
                duration_ms,
            }
        } else {
            Event::ToolFailed {
                call_id: out.call_id.clone(),
                tool: out.tool.clone(),
                error: out.model_text.clone(),
                duration_ms,
                state: state_of(out.status),
            }
        };
        self.shared.emit(event);
    }
}

/// How the call log and the live stream name a call's end (the same word in both).
fn state_of(status: CallStatus) -> ToolCallState {
    match status {
        CallStatus::Completed => ToolCallState::Completed,
        CallStatus::Denied => ToolCallState::Denied,
        CallStatus::Aborted => ToolCallState::Interrupted,
        CallStatus::TimedOut => ToolCallState::TimedOut,
        CallStatus::Failed => ToolCallState::Failed,
    }
}
