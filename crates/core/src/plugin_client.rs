//! The engine's side of the opencode `client` plugins receive (`podcode_plugins::ClientBackend`):
//! a toast becomes `Event::Toast` for every session (through the tool set's notices, the
//! channel every session forwards to its front end); session calls answer from the store in
//! the opencode SDK's shapes — `Session` (`{id, slug, projectID, directory, parentID?, title,
//! agent, model?, version, cost, tokens, time}`), `messages` as `[{info, parts}]`, `status` as
//! opencode's map of sessions with a turn running (`active.rs`). Calls that write:
//! `update({body: {title}})` retitles a session, and `prompt({body: {noReply: true, parts}})`
//! stores the parts as a user message the next request sends (how plugins add context; parts
//! marked `synthetic` are hidden from transcripts, as in opencode). A prompt that asks for a
//! reply and `command({body: {command, arguments}})` start a turn in a session a front end has
//! open in this process (through its port, as the front end's own prompt would: queued behind
//! a running turn), and resolve once it is accepted — not when it ends, so a plugin awaiting
//! one from a hook of that session's turn cannot stall it; a session not open here is refused
//! with a text saying so. The store is opened on the first call, so a plugin that never uses
//! sessions costs nothing.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use podcode_plugins::{ClientBackend, ClientError, Toast};
use podcode_protocol::{Event, Op};
use podcode_store::{SessionRow, Store};

use crate::active::ActiveSessions;
use serde_json::{Value, json};
use tokio::sync::broadcast;

pub struct EngineClient {
    db_path: PathBuf,
    project: PathBuf,
    store: Mutex<Option<Arc<Store>>>,
    notices: OnceLock<broadcast::Sender<Event>>,
    active: Arc<ActiveSessions>,
    auth: podcode_config::AuthStore,
}

/// What a plugin is told when it starts a turn in a session no front end has open here.
pub const SESSION_NOT_OPEN: &str = "is not open in this Podcode process: a plugin can start a turn (client.session.prompt without noReply, client.session.command) only in a session a front end has open; pass `noReply: true` to add the parts for its next request instead";

impl EngineClient {
    pub(crate) fn new(
        db_path: PathBuf,
        project: PathBuf,
        active: Arc<ActiveSessions>,
        auth: podcode_config::AuthStore,
    ) -> Self {
        Self {
            auth,
            db_path,
            project,
            store: Mutex::new(None),
            notices: OnceLock::new(),
            active,
        }
    }

    /// Where toasts go: the tool set's notices (every session forwards them).
    pub fn attach(&self, notices: broadcast::Sender<Event>) {
        let _ = self.notices.set(notices);
    }

    fn store(&self) -> Result<Arc<Store>, ClientError> {
        let mut slot = match self.store.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if let Some(s) = slot.as_ref() {
            return Ok(s.clone());
        }
        let store = Arc::new(Store::open(&self.db_path).map_err(unknown)?);
        *slot = Some(store.clone());
        Ok(store)
    }
}

fn unknown(e: impl std::fmt::Display) -> ClientError {
    ClientError::new("UnknownError", e.to_string())
}

/// opencode's `Session` for a stored session (its keys, where Podcode has the value).
fn session_json(row: &SessionRow, project: &Path, store: &Store) -> Value {
    let usage = store
        .session_usage(&row.id)
        .ok()
        .flatten()
        .unwrap_or_default();
    let mut v = json!({
        "id": row.id,
        "slug": row.id,
        "projectID": project.display().to_string(),
        "directory": row.cwd,
        "title": row.title,
        "agent": row.agent,
        "version": env!("CARGO_PKG_VERSION"),
        "cost": usage.cost.unwrap_or(0.0),
        "tokens": {
            "input": usage.input_tokens,
            "output": usage.output_tokens,
            "reasoning": usage.reasoning_tokens,
            "cache": {"read": usage.cache_read_tokens, "write": usage.cache_write_tokens},
        },
        "time": {"created": row.created_at, "updated": row.updated_at},
    });
    if let Some(parent) = &row.parent_id {
        v["parentID"] = json!(parent);
    }
    if let Some((provider, model)) = row.model.as_deref().and_then(|m| m.split_once('/')) {
        v["model"] = json!({"id": model, "providerID": provider});
    }
    v
}

fn not_found(id: &str) -> ClientError {
    ClientError::new("NotFoundError", format!("Session not found: {id}"))
}

/// The text parts of a prompt's `body.parts` (`{type: "text", text, synthetic?}`).
fn prompt_texts(args: &Value) -> Result<Vec<(String, bool)>, ClientError> {
    let parts = args
        .pointer("/body/parts")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let texts: Vec<(String, bool)> = parts
        .iter()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|p| {
            let text = p.get("text").and_then(Value::as_str)?;
            let synthetic = p.get("synthetic").and_then(Value::as_bool) == Some(true);
            Some((text.to_string(), synthetic))
        })
        .collect();
    if texts.is_empty() {
        return Err(ClientError::new(
            "BadRequestError",
            "client.session.prompt needs text parts: { body: { parts: [{ type: \"text\", text }] } }",
        ));
    }
    Ok(texts)
}

fn needs_id(args: &Value, method: &str) -> Result<String, ClientError> {
    args.get("id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| {
            ClientError::new(
                "BadRequestError",
                format!("client.session.{method} needs a session id: {{ path: {{ id }} }}"),
            )
        })
}

#[async_trait::async_trait]
impl ClientBackend for EngineClient {
    async fn auth(&self, method: &str, params: &Value) -> Result<Value, ClientError> {
        let provider = params.get("provider").and_then(Value::as_str).unwrap_or("");
        match method {
            "get" => Ok(self.auth.get(provider).unwrap_or(Value::Null)),
            "set" => {
                let body = params.get("body").cloned().unwrap_or(Value::Null);
                self.auth
                    .set(provider, body)
                    .map(|()| json!(true))
                    .map_err(|e| ClientError::new("BadRequestError", e.to_string()))
            }
            other => Err(ClientError::new(
                "UnknownError",
                format!(
                    "client.auth.{other} is not supported in Podcode (it offers client.auth.set)"
                ),
            )),
        }
    }

    fn toast(&self, t: Toast) {
        if let Some(n) = self.notices.get() {
            let _ = n.send(Event::Toast {
                title: t.title,
                message: t.message,
                variant: t.variant,
            });
        }
    }

    async fn session(&self, method: &str, args: &Value) -> Result<Value, ClientError> {
        match method {
            "list" => {
                let store = self.store()?;
                let rows = store.list_sessions().map_err(unknown)?;
                Ok(Value::Array(
                    rows.iter()
                        .filter(|r| Path::new(&r.main_cwd).starts_with(&self.project))
                        .map(|r| session_json(r, &self.project, &store))
                        .collect(),
                ))
            }
            "get" => {
                let id = needs_id(args, method)?;
                let store = self.store()?;
                match store.session(&id).map_err(unknown)? {
                    Some(row) => Ok(session_json(&row, &self.project, &store)),
                    None => Err(not_found(&id)),
                }
            }
            "update" => {
                let id = needs_id(args, method)?;
                let store = self.store()?;
                if let Some(title) = args.pointer("/body/title").and_then(Value::as_str)
                    && !store.retitle_session(&id, title).map_err(unknown)?
                {
                    return Err(not_found(&id));
                }
                match store.session(&id).map_err(unknown)? {
                    Some(row) => Ok(session_json(&row, &self.project, &store)),
                    None => Err(not_found(&id)),
                }
            }
            "prompt" => self.prompt(args),
            "command" => {
                let id = needs_id(args, "command")?;
                let body = args.get("body").cloned().unwrap_or(Value::Null);
                let Some(name) = body.get("command").and_then(Value::as_str) else {
                    return Err(ClientError::new(
                        "BadRequestError",
                        "client.session.command needs a command: { path: { id }, body: { command, arguments } }",
                    ));
                };
                let name = name.trim_start_matches('/').to_string();
                let arguments = body
                    .get("arguments")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                self.start_turn(&id, |session_id| Op::Command {
                    session_id,
                    name,
                    arguments,
                })
            }
            "messages" => {
                let id = needs_id(args, method)?;
                let store = self.store()?;
                if store.session(&id).map_err(unknown)?.is_none() {
                    return Err(not_found(&id));
                }
                let rows = store.messages(&id).map_err(unknown)?;
                let rows: Vec<_> = rows
                    .into_iter()
                    .filter(|m| m.role == "user" || m.role == "assistant")
                    .collect();
                let skip = match args.get("limit").and_then(Value::as_u64) {
                    Some(n) => rows.len().saturating_sub(usize::try_from(n).unwrap_or(0)),
                    None => 0,
                };
                let mut out = Vec::new();
                for m in rows.into_iter().skip(skip) {
                    let parts: Vec<Value> = store
                        .parts(&m.id)
                        .map_err(unknown)?
                        .into_iter()
                        .map(|p| {
                            let mut part = json!({
                                "id": p.id,
                                "sessionID": p.session_id,
                                "messageID": p.message_id,
                                "type": p.kind,
                            });
                            if let (Some(obj), Some(data)) =
                                (part.as_object_mut(), p.data.as_object())
                            {
                                for (k, v) in data {
                                    obj.entry(k.clone()).or_insert_with(|| v.clone());
                                }
                            }
                            part
                        })
                        .collect();
                    out.push(json!({
                        "info": {
                            "id": m.id,
                            "sessionID": m.session_id,
                            "role": m.role,
                            "time": {"created": m.created_at},
                        },
                        "parts": parts,
                    }));
                }
                Ok(Value::Array(out))
            }
            // opencode lists only sessions that are not idle: here, those with a turn
            // running in this process.
            "status" => Ok(Value::Object(
                self.active
                    .ids()
                    .into_iter()
                    .map(|id| (id, json!({"type": "busy"})))
                    .collect(),
            )),
            other => Err(ClientError::new(
                "BadRequestError",
                format!("client.session.{other} is not supported in Podcode"),
            )),
        }
    }
}

impl EngineClient {
    /// Sends `op` for session `id` through the port of the front end that has it open:
    /// `{sessionID, queued}` once accepted (`queued` when a turn was running).
    fn start_turn(&self, id: &str, op: impl FnOnce(String) -> Op) -> Result<Value, ClientError> {
        let Some(port) = self.active.port(id) else {
            return Err(ClientError::new(
                "BadRequestError",
                format!("session {id} {SESSION_NOT_OPEN}"),
            ));
        };
        let queued = port.busy();
        port.send(op(id.to_string()));
        Ok(json!({"sessionID": id, "queued": queued}))
    }

    /// `client.session.prompt` with `noReply: true`: the parts become a user message of the
    /// session, sent with its next request; answers opencode's `{info, parts}`.
    fn prompt(&self, args: &Value) -> Result<Value, ClientError> {
        let id = needs_id(args, "prompt")?;
        let texts = prompt_texts(args)?;
        if args.pointer("/body/noReply").and_then(Value::as_bool) != Some(true) {
            let text: Vec<String> = texts.into_iter().map(|(t, _)| t).collect();
            return self.start_turn(&id, |session_id| Op::Prompt {
                session_id,
                text: text.join("\n"),
                files: Vec::new(),
            });
        }
        let store = self.store()?;
        let session = store
            .session(&id)
            .map_err(unknown)?
            .ok_or_else(|| not_found(&id))?;
        let synthetic = texts.iter().all(|(_, s)| *s);
        let content = json!({"agent": session.agent, "synthetic": synthetic, "note": "plugin"});
        let message = store.add_message(&id, "user", &content).map_err(unknown)?;
        let mut parts = Vec::new();
        for (text, synthetic) in texts {
            let mut data = json!({"text": text});
            if synthetic {
                data["synthetic"] = json!(true);
            }
            let part = store
                .add_part(&message, &id, "text", &data)
                .map_err(unknown)?;
            data["id"] = json!(part);
            data["sessionID"] = json!(id);
            data["messageID"] = json!(message);
            data["type"] = json!("text");
            parts.push(data);
        }
        let created = store
            .message(&message)
            .map_err(unknown)?
            .map(|m| m.created_at)
            .unwrap_or_default();
        Ok(json!({
            "info": {"id": message, "sessionID": id, "role": "user",
                     "time": {"created": created}, "agent": session.agent},
            "parts": parts,
        }))
    }
}
