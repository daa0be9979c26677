//! The change journal as front ends use it: listing changes (grouped for the Changes view
//! by the prompt and tool call that made them), diffs, reverting a change, a call,
//! everything since a prompt or a whole session (a session's changes include its
//! sub-agents') — always through `podcode_tools::revert`,
//! which refuses (with a diff) to overwrite a file that changed since — and the "always"
//! approvals remembered per project.

use std::path::Path;

use podcode_protocol::{RecordedChange, RevertConflict, RevertReport, RevertTarget};
use podcode_store::ApprovalRow;
use podcode_tools::{RevertError, RevertOptions};

use crate::engine::Engine;
use crate::error::EngineError;

/// One change as the Changes view lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeEntry {
    /// The journaled change.
    pub change: RecordedChange,
    /// The prompt (user message id and first line) of the turn that made the change.
    pub turn: Option<(String, String)>,
    /// The tool call that made it (`write — notes.txt`).
    pub call_label: String,
    /// A later change reverted it.
    pub reverted: bool,
    /// The path relative to the working directory when it is inside it.
    pub display: String,
    /// Unified diff of the change.
    pub diff: String,
}

/// A unified diff of `old` → `new` labelled `file`.
pub fn unified_diff(file: &str, old: &str, new: &str) -> String {
    podcode_tools::unified_diff(file, old, new)
}

impl Engine {
    /// Journaled changes, oldest first, optionally of one session or one call. A session's
    /// include its sub-agents' (at any depth): they edited on its behalf, and reverting the
    /// session reverts theirs too.
    pub fn changes(
        &self,
        session: Option<&str>,
        call: Option<&str>,
    ) -> Result<Vec<RecordedChange>, EngineError> {
        let store = self.store()?;
        Ok(match session {
            Some(id) => store
                .changes_in_tree(id)?
                .into_iter()
                .filter(|c| call.is_none() || c.call_id.as_deref() == call)
                .collect(),
            None => store.changes(None, call)?,
        })
    }

    /// One journaled change by id; `None` when there is none.
    pub fn change(&self, id: &str) -> Result<Option<RecordedChange>, EngineError> {
        Ok(self.store()?.change(id)?)
    }

    /// The id of the change that reverted `id`, if any.
    pub fn reverted_by(&self, id: &str) -> Result<Option<String>, EngineError> {
        Ok(self.store()?.reverted_by(id)?)
    }

    /// A session's changes for the Changes view, its sub-agents' included (labelled with the
    /// sub-agent), grouped by tool call in first-change order.
    pub fn change_entries(&self, session_id: &str) -> Result<Vec<ChangeEntry>, EngineError> {
        let store = self.store()?;
        let all = store.changes_in_tree(session_id)?;
        // The user's prompts, oldest first: a change belongs to the last one written before it.
        let mut prompts: Vec<(i64, String, String)> = Vec::new();
        for m in store.messages(session_id)? {
            let synthetic = m.content.get("synthetic").and_then(|v| v.as_bool()) == Some(true);
            if m.role != "user" || synthetic {
                continue;
            }
            let first_line = store
                .parts(&m.id)?
                .iter()
                .find(|p| p.kind == "text")
                .and_then(|p| p.data.get("text").and_then(|t| t.as_str()))
                .and_then(|t| t.lines().next())
                .unwrap_or("")
                .chars()
                .take(60)
                .collect();
            prompts.push((m.created_at, m.id, first_line));
        }
        let cwd = self.cwd();
        let mut items = Vec::new();
        for c in all.into_iter().filter(|c| c.reverts.is_none()) {
            // Reverted, or reverted then redone (a revert of its revert): the chain says.
            let reverted = podcode_tools::is_reverted(&*store, &c.id)
                .map_err(|e| EngineError::Io(e.to_string()))?;
            let display = Path::new(&c.file)
                .strip_prefix(cwd)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| c.file.clone());
            let diff = unified_diff(
                &display,
                &podcode_protocol::display_text(c.old_content.as_deref()),
                &podcode_protocol::display_text(c.new_content.as_deref()),
            );
            let turn = prompts
                .iter()
                .rev()
                .find(|(at, ..)| *at <= c.time)
                .map(|(_, id, text)| (id.clone(), text.clone()));
            let mut call_label = match &c.call_id {
                Some(id) => match store.tool_call(id)? {
                    Some(call) if !call.title.is_empty() => {
                        format!("{} — {}", call.tool, call.title)
                    }
                    Some(call) => call.tool,
                    None => id.clone(),
                },
                None => "(revert)".to_string(),
            };
            if c.session_id != session_id {
                let agent = store
                    .session(&c.session_id)?
                    .map(|s| s.agent)
                    .unwrap_or_default();
                call_label = format!("sub-agent {agent} · {call_label}");
            }
            items.push(ChangeEntry {
                turn,
                call_label,
                change: c,
                reverted,
                display,
                diff,
            });
        }
        let mut order: Vec<Option<String>> = Vec::new();
        for i in &items {
            if !order.contains(&i.change.call_id) {
                order.push(i.change.call_id.clone());
            }
        }
        items.sort_by_key(|i| order.iter().position(|o| *o == i.change.call_id));
        Ok(items)
    }

    /// Whether `session` is `root` or one of its sub-agent sessions (at any depth): a
    /// front end showing `root`'s changes also shows, and reverts, theirs.
    pub fn session_within(&self, session: &str, root: &str) -> Result<bool, EngineError> {
        let store = self.store()?;
        let mut current = Some(session.to_string());
        // Bounded walk: a parent chain never legitimately exceeds the task depth limit.
        for _ in 0..64 {
            match current {
                Some(id) if id == root => return Ok(true),
                Some(id) => current = store.session(&id)?.and_then(|s| s.parent_id),
                None => return Ok(false),
            }
        }
        Ok(false)
    }

    /// The session a revert target belongs to (revert records are journaled under it).
    pub fn session_of(&self, target: &RevertTarget) -> Result<String, EngineError> {
        let store = self.store()?;
        let found = match target {
            RevertTarget::Session(id) => Some(id.clone()),
            RevertTarget::Change(id) => store.change(id)?.map(|c| c.session_id),
            RevertTarget::Call(id) => store.tool_call(id)?.map(|c| c.session_id),
            RevertTarget::SinceMessage(id) => store.message(id)?.map(|m| m.session_id),
        };
        found.ok_or_else(|| {
            EngineError::Io(
                "no change, call, message or session with that id (see `podcode changes`)".into(),
            )
        })
    }

    /// Reverts `target`, journaling the revert under `session_id`. A file that changed
    /// since Podcode wrote it stops the revert (nothing is written) unless `force`.
    pub fn revert(&self, session_id: &str, target: &RevertTarget, force: bool) -> RevertReport {
        let store = match self.store() {
            Ok(s) => s,
            Err(e) => {
                return RevertReport {
                    error: Some(e.to_string()),
                    ..RevertReport::default()
                };
            }
        };
        let opts = RevertOptions {
            force,
            session_id: session_id.to_string(),
        };
        match podcode_tools::revert(&store, target, &opts) {
            Ok(out) => {
                // The model's history still says the file was written: tell it.
                let (note, error) = match self.note_revert(session_id, &out.reverted) {
                    Ok(note) => (note, None),
                    Err(e) => (
                        None,
                        Some(format!(
                            "the files were restored, but the note telling the model could not be stored: {e}"
                        )),
                    ),
                };
                RevertReport {
                    reverted: out.reverted,
                    skipped: out.skipped,
                    error,
                    note,
                    ..RevertReport::default()
                }
            }
            Err(RevertError::Conflict { file, diff }) => RevertReport {
                conflict: Some(RevertConflict { file, diff }),
                ..RevertReport::default()
            },
            Err(e) => RevertReport {
                error: Some(e.to_string()),
                ..RevertReport::default()
            },
        }
    }

    /// Remembered "always" approvals, of this project or (`all`) every project.
    pub fn approvals(&self, all: bool) -> Result<Vec<ApprovalRow>, EngineError> {
        let project = self.project_key();
        Ok(self
            .store()?
            .approvals((!all).then_some(project.as_str()))?)
    }

    /// Forgets approval `id`, every approval (`all`), or this project's; returns how many.
    pub fn reset_approvals(&self, id: Option<&str>, all: bool) -> Result<usize, EngineError> {
        let store = self.store()?;
        let project = self.project_key();
        Ok(match (id, all) {
            (Some(id), _) => store.remove_approvals(None, Some(id))?,
            (None, true) => store.remove_approvals(None, None)?,
            (None, false) => store.remove_approvals(Some(&project), None)?,
        })
    }
}

/// What `podcode revert` prints for a refused revert (the same text as the pipeline's).
pub fn conflict_text(conflict: &RevertConflict) -> String {
    RevertError::Conflict {
        file: conflict.file.clone(),
        diff: conflict.diff.clone(),
    }
    .to_string()
}
