//! One prompt turn as the client sees it: the engine's `Event`s of the turn become
//! `session/update` notifications in order — text and reasoning chunks, each tool call
//! announced once (`tool_call`) and then updated (`tool_call_update`: in progress, its
//! title, the diffs of the changes it journaled, and its output when it completes or
//! fails), and the context meter after each model request (`usage_update`). Permission
//! asks go to the client through `ask.rs`, named by the call they are about.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use agent_client_protocol_schema::v1::{
    ContentChunk, Cost, Diff, SessionNotification, SessionUpdate, ToolCall, ToolCallContent,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, UsageUpdate,
};
use podcode_core::{Engine, Port};
use podcode_protocol::{Event, PermissionRequest, StepUsage};
use serde_json::Value;

use crate::ask::{Ask, ask_text};
use crate::rpc::Connection;
use crate::translate::{call_title, tool_kind, tool_locations};

/// What the client's model-facing text says when a call was still open as the turn
/// ended (every path of the engine answers each call, so this is a safety net).
pub const CALL_NOT_FINISHED: &str = "Stopped: the turn ended before this call finished.";

#[derive(Default)]
struct Call {
    diffs: Vec<ToolCallContent>,
    /// What a `task` call's sub-agent did so far, one line per call it made.
    progress: Vec<String>,
    done: bool,
}

impl Call {
    /// The card's content while the call runs: its diffs, then its sub-agent's progress.
    fn content(&self) -> Vec<ToolCallContent> {
        let mut content = self.diffs.clone();
        if !self.progress.is_empty() {
            content.push(ToolCallContent::from(self.progress.join("\n")));
        }
        content
    }
}

/// The translation state of one turn.
pub struct Turn {
    session_id: String,
    conn: Connection,
    engine: Arc<Engine>,
    port: Port,
    /// The session's directory: relative paths in arguments are resolved against it.
    dir: PathBuf,
    calls: HashMap<String, Call>,
    /// Call ids in the order they were announced.
    order: Vec<String>,
    /// The arguments of every call that started, a sub-agent's too: an ask about it is
    /// named by what they say.
    args: HashMap<String, Value>,
    /// The last model request's finish reason (`length`, `content_filter`, …).
    pub finish_reason: Option<String>,
}

impl Turn {
    pub fn new(
        session_id: &str,
        conn: Connection,
        engine: Arc<Engine>,
        port: Port,
        dir: PathBuf,
    ) -> Self {
        Self {
            session_id: session_id.to_string(),
            conn,
            engine,
            port,
            dir,
            calls: HashMap::new(),
            order: Vec::new(),
            args: HashMap::new(),
            finish_reason: None,
        }
    }

    fn send(&self, update: SessionUpdate) {
        send_update(&self.conn, &self.session_id, update);
    }

    /// Announces `call_id` once (`tool_call`); later news about it are updates.
    fn announce(&mut self, call_id: &str, tool: &str, args: Value, status: ToolCallStatus) -> bool {
        if self.calls.contains_key(call_id) {
            return false;
        }
        let call = ToolCall::new(call_id.to_string(), call_title(tool, &args, &self.dir))
            .kind(tool_kind(tool, &args))
            .status(status)
            .locations(tool_locations(tool, &args, &self.dir))
            .raw_input((!args.is_null()).then(|| args.clone()));
        self.send(SessionUpdate::ToolCall(call));
        self.calls.insert(call_id.to_string(), Call::default());
        self.order.push(call_id.to_string());
        true
    }

    fn update(&self, call_id: &str, fields: ToolCallUpdateFields) {
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            call_id.to_string(),
            fields,
        )));
    }

    /// Translates one engine event of the turn.
    pub fn handle(&mut self, event: Event) {
        match event {
            Event::TextDelta { text, .. } => {
                self.send(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                    text.into(),
                )));
            }
            // ACP has no way to replace streamed text: the rewritten block follows, marked.
            Event::TextReplaced { text, .. } => {
                self.send(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                    rewritten(&text).into(),
                )));
            }
            Event::ReasoningDelta { text, .. } => {
                self.send(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                    text.into(),
                )));
            }
            Event::ToolRequested { call_id, tool, .. } => {
                self.announce(&call_id, &tool, Value::Null, ToolCallStatus::Pending);
            }
            Event::ToolStarted {
                call_id,
                tool,
                args,
                ..
            } => self.started(&call_id, &tool, args),
            Event::ToolMetadata {
                call_id,
                title: Some(title),
                ..
            } if !title.is_empty() && self.calls.contains_key(&call_id) => {
                self.update(&call_id, ToolCallUpdateFields::new().title(title));
            }
            Event::ChangeRecorded {
                change_id,
                call_id: Some(call_id),
                ..
            } => self.change(&change_id, &call_id),
            Event::ToolFinished {
                call_id,
                tool,
                result,
                ..
            } => {
                // The todo list is the client's plan (the whole list each time).
                if tool == "todowrite" {
                    let plan = crate::translate::plan_of(&result.metadata);
                    self.send(SessionUpdate::Plan(plan));
                }
                let mut content = self.take_diffs(&call_id);
                if !result.output.is_empty() {
                    content.push(ToolCallContent::from(result.output));
                }
                self.finish(&call_id, ToolCallStatus::Completed, content);
            }
            Event::ToolFailed { call_id, error, .. } => {
                let mut content = self.take_diffs(&call_id);
                content.push(ToolCallContent::from(error));
                self.finish(&call_id, ToolCallStatus::Failed, content);
            }
            Event::PermissionAsked {
                request_id,
                call_id,
                tool,
                request,
                ..
            } => self.ask(request_id, call_id, tool, request),
            Event::Subagent {
                call_id,
                agent,
                event,
                ..
            } => self.subagent(&call_id, &agent, *event),
            Event::StepFinished { finish_reason, .. } => self.finish_reason = finish_reason,
            Event::Usage {
                session_id,
                total,
                context_tokens,
                context_window,
            } if session_id == self.session_id => {
                if let Some(usage) = usage_update(&total, context_tokens, context_window) {
                    self.send(SessionUpdate::UsageUpdate(usage));
                }
            }
            Event::Warning { message } => eprintln!("podcode acp: {message}"),
            _ => {}
        }
    }

    /// A call began running: announced now if the model's request was not seen, else
    /// updated with what its arguments say.
    fn started(&mut self, call_id: &str, tool: &str, args: Value) {
        self.args.insert(call_id.to_string(), args.clone());
        if self.announce(call_id, tool, args.clone(), ToolCallStatus::InProgress) {
            return;
        }
        self.update(
            call_id,
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::InProgress)
                .kind(tool_kind(tool, &args))
                .title(call_title(tool, &args, &self.dir))
                .locations(tool_locations(tool, &args, &self.dir))
                .raw_input(args),
        );
    }

    /// A sub-agent's own events show on its `task` card: a line per call it starts, and
    /// the diff of every change it journals (a grandchild's arrive wrapped once more).
    fn subagent(&mut self, task_call: &str, agent: &str, event: Event) {
        match event {
            Event::ToolStarted {
                call_id,
                tool,
                args,
                ..
            } => {
                self.args.insert(call_id, args.clone());
                let line = format!("{agent}: {}", call_title(&tool, &args, &self.dir));
                let Some(call) = self.calls.get_mut(task_call) else {
                    return;
                };
                call.progress.push(line);
                let content = call.content();
                self.update(task_call, ToolCallUpdateFields::new().content(content));
            }
            Event::ChangeRecorded { change_id, .. } => self.change(&change_id, task_call),
            Event::Subagent { agent, event, .. } => self.subagent(task_call, &agent, *event),
            // A sub-agent's call the user was asked about has its own card (`ask`): close it.
            Event::ToolFinished {
                call_id, result, ..
            } if self.calls.contains_key(&call_id) => {
                let content = vec![ToolCallContent::from(result.output)];
                self.finish(&call_id, ToolCallStatus::Completed, content);
            }
            Event::ToolFailed { call_id, error, .. } if self.calls.contains_key(&call_id) => {
                self.finish(
                    &call_id,
                    ToolCallStatus::Failed,
                    vec![ToolCallContent::from(error)],
                );
            }
            _ => {}
        }
    }

    /// A journaled change of a call: its diff joins the call's content at once (the
    /// editor shows the edit while the call still runs) and again in the final update.
    fn change(&mut self, change_id: &str, call_id: &str) {
        let change = match self.engine.change(change_id) {
            Ok(Some(c)) => c,
            Ok(None) => return,
            Err(e) => return eprintln!("podcode acp: cannot read change {change_id}: {e}"),
        };
        let diff = ToolCallContent::from(
            Diff::new(
                PathBuf::from(&change.file),
                change.new_content.unwrap_or_default(),
            )
            .old_text(change.old_content),
        );
        let Some(call) = self.calls.get_mut(call_id) else {
            return;
        };
        call.diffs.push(diff);
        let content = call.content();
        self.update(call_id, ToolCallUpdateFields::new().content(content));
    }

    fn take_diffs(&mut self, call_id: &str) -> Vec<ToolCallContent> {
        self.calls
            .get_mut(call_id)
            .map(|c| std::mem::take(&mut c.diffs))
            .unwrap_or_default()
    }

    fn finish(&mut self, call_id: &str, status: ToolCallStatus, content: Vec<ToolCallContent>) {
        let Some(call) = self.calls.get_mut(call_id) else {
            return;
        };
        call.done = true;
        self.update(
            call_id,
            ToolCallUpdateFields::new().status(status).content(content),
        );
    }

    /// Closes calls the engine never finished, so no card spins forever.
    pub fn close_open_calls(&mut self) {
        let open: Vec<String> = self
            .order
            .iter()
            .filter(|id| self.calls.get(*id).is_some_and(|c| !c.done))
            .cloned()
            .collect();
        for id in open {
            self.finish(
                &id,
                ToolCallStatus::Failed,
                vec![ToolCallContent::from(CALL_NOT_FINISHED)],
            );
        }
    }

    /// Sends the ask to the client (`ask.rs`), named by what the call does. A sub-agent's
    /// call is not one of this turn's cards: it is announced so the client can show what
    /// it is asked about.
    fn ask(
        &mut self,
        request_id: String,
        call_id: String,
        tool: String,
        request: PermissionRequest,
    ) {
        let args = self.args.get(&call_id).cloned().unwrap_or(Value::Null);
        self.announce(&call_id, &tool, args.clone(), ToolCallStatus::Pending);
        let ask = Ask {
            session_id: self.session_id.clone(),
            request_id,
            title: call_title(&tool, &args, &self.dir),
            kind: tool_kind(&tool, &args),
            text: ask_text(&tool, &request),
            call_id,
        };
        crate::ask::send(self.conn.clone(), self.port.clone(), ask);
    }
}

/// One `session/update` notification. Every text and title the editor shows has its
/// invisible and direction-changing characters written as `<U+XXXX>` markers (the rule all
/// front ends share, `podcode_protocol::show_hidden_chars`); the call's raw input and
/// output and the diffs' file contents stay exact.
pub fn send_update(conn: &Connection, session_id: &str, update: SessionUpdate) {
    let mut params = serde_json::to_value(SessionNotification::new(session_id.to_string(), update))
        .unwrap_or(Value::Null);
    show_hidden_in(&mut params);
    conn.notify("session/update", params);
}

fn show_hidden_in(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match (key.as_str(), v) {
                    ("rawInput" | "rawOutput" | "oldText" | "newText", _) => {}
                    ("text" | "title", Value::String(s)) => {
                        if let std::borrow::Cow::Owned(shown) =
                            podcode_protocol::show_hidden_chars(s)
                        {
                            *s = shown;
                        }
                    }
                    (_, v) => show_hidden_in(v),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(show_hidden_in),
        _ => {}
    }
}

/// The context meter after a model request: the last prompt's tokens of the model's
/// window, and what the session cost so far when the price is known. `None` while the
/// window is unknown, as a meter without a size says nothing.
pub(crate) fn usage_update(
    total: &StepUsage,
    context_tokens: u64,
    window: u64,
) -> Option<UsageUpdate> {
    (window > 0).then(|| {
        UsageUpdate::new(context_tokens, window).cost(total.cost.map(|usd| Cost::new(usd, "USD")))
    })
}

/// What follows a streamed text block a plugin's `experimental.text.complete` rewrote.
fn rewritten(text: &str) -> String {
    format!("\n\n(rewritten by a plugin)\n{text}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_context_meter_needs_a_window_and_shows_a_known_cost() {
        let mut total = StepUsage::default();
        assert!(usage_update(&total, 10, 0).is_none());
        assert_eq!(
            serde_json::to_value(usage_update(&total, 1200, 128_000)).unwrap(),
            json!({"used": 1200, "size": 128_000})
        );
        total.cost = Some(0.25);
        assert_eq!(
            serde_json::to_value(usage_update(&total, 1200, 128_000)).unwrap(),
            json!({"used": 1200, "size": 128_000, "cost": {"amount": 0.25, "currency": "USD"}})
        );
    }

    #[test]
    fn a_rewritten_block_follows_marked() {
        assert_eq!(rewritten("Final."), "\n\n(rewritten by a plugin)\nFinal.");
        assert_eq!(
            CALL_NOT_FINISHED,
            "Stopped: the turn ended before this call finished."
        );
    }
}
