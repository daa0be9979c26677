//! What a server front end (`podcode serve`) needs beyond a terminal's: the event log
//! switched on for the sessions it opens, a model name checked before it is sent as an op
//! (so an HTTP request can answer 400 at once), the model catalog, deleting a stored
//! session, and a revert whose outcome also goes to every watcher of the session.

use std::sync::Arc;

use podcode_protocol::{Event, RevertReport, RevertTarget};
use podcode_providers::ModelInfo;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::event_log::EventLog;
use crate::session::Session;

impl Engine {
    /// The event log, started on first use: every session opened after this call logs its
    /// events (`event_log.rs`). Needs a Tokio runtime.
    pub fn event_log(&self) -> Result<Arc<EventLog>, EngineError> {
        if let Some(log) = self.event_log.get() {
            return Ok(log.clone());
        }
        let log = EventLog::start(self.store()?)?;
        // Two first calls at once: the loser's writer ends with its unused queue.
        Ok(self.event_log.get_or_init(|| log).clone())
    }

    /// Logs this engine's sessions in `log` (a registry's one log for all its engines).
    pub(crate) fn share_event_log(&self, log: Arc<EventLog>) {
        let _ = self.event_log.set(log);
    }

    /// The model `name` resolves to (`provider/model-id`; `None`: the configured default),
    /// or why it is not usable (no such provider, no API key, …).
    pub fn check_model(&self, name: Option<&str>) -> Result<String, EngineError> {
        Ok(crate::session::resolve_model(self, name)?
            .model()
            .to_string())
    }

    /// Every model of the catalog and the config, as `provider/model-id`, sorted.
    pub fn known_models(&self) -> Vec<(String, ModelInfo)> {
        podcode_providers::known_models(self.config())
    }

    /// Deletes a stored session with its sub-agent sessions, messages, tool calls, change
    /// journal, event log and uploaded attachments; the files it changed stay as they are.
    /// Close it first if it is open.
    pub fn delete_session(&self, id: &str) -> Result<(), EngineError> {
        if self.store()?.delete_session(id)? {
            self.remove_attachments(id);
            Ok(())
        } else {
            Err(EngineError::UnknownSession(id.to_string()))
        }
    }

    /// Names an untitled session after its first prompt (its first line, 60 characters at
    /// most), as `podcode run` does when it creates one.
    pub fn name_session(&self, id: &str, prompt: &str) -> Result<(), EngineError> {
        // Held back by another front end of this process (an editor's new thread)?
        self.restore_held(&self.shared_drafts, id)?;
        let title: String = prompt
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("")
            .chars()
            .take(60)
            .collect();
        if !title.is_empty() {
            self.store()?.name_session(id, &title)?;
        }
        Ok(())
    }

    /// `revert`, journaled under `session`, whose watchers all get `Event::Reverted`.
    pub fn revert_in(&self, session: &Session, target: &RevertTarget, force: bool) -> RevertReport {
        let report = self.revert(session.id(), target, force);
        session.port().emit(Event::Reverted {
            session_id: session.id().to_string(),
            report: report.clone(),
        });
        report
    }
}
