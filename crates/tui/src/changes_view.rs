//! What fills the Changes view (`changes.rs` owns and draws it): every journaled change of
//! the session, grouped by the prompt (turn) and tool call that made it. Reverting a
//! change, its call, everything since its prompt, or the whole session goes through
//! the engine's revert, the same journal-checked path as `podcode revert`; a refusal
//! keeps its conflict diff in the view and `f` forces the same revert. What the model is
//! told about a revert joins the transcript as a notice.

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
    // What the model will be told shows in the conversation, as it does on a resume.
    if let Some(note) = &report.note {
        state
            .transcript
            .notice(crate::transcript::revert_note_notice(note));
    }
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

#[cfg(test)]
mod tests {
    use podcode_protocol::{ChangeOp, Item, RecordedChange, RevertReport, StepUsage};

    use super::*;
    use crate::changes::ChangeItem;
    use crate::services::{NoServices, PickItem};
    use crate::transcript::Entry;

    /// Reverts succeed and say what the model is told; everything else is `NoServices`.
    struct Reverting;

    impl TuiServices for Reverting {
        fn transcript(&self, id: &str) -> Result<(Vec<Item>, StepUsage), String> {
            NoServices.transcript(id)
        }
        fn models(&self) -> Vec<PickItem> {
            Vec::new()
        }
        fn agents(&self) -> Vec<PickItem> {
            Vec::new()
        }
        fn plugins(&self) -> Vec<String> {
            Vec::new()
        }
        fn sessions_here(&self, cwd: &str, current: &str) -> Result<Vec<PickItem>, String> {
            NoServices.sessions_here(cwd, current)
        }
        fn new_session(
            &self,
            l: &str,
            a: &str,
            m: &str,
        ) -> Result<(String, Option<String>), String> {
            NoServices.new_session(l, a, m)
        }
        fn session_title(&self, id: &str) -> Result<Option<String>, String> {
            NoServices.session_title(id)
        }
        fn changes(&self, _: &str) -> Result<Vec<ChangeItem>, String> {
            Ok(Vec::new())
        }
        fn revert(&self, _: &str, _: RevertTarget, _: bool) -> RevertReport {
            RevertReport {
                note: Some("The user reverted the change to a.txt (the file is back to its previous content).".into()),
                ..RevertReport::default()
            }
        }
    }

    #[test]
    fn a_revert_shows_what_the_model_is_told() {
        let mut state = AppState::new("m", "build", "/w", "ses_1");
        state.changes.changes = vec![ChangeItem {
            change: RecordedChange {
                id: "chg_1".into(),
                session_id: "ses_1".into(),
                call_id: None,
                file: "/w/a.txt".into(),
                op: ChangeOp::Modify,
                old_content: Some("a\n".into()),
                new_content: Some("b\n".into()),
                time: 0,
                reverts: None,
            },
            turn: None,
            call_label: "write — a.txt".into(),
            reverted: false,
            display: "a.txt".into(),
            diff: String::new(),
        }];
        revert_selected(&mut state, &Reverting, RevertScope::Change, false);
        assert_eq!(
            state.transcript.entries.last(),
            Some(&Entry::Notice(
                "↶ the model was told: The user reverted the change to a.txt (the file is back to its previous content).".into()
            ))
        );
    }
}
