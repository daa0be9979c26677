//! Forking a session at one of its user messages: a new session holding the conversation up
//! to and including that message (messages, parts and tool calls copied as history under new
//! ids), in the same directory with the same agent and model. The original is untouched; the
//! change journal is not copied, so the fork works on the files as they are now.

use podcode_store::{NewSession, SessionRow, StoreError};

use crate::engine::Engine;
use crate::error::EngineError;

/// The title of a fork of a session titled `title`.
fn fork_title(title: &str) -> String {
    if title.trim().is_empty() {
        "(fork)".to_string()
    } else {
        format!("{title} (fork)")
    }
}

impl Engine {
    /// Forks `session_id` at its user message `message_id` (see the module docs). Errors:
    /// `UnknownSession`, `UnknownMessage`, and `NotForkable` for a message of another session
    /// or one that is not the user's.
    pub fn fork_session(
        &self,
        session_id: &str,
        message_id: &str,
    ) -> Result<SessionRow, EngineError> {
        let store = self.store()?;
        let source = self.session(session_id)?;
        let message = store
            .message(message_id)?
            .ok_or_else(|| EngineError::UnknownMessage(message_id.to_string()))?;
        if message.session_id != source.id {
            return Err(EngineError::NotForkable(format!(
                "message {message_id} belongs to another session, not to {session_id}"
            )));
        }
        let synthetic = message.content.get("synthetic").and_then(|v| v.as_bool()) == Some(true);
        if message.role != "user" || synthetic {
            return Err(EngineError::NotForkable(format!(
                "message {message_id} is not a prompt of the user: a session is forked at one of those"
            )));
        }
        let row = store.create_session(&NewSession {
            parent_id: None,
            root_id: None,
            agent: source.agent.clone(),
            cwd: source.cwd.clone(),
            main_cwd: source.main_cwd.clone(),
            model: source.model.clone(),
            title: fork_title(&source.title),
        })?;
        if let Err(e) = store.copy_messages_until(&source.id, &row.id, message_id) {
            // No half-made fork is left behind.
            let _ = store.delete_session(&row.id);
            return Err(match e {
                StoreError::NotFound {
                    kind: "message", ..
                } => EngineError::UnknownMessage(message_id.to_string()),
                e => e.into(),
            });
        }
        self.announce_session(&row);
        Ok(row)
    }
}
