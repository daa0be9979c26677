//! The engine's side of the opencode `client` plugins receive (`podcode_plugins::ClientBackend`):
//! a toast becomes `Event::Toast` for every session (through the tool set's notices, the
//! channel every session forwards to its front end); session reads answer from the store in
//! the opencode SDK's shapes — `Session` (`{id, projectID, directory, parentID?, title,
//! version, time: {created, updated}}`), `messages` as `[{info, parts}]`, and `status` as
//! opencode's map of busy sessions. The store is opened on the first read, so a plugin that
//! never reads sessions costs nothing.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use podcode_plugins::{ClientBackend, ClientError, Toast};
use podcode_protocol::Event;
use podcode_store::{SessionRow, Store};
use serde_json::{Value, json};
use tokio::sync::broadcast;

pub struct EngineClient {
    db_path: PathBuf,
    project: PathBuf,
    store: Mutex<Option<Arc<Store>>>,
    notices: OnceLock<broadcast::Sender<Event>>,
}

impl EngineClient {
    pub fn new(db_path: PathBuf, project: PathBuf) -> Self {
        Self {
            db_path,
            project,
            store: Mutex::new(None),
            notices: OnceLock::new(),
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

/// opencode's `Session` for a stored session.
fn session_json(row: &SessionRow, project: &Path) -> Value {
    let mut v = json!({
        "id": row.id,
        "projectID": project.display().to_string(),
        "directory": row.cwd,
        "title": row.title,
        "version": env!("CARGO_PKG_VERSION"),
        "time": {"created": row.created_at, "updated": row.updated_at},
    });
    if let Some(parent) = &row.parent_id {
        v["parentID"] = json!(parent);
    }
    v
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

impl ClientBackend for EngineClient {
    fn toast(&self, t: Toast) {
        if let Some(n) = self.notices.get() {
            let _ = n.send(Event::Toast {
                title: t.title,
                message: t.message,
                variant: t.variant,
            });
        }
    }

    fn session(&self, method: &str, args: &Value) -> Result<Value, ClientError> {
        match method {
            "list" => {
                let rows = self.store()?.list_sessions().map_err(unknown)?;
                Ok(Value::Array(
                    rows.iter()
                        .filter(|r| Path::new(&r.main_cwd).starts_with(&self.project))
                        .map(|r| session_json(r, &self.project))
                        .collect(),
                ))
            }
            "get" => {
                let id = needs_id(args, method)?;
                match self.store()?.session(&id).map_err(unknown)? {
                    Some(row) => Ok(session_json(&row, &self.project)),
                    None => Err(ClientError::new(
                        "NotFoundError",
                        format!("Session not found: {id}"),
                    )),
                }
            }
            "messages" => {
                let id = needs_id(args, method)?;
                let store = self.store()?;
                if store.session(&id).map_err(unknown)?.is_none() {
                    return Err(ClientError::new(
                        "NotFoundError",
                        format!("Session not found: {id}"),
                    ));
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
            // opencode lists only sessions that are not idle; Podcode's turns run inside the
            // process that started them and are not recorded as running, so none is listed.
            "status" => Ok(json!({})),
            other => Err(ClientError::new(
                "BadRequestError",
                format!("client.session.{other} is not supported in Podcode"),
            )),
        }
    }
}
