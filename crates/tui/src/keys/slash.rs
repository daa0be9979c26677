//! Slash commands typed in the input box. Each either changes the UI state at once (`/help`,
//! `/tools`) or becomes an `Action` the event loop carries out (pickers, a new session,
//! undo, switching model or agent). Unknown `/word` commands are refused, not sent to the
//! model; text with a space after a slash word (`/usr/bin is…`) is an ordinary prompt.

use super::Action;
use crate::picker::PickerKind;
use crate::state::AppState;

pub const COMMANDS: &str = "/new  /sessions  /subagents  /model [provider/id]  /agent [name]  /tools  /plugins  /skills  /commands  /todos  /changes  /undo  /compact  /help";

/// `Some` when `text` is a slash command (handled or refused), `None` for a prompt.
pub fn command(state: &mut AppState, text: &str) -> Option<Action> {
    if let Some((name, arguments)) = state.input.custom_command(text) {
        if state.status.busy {
            state.transcript.notice(format!(
                "queued (sent when the running turn ends; esc aborts it): {text}"
            ));
            state.input.queued.push((text.to_string(), Vec::new()));
            return Some(Action::None);
        }
        state.push_user(text);
        return Some(Action::RunCommand { name, arguments });
    }
    let (word, arg) = match text.split_once(char::is_whitespace) {
        Some((w, a)) => (w, a.trim()),
        None => (text, ""),
    };
    let action = match (word, arg.is_empty()) {
        ("/help", true) => {
            state.show_help = true;
            Action::None
        }
        ("/changes", true) => Action::OpenChanges,
        ("/new", true) => Action::NewSession,
        ("/undo", true) => Action::Undo,
        ("/compact", true) => Action::Compact,
        ("/sessions", true) => Action::OpenPicker(PickerKind::Session),
        ("/subagents", true) => Action::OpenPicker(PickerKind::Subagent),
        ("/plugins", true) => Action::ShowPlugins,
        ("/skills", true) => Action::ShowSkills,
        ("/commands", true) => Action::ShowCommands,
        ("/todos", true) => {
            if state.todos.items.is_empty() {
                state.transcript.notice(
                    "no todo list yet: the agent writes one for multi-step work".to_string(),
                );
            } else {
                state.todos.toggle();
            }
            Action::None
        }
        ("/tools", true) => {
            let text = if state.tools_info.is_empty() {
                "no tools loaded".to_string()
            } else {
                state.tools_info.join("\n")
            };
            state.transcript.notice(text);
            Action::None
        }
        ("/model", true) => Action::OpenPicker(PickerKind::Model),
        ("/model", false) => Action::Pick(PickerKind::Model, arg.to_string()),
        ("/agent", true) => Action::OpenPicker(PickerKind::Agent),
        ("/agent", false) => Action::Pick(PickerKind::Agent, arg.to_string()),
        _ if word.starts_with('/') && arg.is_empty() && word.len() > 1 => {
            let custom: Vec<String> = state
                .input
                .commands
                .iter()
                .filter(|c| c.custom)
                .map(|c| format!("/{}", c.name))
                .collect();
            let custom = if custom.is_empty() {
                String::new()
            } else {
                format!("; yours: {}", custom.join("  "))
            };
            state.transcript.notice(format!(
                "unknown command {word}; commands: {COMMANDS}{custom}"
            ));
            Action::None
        }
        _ => return None,
    };
    Some(action)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::Entry;

    #[test]
    fn commands_map_to_actions_and_prompts_pass_through() {
        let mut s = AppState::default();
        assert_eq!(command(&mut s, "/changes"), Some(Action::OpenChanges));
        assert_eq!(command(&mut s, "/undo"), Some(Action::Undo));
        assert_eq!(command(&mut s, "/compact"), Some(Action::Compact));
        assert_eq!(
            command(&mut s, "/sessions"),
            Some(Action::OpenPicker(PickerKind::Session))
        );
        assert_eq!(
            command(&mut s, "/model  openai/gpt-4.1 "),
            Some(Action::Pick(PickerKind::Model, "openai/gpt-4.1".into()))
        );
        assert_eq!(
            command(&mut s, "/agent plan"),
            Some(Action::Pick(PickerKind::Agent, "plan".into()))
        );
        assert_eq!(command(&mut s, "/plugins"), Some(Action::ShowPlugins));
        assert_eq!(command(&mut s, "/skills"), Some(Action::ShowSkills));
        assert_eq!(
            command(&mut s, "/subagents"),
            Some(Action::OpenPicker(PickerKind::Subagent))
        );
        assert_eq!(command(&mut s, "fix the bug"), None);
        assert_eq!(command(&mut s, "/usr/bin is missing from PATH"), None);
        s.tools_info = vec!["read · built-in".into()];
        assert_eq!(command(&mut s, "/tools"), Some(Action::None));
        assert_eq!(
            s.transcript.entries.last(),
            Some(&Entry::Notice("read · built-in".into()))
        );
        assert_eq!(command(&mut s, "/nope"), Some(Action::None));
        assert_eq!(
            s.transcript.entries.last(),
            Some(&Entry::Notice(format!(
                "unknown command /nope; commands: {COMMANDS}"
            )))
        );
    }
}
