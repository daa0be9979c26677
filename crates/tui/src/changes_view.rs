//! What fills the Changes view (`changes.rs` owns and draws it): every journaled change of
//! the session, grouped by the prompt (turn) and tool call that made it. Reverting a
//! change, its call, everything since its prompt, or the whole session goes through
//! `podcode_tools::revert`, the same journal-checked path as `podcode revert`; a refusal
//! keeps its conflict diff in the view and `f` forces the same revert.

use std::path::Path;

use podcode_store::Store;
use podcode_tools::{RevertError, RevertOptions, RevertTarget, revert, unified_diff};

use crate::changes::ChangeItem;
pub use crate::changes::RevertScope;
use crate::error::TuiError;
use crate::state::AppState;

/// Reloads the session's changes from the store, keeping the selection in range.
pub fn load_changes(state: &mut AppState, store: &Store) -> Result<(), TuiError> {
    let all = store.changes(Some(&state.session_id), None)?;
    // The user's prompts, oldest first: a change belongs to the last one written before it.
    let mut prompts: Vec<(i64, String, String)> = Vec::new();
    for m in store.messages(&state.session_id)? {
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
    let mut items = Vec::new();
    for c in all.into_iter().filter(|c| c.reverts.is_none()) {
        let reverted = store.reverted_by(&c.id)?.is_some();
        let display = Path::new(&c.file)
            .strip_prefix(&state.status.cwd)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| c.file.clone());
        let diff = unified_diff(
            &display,
            c.old_content.as_deref().unwrap_or(""),
            c.new_content.as_deref().unwrap_or(""),
        );
        let turn = prompts
            .iter()
            .rev()
            .find(|(at, ..)| *at <= c.time)
            .map(|(_, id, text)| (id.clone(), text.clone()));
        let call_label = match &c.call_id {
            Some(id) => match store.tool_call(id)? {
                Some(call) if !call.title.is_empty() => format!("{} — {}", call.tool, call.title),
                Some(call) => call.tool,
                None => id.clone(),
            },
            None => "(revert)".to_string(),
        };
        items.push(ChangeItem {
            turn,
            call_label,
            change: c,
            reverted,
            display,
            diff,
        });
    }
    // Grouped by tool call, in first-change order.
    let mut order: Vec<Option<String>> = Vec::new();
    for i in &items {
        if !order.contains(&i.change.call_id) {
            order.push(i.change.call_id.clone());
        }
    }
    items.sort_by_key(|i| order.iter().position(|o| *o == i.change.call_id));
    state.changes.changes = items;
    if state.changes.selected >= state.changes.changes.len() {
        state.changes.selected = state.changes.changes.len().saturating_sub(1);
    }
    Ok(())
}

/// Reverts the selected change, its call, its turn and what followed, or the whole
/// session; a conflict is kept in the state so the view shows it and `f` can force it.
pub fn revert_selected(state: &mut AppState, store: &Store, scope: RevertScope, force: bool) {
    let Some(item) = state.changes.changes.get(state.changes.selected) else {
        return;
    };
    let target = match scope {
        RevertScope::Change => RevertTarget::Change(item.change.id.clone()),
        RevertScope::Call => match &item.change.call_id {
            Some(c) => RevertTarget::Call(c.clone()),
            None => RevertTarget::Change(item.change.id.clone()),
        },
        RevertScope::Turn => match &item.turn {
            Some((message, _)) => RevertTarget::SinceMessage(message.clone()),
            None => RevertTarget::Session(state.session_id.clone()),
        },
        RevertScope::Session => RevertTarget::Session(state.session_id.clone()),
    };
    let opts = RevertOptions {
        force,
        session_id: state.session_id.clone(),
    };
    state.changes.conflict = None;
    state.changes.message = Some(match revert(store, &target, &opts) {
        Ok(out) => format!(
            "reverted {} change(s){}",
            out.reverted.len(),
            if out.skipped.is_empty() {
                String::new()
            } else {
                format!(", {} already reverted", out.skipped.len())
            }
        ),
        Err(RevertError::Conflict { file, diff }) => {
            state.changes.conflict = Some((
                scope,
                format!("{file} changed since Podcode wrote it:\n{diff}"),
            ));
            "revert refused: the file changed since (f forces, esc keeps it)".to_string()
        }
        Err(e) => format!("{e}"),
    });
    if let Err(e) = load_changes(state, store) {
        state.changes.message = Some(e.to_string());
    }
}
