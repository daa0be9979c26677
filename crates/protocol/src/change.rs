//! Change-journal records: what `ctx.recordChange()` sends and what the store keeps.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeOp {
    Create,
    Modify,
    Delete,
}

impl ChangeOp {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Modify => "modify",
            Self::Delete => "delete",
        }
    }

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
    pub file: String,
    pub op: ChangeOp,
    #[serde(default)]
    pub old_content: Option<String>,
    #[serde(default)]
    pub new_content: Option<String>,
}

/// A journaled change as the store returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedChange {
    pub id: String,
    pub session_id: String,
    pub call_id: Option<String>,
    /// Absolute path of the changed file.
    pub file: String,
    pub op: ChangeOp,
    pub old_content: Option<String>,
    pub new_content: Option<String>,
    pub time: i64,
    /// Set on a change that undid another one: the id of the change it reverted.
    pub reverts: Option<String>,
}
