//! `Records`: what a runtime keeps, as the narrow `podcode-records` traits. The pipeline's
//! record stage writes the call log, journaled writes go through the change journal, and a
//! tool sees only the reads it needs (`ToolContext::messages`, `ToolContext::worktrees`).
//! Approvals travel with the `PermissionEngine`, which alone consults them.

use std::sync::Arc;

use podcode_records::{CallLog, ChangeJournal, Conversation, WorktreeRecords};

/// The records a `ToolRuntime` writes and reads, each behind its own trait.
#[derive(Clone)]
pub struct Records {
    /// Where each call's start and end are recorded.
    pub calls: Arc<dyn CallLog>,
    /// The journal file changes are written through.
    pub journal: Arc<dyn ChangeJournal>,
    /// The session's conversation, for tools that read it.
    pub conversation: Arc<dyn Conversation>,
    /// The worktree a session works in, for `sync_to_main`.
    pub worktrees: Arc<dyn WorktreeRecords>,
}

impl Records {
    /// Every record kept by one implementation (the engine's store).
    pub fn all<S>(records: Arc<S>) -> Self
    where
        S: CallLog + ChangeJournal + Conversation + WorktreeRecords + 'static,
    {
        Self {
            calls: records.clone(),
            journal: records.clone(),
            conversation: records.clone(),
            worktrees: records,
        }
    }
}
