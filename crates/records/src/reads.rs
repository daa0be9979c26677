//! Remembered permission answers (`Approvals`) and the two records a tool may read:
//! the session's conversation (`Conversation`, for plugins) and the worktree a session works
//! in (`WorktreeRecords`, for `sync_to_main`, which also moves its sync base).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::RecordError;

/// A remembered "always" answer: this project allows this permission for this pattern without
/// asking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRow {
    /// The row's id.
    pub id: String,
    /// The project root the approval applies to.
    pub project: String,
    /// The permission (`edit`, `bash`, a tool id).
    pub permission: String,
    /// The pattern approved (a path, command prefix, `*`).
    pub pattern: String,
    /// When the user answered, in milliseconds since the Unix epoch.
    pub created_at: i64,
}

/// One stored conversation message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageRow {
    /// The message's id.
    pub id: String,
    /// The session it belongs to.
    pub session_id: String,
    /// `user`, `assistant`, `system` or `tool`.
    pub role: String,
    /// The message body as JSON (the agent's message shape).
    pub content: Value,
    /// When it was stored, in milliseconds since the Unix epoch.
    pub created_at: i64,
}

/// The git worktree a worktree session works in, and what its changes are synced against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeRow {
    /// The session working in it.
    pub session_id: String,
    /// The worktree directory (under the data dir).
    pub path: String,
    /// `podcode/<session-id>`.
    pub branch: String,
    /// The commit the worktree was created from: the user's HEAD plus their uncommitted and
    /// untracked changes.
    pub fork_commit: String,
    /// What the worktree's changes are compared with when syncing.
    pub sync_base: String,
    /// The root of the user's checkout.
    pub main_root: String,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at: i64,
}

/// Permission patterns the user answered "always" to, per project.
pub trait Approvals: Send + Sync {
    /// One project's approvals, oldest first.
    fn approvals_of(&self, project: &str) -> Result<Vec<ApprovalRow>, RecordError>;
    /// Remembers `(project, permission, pattern)`; remembering it again is not an error.
    fn remember(&self, project: &str, permission: &str, pattern: &str) -> Result<(), RecordError>;
}

/// A session's conversation, for tools that read it.
pub trait Conversation: Send + Sync {
    /// The session's messages, oldest first.
    fn messages_of(&self, session_id: &str) -> Result<Vec<MessageRow>, RecordError>;
    /// The arguments of the session's last completed call of `tool` (the todo list is the
    /// last `todowrite`'s: kept with the session, across resumes and compaction).
    fn last_args_of(&self, session_id: &str, tool: &str) -> Result<Option<Value>, RecordError>;
}

/// The worktree a session works in.
pub trait WorktreeRecords: Send + Sync {
    /// The session's worktree; `None` when it has none.
    fn worktree_of(&self, session_id: &str) -> Result<Option<WorktreeRow>, RecordError>;
    /// Moves the commit the session's next sync compares with.
    fn move_sync_base(&self, session_id: &str, commit: &str) -> Result<(), RecordError>;
}

impl<T: Approvals + ?Sized> Approvals for Arc<T> {
    fn approvals_of(&self, project: &str) -> Result<Vec<ApprovalRow>, RecordError> {
        (**self).approvals_of(project)
    }
    fn remember(&self, project: &str, permission: &str, pattern: &str) -> Result<(), RecordError> {
        (**self).remember(project, permission, pattern)
    }
}

impl<T: Conversation + ?Sized> Conversation for Arc<T> {
    fn messages_of(&self, session_id: &str) -> Result<Vec<MessageRow>, RecordError> {
        (**self).messages_of(session_id)
    }
    fn last_args_of(&self, session_id: &str, tool: &str) -> Result<Option<Value>, RecordError> {
        (**self).last_args_of(session_id, tool)
    }
}

impl<T: WorktreeRecords + ?Sized> WorktreeRecords for Arc<T> {
    fn worktree_of(&self, session_id: &str) -> Result<Option<WorktreeRow>, RecordError> {
        (**self).worktree_of(session_id)
    }
    fn move_sync_base(&self, session_id: &str, commit: &str) -> Result<(), RecordError> {
        (**self).move_sync_base(session_id, commit)
    }
}
