//! The UI's services over the engine (`podcode-core`): stored transcripts (the engine's
//! conversation items), the
//! model and agent pickers, the session list, new sessions (held until their first prompt
//! when the front end hands over its `Drafts`), the session tree's totals, and the Changes view with its
//! reverts — what a front end wiring the UI to an `Engine` hands to `run`.

use std::sync::Arc;

use podcode_core::{Drafts, Engine, EngineError, NewSessionSpec};
use podcode_protocol::{Item, RevertReport, RevertTarget, StepUsage};

use crate::changes::ChangeItem;
use crate::services::{PickItem, TuiServices};

/// The UI's pickers, resumes, session list and Changes view, over the engine.
pub struct EngineServices {
    engine: Arc<Engine>,
    /// The model in use at start (listed first).
    start_model: String,
    /// New sessions (`/new`) are held here until their first prompt stores them.
    drafts: Option<Arc<Drafts>>,
}

impl EngineServices {
    /// `start_model` is the model in use when the UI opens (the `/model` picker lists it first).
    pub fn new(engine: Arc<Engine>, start_model: String) -> Self {
        Self {
            engine,
            start_model,
            drafts: None,
        }
    }

    /// Sessions `/new` starts are held in `drafts` until their first prompt (the front
    /// end's prompt path calls `Engine::first_prompt` with the same `drafts`).
    pub fn with_drafts(mut self, drafts: Arc<Drafts>) -> Self {
        self.drafts = Some(drafts);
        self
    }
}

impl TuiServices for EngineServices {
    fn transcript(&self, session_id: &str) -> Result<(Vec<Item>, StepUsage), String> {
        self.engine
            .transcript(session_id)
            .map_err(|e| e.to_string())
    }

    fn totals(&self, session_id: &str) -> Result<(StepUsage, StepUsage), String> {
        let totals = self.engine.totals(session_id).map_err(|e| e.to_string())?;
        Ok((totals.own, totals.tree))
    }

    fn models(&self) -> Vec<PickItem> {
        let choices = self.engine.model_choices(&self.start_model);
        choices
            .iter()
            .map(|c| PickItem::new(&c.value, &c.detail))
            .collect()
    }

    fn agents(&self) -> Vec<PickItem> {
        let choices = self.engine.agent_choices();
        choices
            .iter()
            .map(|c| PickItem::new(&c.value, &c.detail))
            .collect()
    }

    fn plugins(&self) -> Vec<String> {
        let engine = self.engine.clone();
        tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(engine.plugin_report())
        })
    }

    fn skills(&self) -> Vec<String> {
        self.engine.skill_lines()
    }

    fn command_lines(&self) -> Vec<String> {
        self.engine.command_lines()
    }

    fn sessions_here(&self, cwd: &str, current: &str) -> Result<Vec<PickItem>, String> {
        let mut sessions: Vec<_> = self
            .engine
            .sessions(false)
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|s| s.cwd == cwd && s.parent_id.is_none() && s.id != current)
            .filter(|s| self.engine.has_messages(&s.id).unwrap_or(false))
            .collect();
        sessions.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
        Ok(sessions
            .into_iter()
            .map(|s| PickItem {
                label: if s.title.is_empty() {
                    "(untitled)".into()
                } else {
                    s.title.clone()
                },
                detail: format!(
                    "{} · {} · {}",
                    crate::actions::ago(s.updated_at),
                    s.agent,
                    s.id
                ),
                value: s.id,
            })
            .collect())
    }

    fn new_session(
        &self,
        like: &str,
        agent: &str,
        model: &str,
    ) -> Result<(String, Option<String>), String> {
        let spec = NewSessionSpec {
            agent,
            title: "",
            model: Some(model),
        };
        let (id, worktree) = self
            .engine
            .create_session_like(like, &spec)
            .map_err(|e| e.to_string())?;
        if let Some(drafts) = &self.drafts {
            self.engine
                .hold_until_prompted(drafts, &id)
                .map_err(|e| e.to_string())?;
        }
        Ok((id, worktree.map(|d| d.to_string_lossy().into_owned())))
    }

    fn session_title(&self, id: &str) -> Result<Option<String>, String> {
        match self.engine.session(id) {
            Ok(s) => Ok(Some(s.title)),
            Err(EngineError::UnknownSession(_)) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    fn changes(&self, session_id: &str) -> Result<Vec<ChangeItem>, String> {
        self.engine
            .change_entries(session_id)
            .map_err(|e| e.to_string())
    }

    fn revert(&self, session_id: &str, target: RevertTarget, force: bool) -> RevertReport {
        self.engine.revert(session_id, &target, force)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Entry, entries_of};
    use podcode_protocol::compacted_text;

    #[test]
    fn revert_notes_and_compactions_show_as_notices() {
        let note = Item::RevertNote {
            text: "The user reverted the change to a.txt (the file is back to its previous content).\nThe user reverted the change to b.txt (the file is back to its previous content).".into(),
        };
        assert_eq!(
            entries_of(note),
            [Entry::Notice("↶ the model was told: The user reverted the change to a.txt (the file is back to its previous content). The user reverted the change to b.txt (the file is back to its previous content).".into())]
        );
        let compaction = Item::Compaction {
            reason: "manual".into(),
            pruned: 0,
            summarized: 3,
            tokens_before: 900,
            tokens_after: 100,
        };
        assert_eq!(
            entries_of(compaction),
            [Entry::Notice(compacted_text("manual", 0, 3, 900, 100))]
        );
    }
}
