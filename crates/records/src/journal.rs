//! The change journal: every file change a tool makes, written journal-first. A writer
//! journals a batch of intents (`begin_changes`) before it touches a file and marks them done
//! once every file is in place; whatever is still pending when its writer is gone was
//! interrupted and is settled by recovery. Reverts read the journal by change, call, session
//! tree or message and journal their own restores the same way.

use std::sync::Arc;

use podcode_protocol::{ChangeRecord, RecordedChange};

use crate::RecordError;

/// One change to journal as an intent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intent {
    /// The file, operation and old/new content the write will make.
    pub change: ChangeRecord,
    /// The change this one undoes, for a revert.
    pub reverts: Option<String>,
    /// The staged file the write renames into place (to clean up after a crash).
    pub temp_file: Option<String>,
}

/// An intent still waiting for its write.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingChange {
    /// The journaled change, with its id.
    pub change: RecordedChange,
    /// The batch it was journaled in; a batch completes or rolls back together.
    pub batch: String,
    /// The staged file the write renames into place, if it was staged.
    pub temp_file: Option<String>,
    /// The writing process, as `podcode-tools` identifies it (pid and start time).
    pub owner: String,
}

/// The journal of file changes (see the module doc). Lists are oldest first and hold done
/// changes only; pending intents are seen through `pending_changes` alone.
pub trait ChangeJournal: Send + Sync {
    /// Journals one change that is already on disk (a plugin's own write).
    fn record_change(
        &self,
        session_id: &str,
        call_id: Option<&str>,
        change: &ChangeRecord,
    ) -> Result<RecordedChange, RecordError>;
    /// Journals `intents` as one pending batch, durably (synced to disk) before it returns;
    /// the records carry the ids to complete or discard.
    fn begin_changes(
        &self,
        session_id: &str,
        call_id: Option<&str>,
        intents: &[Intent],
        owner: &str,
    ) -> Result<Vec<RecordedChange>, RecordError>;
    /// Marks pending intents done: their files are in place.
    fn complete_changes(&self, ids: &[String]) -> Result<(), RecordError>;
    /// Removes pending intents whose write did not happen.
    fn discard_intents(&self, ids: &[String]) -> Result<(), RecordError>;
    /// Every intent still pending, in the order journaled.
    fn pending_changes(&self) -> Result<Vec<PendingChange>, RecordError>;
    /// One change by id; `None` when there is none.
    fn change(&self, id: &str) -> Result<Option<RecordedChange>, RecordError>;
    /// The changes of one tool call; `None` when no such call was recorded.
    fn changes_of_call(&self, call_id: &str) -> Result<Option<Vec<RecordedChange>>, RecordError>;
    /// The changes of a session and its sub-agent sessions; `None` when no such session.
    fn changes_of_tree(&self, session_id: &str)
    -> Result<Option<Vec<RecordedChange>>, RecordError>;
    /// The changes of the message's session tree made at or after the message; `None` when
    /// no such message.
    fn changes_since_message(
        &self,
        message_id: &str,
    ) -> Result<Option<Vec<RecordedChange>>, RecordError>;
    /// The id of the newest change that reverted `id`, if any.
    fn reverted_by(&self, id: &str) -> Result<Option<String>, RecordError>;
}

impl<T: ChangeJournal + ?Sized> ChangeJournal for Arc<T> {
    fn record_change(
        &self,
        session_id: &str,
        call_id: Option<&str>,
        change: &ChangeRecord,
    ) -> Result<RecordedChange, RecordError> {
        (**self).record_change(session_id, call_id, change)
    }
    fn begin_changes(
        &self,
        session_id: &str,
        call_id: Option<&str>,
        intents: &[Intent],
        owner: &str,
    ) -> Result<Vec<RecordedChange>, RecordError> {
        (**self).begin_changes(session_id, call_id, intents, owner)
    }
    fn complete_changes(&self, ids: &[String]) -> Result<(), RecordError> {
        (**self).complete_changes(ids)
    }
    fn discard_intents(&self, ids: &[String]) -> Result<(), RecordError> {
        (**self).discard_intents(ids)
    }
    fn pending_changes(&self) -> Result<Vec<PendingChange>, RecordError> {
        (**self).pending_changes()
    }
    fn change(&self, id: &str) -> Result<Option<RecordedChange>, RecordError> {
        (**self).change(id)
    }
    fn changes_of_call(&self, call_id: &str) -> Result<Option<Vec<RecordedChange>>, RecordError> {
        (**self).changes_of_call(call_id)
    }
    fn changes_of_tree(
        &self,
        session_id: &str,
    ) -> Result<Option<Vec<RecordedChange>>, RecordError> {
        (**self).changes_of_tree(session_id)
    }
    fn changes_since_message(
        &self,
        message_id: &str,
    ) -> Result<Option<Vec<RecordedChange>>, RecordError> {
        (**self).changes_since_message(message_id)
    }
    fn reverted_by(&self, id: &str) -> Result<Option<String>, RecordError> {
        (**self).reverted_by(id)
    }
}
