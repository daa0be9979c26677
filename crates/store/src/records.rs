//! The store as the tool pipeline's records: the `podcode-records` traits (call log, change
//! journal, approvals, conversation, worktrees) over the same SQLite queries the rest of
//! Podcode uses. Each method is the inherent one of the same meaning; errors are wrapped as
//! they are, so their text does not change.

use podcode_protocol::{ChangeRecord, RecordedChange};
use podcode_records::{
    ApprovalRow, Approvals, CallLog, ChangeJournal, Conversation, Intent, MessageRow, NewToolCall,
    PendingChange, RecordError, ToolCallEnd, WorktreeRecords, WorktreeRow,
};

use crate::{Store, StoreError};

impl From<StoreError> for RecordError {
    fn from(e: StoreError) -> Self {
        RecordError::new(e)
    }
}

impl CallLog for Store {
    fn start_call(&self, call: &NewToolCall<'_>) -> Result<(), RecordError> {
        Ok(self.start_tool_call(call)?)
    }

    fn finish_call(&self, id: &str, end: &ToolCallEnd<'_>) -> Result<(), RecordError> {
        Ok(self.finish_tool_call(id, end)?)
    }
}

impl ChangeJournal for Store {
    fn record_change(
        &self,
        session_id: &str,
        call_id: Option<&str>,
        change: &ChangeRecord,
    ) -> Result<RecordedChange, RecordError> {
        Ok(Store::record_change(
            self, session_id, call_id, change, None,
        )?)
    }

    fn begin_changes(
        &self,
        session_id: &str,
        call_id: Option<&str>,
        intents: &[Intent],
        owner: &str,
    ) -> Result<Vec<RecordedChange>, RecordError> {
        Ok(Store::begin_changes(self, session_id, call_id, intents, owner)?.0)
    }

    fn complete_changes(&self, ids: &[String]) -> Result<(), RecordError> {
        Ok(Store::complete_changes(self, ids)?)
    }

    fn discard_intents(&self, ids: &[String]) -> Result<(), RecordError> {
        Ok(Store::discard_intents(self, ids)?)
    }

    fn pending_changes(&self) -> Result<Vec<PendingChange>, RecordError> {
        Ok(Store::pending_changes(self)?)
    }

    fn change(&self, id: &str) -> Result<Option<RecordedChange>, RecordError> {
        Ok(Store::change(self, id)?)
    }

    fn changes_of_call(&self, call_id: &str) -> Result<Option<Vec<RecordedChange>>, RecordError> {
        let changes = self.changes(None, Some(call_id))?;
        if changes.is_empty() && self.tool_call(call_id)?.is_none() {
            return Ok(None);
        }
        Ok(Some(changes))
    }

    fn changes_of_tree(
        &self,
        session_id: &str,
    ) -> Result<Option<Vec<RecordedChange>>, RecordError> {
        let changes = self.changes_in_tree(session_id)?;
        if changes.is_empty() && self.session(session_id)?.is_none() {
            return Ok(None);
        }
        Ok(Some(changes))
    }

    fn changes_since_message(
        &self,
        message_id: &str,
    ) -> Result<Option<Vec<RecordedChange>>, RecordError> {
        let Some(message) = self.message(message_id)? else {
            return Ok(None);
        };
        let changes = self
            .changes_in_tree(&message.session_id)?
            .into_iter()
            .filter(|c| c.time >= message.created_at)
            .collect();
        Ok(Some(changes))
    }

    fn reverted_by(&self, id: &str) -> Result<Option<String>, RecordError> {
        Ok(Store::reverted_by(self, id)?)
    }
}

impl Approvals for Store {
    fn approvals_of(&self, project: &str) -> Result<Vec<ApprovalRow>, RecordError> {
        Ok(self.approvals(Some(project))?)
    }

    fn remember(&self, project: &str, permission: &str, pattern: &str) -> Result<(), RecordError> {
        self.add_approval(project, permission, pattern)?;
        Ok(())
    }
}

impl Conversation for Store {
    fn messages_of(&self, session_id: &str) -> Result<Vec<MessageRow>, RecordError> {
        Ok(self.messages(session_id)?)
    }
    fn last_args_of(
        &self,
        session_id: &str,
        tool: &str,
    ) -> Result<Option<serde_json::Value>, RecordError> {
        Ok(self.last_completed_args(session_id, tool)?)
    }
}

impl WorktreeRecords for Store {
    fn worktree_of(&self, session_id: &str) -> Result<Option<WorktreeRow>, RecordError> {
        Ok(self.worktree(session_id)?)
    }

    fn move_sync_base(&self, session_id: &str, commit: &str) -> Result<(), RecordError> {
        Ok(self.set_sync_base(session_id, commit)?)
    }
}
