//! One ACP session as a request sees it: the registry's handle (`LiveSession`) and the
//! connection. A prompt subscribes to the session's events, starts a turn through the
//! session's one busy state (`Port::prompt`: a second prompt, from this client or any other
//! front end, gets `BUSY_TEXT`) and translates events (`turn.rs`) until the turn's
//! `TurnFinished`, whose end becomes the stop reason. Modes are the primary agent profiles
//! (`Op::SetAgent`), the model a session config option (`Op::SetModel`); both changes are
//! confirmed by the engine's `Configured` event before the client is told. A held-back new
//! session is stored at its first prompt (`Engine::first_prompt`). Nothing here outlives
//! the request: the session's state is the engine's.

use std::sync::Arc;

use agent_client_protocol_schema::v1::{
    ConfigOptionUpdate, ContentBlock, CurrentModeUpdate, EmbeddedResourceResource, PromptResponse,
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption, SessionInfoUpdate,
    SessionMode, SessionModeState, SessionUpdate,
};
use podcode_core::{Engine, EngineError, LiveSession};
use podcode_protocol::{Event, Op, TurnEnd};
use tokio::sync::broadcast::error::RecvError;

use crate::rpc::{Connection, RpcError};
use crate::translate::stop_reason;
use crate::turn::{Turn, send_update, usage_update};

/// The config option ids this agent offers.
pub const MODE_OPTION: &str = "mode";
pub const MODEL_OPTION: &str = "model";

/// An engine error as the client's answer: what the client asked cannot be done as asked
/// (an unknown session, one whose directory is gone, a busy one) is invalid params, with
/// the engine's text; anything else an internal error.
pub fn engine_error(e: EngineError) -> RpcError {
    match e {
        EngineError::Busy(_)
        | EngineError::UnknownSession(_)
        | EngineError::DirectoryGone { .. }
        | EngineError::OtherProject { .. }
        | EngineError::Io(_) => RpcError::invalid_params(e.to_string()),
        e => RpcError::internal(e.to_string()),
    }
}

pub struct AcpSession {
    live: Arc<LiveSession>,
    conn: Connection,
}

impl AcpSession {
    pub fn new(live: Arc<LiveSession>, conn: Connection) -> Self {
        Self { live, conn }
    }

    pub fn id(&self) -> &str {
        self.live.session.id()
    }

    pub(crate) fn engine(&self) -> &Arc<Engine> {
        &self.live.engine
    }

    /// The agent profile (mode) and model in use now.
    async fn current(&self) -> (String, String) {
        (
            self.live.session.agent().await,
            self.live.session.model().await,
        )
    }

    /// The primary agent profiles as modes, the current one selected.
    pub async fn modes(&self) -> SessionModeState {
        let (agent, _) = self.current().await;
        let modes = profiles(self.engine())
            .into_iter()
            .map(|p| SessionMode::new(p.id, p.name).description(p.description))
            .collect();
        SessionModeState::new(agent, modes)
    }

    /// The mode and model pickers.
    pub async fn config_options(&self) -> Vec<SessionConfigOption> {
        let (agent, model) = self.current().await;
        let modes: Vec<SessionConfigSelectOption> = profiles(self.engine())
            .into_iter()
            .map(|p| SessionConfigSelectOption::new(p.id, p.name).description(p.description))
            .collect();
        let models: Vec<SessionConfigSelectOption> = self
            .engine()
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
        let choices = self.engine().agent_choices();
        if !choices.iter().any(|c| c.value == mode) {
            return Err(RpcError::invalid_params(format!(
                "no agent profile named {mode}; the modes of this session are: {}",
                choices
                    .iter()
                    .map(|c| c.value.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        self.configure(Op::SetAgent {
            session_id: self.id().to_string(),
            agent: mode.to_string(),
        })
        .await?;
        send_update(
            &self.conn,
            self.id(),
            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.to_string())),
        );
        self.announce_options().await;
        Ok(())
    }

    pub async fn set_model(&self, model: &str) -> Result<(), RpcError> {
        self.configure(Op::SetModel {
            session_id: self.id().to_string(),
            model: model.to_string(),
        })
        .await?;
        self.announce_options().await;
        Ok(())
    }

    async fn announce_options(&self) {
        send_update(
            &self.conn,
            self.id(),
            SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(self.config_options().await)),
        );
    }

    /// Sends a set-agent/set-model op and waits for the engine's answer: `Configured`, or
    /// the warning that says why nothing changed.
    async fn configure(&self, op: Op) -> Result<(), RpcError> {
        let port = self.live.port();
        let mut events = port.subscribe();
        port.send(op);
        loop {
            match events.recv().await {
                Ok(Event::Configured { .. }) => return Ok(()),
                Ok(Event::Warning { message }) => return Err(RpcError::invalid_params(message)),
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return Err(RpcError::internal("the session ended")),
            }
        }
    }

    /// Runs one prompt turn, streaming its updates; the answer is the stop reason. A
    /// session whose turn runs (whoever started it) answers `BUSY_TEXT`.
    pub async fn prompt(&self, blocks: Vec<ContentBlock>) -> Result<PromptResponse, RpcError> {
        let (text, files) = prompt_input(blocks)?;
        let port = self.live.port();
        if port.busy() {
            return Err(engine_error(EngineError::Busy(
                podcode_core::BUSY_TEXT.to_string(),
            )));
        }
        let id = self.id().to_string();
        let mut events = port.subscribe();
        // A held-back session is stored now, and an untitled one named after its first
        // prompt, as in every front end; the editor hears the name at once, for its tab
        // and its history.
        let untitled = self.title();
        self.engine()
            .first_prompt(self.engine().shared_drafts(), &id, &text)
            .map_err(|e| RpcError::internal(e.to_string()))?;
        let shown_title = self.announce_title(untitled);
        // `/name args` naming a custom command runs it (the client lists them from
        // `available_commands_update`); any other text is a prompt.
        let custom = podcode_protocol::slash_command(&text).filter(|(name, _)| {
            self.engine()
                .command_infos()
                .iter()
                .any(|c| c.name == *name)
        });
        match custom {
            Some((name, args)) => port.command(name.to_string(), args.to_string()),
            None => port.prompt(text, files),
        }
        .map_err(engine_error)?;
        let mut turn = Turn::new(
            &id,
            self.conn.clone(),
            self.engine().clone(),
            port.clone(),
            self.live.session.directory().to_path_buf(),
        );
        let summary = loop {
            match events.recv().await {
                Ok(Event::TurnFinished {
                    session_id,
                    summary,
                }) if session_id == id => break summary,
                Ok(e) => turn.handle(e),
                Err(RecvError::Lagged(n)) => {
                    eprintln!("podcode acp: {n} events of the turn were dropped")
                }
                Err(RecvError::Closed) => return Err(RpcError::internal("the session ended")),
            }
        };
        turn.close_open_calls();
        // The turn's messages made it the latest activity (history sorts by it); a plugin
        // may have renamed it meanwhile.
        self.announce_title(shown_title);
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
}

impl AcpSession {
    /// The stored title (empty while untitled; `None` when the store cannot say).
    fn title(&self) -> Option<String> {
        self.engine().session(self.id()).ok().map(|r| r.title)
    }

    /// `session_info_update` with the session's last activity, and its title when it
    /// differs from `shown` (what the editor was last told); returns the title now shown.
    pub(crate) fn announce_title(&self, shown: Option<String>) -> Option<String> {
        let Ok(row) = self.engine().session(self.id()) else {
            return shown;
        };
        let mut update = SessionInfoUpdate::new().updated_at(crate::list::iso_time(row.updated_at));
        if !row.title.is_empty() && shown.as_deref() != Some(row.title.as_str()) {
            update = update.title(row.title.clone());
        }
        send_update(
            &self.conn,
            self.id(),
            SessionUpdate::SessionInfoUpdate(update),
        );
        Some(row.title)
    }

    /// `usage_update` for a session reopened before any new request: the context meter as
    /// its last request left it, on the window of the model it goes on with, and what it
    /// cost so far. Nothing before its first request, as live.
    pub(crate) async fn announce_usage(&self) {
        let model = self.live.session.model().await;
        let (Ok(Some((tokens, window))), Ok(totals)) = (
            self.engine().context_use(self.id(), &model),
            self.engine().totals(self.id()),
        ) else {
            return;
        };
        if let Some(usage) = usage_update(&totals.own, tokens, window) {
            send_update(&self.conn, self.id(), SessionUpdate::UsageUpdate(usage));
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
    let text = text.join("\n\n");
    if text.trim().is_empty() && files.is_empty() {
        return Err(RpcError::invalid_params(EMPTY_PROMPT));
    }
    Ok((text, files))
}

/// What a prompt with nothing in it is refused with (a model asked nothing answers nothing).
pub const EMPTY_PROMPT: &str =
    "The prompt is empty: send text, a file link or an embedded text file";

/// What a prompt with images, audio or binary resources is refused with.
pub const UNSUPPORTED_CONTENT: &str = "Podcode takes text, file links and embedded text files in a prompt; images, audio and binary resources are not supported";

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
    fn an_empty_prompt_is_refused_with_a_reason() {
        for empty in [json!([]), json!([{"type": "text", "text": "  \n"}])] {
            let err = prompt_input(blocks(empty)).unwrap_err();
            assert_eq!(err.message, EMPTY_PROMPT);
        }
        assert_eq!(
            EMPTY_PROMPT,
            "The prompt is empty: send text, a file link or an embedded text file"
        );
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
    }
}
