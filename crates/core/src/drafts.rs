//! New sessions stored on their first prompt. A front end that opens a session before the
//! user has written anything (the TUI at launch and on `/new`) holds it back: the row the
//! engine created is taken out of the store and kept here, so a launch without a prompt
//! leaves nothing behind; the first prompt puts it back (same id) and titles it from that
//! prompt, as `podcode run` does. A worktree session is not held: its worktree and branch
//! exist from the start, and the row is what lets `podcode sessions prune` find them.
//!
//! `first_prompt` also titles any untitled session (a resumed or held one) from its first
//! prompt, so every front end that calls it before sending `Op::Prompt` titles sessions.

use std::collections::HashMap;
use std::sync::Mutex;

use podcode_store::SessionRow;

use crate::engine::Engine;
use crate::error::EngineError;

/// The sessions a front end holds back until their first prompt, by id.
#[derive(Debug, Default)]
pub struct Drafts {
    rows: Mutex<HashMap<String, SessionRow>>,
}

impl Drafts {
    /// No session held back yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn rows(&self) -> std::sync::MutexGuard<'_, HashMap<String, SessionRow>> {
        match self.rows.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Whether `id` is held back (not stored yet).
    pub fn holds(&self, id: &str) -> bool {
        self.rows().contains_key(id)
    }
}

impl Engine {
    /// The drafts every front end of this engine shares: a session held here (an editor's
    /// new thread) is stored by whichever front end prompts it first, since every prompt
    /// path names its session (`name_session`).
    pub fn shared_drafts(&self) -> &Drafts {
        &self.shared_drafts
    }

    /// Holds back session `id`, just created and without messages: it leaves the store
    /// until `first_prompt`. A worktree session, or one that already has messages, stays.
    pub fn hold_until_prompted(&self, drafts: &Drafts, id: &str) -> Result<(), EngineError> {
        let store = self.store()?;
        if store.worktree(id)?.is_some() || !store.messages(id)?.is_empty() {
            return Ok(());
        }
        let Some(row) = store.session(id)? else {
            return Ok(());
        };
        store.delete_session(id)?;
        drafts.rows().insert(id.to_string(), row);
        Ok(())
    }

    /// Call before sending a prompt for session `id`: a held session is stored again, and
    /// an untitled one takes the prompt's first line as its title.
    pub fn first_prompt(&self, drafts: &Drafts, id: &str, prompt: &str) -> Result<(), EngineError> {
        self.restore_held(drafts, id)?;
        self.name_session(id, prompt)
    }

    /// Stores session `id` again if `drafts` holds it back.
    pub(crate) fn restore_held(&self, drafts: &Drafts, id: &str) -> Result<(), EngineError> {
        let held = drafts.rows().remove(id);
        if let Some(row) = held {
            self.store()?.restore_session(&row)?;
        }
        Ok(())
    }
}
