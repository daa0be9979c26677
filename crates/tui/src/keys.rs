//! Key handling: dispatches a key press to the component that has the keyboard — the
//! help overlay, the permission modal, a picker, the Changes view, the `@path` popup, the
//! transcript (scrolling) and finally the input — and turns what it did into an `Action`
//! when the core or the store has to act. Pure apart from the state, so it is unit-tested.

mod slash;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use podcode_protocol::PermissionReply;

use std::time::Instant;

use crate::changes::{ChangesKey, RevertScope};
use crate::modal::ModalKey;
use crate::picker::{PickerKind, PickerOutcome};
use crate::state::{AppState, Screen};

/// What the event loop must do after a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Nothing to do beyond the state change.
    None,
    /// Send this prompt, with the files its `@path` mentions attach, to the agent.
    Submit {
        /// The prompt.
        text: String,
        /// Paths of the mentioned files.
        files: Vec<String>,
    },
    /// Abort the running turn.
    Abort,
    /// Esc on the permission prompt: reject it and abort the turn.
    RejectAndAbort,
    /// Leave the TUI.
    Quit,
    /// The user answered the open permission prompt.
    Answer(PermissionReply),
    /// Show the Changes view (reloading the journal).
    OpenChanges,
    /// Revert at this scope (from the Changes view); `true` forces past a conflict.
    Revert(RevertScope, bool),
    /// `/new`: start a fresh session.
    NewSession,
    /// `/undo`: revert the last turn's changes.
    Undo,
    /// `/compact`: compact the session's conversation now.
    Compact,
    /// `/sessions`, `/model`, `/agent` without an argument: open that picker.
    OpenPicker(PickerKind),
    /// A picker's choice, or `/model ID` / `/agent NAME` typed in full.
    Pick(PickerKind, String),
    /// `/plugins`: show the plugin report.
    ShowPlugins,
    /// `/skills`: show the skills and why any was refused.
    ShowSkills,
    /// `/commands`: show the custom commands and why any was refused.
    ShowCommands,
    /// `/name args` naming a custom command: run it as a turn.
    RunCommand {
        /// The command's name.
        name: String,
        /// What followed the name.
        arguments: String,
    },
}

/// Applies a key to the state (the modal, picker, Changes view or input, whichever has focus) and
/// says what the event loop must do.
pub fn handle_key(state: &mut AppState, key: KeyEvent) -> Action {
    handle_key_at(state, key, Instant::now())
}

/// [`handle_key`] for a key pressed at `now`: a permission modal shown less than
/// [`KEY_GRACE`](crate::KEY_GRACE) before leaves the key to the screen beneath it.
pub fn handle_key_at(state: &mut AppState, key: KeyEvent, now: Instant) -> Action {
    if key.kind == KeyEventKind::Release {
        return Action::None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && key.code == KeyCode::Char('c') {
        if state.status.quit_armed {
            return Action::Quit;
        }
        state.status.quit_armed = true;
        state.input.buffer.clear();
        return Action::None;
    }
    state.status.quit_armed = false;
    if state.show_help {
        state.show_help = false;
        return Action::None;
    }
    if let Some(modal) = &mut state.modal
        && modal.takes_keys(now)
    {
        if key.code == KeyCode::Esc && modal.feedback.is_none() {
            return Action::RejectAndAbort;
        }
        return match modal.key_at(key, now) {
            ModalKey::Answer(reply) => Action::Answer(reply),
            ModalKey::Handled | ModalKey::NotYet => Action::None,
        };
    }
    if let Some(picker) = &mut state.picker {
        return match picker.key(key) {
            PickerOutcome::Open => Action::None,
            PickerOutcome::Closed => {
                state.picker = None;
                Action::None
            }
            PickerOutcome::Picked(kind, value) => {
                state.picker = None;
                Action::Pick(kind, value)
            }
        };
    }
    if state.screen == Screen::Changes {
        return match state.changes.key(key) {
            ChangesKey::Done => Action::None,
            ChangesKey::Close => {
                state.screen = Screen::Transcript;
                Action::None
            }
            ChangesKey::Revert(scope, force) => Action::Revert(scope, force),
        };
    }
    if state.input.completion_key(key, &state.status.cwd) {
        return Action::None;
    }
    state.transcript.clamp_scroll();
    let newline = key
        .modifiers
        .intersects(KeyModifiers::ALT | KeyModifiers::SHIFT);
    match key.code {
        KeyCode::Esc if state.child.is_some() => {
            state.close_child();
            Action::None
        }
        KeyCode::Esc if state.status.busy => Action::Abort,
        KeyCode::Char('g') if ctrl => Action::OpenChanges,
        KeyCode::Char('t') if ctrl => Action::OpenPicker(PickerKind::Subagent),
        KeyCode::Char('l') if ctrl => {
            state.todos.toggle();
            Action::None
        }
        KeyCode::Enter if !newline => submit(state),
        _ => {
            if !state.transcript.key(key) {
                state.input.key(key, &state.status.cwd);
            }
            Action::None
        }
    }
}

fn submit(state: &mut AppState) -> Action {
    let Some(text) = state.input.take_prompt() else {
        return Action::None;
    };
    // What is typed goes to the main conversation: show it again.
    state.close_child();
    if let Some(action) = slash::command(state, &text) {
        return action;
    }
    let files = crate::input::mentions::attached_files(&text, &state.status.cwd);
    if state.status.busy {
        state.transcript.notice(format!(
            "queued (sent when the running turn ends; esc aborts it): {}",
            text.lines().next().unwrap_or("")
        ));
        state.input.queued.push((text, files));
        return Action::None;
    }
    state.push_user(&text);
    Action::Submit { text, files }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Entry;

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
        assert!(s.status.busy);
        s.status.busy = false;
        handle_key(&mut s, key(KeyCode::Up));
        assert_eq!(s.input.buffer.text(), "hi");
    }

    #[test]
    fn enter_while_a_turn_runs_queues_the_prompt_and_slash_commands_still_work() {
        let mut s = AppState::default();
        s.status.busy = true;
        s.input.buffer.set("and then this");
        assert_eq!(handle_key(&mut s, key(KeyCode::Enter)), Action::None);
        assert_eq!(s.input.queued, vec![("and then this".to_string(), vec![])]);
        assert!(s.input.buffer.is_empty());
        assert!(
            matches!(s.transcript.entries.last(), Some(Entry::Notice(t)) if t.starts_with("queued (sent when the running turn ends"))
        );
        s.input.buffer.set("/changes");
        assert_eq!(handle_key(&mut s, key(KeyCode::Enter)), Action::OpenChanges);
    }

    #[test]
    fn scroll_keys_move_the_transcript_not_the_cursor() {
        let mut s = AppState::default();
        s.input.buffer.set("typed");
        handle_key(&mut s, key(KeyCode::PageUp));
        handle_key(&mut s, KeyEvent::new(KeyCode::Up, KeyModifiers::SHIFT));
        assert_eq!(s.transcript.scroll, 11);
        handle_key(&mut s, KeyEvent::new(KeyCode::Down, KeyModifiers::SHIFT));
        assert_eq!(s.transcript.scroll, 10);
        handle_key(&mut s, KeyEvent::new(KeyCode::Home, KeyModifiers::CONTROL));
        assert_eq!(s.transcript.scroll, u16::MAX);
        handle_key(&mut s, KeyEvent::new(KeyCode::End, KeyModifiers::CONTROL));
        assert_eq!(s.transcript.scroll, 0);
        assert_eq!(s.input.buffer.text(), "typed");
        assert_eq!(s.input.buffer.cursor(), 5);
    }

    #[test]
    fn ctrl_t_lists_sub_agents_and_esc_closes_an_open_child_before_aborting() {
        let mut s = AppState::default();
        let ctrl_t = KeyEvent::new(KeyCode::Char('t'), KeyModifiers::CONTROL);
        assert_eq!(
            handle_key(&mut s, ctrl_t),
            Action::OpenPicker(PickerKind::Subagent)
        );
        s.transcript.notice("main".into());
        s.open_child(
            "ses_child",
            "general · Look",
            vec![podcode_protocol::Item::User {
                message_id: "msg_u".into(),
                text: "child".into(),
                files: Vec::new(),
            }],
        );
        s.status.busy = true;
        assert_eq!(handle_key(&mut s, key(KeyCode::Esc)), Action::None);
        assert!(s.child.is_none());
        assert!(matches!(s.transcript.entries.last(), Some(Entry::Notice(t)) if t == "main"));
        assert_eq!(handle_key(&mut s, key(KeyCode::Esc)), Action::Abort);
    }

    #[test]
    fn esc_aborts_only_while_busy_and_ctrl_c_twice_quits() {
        let mut s = AppState::default();
        assert_eq!(handle_key(&mut s, key(KeyCode::Esc)), Action::None);
        s.status.busy = true;
        assert_eq!(handle_key(&mut s, key(KeyCode::Esc)), Action::Abort);
        let cc = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(handle_key(&mut s, cc), Action::None);
        assert_eq!(handle_key(&mut s, cc), Action::Quit);
    }

    #[test]
    fn modal_keys_answer_and_esc_rejects_and_aborts() {
        let modal = crate::modal::PermissionModal::new(
            "bash",
            "c1",
            podcode_protocol::PermissionRequest {
                permission: "bash".into(),
                patterns: vec!["ls".into()],
                always: vec![],
                metadata: serde_json::Value::Null,
            },
        );
        modal.shown(Instant::now() - crate::KEY_GRACE);
        let mut s = AppState {
            modal: Some(modal),
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
