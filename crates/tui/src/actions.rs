//! What the event loop does for the session-level actions: the pickers (`/sessions`,
//! `/model`, `/agent`) and what picking sends, resuming a stored session, `/new`, and
//! `/undo` (revert everything since the prompt of the newest turn still in effect).

use podcode_protocol::Op;

use crate::changes_view::{RevertScope, revert_selected};
use crate::event_loop::Loop;
use crate::picker::{Picker, PickerKind};
use crate::state::{AppState, Screen};
use crate::transcript::{Entry, Transcript};

impl Loop {
    pub(crate) fn open_picker(&mut self, kind: PickerKind) {
        let items = match kind {
            PickerKind::Session => match self
                .services
                .sessions_here(&self.state.status.cwd, &self.state.session_id)
            {
                Ok(items) => items,
                Err(e) => {
                    self.notice(format!("could not list sessions: {e}"));
                    return;
                }
            },
            PickerKind::Model => self.services.models(),
            PickerKind::Agent => self.services.agents(),
            PickerKind::Subagent => {
                let items = self.state.subagent_items();
                if items.is_empty() {
                    self.notice("no sub-agents in this conversation yet (the agent starts them with its task tool)".into());
                    return;
                }
                items
            }
        };
        let mut picker = Picker::new(kind, items);
        // Start on the current choice.
        let current: &str = match kind {
            PickerKind::Session => &self.state.session_id,
            PickerKind::Model => &self.state.status.model,
            PickerKind::Agent => &self.state.status.agent,
            PickerKind::Subagent => "",
        };
        picker.selected = picker
            .items
            .iter()
            .position(|i| i.value == current)
            .unwrap_or(0);
        self.state.picker = Some(picker);
    }

    pub(crate) fn pick(&mut self, kind: PickerKind, value: String) {
        let session_id = self.state.session_id.clone();
        match kind {
            PickerKind::Model => {
                let _ = self.ops.send(Op::SetModel {
                    session_id,
                    model: value,
                });
            }
            PickerKind::Agent => {
                let _ = self.ops.send(Op::SetAgent {
                    session_id,
                    agent: value,
                });
            }
            PickerKind::Session => self.resume(&value),
            PickerKind::Subagent => self.open_child(&value),
        }
    }

    /// Shows sub-agent session `session_id`'s transcript (see `subagent_view`).
    fn open_child(&mut self, session_id: &str) {
        let label = self
            .state
            .subagent_items()
            .into_iter()
            .find(|i| i.value == session_id)
            .map(|i| i.label)
            .unwrap_or_default();
        match self.services.transcript(session_id) {
            Ok((items, _)) => self.state.open_child(session_id, &label, items),
            Err(e) => self.notice(format!("could not load the sub-agent's transcript: {e}")),
        }
    }

    /// Replaces the screen with a stored session; the next prompts continue it.
    fn resume(&mut self, session_id: &str) {
        if self.state.status.busy {
            self.notice("a turn is still running (esc aborts it)".into());
            return;
        }
        let title = match self.services.session_title(session_id) {
            Ok(Some(title)) => title,
            Ok(None) => {
                self.notice(format!("no session with id {session_id}"));
                return;
            }
            Err(e) => {
                self.notice(format!("could not open the session: {e}"));
                return;
            }
        };
        match self.services.transcript(session_id) {
            Ok((items, usage)) => {
                let mut fresh = self.fresh_state(session_id);
                fresh.todos = crate::todo_panel::TodoPanel::from_items(&items);
                fresh.transcript = Transcript::from_items(session_id, items);
                fresh.status.usage = usage;
                if let Ok((own, tree)) = self.services.totals(session_id) {
                    fresh.status.set_totals(own, tree);
                }
                fresh.status.title = title;
                fresh
                    .transcript
                    .entries
                    .push(Entry::Notice(format!("resumed session {session_id}")));
                self.state = fresh;
            }
            Err(e) => self.notice(format!("could not load the session: {e}")),
        }
    }

    /// A blank state for `session_id` keeping what belongs to the process, not the session.
    fn fresh_state(&mut self, session_id: &str) -> AppState {
        let mut fresh = AppState::new(
            &self.state.status.model,
            &self.state.status.agent,
            &self.state.status.cwd,
            session_id,
        );
        fresh.no_color = self.state.no_color;
        fresh.input.history = std::mem::take(&mut self.state.input.history);
        fresh.tools_info = std::mem::take(&mut self.state.tools_info);
        fresh.input.commands = std::mem::take(&mut self.state.input.commands);
        fresh
    }

    pub(crate) fn new_session(&mut self) {
        if self.state.status.busy {
            self.state.transcript.entries.push(Entry::Notice(
                "a turn is still running (esc aborts it)".into(),
            ));
            return;
        }
        let created = self.services.new_session(
            &self.state.session_id,
            &self.state.status.agent,
            &self.state.status.model,
        );
        match created {
            Ok((id, None)) => self.state = self.fresh_state(&id),
            Ok((id, Some(dir))) => {
                self.state = self.fresh_state(&id);
                self.state.status.cwd = dir.clone();
                self.notice(format!(
                    "new session in a fresh worktree: {dir} (branch podcode/{id}), forked from your checkout as it is now; sync_to_main copies its work back"
                ));
            }
            Err(e) => self
                .state
                .transcript
                .entries
                .push(Entry::Notice(format!("could not start a session: {e}"))),
        }
    }

    /// Reverts the newest turn that still has changes in effect (everything since its
    /// prompt); a conflict opens the Changes view on it, where `f` forces it.
    pub(crate) fn undo(&mut self) {
        if self.state.status.busy {
            self.notice("a turn is still running (esc aborts it)".into());
            return;
        }
        self.reload_changes();
        let newest = self
            .state
            .changes
            .changes
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.reverted)
            .max_by_key(|(_, c)| (c.change.time, c.change.id.clone()))
            .map(|(i, _)| i);
        let Some(index) = newest else {
            self.notice("nothing to undo: no change of this session is in effect".into());
            return;
        };
        self.state.changes.selected = index;
        revert_selected(
            &mut self.state,
            self.services.as_ref(),
            RevertScope::Turn,
            false,
        );
        if self.state.changes.conflict.is_some() {
            self.state.screen = Screen::Changes;
            return;
        }
        let message = self.state.changes.message.take().unwrap_or_default();
        self.notice(format!("undo: {message}"));
    }
}

/// "5m ago"-style age of a millisecond timestamp.
pub fn ago(ms: i64) -> String {
    let secs = (podcode_protocol::now_millis() - ms).max(0) / 1000;
    match secs {
        0..60 => format!("{secs}s ago"),
        60..3600 => format!("{}m ago", secs / 60),
        3600..86400 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86400),
    }
}
