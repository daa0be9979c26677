//! One prompt turn as the client sees it: the engine's `Event`s of the turn become
//! `session/update` notifications in order — text and reasoning chunks, each tool call
//! announced once (`tool_call`) and then updated (`tool_call_update`: in progress, its
//! title, the diffs of the changes it journaled, and its output when it completes or
//! fails). Permission asks go to the client as `session/request_permission` on their own
//! task, so the stream keeps flowing while the user decides.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use agent_client_protocol_schema::v1::{
    ContentChunk, Diff, PermissionOption, PermissionOptionKind, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SessionNotification, SessionUpdate,
    ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use podcode_core::{Engine, Port};
use podcode_protocol::{Event, PermissionReply, PermissionRequest, prompt_text};
use serde_json::Value;

use crate::rpc::Connection;
use crate::translate::{tool_kind, tool_locations};
use podcode_protocol::tool_title;

/// What the client's model-facing text says when a call was still open as the turn
/// ended (every path of the engine answers each call, so this is a safety net).
pub const CALL_NOT_FINISHED: &str = "Stopped: the turn ended before this call finished.";

/// The four choices every permission request offers, as Podcode's replies.
pub const PERMISSION_OPTIONS: [(&str, &str, PermissionOptionKind); 4] = [
    ("allow_once", "Allow once", PermissionOptionKind::AllowOnce),
    (
        "allow_always",
        "Always allow (remembered for this project)",
        PermissionOptionKind::AllowAlways,
    ),
    ("reject_once", "Reject", PermissionOptionKind::RejectOnce),
    (
        "reject_always",
        "Reject, and tell the agent not to try again",
        PermissionOptionKind::RejectAlways,
    ),
];

/// The feedback the model reads when the user picked "reject always": Podcode remembers
/// approvals only, so the refusal is said to the model instead.
pub const REJECT_ALWAYS_FEEDBACK: &str =
    "The user rejected this and does not want it asked again: do not retry this action.";

/// The Podcode reply for the option the client selected (`None`: the client cancelled
/// the request, e.g. because the user cancelled the turn).
pub fn reply_for(option_id: Option<&str>) -> PermissionReply {
    match option_id {
        Some("allow_once") => PermissionReply::Once,
        Some("allow_always") => PermissionReply::Always,
        Some("reject_always") => PermissionReply::Reject {
            feedback: Some(REJECT_ALWAYS_FEEDBACK.into()),
        },
        _ => PermissionReply::Reject { feedback: None },
    }
}

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
        let call = ToolCall::new(call_id.to_string(), tool_title(tool, &args, &self.dir))
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
            Event::Warning { message } => eprintln!("podcode acp: {message}"),
            _ => {}
        }
    }

    /// A call began running: announced now if the model's request was not seen, else
    /// updated with what its arguments say.
    fn started(&mut self, call_id: &str, tool: &str, args: Value) {
        if self.announce(call_id, tool, args.clone(), ToolCallStatus::InProgress) {
            return;
        }
        self.update(
            call_id,
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::InProgress)
                .kind(tool_kind(tool, &args))
                .title(tool_title(tool, &args, &self.dir))
                .locations(tool_locations(tool, &args, &self.dir))
                .raw_input(args),
        );
    }

    /// A sub-agent's own events show on its `task` card: a line per call it starts, and
    /// the diff of every change it journals (a grandchild's arrive wrapped once more).
    fn subagent(&mut self, task_call: &str, agent: &str, event: Event) {
        match event {
            Event::ToolStarted { tool, args, .. } => {
                let line = format!("{agent}: {}", tool_title(&tool, &args, &self.dir));
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

    /// Sends the ask to the client; the answer goes back as `Op::PermissionReply`. The
    /// request's card shows the same text as the terminal prompt (who asks for what, the
    /// command or diff, what "always" remembers) until the call reports its output.
    fn ask(
        &mut self,
        request_id: String,
        call_id: String,
        tool: String,
        request: PermissionRequest,
    ) {
        // A sub-agent's call is not one of this turn's cards: announce it so the client
        // can show what it is asked about.
        self.announce(&call_id, &tool, Value::Null, ToolCallStatus::Pending);
        let fields = ToolCallUpdateFields::new()
            .content(vec![ToolCallContent::from(ask_text(&tool, &request))]);
        let params = RequestPermissionRequest::new(
            self.session_id.clone(),
            ToolCallUpdate::new(call_id, fields),
            PERMISSION_OPTIONS
                .iter()
                .map(|(id, name, kind)| PermissionOption::new(*id, *name, *kind))
                .collect(),
        );
        let conn = self.conn.clone();
        let port = self.port.clone();
        tokio::spawn(async move {
            let answer = conn.request("session/request_permission", &params).await;
            let option = match answer {
                Ok(v) => match serde_json::from_value::<RequestPermissionResponse>(v) {
                    Ok(r) => match r.outcome {
                        RequestPermissionOutcome::Selected(s) => Some(s.option_id.0.to_string()),
                        _ => None,
                    },
                    Err(e) => {
                        eprintln!("podcode acp: unreadable permission answer: {e}");
                        None
                    }
                },
                Err(e) => {
                    eprintln!("podcode acp: permission request failed: {}", e.message);
                    None
                }
            };
            // An ask the turn's abort already closed ignores the reply.
            port.reply(&request_id, reply_for(option.as_deref()));
        });
    }
}

/// A permission ask as text: the terminal prompt's lines (`prompt_text`).
pub fn ask_text(tool: &str, request: &PermissionRequest) -> String {
    let p = prompt_text(tool, request);
    let mut text = p.title;
    if let Some(warning) = &p.warning {
        text.push_str(&format!("\n{warning}"));
    }
    for section in &p.sections {
        text.push_str(&format!("\n{}:", section.label));
        for line in &section.lines {
            text.push_str(&format!("\n  {line}"));
        }
    }
    for line in &p.always {
        text.push_str(&format!("\n{line}"));
    }
    text
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

/// What follows a streamed text block a plugin's `experimental.text.complete` rewrote.
fn rewritten(text: &str) -> String {
    format!("\n\n(rewritten by a plugin)\n{text}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_rewritten_block_follows_marked() {
        assert_eq!(rewritten("Final."), "\n\n(rewritten by a plugin)\nFinal.");
    }

    #[test]
    fn options_map_onto_podcode_replies() {
        assert_eq!(reply_for(Some("allow_once")), PermissionReply::Once);
        assert_eq!(reply_for(Some("allow_always")), PermissionReply::Always);
        assert_eq!(
            reply_for(Some("reject_once")),
            PermissionReply::Reject { feedback: None }
        );
        assert_eq!(
            reply_for(Some("reject_always")),
            PermissionReply::Reject {
                feedback: Some(REJECT_ALWAYS_FEEDBACK.into())
            }
        );
        assert_eq!(reply_for(None), PermissionReply::Reject { feedback: None });
        assert_eq!(
            reply_for(Some("something else")),
            PermissionReply::Reject { feedback: None }
        );
    }

    #[test]
    fn the_options_are_pinned() {
        let opts: Vec<Value> = PERMISSION_OPTIONS
            .iter()
            .map(|(id, name, kind)| {
                serde_json::to_value(PermissionOption::new(*id, *name, *kind)).unwrap()
            })
            .collect();
        assert_eq!(
            Value::Array(opts),
            json!([
                {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "allow_always", "name": "Always allow (remembered for this project)", "kind": "allow_always"},
                {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
                {"optionId": "reject_always", "name": "Reject, and tell the agent not to try again", "kind": "reject_always"},
            ])
        );
        assert_eq!(
            REJECT_ALWAYS_FEEDBACK,
            "The user rejected this and does not want it asked again: do not retry this action."
        );
        assert_eq!(
            CALL_NOT_FINISHED,
            "Stopped: the turn ended before this call finished."
        );
    }
}
