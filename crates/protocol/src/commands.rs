//! Slash commands as every front end sees them: the names the front ends keep for
//! themselves (`BUILTIN_COMMANDS`: a custom command may not take one), what a custom
//! command shows where commands are listed (`CommandInfo`), and how typed text names one
//! (`slash_command`).

use serde::{Deserialize, Serialize};

/// The commands the front ends keep (`/new`, `/compact`, …): a custom command of the same
/// name is listed as hidden by the built-in and never runs under it.
pub const BUILTIN_COMMANDS: &[&str] = &[
    "new",
    "sessions",
    "subagents",
    "model",
    "agent",
    "tools",
    "plugins",
    "skills",
    "commands",
    "todos",
    "changes",
    "undo",
    "compact",
    "help",
];

/// A custom command, as a list or a completion shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandInfo {
    /// What follows the slash (`review`, `team/deploy`).
    pub name: String,
    /// What it does (empty when the file says nothing).
    pub description: String,
    /// What to type after the name (`argument-hint`), when the file says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
    /// Where it was defined: a path (relative to the project, `~/…`), or `config`.
    pub source: String,
    /// It came with the repository (a project folder), not from the user.
    #[serde(default)]
    pub from_repository: bool,
}

/// `"/review src/a.rs"` → `("review", "src/a.rs")`: a slash, a name without spaces, then
/// the arguments. `None` for text that is not a command (`/usr/bin is…` is one only when
/// such a command exists: the caller checks the name).
pub fn slash_command(text: &str) -> Option<(&str, &str)> {
    let rest = text.trim_start().strip_prefix('/')?;
    let (name, args) = match rest.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (rest.trim_end(), ""),
    };
    (!name.is_empty()).then_some((name, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slash_and_a_name_make_a_command() {
        assert_eq!(
            slash_command("/review  src/a.rs more "),
            Some(("review", "src/a.rs more"))
        );
        assert_eq!(slash_command("/team/deploy"), Some(("team/deploy", "")));
        assert_eq!(slash_command("review"), None);
        assert_eq!(slash_command("/ x"), None);
    }
}
