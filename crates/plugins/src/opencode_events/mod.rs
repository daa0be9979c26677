//! Podcode's engine events as opencode's bus events, for plugins' `event` hooks: a plugin
//! written for opencode switches on `event.type` (`session.idle`, `message.part.updated`,
//! `file.edited`, …) and reads `event.properties` in opencode's shapes, so that is what it
//! gets.
//!
//! Data flow: `OpencodeEvents::translate` takes each engine event in order (the engine's bus:
//! every session's runtime events, sub-agents' unwrapped) and returns the opencode events it
//! stands for, `{id, type, properties}`. It keeps what opencode's events carry but one engine
//! event lacks: each session's agent, model and prompt, each message's session and text so
//! far, each tool call's part, the changes its turn journaled. State of a session is dropped
//! when its turn ends. `session.diff` carries the turn's files as opencode's `FileDiff`s; the
//! engine reads them from the change journal (`DiffLookup`), as the events name only ids.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use podcode_protocol::{Event, PermissionReply, StepUsage, TurnEnd};
use serde_json::{Value, json};

/// What a session's running turn has told so far.
#[derive(Default)]
struct Turn {
    agent: String,
    provider: String,
    model: String,
    /// The turn's prompt: its message id (the assistant messages' `parentID`).
    user: String,
    /// The assistant message streaming now, with its text part (id, text so far).
    message: String,
    created: u64,
    text: Option<(String, String)>,
    /// The prompt's text (its `text` part).
    prompt: String,
    /// The changes the turn's calls journaled, in order (`session.diff`).
    changes: Vec<String>,
    /// Steps started in this turn (the first one tells the diff as opencode does).
    steps: u32,
    /// Calls the streaming step asked for that have not ended yet.
    open_calls: std::collections::HashSet<String>,
    /// A step that ended while its calls still run: opencode ends a step (its text part,
    /// `step-finish` part and assistant message) after the step's tool calls, so it is told
    /// when the last of them ends (or the next step or the turn's end comes first).
    finish: Option<StepEnd>,
}

/// What a step's end tells, kept until it can be told.
struct StepEnd {
    message: String,
    reason: String,
    usage: StepUsage,
    at: u64,
}

/// A tool call's part, kept from its start to its end.
struct Call {
    session: String,
    message: String,
    part: String,
    tool: String,
    input: Value,
    start: u64,
}

/// The files changed by journaled changes (ids, in order), as opencode's `FileDiff`s
/// (`{file, patch, additions, deletions, status}`, a file once, from before its first change to
/// after its last).
pub type DiffLookup = Arc<dyn Fn(&[String]) -> Vec<Value> + Send + Sync>;

/// Translates engine events into opencode bus events (see the module doc).
#[derive(Default)]
pub struct OpencodeEvents {
    diffs: Option<DiffLookup>,
    turns: HashMap<String, Turn>,
    /// Message id → session id (a delta names only its message).
    messages: HashMap<String, String>,
    calls: HashMap<String, Call>,
    /// Ask id → session id (a reply names only the ask).
    asks: HashMap<String, String>,
    counter: u64,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn tokens(u: &StepUsage) -> Value {
    json!({
        "input": u.input_tokens.saturating_sub(u.cache_read_tokens),
        "output": u.output_tokens.saturating_sub(u.reasoning_tokens),
        "reasoning": u.reasoning_tokens,
        "cache": {"read": u.cache_read_tokens, "write": u.cache_write_tokens},
    })
}

impl OpencodeEvents {
    /// A translator with nothing seen yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A translator whose `session.diff` events carry the files `diffs` finds for a turn's
    /// changes (without one they carry none).
    pub fn with_diffs(diffs: Option<DiffLookup>) -> Self {
        Self {
            diffs,
            ..Self::default()
        }
    }

    /// `session.diff` for `session`'s turn so far. opencode sends it when a turn's first
    /// step starts and after every step.
    fn diff(&mut self, session: &str) -> Value {
        let changes = self
            .turns
            .get(session)
            .map(|t| t.changes.clone())
            .unwrap_or_default();
        let diff = match (&self.diffs, changes.is_empty()) {
            (Some(lookup), false) => lookup(&changes),
            _ => Vec::new(),
        };
        self.event("session.diff", json!({"sessionID": session, "diff": diff}))
    }

    /// An id in opencode's form (`evt_…`, `prt_…`), increasing within this translator.
    fn id(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}_{:012x}{:08x}", now(), self.counter)
    }

    fn event(&mut self, kind: &str, properties: Value) -> Value {
        json!({"id": self.id("evt"), "type": kind, "properties": properties})
    }

    fn status(&mut self, session: &str, busy: bool) -> Value {
        let status = if busy { "busy" } else { "idle" };
        self.event(
            "session.status",
            json!({"sessionID": session, "status": {"type": status}}),
        )
    }

    fn assistant(&self, session: &str, t: &Turn, done: Option<(&StepUsage, u64)>) -> Value {
        let mut info = json!({
            "id": t.message, "sessionID": session, "role": "assistant",
            "time": {"created": t.created}, "parentID": t.user,
            "modelID": t.model, "providerID": t.provider, "mode": t.agent, "agent": t.agent,
            "cost": 0, "tokens": tokens(&StepUsage::default()),
        });
        if let Some((usage, at)) = done {
            info["time"]["completed"] = json!(at);
            info["cost"] = json!(usage.cost.unwrap_or(0.0));
            info["tokens"] = tokens(usage);
        }
        json!({"info": info, "sessionID": session})
    }

    fn text_part(&self, session: &str, t: &Turn, end: Option<u64>) -> Option<Value> {
        let (id, text) = t.text.as_ref()?;
        let mut part = json!({
            "id": id, "sessionID": session, "messageID": t.message, "type": "text",
            "text": text, "time": {"start": t.created},
        });
        if let Some(end) = end {
            part["time"]["end"] = json!(end);
        }
        Some(part)
    }

    fn tool_part(call: &Call, state: Value) -> Value {
        json!({
            "id": call.part, "sessionID": call.session, "messageID": call.message,
            "type": "tool", "callID": call.part, "tool": call.tool, "state": state,
        })
    }

    /// `message.part.updated` for `part`, with opencode's `sessionID` and `time` beside it.
    fn part_event(&mut self, session: &str, part: Value) -> Value {
        self.event(
            "message.part.updated",
            json!({"part": part, "sessionID": session, "time": now()}),
        )
    }

    /// A call of `session`'s step ended: the step's end is told once no call is left.
    fn call_ended(&mut self, session: &str, call_id: &str) -> Vec<Value> {
        let Some(t) = self.turns.get_mut(session) else {
            return Vec::new();
        };
        t.open_calls.remove(call_id);
        if t.open_calls.is_empty() {
            self.end_step(session)
        } else {
            Vec::new()
        }
    }

    /// The end of `session`'s last step, when it is waiting to be told: its whole text
    /// part, its `step-finish` part and the completed assistant message.
    fn end_step(&mut self, session: &str) -> Vec<Value> {
        let Some(t) = self.turns.get_mut(session) else {
            return Vec::new();
        };
        t.open_calls.clear();
        let Some(end) = t.finish.take() else {
            return Vec::new();
        };
        let t = &self.turns[session];
        let text = self.text_part(session, t, Some(end.at));
        let info = self.assistant(session, t, Some((&end.usage, end.at)));
        let mut out = Vec::new();
        if let Some(p) = text {
            out.push(self.part_event(session, p));
        }
        let step = json!({"id": self.id("prt"), "sessionID": session,
            "messageID": end.message, "type": "step-finish", "reason": end.reason,
            "cost": end.usage.cost.unwrap_or(0.0), "tokens": tokens(&end.usage)});
        out.push(self.part_event(session, step));
        out.push(self.event("message.updated", info));
        out.push(self.diff(session));
        out
    }

    /// The opencode events `event` stands for, in order (none for what opencode has no
    /// event for).
    pub fn translate(&mut self, event: &Event) -> Vec<Value> {
        let mut out = Vec::new();
        match event {
            Event::SessionCreated {
                session_id,
                parent_id,
                title,
                directory,
                created_at,
                ..
            } => {
                let mut info = json!({
                    "id": session_id, "slug": session_id, "projectID": directory,
                    "directory": directory, "title": title, "version": env!("CARGO_PKG_VERSION"),
                    "time": {"created": created_at, "updated": created_at},
                });
                if let Some(parent) = parent_id {
                    info["parentID"] = json!(parent);
                }
                let props = json!({"sessionID": session_id, "info": info});
                out.push(self.event("session.created", props.clone()));
                out.push(self.event("session.updated", props));
            }
            Event::UserMessage {
                session_id,
                message_id,
                text,
                ..
            } => {
                let turn = self.turns.entry(session_id.clone()).or_default();
                turn.user = message_id.clone();
                turn.prompt = text.clone();
            }
            Event::TurnStarted {
                session_id,
                agent,
                model,
            } => {
                let (provider, model) = model.split_once('/').unwrap_or(("", model));
                let created = now();
                let turn = self.turns.entry(session_id.clone()).or_default();
                turn.agent = agent.clone();
                turn.provider = provider.to_string();
                turn.model = model.to_string();
                let info = json!({"info": {
                    "id": turn.user, "sessionID": session_id, "role": "user",
                    "time": {"created": created}, "agent": agent,
                    "model": {"providerID": provider, "modelID": model},
                }, "sessionID": session_id});
                let (user, prompt) = (turn.user.clone(), turn.prompt.clone());
                out.push(self.event("message.updated", info));
                let part = json!({"id": self.id("prt"), "sessionID": session_id,
                    "messageID": user, "type": "text", "text": prompt});
                out.push(self.part_event(session_id, part));
                out.push(self.status(session_id, true));
            }
            Event::StepStarted {
                session_id,
                message_id,
                ..
            } => {
                out.extend(self.end_step(session_id));
                self.messages.insert(message_id.clone(), session_id.clone());
                let part = self.id("prt");
                let turn = self.turns.entry(session_id.clone()).or_default();
                turn.message = message_id.clone();
                turn.created = now();
                turn.text = None;
                turn.steps += 1;
                let first = turn.steps == 1;
                let info = self.assistant(session_id, &self.turns[session_id], None);
                out.push(self.event("message.updated", info));
                if first {
                    out.push(self.diff(session_id));
                }
                let step = json!({"id": part, "sessionID": session_id,
                    "messageID": message_id, "type": "step-start"});
                out.push(self.part_event(session_id, step));
            }
            Event::TextDelta { message_id, text } => {
                let Some(session) = self.messages.get(message_id).cloned() else {
                    return out;
                };
                let fresh = self.id("prt");
                let Some(turn) = self.turns.get_mut(&session) else {
                    return out;
                };
                // As opencode streams a text part: the part (empty) when it opens, then
                // each piece as a `message.part.delta`, then the whole part when the step ends.
                let first = turn.text.is_none();
                let part = turn
                    .text
                    .get_or_insert_with(|| (fresh, String::new()))
                    .0
                    .clone();
                if first && let Some(p) = self.text_part(&session, &self.turns[&session], None) {
                    out.push(self.part_event(&session, p));
                }
                if let Some((_, all)) = self.turns.get_mut(&session).and_then(|t| t.text.as_mut()) {
                    all.push_str(text);
                }
                let delta = json!({"sessionID": session, "messageID": message_id,
                    "partID": part, "field": "text", "delta": text});
                out.push(self.event("message.part.delta", delta));
            }
            // The part's final text is the one the plugins' hook left.
            Event::TextReplaced { message_id, text } => {
                let turn = self
                    .messages
                    .get(message_id)
                    .and_then(|s| self.turns.get_mut(s));
                if let Some((_, all)) = turn.and_then(|t| t.text.as_mut()) {
                    all.clone_from(text);
                }
            }
            Event::ToolRequested {
                message_id,
                call_id,
                tool,
            } => {
                let Some(session) = self.messages.get(message_id).cloned() else {
                    return out;
                };
                if let Some(turn) = self.turns.get_mut(&session) {
                    turn.open_calls.insert(call_id.clone());
                }
                let part = json!({"id": call_id, "sessionID": session, "messageID": message_id,
                    "type": "tool", "callID": call_id, "tool": tool,
                    "state": {"status": "pending", "input": {}, "raw": ""}});
                out.push(self.part_event(&session, part));
            }
            Event::ToolStarted {
                session_id,
                call_id,
                tool,
                args,
            } => {
                let message = self
                    .turns
                    .get(session_id)
                    .map(|t| t.message.clone())
                    .unwrap_or_default();
                let call = Call {
                    session: session_id.clone(),
                    message,
                    part: call_id.clone(),
                    tool: tool.clone(),
                    input: args.clone(),
                    start: now(),
                };
                let state = json!({"status": "running", "input": call.input,
                    "time": {"start": call.start}});
                let part = Self::tool_part(&call, state);
                out.push(self.part_event(session_id, part));
                self.calls.insert(call_id.clone(), call);
            }
            Event::ToolMetadata {
                call_id,
                title,
                metadata,
            } => {
                if let Some(call) = self.calls.get(call_id) {
                    let mut state = json!({"status": "running", "input": call.input,
                        "time": {"start": call.start}});
                    if let Some(title) = title {
                        state["title"] = json!(title);
                    }
                    if let Some(metadata) = metadata {
                        state["metadata"] = metadata.clone();
                    }
                    let (session, part) = (call.session.clone(), Self::tool_part(call, state));
                    out.push(self.part_event(&session, part));
                }
            }
            Event::ToolFinished {
                call_id, result, ..
            } => {
                if let Some(call) = self.calls.remove(call_id) {
                    let metadata = if result.metadata.is_object() {
                        result.metadata.clone()
                    } else {
                        json!({})
                    };
                    let state = json!({"status": "completed", "input": call.input,
                        "output": result.output, "title": result.title, "metadata": metadata,
                        "time": {"start": call.start, "end": now()}});
                    out.push(self.part_event(&call.session, Self::tool_part(&call, state)));
                    if call.tool == "todowrite" {
                        let todos = result.metadata.get("todos").cloned().unwrap_or(json!([]));
                        let props = json!({"sessionID": call.session, "todos": todos});
                        out.push(self.event("todo.updated", props));
                    }
                    out.extend(self.call_ended(&call.session, call_id));
                }
            }
            Event::ToolFailed { call_id, error, .. } => {
                if let Some(call) = self.calls.remove(call_id) {
                    let state = json!({"status": "error", "input": call.input, "error": error,
                        "time": {"start": call.start, "end": now()}});
                    out.push(self.part_event(&call.session, Self::tool_part(&call, state)));
                    out.extend(self.call_ended(&call.session, call_id));
                } else if let Some(session) = self
                    .turns
                    .iter()
                    .find(|(_, t)| t.open_calls.contains(call_id))
                    .map(|(s, _)| s.clone())
                {
                    // Refused before it started: it ends the step's wait all the same.
                    out.extend(self.call_ended(&session, call_id));
                }
            }
            Event::ChangeRecorded {
                change_id,
                call_id,
                file,
            } => {
                let session = call_id
                    .as_ref()
                    .and_then(|c| self.calls.get(c))
                    .map(|c| c.session.clone());
                if let Some(turn) = session.and_then(|s| self.turns.get_mut(&s)) {
                    turn.changes.push(change_id.clone());
                }
                out.push(self.event("file.edited", json!({"file": file})));
                // opencode's watcher then sees the write too.
                let watched = json!({"file": file, "event": "change"});
                out.push(self.event("file.watcher.updated", watched));
            }
            Event::StepFinished {
                session_id,
                message_id,
                finish_reason,
                usage,
                ..
            } => {
                let Some(t) = self.turns.get_mut(session_id) else {
                    return out;
                };
                t.finish = Some(StepEnd {
                    message: message_id.clone(),
                    reason: finish_reason.clone().unwrap_or_default(),
                    usage: *usage,
                    at: now(),
                });
                if t.open_calls.is_empty() {
                    out.extend(self.end_step(session_id));
                }
            }
            Event::Compacted { session_id, .. } => {
                out.push(self.event("session.compacted", json!({"sessionID": session_id})));
            }
            Event::PermissionAsked {
                session_id,
                request_id,
                ..
            } => {
                self.asks.insert(request_id.clone(), session_id.clone());
            }
            Event::PermissionResolved {
                request_id,
                reply: Some(reply),
            } => {
                let session = self.asks.remove(request_id).unwrap_or_default();
                let reply = match reply {
                    PermissionReply::Once => "once",
                    PermissionReply::Always => "always",
                    PermissionReply::Reject { .. } => "reject",
                };
                let props = json!({"sessionID": session, "requestID": request_id, "reply": reply});
                out.push(self.event("permission.replied", props));
            }
            Event::TurnFinished {
                session_id,
                summary,
            } => {
                out.extend(self.end_step(session_id));
                if self.turns.remove(session_id).is_some() {
                    self.messages.retain(|_, s| s != session_id);
                }
                if summary.end == TurnEnd::Error {
                    let message = summary.error.clone().unwrap_or_default();
                    let error = json!({"name": "UnknownError", "data": {"message": message}});
                    let props = json!({"sessionID": session_id, "error": error});
                    out.push(self.event("session.error", props));
                }
                out.push(self.status(session_id, false));
                out.push(self.event("session.idle", json!({"sessionID": session_id})));
            }
            _ => {}
        }
        out
    }
}

#[cfg(test)]
mod tests;
