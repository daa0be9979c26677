//! The Changes panel's JSON shapes: a session's changes grouped by prompt and tool call
//! (each with what reverting toggles), one change with its diff, and a revert's request
//! and outcome.

use podcode_core::ChangeEntry;
use podcode_protocol::{RecordedChange, RevertReport};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One change in the Changes list.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChangeSummary {
    pub id: String,
    /// Absolute path.
    pub file: String,
    /// Relative to the working directory when inside it.
    pub display: String,
    /// `create`, `modify` or `delete`.
    pub op: String,
    pub time: i64,
    /// Undone now (reverted, or reverted, redone and reverted again).
    pub reverted: bool,
    /// The change to revert to toggle this one: itself while it is in effect; the newest
    /// revert record while it is reverted (reverting that redoes it).
    pub toggle: String,
    pub additions: usize,
    pub deletions: usize,
}

/// The changes one tool call made.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChangeCall {
    /// Null for revert records.
    pub call_id: Option<String>,
    /// `edit — src/a.rs`.
    pub label: String,
    pub changes: Vec<ChangeSummary>,
}

/// The changes of one prompt's turn, by tool call.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChangePrompt {
    /// The user message; null for changes made before any prompt.
    pub message_id: Option<String>,
    /// Its first line.
    pub text: Option<String>,
    pub calls: Vec<ChangeCall>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ChangeList {
    pub prompts: Vec<ChangePrompt>,
}

/// Groups the Changes view's entries (already in call order) by prompt, then call.
pub fn group_changes(entries: Vec<ChangeEntry>) -> ChangeList {
    let mut prompts: Vec<ChangePrompt> = Vec::new();
    for e in entries {
        let (message_id, text) = match &e.turn {
            Some((id, text)) => (Some(id.clone()), Some(text.clone())),
            None => (None, None),
        };
        let (additions, deletions) = count_lines(&e.diff);
        let summary = ChangeSummary {
            id: e.change.id.clone(),
            file: e.change.file.clone(),
            display: e.display.clone(),
            op: e.change.op.as_str().to_string(),
            time: e.change.time,
            reverted: e.reverted,
            toggle: e.change.id.clone(),
            additions,
            deletions,
        };
        let prompt = match prompts.iter().position(|p| p.message_id == message_id) {
            Some(i) => &mut prompts[i],
            None => {
                prompts.push(ChangePrompt {
                    message_id,
                    text,
                    calls: Vec::new(),
                });
                let last = prompts.len() - 1;
                &mut prompts[last]
            }
        };
        match prompt
            .calls
            .iter_mut()
            .find(|c| c.call_id == e.change.call_id)
        {
            Some(call) => call.changes.push(summary),
            None => prompt.calls.push(ChangeCall {
                call_id: e.change.call_id.clone(),
                label: e.call_label.clone(),
                changes: vec![summary],
            }),
        }
    }
    ChangeList { prompts }
}

/// Added and removed lines of a unified diff.
fn count_lines(diff: &str) -> (usize, usize) {
    let mut add = 0;
    let mut del = 0;
    for line in diff.lines() {
        if line.starts_with('+') && !line.starts_with("+++") {
            add += 1;
        } else if line.starts_with('-') && !line.starts_with("---") {
            del += 1;
        }
    }
    (add, del)
}

/// One journaled change with its contents and diff.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChangeDetail {
    pub id: String,
    pub session_id: String,
    pub call_id: Option<String>,
    pub file: String,
    pub display: String,
    pub op: String,
    pub time: i64,
    pub reverted: bool,
    /// The id of the change this one undid, on a revert record.
    pub reverts: Option<String>,
    pub old_content: Option<String>,
    pub new_content: Option<String>,
    pub diff: String,
}

/// What a revert undoes.
#[derive(Debug, Deserialize, ToSchema)]
pub struct RevertTargetBody {
    /// `change`, `call`, `since_message` or `session`.
    pub kind: String,
    pub id: String,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct RevertRequest {
    pub target: RevertTargetBody,
    /// Overwrite files that changed since Podcode wrote them.
    #[serde(default)]
    pub force: bool,
}

/// A journaled change as a revert reports it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RevertedChange {
    pub id: String,
    pub session_id: String,
    pub call_id: Option<String>,
    pub file: String,
    pub op: String,
    pub old_content: Option<String>,
    pub new_content: Option<String>,
    pub time: i64,
    pub reverts: Option<String>,
}

impl From<RecordedChange> for RevertedChange {
    fn from(c: RecordedChange) -> Self {
        Self {
            id: c.id,
            session_id: c.session_id,
            call_id: c.call_id,
            file: c.file,
            op: c.op.as_str().to_string(),
            old_content: c.old_content,
            new_content: c.new_content,
            time: c.time,
            reverts: c.reverts,
        }
    }
}

/// The file a revert refused to overwrite and how it differs from what Podcode wrote.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Conflict {
    pub file: String,
    pub diff: String,
}

/// How a revert went. With `conflict` set nothing was written: retry with `force`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RevertOutcome {
    pub reverted: Vec<RevertedChange>,
    /// Selected changes that were already reverted.
    pub skipped: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict: Option<Conflict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the model is told about this revert on its next request (a `revert_note` item).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl From<RevertReport> for RevertOutcome {
    fn from(r: RevertReport) -> Self {
        Self {
            reverted: r.reverted.into_iter().map(Into::into).collect(),
            skipped: r.skipped,
            conflict: r.conflict.map(|c| Conflict {
                file: c.file,
                diff: c.diff,
            }),
            error: r.error,
            note: r.note,
        }
    }
}
