//! Custom commands in the engine: the catalog of this workspace (config's
//! `[commands.NAME]`, then the commands folders from the working directory up to the project
//! root, then the user's), what front ends list (`command_infos`, `command_lines`), and a
//! command made ready to run (`prepare_command`): its template with the arguments filled
//! in and the `@path` files it mentions. The driver runs it as a turn (the agent runs its
//! ``!`cmd` `` snippets through `bash`), with the command's agent profile and model for
//! that turn when it names them.

use podcode_protocol::CommandInfo;
use podcode_skills::{CommandCatalog, Roots, file_mentions, fill_arguments};

use crate::engine::Engine;

/// A command ready to run as a turn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PreparedCommand {
    /// Its name, without the slash.
    pub name: String,
    /// The template with the arguments filled in (snippets not yet run).
    pub text: String,
    /// The files its `@path` mentions name.
    pub files: Vec<String>,
    /// The agent profile it asks for.
    pub agent: Option<String>,
    /// The model it asks for.
    pub model: Option<String>,
    /// It runs as a sub-agent (`subtask: true`, or its agent is a sub-agent profile).
    pub subtask: bool,
}

/// The error for a name no command has.
pub fn unknown_command_text(name: &str, available: &[String]) -> String {
    if available.is_empty() {
        format!(
            "no command named /{name}: there are no custom commands here (`podcode commands` says where they go)"
        )
    } else {
        format!(
            "no command named /{name}; commands: {}",
            available
                .iter()
                .map(|n| format!("/{n}"))
                .collect::<Vec<_>>()
                .join(" ")
        )
    }
}

impl Engine {
    /// Where this workspace's command files may live, highest precedence first.
    pub fn command_roots(&self) -> Roots {
        Roots::commands(self.dirs(), self.cwd(), self.project())
    }

    fn command_catalog(&self) -> (CommandCatalog, Roots) {
        let roots = self.command_roots();
        let catalog = CommandCatalog::discover(&roots, &self.config().commands);
        (catalog, roots)
    }

    /// The custom commands a user can run here, by name (read from disk on every call, so
    /// a new file shows up at once).
    pub fn command_infos(&self) -> Vec<CommandInfo> {
        let (catalog, roots) = self.command_catalog();
        catalog.infos(&roots)
    }

    /// What `podcode commands` lists: every command with its source, then those hidden by
    /// a built-in command, refused, or shadowed.
    pub fn command_lines(&self) -> Vec<String> {
        let (catalog, roots) = self.command_catalog();
        podcode_skills::command_lines(&catalog, &roots)
            .iter()
            .map(|l| podcode_protocol::sanitize_for_terminal(l).into_owned())
            .collect()
    }

    /// Command `name` with `arguments` filled in, its `@path` files resolved against
    /// `directory` (where the session works).
    pub(crate) fn prepare_command(
        &self,
        name: &str,
        arguments: &str,
        directory: &std::path::Path,
    ) -> Result<PreparedCommand, String> {
        let (catalog, _) = self.command_catalog();
        let Some(command) = catalog.get(name) else {
            let names: Vec<String> = catalog.commands.iter().map(|c| c.name.clone()).collect();
            return Err(unknown_command_text(name, &names));
        };
        let text = fill_arguments(&command.config.template, arguments);
        let files = file_mentions(&text, directory, &self.dirs().home);
        let subagent_profile = command.config.agent.as_deref().is_some_and(|a| {
            self.agents()
                .subagents()
                .iter()
                .any(|p| p.name == a && p.mode == podcode_agent::AgentMode::Subagent)
        });
        Ok(PreparedCommand {
            name: command.name.clone(),
            text,
            files,
            agent: command.config.agent.clone(),
            model: command.config.model.clone(),
            subtask: command.config.subtask || subagent_profile,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unknown_command_text_is_pinned() {
        assert_eq!(
            unknown_command_text("x", &["review".into(), "team/deploy".into()]),
            "no command named /x; commands: /review /team/deploy"
        );
        assert_eq!(
            unknown_command_text("x", &[]),
            "no command named /x: there are no custom commands here (`podcode commands` says where they go)"
        );
    }
}
