//! Writing the conversation as it happens: each message or part is committed as soon as it
//! is complete (what completes at once, a step's tool calls and `step` part, in one
//! transaction: `Store::end_step`), so a killed process loses at most the part that was
//! being streamed.

use std::sync::Arc;

use podcode_protocol::Event;
use podcode_store::{Store, StoreError};
use podcode_tools::{CallIdentity, CallStatus, ToolRuntime};
use serde::Serialize;
use serde_json::Value;

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
    /// abort before it started, a call in the final tool-less step): the tool runtime writes
    /// the same rows and events as for a pipeline call, under the same policy (a store
    /// failure is a warning).
    pub fn settled_call(
        &self,
        message_id: &str,
        call_id: &str,
        tool: &str,
        args: &Value,
        status: CallStatus,
        text: &str,
    ) {
        let identity = CallIdentity {
            session_id: self.session.clone(),
            message_id: message_id.to_string(),
            call_id: call_id.to_string(),
            ..Default::default()
        };
        self.runtime
            .record_settled(&identity, tool, args, status, text);
    }
}
