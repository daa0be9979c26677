//! Writing the conversation as it happens: one committed row per message or part, so a
//! killed process loses at most the part that was being streamed.

use std::sync::Arc;

use podcode_protocol::Event;
use podcode_store::{NewToolCall, Store, StoreError, ToolCallEnd, ToolCallState};
use podcode_tools::ToolRuntime;
use serde::Serialize;
use serde_json::{Value, json};

use crate::history::PartKind;

/// The store and event stream of one session, for the loop's own writes.
#[derive(Clone)]
pub(crate) struct Recorder {
    pub store: Arc<Store>,
    pub runtime: Arc<ToolRuntime>,
    pub session: String,
}

impl Recorder {
    pub fn message(&self, role: &str, content: &Value) -> Result<String, StoreError> {
        self.store.add_message(&self.session, role, content)
    }

    pub fn part<T: Serialize>(
        &self,
        message_id: &str,
        kind: PartKind,
        data: &T,
    ) -> Result<(), StoreError> {
        let data = serde_json::to_value(data)?;
        self.store
            .add_part(message_id, &self.session, kind.as_str(), &data)?;
        Ok(())
    }

    pub fn emit(&self, event: Event) {
        self.runtime.emit(event);
    }

    /// Records a call the loop settled without running it (a rejected `doom_loop` ask, an
    /// abort before it started), with the same rows and events as a pipeline call.
    pub fn settled_call(
        &self,
        message_id: &str,
        call_id: &str,
        tool: &str,
        args: &Value,
        state: ToolCallState,
        text: &str,
    ) -> Result<(), StoreError> {
        self.store.start_tool_call(&NewToolCall {
            id: call_id,
            session_id: &self.session,
            message_id: Some(message_id),
            tool,
            args,
        })?;
        self.store.finish_tool_call(
            call_id,
            &ToolCallEnd {
                state,
                title: "",
                output: text,
                metadata: &Value::Null,
                attachments: &json!([]),
                error: Some(text),
                spill_path: None,
            },
        )?;
        self.emit(Event::ToolStarted {
            session_id: self.session.clone(),
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            args: args.clone(),
        });
        self.emit(Event::ToolFailed {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            error: text.to_string(),
            duration_ms: 0,
        });
        Ok(())
    }
}
