//! One ACP session: a Podcode `Session` the client drives. A prompt subscribes to the
//! session's events, sends `Op::Prompt` and translates events (`turn.rs`) until the
//! turn's `TurnFinished`, whose end becomes the stop reason. Modes are the primary agent
//! profiles (`Op::SetAgent`), the model a session config option (`Op::SetModel`); both
//! changes are confirmed by the engine's `Configured` event before the client is told.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agent_client_protocol_schema::v1::{
    ConfigOptionUpdate, ContentBlock, CurrentModeUpdate, EmbeddedResourceResource, PromptResponse,
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption, SessionMode,
    SessionModeState, SessionUpdate,
};
use podcode_core::{Engine, Port, Session};
use podcode_protocol::{Event, Op, TurnEnd};
use tokio::sync::broadcast::error::RecvError;

use crate::rpc::{Connection, RpcError};
use crate::translate::stop_reason;
use crate::turn::{Turn, send_update};

/// The config option ids this agent offers.
pub const MODE_OPTION: &str = "mode";
pub const MODEL_OPTION: &str = "model";

/// What the client is told when it prompts a session whose turn still runs.
pub const BUSY: &str = "this session is still answering the previous prompt; cancel it (session/cancel) or wait for it to finish";

pub struct AcpSession {
    pub id: String,
    engine: Arc<Engine>,
    port: Port,
    dir: std::path::PathBuf,
    session: Mutex<Option<Session>>,
    conn: Connection,
    busy: AtomicBool,
    /// The agent profile (mode) and model in use, as last confirmed by the engine.
    current: Mutex<(String, String)>,
}

impl AcpSession {
    pub async fn new(engine: Arc<Engine>, session: Session, conn: Connection) -> Self {
        let current = (session.agent().await, session.model().await);
        Self {
            id: session.id().to_string(),
            port: session.port(),
            dir: session.directory().to_path_buf(),
            engine,
            session: Mutex::new(Some(session)),
            conn,
            busy: AtomicBool::new(false),
            current: Mutex::new(current),
        }
    }

    fn current(&self) -> (String, String) {
        lock(&self.current).clone()
    }

    /// The primary agent profiles as modes, the current one selected.
    pub fn modes(&self) -> SessionModeState {
        let (agent, _) = self.current();
        let modes = profiles(&self.engine)
            .into_iter()
            .map(|p| SessionMode::new(p.id, p.name).description(p.description))
            .collect();
        SessionModeState::new(agent, modes)
    }

    /// The mode and model pickers.
    pub fn config_options(&self) -> Vec<SessionConfigOption> {
        let (agent, model) = self.current();
        let modes: Vec<SessionConfigSelectOption> = profiles(&self.engine)
            .into_iter()
            .map(|p| SessionConfigSelectOption::new(p.id, p.name).description(p.description))
            .collect();
        let models: Vec<SessionConfigSelectOption> = self
            .engine
            .model_choices(&model)
            .into_iter()
            .map(|c| SessionConfigSelectOption::new(c.value.clone(), c.value).description(c.detail))
            .collect();
        vec![
            SessionConfigOption::select(MODE_OPTION, "Agent", agent, modes)
                .description("The agent profile: its tools, permissions and prompt".to_string())
                .category(SessionConfigOptionCategory::Mode),
            SessionConfigOption::select(MODEL_OPTION, "Model", model, models)
                .category(SessionConfigOptionCategory::Model),
        ]
    }

    /// Switches the agent profile; the client hears of it through both the mode and the
    /// config option updates.
    pub async fn set_mode(&self, mode: &str) -> Result<(), RpcError> {
        if !self.engine.agent_choices().iter().any(|c| c.value == mode) {
            return Err(RpcError::invalid_params(format!(
                "no agent profile named {mode}; the modes of this session are: {}",
                self.engine
                    .agent_choices()
                    .iter()
                    .map(|c| c.value.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        self.configure(Op::SetAgent {
            session_id: self.id.clone(),
            agent: mode.to_string(),
        })
        .await?;
        send_update(
            &self.conn,
            &self.id,
            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.to_string())),
        );
        self.announce_options();
        Ok(())
    }

    pub async fn set_model(&self, model: &str) -> Result<(), RpcError> {
        self.configure(Op::SetModel {
            session_id: self.id.clone(),
            model: model.to_string(),
        })
        .await?;
        self.announce_options();
        Ok(())
    }

    fn announce_options(&self) {
        send_update(
            &self.conn,
            &self.id,
            SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(self.config_options())),
        );
    }

    /// Sends a set-agent/set-model op and waits for the engine's answer: `Configured`, or
    /// the warning that says why nothing changed.
    async fn configure(&self, op: Op) -> Result<(), RpcError> {
        let mut events = self.port.subscribe();
        self.port.send(op);
        loop {
            match events.recv().await {
                Ok(Event::Configured { agent, model }) => {
                    *lock(&self.current) = (agent, model);
                    return Ok(());
                }
                Ok(Event::Warning { message }) => return Err(RpcError::invalid_params(message)),
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return Err(RpcError::internal("the session ended")),
            }
        }
    }

    /// Runs one prompt turn, streaming its updates; the answer is the stop reason.
    pub async fn prompt(&self, blocks: Vec<ContentBlock>) -> Result<PromptResponse, RpcError> {
        let (text, files) = prompt_input(blocks)?;
        if self.busy.swap(true, Ordering::SeqCst) {
            return Err(RpcError::invalid_params(BUSY));
        }
        let out = self.run_turn(text, files).await;
        self.busy.store(false, Ordering::SeqCst);
        out
    }

    async fn run_turn(&self, text: String, files: Vec<String>) -> Result<PromptResponse, RpcError> {
        let mut events = self.port.subscribe();
        // An untitled session is named after its first prompt, as in every front end.
        self.engine
            .name_session(&self.id, &text)
            .map_err(|e| RpcError::internal(e.to_string()))?;
        self.port.send(Op::Prompt {
            session_id: self.id.clone(),
            text,
            files,
        });
        let mut turn = Turn::new(
            &self.id,
            self.conn.clone(),
            self.engine.clone(),
            self.port.clone(),
            self.dir.clone(),
        );
        let summary = loop {
            match events.recv().await {
                Ok(Event::TurnFinished {
                    session_id,
                    summary,
                }) if session_id == self.id => break summary,
                Ok(e) => turn.handle(e),
                Err(RecvError::Lagged(n)) => {
                    eprintln!("podcode acp: {n} events of the turn were dropped")
                }
                Err(RecvError::Closed) => return Err(RpcError::internal("the session ended")),
            }
        };
        turn.close_open_calls();
        if summary.end == TurnEnd::Error {
            return Err(RpcError::internal(
                summary
                    .error
                    .unwrap_or_else(|| "the turn failed".to_string()),
            ));
        }
        Ok(PromptResponse::new(stop_reason(
            summary.end,
            turn.finish_reason.as_deref(),
        )))
    }

    /// `session/cancel`: aborts the running turn; its prompt answers `cancelled`.
    pub fn cancel(&self) {
        self.port.send(Op::Abort {
            session_id: self.id.clone(),
        });
    }

    /// Stops the session (the client went away).
    pub async fn close(&self) {
        let session = lock(&self.session).take();
        if let Some(s) = session {
            s.close().await;
        }
    }
}

/// One agent profile as a mode.
struct Profile {
    id: String,
    /// `Build`, `Plan`: the profile's name as a label.
    name: String,
    /// The first line of its description, whole.
    description: Option<String>,
}

/// The profiles a user can pick (`Engine::agent_choices`: primary, not hidden), with their
/// descriptions unclipped: an editor's picker wraps them itself.
fn profiles(engine: &Engine) -> Vec<Profile> {
    let catalog = engine.agents();
    engine
        .agent_choices()
        .into_iter()
        .map(|c| {
            let description = catalog
                .entries()
                .iter()
                .find(|e| e.profile.name == c.value)
                .and_then(|e| e.profile.description.as_deref())
                .and_then(|d| d.lines().next())
                .map(str::to_string)
                .or(Some(c.detail));
            let mut name = c.value.clone();
            if let Some(first) = name.get(..1) {
                name = first.to_uppercase() + &name[1..];
            }
            Profile {
                id: c.value,
                name,
                description,
            }
        })
        .collect()
}

/// The prompt's content as Podcode's prompt: text blocks joined; `file://` resource links
/// attached as files (read through the `read` tool, with its permission rules); embedded
/// text resources inlined with their URI; other links named in the text.
pub fn prompt_input(blocks: Vec<ContentBlock>) -> Result<(String, Vec<String>), RpcError> {
    let mut text = Vec::new();
    let mut files = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => text.push(t.text),
            ContentBlock::ResourceLink(link) => match link.uri.strip_prefix("file://") {
                Some(path) => files.push(path.to_string()),
                None => text.push(format!("[{}]({})", link.name, link.uri)),
            },
            ContentBlock::Resource(res) => match res.resource {
                EmbeddedResourceResource::TextResourceContents(r) => {
                    text.push(format!("Contents of {}:\n```\n{}\n```", r.uri, r.text));
                }
                _ => return Err(RpcError::invalid_params(UNSUPPORTED_CONTENT)),
            },
            _ => return Err(RpcError::invalid_params(UNSUPPORTED_CONTENT)),
        }
    }
    Ok((text.join("\n\n"), files))
}

/// What a prompt with images, audio or binary resources is refused with.
pub const UNSUPPORTED_CONTENT: &str = "Podcode takes text, file links and embedded text files in a prompt; images, audio and binary resources are not supported";

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn blocks(v: serde_json::Value) -> Vec<ContentBlock> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn prompt_content_becomes_text_and_files() {
        let (text, files) = prompt_input(blocks(json!([
            {"type": "text", "text": "Fix this"},
            {"type": "resource_link", "name": "a.rs", "uri": "file:///w/a.rs"},
            {"type": "resource_link", "name": "docs", "uri": "https://example.org/d"},
            {"type": "resource", "resource": {"uri": "file:///w/b.txt", "text": "hello"}},
        ])))
        .unwrap();
        assert_eq!(
            text,
            "Fix this\n\n[docs](https://example.org/d)\n\nContents of file:///w/b.txt:\n```\nhello\n```"
        );
        assert_eq!(files, vec!["/w/a.rs".to_string()]);
    }

    #[test]
    fn images_are_refused_with_a_reason() {
        let err = prompt_input(blocks(json!([
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        ])))
        .unwrap_err();
        assert_eq!(err.message, UNSUPPORTED_CONTENT);
        assert_eq!(
            UNSUPPORTED_CONTENT,
            "Podcode takes text, file links and embedded text files in a prompt; images, audio and binary resources are not supported"
        );
        assert_eq!(
            BUSY,
            "this session is still answering the previous prompt; cancel it (session/cancel) or wait for it to finish"
        );
    }
}
