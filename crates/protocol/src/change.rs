//! Change-journal records: what `ctx.recordChange()` sends and what the store keeps.

use serde::{Deserialize, Serialize};

/// What a journaled change did to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeOp {
    /// The file did not exist before.
    Create,
    /// The file existed and its content changed.
    Modify,
    /// The file was removed.
    Delete,
}

impl ChangeOp {
    /// The name the store's `op` column and the JSON wire form use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Modify => "modify",
            Self::Delete => "delete",
        }
    }

    /// Reads a stored `op` column back; `None` for anything `as_str` never writes.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "create" => Some(Self::Create),
            "modify" => Some(Self::Modify),
            "delete" => Some(Self::Delete),
            _ => None,
        }
    }
}

/// `recordChange({file, op, oldContent, newContent})` exactly as tools send it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeRecord {
    /// Path of the changed file, as the tool names it (resolved against the project).
    pub file: String,
    /// Whether the file was created, modified or deleted.
    pub op: ChangeOp,
    /// Content before the change (`None` for a create); revert restores it.
    #[serde(default)]
    pub old_content: Option<String>,
    /// Content after the change (`None` for a delete).
    #[serde(default)]
    pub new_content: Option<String>,
}

/// A journaled change as the store returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedChange {
    /// The change's id (a ULID, so ids sort by time).
    pub id: String,
    /// The session whose tool call made the change.
    pub session_id: String,
    /// The tool call that made it; `None` for changes made outside a call (a revert).
    pub call_id: Option<String>,
    /// Absolute path of the changed file.
    pub file: String,
    /// Whether the file was created, modified or deleted.
    pub op: ChangeOp,
    /// Journal text of the content before (`None` for a create); see `FileContent`.
    pub old_content: Option<String>,
    /// Journal text of the content after (`None` for a delete); see `FileContent`.
    pub new_content: Option<String>,
    /// When the change was journaled, in milliseconds since the Unix epoch.
    pub time: i64,
    /// Set on a change that undid another one: the id of the change it reverted.
    pub reverts: Option<String>,
}

/// What a revert undoes (`Op::Revert`, `podcode revert`, the Changes view).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum RevertTarget {
    /// One change by id (reverting a revert record redoes the original).
    Change(String),
    /// Every change one tool call made.
    Call(String),
    /// Every change of the message's session made at or after it: "undo since this prompt".
    SinceMessage(String),
    /// Every change a session made.
    Session(String),
}

/// The file a revert refused to overwrite, and how it differs from what Podcode wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevertConflict {
    /// Absolute path of the file left alone.
    pub file: String,
    /// Unified diff from what Podcode wrote to what the file holds now.
    pub diff: String,
}

/// How a revert went: what it restored, or why it refused.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RevertReport {
    /// The new revert records, in the order they were applied (newest change first).
    pub reverted: Vec<RecordedChange>,
    /// Ids of selected changes that were already reverted and were left alone.
    pub skipped: Vec<String>,
    /// Set when a file changed since Podcode wrote it (nothing was reverted; force overwrites).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<RevertConflict>,
    /// Set when the revert could not run at all (unknown id, store failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the model is told about this revert on its next request (the note stored in
    /// the conversation); `None` when nothing was reverted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}
