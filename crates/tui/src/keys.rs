//! Key handling: turns a key press into a state change and, when the core or the store has
//! to act, an `Action` for the event loop. Pure apart from the state, so it is unit-tested.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use podcode_protocol::PermissionReply;

use crate::changes_view::RevertScope;
use crate::input::EditOutcome;
use crate::state::{AppState, Entry, Screen};

/// What the event loop must do after a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    None,
    /// Send this prompt, with the files its `@path` mentions attach, to the agent.
    Submit {
        text: String,
        files: Vec<String>,
    },
    /// Abort the running turn.
    Abort,
    /// Esc on the permission prompt: reject it and abort the turn.
    RejectAndAbort,
    Quit,
    /// The user answered the open permission prompt.
    Answer(PermissionReply),
    /// Show the Changes view (reloading the journal).
    OpenChanges,
    Revert(RevertScope, bool),
    /// `/new`: start a fresh session.
    NewSession,
    /// `/undo`: revert the last turn's changes.
    Undo,
    /// `/sessions`, `/model`, `/agent` without an argument: open that picker.
    OpenPicker(crate::picker::PickerKind),
    /// A picker's choice, or `/model ID` / `/agent NAME` typed in full.
    Pick(crate::picker::PickerKind, String),
    /// `/plugins`: show the plugin report.
    ShowPlugins,
}

pub fn handle_key(state: &mut AppState, key: KeyEvent) -> Action {
    if key.kind == KeyEventKind::Release {
        return Action::None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && key.code == KeyCode::Char('c') {
        if state.quit_armed {
            return Action::Quit;
        }
        state.quit_armed = true;
        state.input.clear();
        return Action::None;
    }
    state.quit_armed = false;
    if state.show_help {
        state.show_help = false;
        return Action::None;
    }
    if let Some(modal) = &mut state.modal {
        if key.code == KeyCode::Esc && modal.feedback.is_none() {
            return Action::RejectAndAbort;
        }
        return match crate::modal::modal_key(modal, key) {
            Some(reply) => Action::Answer(reply),
            None => Action::None,
        };
    }
    if state.picker.is_some() {
        return crate::picker::picker_key(state, key);
    }
    if state.screen == Screen::Changes {
        return changes_key(state, key);
    }
    if let Some(action) = crate::mentions::completion_key(state, key) {
        return action;
    }
    if let Some(max) = state.render_cache.borrow().max_scroll() {
        state.scroll = state.scroll.min(max);
    }
    match key.code {
        KeyCode::Esc if state.busy => Action::Abort,
        KeyCode::Char('g') if ctrl => Action::OpenChanges,
        KeyCode::Char('o') if ctrl => {
            state.toggle_last_output();
            Action::None
        }
        KeyCode::Char('j') if ctrl => {
            state.input.insert_char('\n');
            Action::None
        }
        KeyCode::Enter
            if key
                .modifiers
                .intersects(KeyModifiers::ALT | KeyModifiers::SHIFT) =>
        {
            state.input.insert_char('\n');
            Action::None
        }
        KeyCode::Enter => submit(state),
        KeyCode::PageUp => {
            state.scroll = state.scroll.saturating_add(10);
            Action::None
        }
        KeyCode::PageDown => {
            state.scroll = state.scroll.saturating_sub(10);
            Action::None
        }
        KeyCode::Up if key.modifiers.contains(KeyModifiers::SHIFT) => {
            state.scroll = state.scroll.saturating_add(1);
            Action::None
        }
        KeyCode::Down if key.modifiers.contains(KeyModifiers::SHIFT) => {
            state.scroll = state.scroll.saturating_sub(1);
            Action::None
        }
        // The transcript clamps a scroll past its top to its first screenful.
        KeyCode::Home if ctrl => {
            state.scroll = u16::MAX;
            Action::None
        }
        KeyCode::End if ctrl => {
            state.scroll = 0;
            Action::None
        }
        _ => {
            match state.input.edit_key(key) {
                EditOutcome::PastTop => history(state, true),
                EditOutcome::PastBottom => history(state, false),
                EditOutcome::Handled => state.history_pos = None,
                EditOutcome::Ignored => {}
            }
            crate::mentions::refresh(state);
            Action::None
        }
    }
}

fn submit(state: &mut AppState) -> Action {
    let text = state.input.text().trim().to_string();
    if text.is_empty() {
        return Action::None;
    }
    state.input.clear();
    state.history_pos = None;
    if state.history.last() != Some(&text) {
        state.history.push(text.clone());
    }
    if let Some(action) = crate::slash::command(state, &text) {
        return action;
    }
    let files = crate::mentions::attached_files(&text, &state.cwd);
    if state.busy {
        state.entries.push(Entry::Notice(format!(
            "queued (sent when the running turn ends; esc aborts it): {}",
            text.lines().next().unwrap_or("")
        )));
        state.queued.push((text, files));
        return Action::None;
    }
    state.push_user(&text);
    Action::Submit { text, files }
}

fn history(state: &mut AppState, up: bool) {
    if state.history.is_empty() {
        return;
    }
    let last = state.history.len() - 1;
    let pos = match (state.history_pos, up) {
        (None, true) => Some(last),
        (None, false) => None,
        (Some(p), true) => Some(p.saturating_sub(1)),
        (Some(p), false) if p < last => Some(p + 1),
        (Some(_), false) => None,
    };
    state.history_pos = pos;
    let text = pos
        .and_then(|p| state.history.get(p).cloned())
        .unwrap_or_default();
    state.input.set(&text);
}

fn changes_key(state: &mut AppState, key: KeyEvent) -> Action {
    let view = &mut state.changes;
    match key.code {
        KeyCode::Esc | KeyCode::Char('q') => {
            if view.conflict.is_some() {
                view.conflict = None;
                view.message = Some("revert cancelled".into());
            } else {
                state.screen = Screen::Transcript;
            }
            Action::None
        }
        KeyCode::Up | KeyCode::Char('k') => {
            view.selected = view.selected.saturating_sub(1);
            view.conflict = None;
            Action::None
        }
        KeyCode::Down | KeyCode::Char('j') => {
            if view.selected + 1 < view.changes.len() {
                view.selected += 1;
            }
            view.conflict = None;
            Action::None
        }
        KeyCode::Char('r') => Action::Revert(RevertScope::Change, false),
        KeyCode::Char('c') => Action::Revert(RevertScope::Call, false),
        KeyCode::Char('t') => Action::Revert(RevertScope::Turn, false),
        KeyCode::Char('a') => Action::Revert(RevertScope::Session, false),
        KeyCode::Char('f') => match &view.conflict {
            Some((scope, _)) => Action::Revert(*scope, true),
            None => Action::None,
        },
        _ => Action::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn typing_and_enter_submits_and_remembers_history() {
        let mut s = AppState::default();
        for c in "hi".chars() {
            handle_key(&mut s, key(KeyCode::Char(c)));
        }
        assert_eq!(
            handle_key(&mut s, key(KeyCode::Enter)),
            Action::Submit {
                text: "hi".into(),
                files: vec![]
            }
        );
        assert!(s.busy);
        s.busy = false;
        handle_key(&mut s, key(KeyCode::Up));
        assert_eq!(s.input.text(), "hi");
    }

    #[test]
    fn enter_while_a_turn_runs_queues_the_prompt_and_slash_commands_still_work() {
        let mut s = AppState {
            busy: true,
            ..Default::default()
        };
        s.input.set("and then this");
        assert_eq!(handle_key(&mut s, key(KeyCode::Enter)), Action::None);
        assert_eq!(s.queued, vec![("and then this".to_string(), vec![])]);
        assert!(s.input.is_empty());
        assert!(
            matches!(s.entries.last(), Some(Entry::Notice(t)) if t.starts_with("queued (sent when the running turn ends"))
        );
        s.input.set("/changes");
        assert_eq!(handle_key(&mut s, key(KeyCode::Enter)), Action::OpenChanges);
    }

    #[test]
    fn scroll_keys_move_the_transcript_not_the_cursor() {
        let mut s = AppState::default();
        s.input.set("typed");
        handle_key(&mut s, key(KeyCode::PageUp));
        handle_key(&mut s, KeyEvent::new(KeyCode::Up, KeyModifiers::SHIFT));
        assert_eq!(s.scroll, 11);
        handle_key(&mut s, KeyEvent::new(KeyCode::Down, KeyModifiers::SHIFT));
        assert_eq!(s.scroll, 10);
        handle_key(&mut s, KeyEvent::new(KeyCode::Home, KeyModifiers::CONTROL));
        assert_eq!(s.scroll, u16::MAX);
        handle_key(&mut s, KeyEvent::new(KeyCode::End, KeyModifiers::CONTROL));
        assert_eq!(s.scroll, 0);
        assert_eq!(s.input.text(), "typed");
        assert_eq!(s.input.cursor(), 5);
    }

    #[test]
    fn esc_aborts_only_while_busy_and_ctrl_c_twice_quits() {
        let mut s = AppState::default();
        assert_eq!(handle_key(&mut s, key(KeyCode::Esc)), Action::None);
        s.busy = true;
        assert_eq!(handle_key(&mut s, key(KeyCode::Esc)), Action::Abort);
        let cc = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(handle_key(&mut s, cc), Action::None);
        assert_eq!(handle_key(&mut s, cc), Action::Quit);
    }

    #[test]
    fn modal_keys_answer_and_esc_rejects_and_aborts() {
        let mut s = AppState {
            modal: Some(crate::state::PermissionModal {
                tool: "bash".into(),
                call_id: "c1".into(),
                request: podcode_protocol::PermissionRequest {
                    permission: "bash".into(),
                    patterns: vec!["ls".into()],
                    always: vec![],
                    metadata: serde_json::Value::Null,
                },
                feedback: None,
            }),
            ..Default::default()
        };
        assert_eq!(
            handle_key(&mut s, key(KeyCode::Char('a'))),
            Action::Answer(PermissionReply::Always)
        );
        assert_eq!(
            handle_key(&mut s, key(KeyCode::Esc)),
            Action::RejectAndAbort
        );
        handle_key(&mut s, key(KeyCode::Char('f')));
        for c in "no".chars() {
            handle_key(&mut s, key(KeyCode::Char(c)));
        }
        assert_eq!(
            handle_key(&mut s, key(KeyCode::Enter)),
            Action::Answer(PermissionReply::Reject {
                feedback: Some("no".into())
            })
        );
    }
}
