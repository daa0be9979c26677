//! What fills the Changes view (`changes.rs` owns and draws it): every journaled change of
//! the session, grouped by the prompt (turn) and tool call that made it. Reverting a
//! change, its call, everything since its prompt, or the whole session goes through
//! the engine's revert, the same journal-checked path as `podcode revert`; a refusal
//! keeps its conflict diff in the view and `f` forces the same revert.

use podcode_protocol::RevertTarget;

pub use crate::changes::RevertScope;
use crate::services::TuiServices;
use crate::state::AppState;

/// Reloads the session's changes, keeping the selection in range.
pub fn load_changes(state: &mut AppState, services: &dyn TuiServices) -> Result<(), String> {
    state.changes.changes = services.changes(&state.session_id)?;
    if state.changes.selected >= state.changes.changes.len() {
        state.changes.selected = state.changes.changes.len().saturating_sub(1);
    }
    Ok(())
}

/// Reverts the selected change, its call, its turn and what followed, or the whole
/// session; a conflict is kept in the state so the view shows it and `f` can force it.
pub fn revert_selected(
    state: &mut AppState,
    services: &dyn TuiServices,
    scope: RevertScope,
    force: bool,
) {
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
    state.changes.conflict = None;
    let report = services.revert(&state.session_id, target, force);
    state.changes.message = Some(if let Some(c) = report.conflict {
        state.changes.conflict = Some((
            scope,
            format!("{} changed since Podcode wrote it:\n{}", c.file, c.diff),
        ));
        "revert refused: the file changed since (f forces, esc keeps it)".to_string()
    } else if let Some(e) = report.error {
        e
    } else {
        format!(
            "reverted {} change(s){}",
            report.reverted.len(),
            if report.skipped.is_empty() {
                String::new()
            } else {
                format!(", {} already reverted", report.skipped.len())
            }
        )
    });
    if let Err(e) = load_changes(state, services) {
        state.changes.message = Some(e);
    }
}
