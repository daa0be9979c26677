//! Custom commands: Markdown files in the commands folders (`review.md` is `/review`,
//! `team/deploy.md` is `/team/deploy`) and `[commands.NAME]` in config (opencode.json's
//! `command` maps onto it). Front matter: `description`, `agent`, `model`, `subtask` (or
//! `subagent`), `argument-hint`; the body is the template. Config entries come first, then
//! the folders in precedence order; the first of a name wins and the rest are listed as
//! shadowed. A name the front ends keep (`/new`, `/compact`, …) stays theirs: such a
//! command is listed as hidden, never run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use podcode_config::{CommandConfig, parse_front_matter, split_front_matter};
use podcode_protocol::{BUILTIN_COMMANDS, CommandInfo};
use serde::Deserialize;

use crate::catalog::MAX_FILE_BYTES;
use crate::roots::{Roots, Scope};

/// How many folders deep under a root a command file may be.
const MAX_DEPTH: usize = 4;
/// A scan reads at most this many files.
const MAX_FILES: usize = 5_000;

/// Where a command was defined.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandOrigin {
    /// A Markdown file.
    File {
        /// The file.
        path: PathBuf,
        /// Whose folder it is in.
        scope: Scope,
    },
    /// `[commands.NAME]` in config (or opencode.json's `command`).
    Config,
}

/// A command a user can run.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomCommand {
    /// What follows the slash.
    pub name: String,
    /// Its settings and template.
    pub config: CommandConfig,
    /// `argument-hint`, when given.
    pub argument_hint: Option<String>,
    /// Where it was defined.
    pub origin: CommandOrigin,
}

/// A command file that is not offered, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct RefusedCommand {
    /// Where it was defined (a path as shown, or `config`).
    pub location: String,
    /// What is wrong.
    pub reason: String,
}

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommandCatalog {
    /// The commands offered, by name.
    pub commands: Vec<CustomCommand>,
    /// Files not offered, with their reasons.
    pub refused: Vec<RefusedCommand>,
    /// `(location, name, taken by)`: a later definition of a name already given.
    pub shadowed: Vec<(String, String, String)>,
    /// `(location, name)`: a command named like a built-in one, which keeps its name.
    pub hidden: Vec<(String, String)>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FrontMatter {
    description: Option<String>,
    agent: Option<String>,
    model: Option<String>,
    #[serde(alias = "subagent")]
    subtask: Option<bool>,
    #[serde(rename = "argument-hint", alias = "argument_hint")]
    argument_hint: Option<String>,
}

/// One command file's text → its settings and template.
pub fn parse_command(text: &str) -> Result<(CommandConfig, Option<String>), String> {
    let (front, body) = split_front_matter(text)?;
    let fm: FrontMatter = parse_front_matter(front)?;
    let template = body.trim().to_string();
    if template.is_empty() {
        return Err("the file has no prompt after its front matter".into());
    }
    Ok((
        CommandConfig {
            template,
            description: fm.description,
            agent: fm.agent,
            model: fm.model,
            subtask: fm.subtask.unwrap_or(false),
        },
        fm.argument_hint,
    ))
}

fn check_name(name: &str) -> Result<(), String> {
    let ok = name.split('/').all(|seg| {
        !seg.is_empty()
            && seg
                .chars()
                .all(|c| c.is_alphanumeric() || "-_.:".contains(c))
    });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the name {name:?} has characters a command cannot have (use letters, digits, `-`, `_`, `.`, `:`)"
        ))
    }
}

impl CommandCatalog {
    /// Config commands, then the command files under `roots`, in order.
    pub fn discover(roots: &Roots, config: &BTreeMap<String, CommandConfig>) -> Self {
        let mut cat = Self::default();
        for (name, c) in config {
            let location = "config".to_string();
            if c.template.trim().is_empty() {
                cat.refused.push(RefusedCommand {
                    location: format!("config commands.{name}"),
                    reason: "no template".into(),
                });
                continue;
            }
            cat.add(
                name.clone(),
                c.clone(),
                None,
                CommandOrigin::Config,
                location,
            );
        }
        let mut budget = MAX_FILES;
        for root in roots.roots() {
            let mut files = Vec::new();
            collect(&root.dir, 1, &mut files, &mut budget);
            files.sort();
            for path in files {
                let rel = path.strip_prefix(&root.dir).unwrap_or(&path);
                let name = rel
                    .with_extension("")
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                let location = roots.show(&path);
                let parsed = check_name(&name).and_then(|()| read_command(&path));
                match parsed {
                    Err(reason) => cat.refused.push(RefusedCommand { location, reason }),
                    Ok((config, hint)) => {
                        let origin = CommandOrigin::File {
                            path: path.clone(),
                            scope: root.scope,
                        };
                        cat.add(name, config, hint, origin, location);
                    }
                }
            }
        }
        cat.commands.sort_by(|a, b| a.name.cmp(&b.name));
        cat
    }

    fn add(
        &mut self,
        name: String,
        config: CommandConfig,
        argument_hint: Option<String>,
        origin: CommandOrigin,
        location: String,
    ) {
        if BUILTIN_COMMANDS.contains(&name.as_str()) {
            self.hidden.push((location, name));
            return;
        }
        if let Some(first) = self.commands.iter().find(|c| c.name == name) {
            let by = match &first.origin {
                CommandOrigin::Config => "config".to_string(),
                CommandOrigin::File { path, .. } => path.display().to_string(),
            };
            self.shadowed.push((location, name, by));
            return;
        }
        self.commands.push(CustomCommand {
            name,
            config,
            argument_hint,
            origin,
        });
    }

    /// The command named `name`.
    pub fn get(&self, name: &str) -> Option<&CustomCommand> {
        self.commands.iter().find(|c| c.name == name)
    }

    /// Every command as front ends list it.
    pub fn infos(&self, roots: &Roots) -> Vec<CommandInfo> {
        self.commands
            .iter()
            .map(|c| {
                let (source, from_repository) = match &c.origin {
                    CommandOrigin::Config => ("config".to_string(), false),
                    CommandOrigin::File { path, scope } => {
                        (roots.show(path), *scope == Scope::Project)
                    }
                };
                CommandInfo {
                    name: c.name.clone(),
                    description: c.config.description.clone().unwrap_or_default(),
                    argument_hint: c.argument_hint.clone(),
                    source,
                    from_repository,
                }
            })
            .collect()
    }
}

fn collect(dir: &Path, depth: usize, out: &mut Vec<PathBuf>, budget: &mut usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        if *budget == 0 {
            return;
        }
        let path = entry.path();
        if path.is_dir() {
            let name = entry.file_name();
            if depth < MAX_DEPTH && name != ".git" && name != "node_modules" {
                collect(&path, depth + 1, out, budget);
            }
        } else if path.extension().is_some_and(|e| e == "md") {
            *budget -= 1;
            out.push(path);
        }
    }
}

fn read_command(path: &Path) -> Result<(CommandConfig, Option<String>), String> {
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read it: {e}"))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(format!(
            "the file is {size} bytes; the limit is {MAX_FILE_BYTES}"
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read it: {e}"))?;
    parse_command(&text)
}

/// `podcode commands`: every command with its source (the repository's marked), then the
/// hidden, refused and shadowed ones.
pub fn command_lines(catalog: &CommandCatalog, roots: &Roots) -> Vec<String> {
    let mut lines = Vec::new();
    let infos = catalog.infos(roots);
    if infos.is_empty() {
        lines.push("no custom commands found".to_string());
        lines.push(
            "  a command is a Markdown file in .podcode/commands/, .opencode/commands/ or .claude/commands/ (project or home), or [commands.NAME] in config; see `podcode commands --help`"
                .to_string(),
        );
    } else {
        lines.push(format!("commands ({}):", infos.len()));
        let width = infos.iter().map(|c| c.name.len() + 1).max().unwrap_or(0);
        for c in &infos {
            let from = if c.from_repository {
                "  (from the repository)"
            } else {
                ""
            };
            let name = format!("/{}", c.name);
            let mut line = format!("  {name:width$}  {}", c.source);
            if !c.description.is_empty() {
                line.push_str(&format!("  {}", c.description));
            }
            lines.push(format!("{line}{from}"));
        }
    }
    if !catalog.hidden.is_empty() {
        lines.push(format!(
            "hidden by a built-in command ({}):",
            catalog.hidden.len()
        ));
        for (location, name) in &catalog.hidden {
            lines.push(format!(
                "  {location}: /{name} is Podcode's own command; rename the file to use it"
            ));
        }
    }
    if !catalog.refused.is_empty() {
        lines.push(format!("refused ({}), not offered:", catalog.refused.len()));
        for r in &catalog.refused {
            lines.push(format!("  {}: {}", r.location, r.reason));
        }
    }
    if !catalog.shadowed.is_empty() {
        lines.push(format!(
            "shadowed ({}), not offered:",
            catalog.shadowed.len()
        ));
        for (location, name, by) in &catalog.shadowed {
            lines.push(format!("  {location}: /{name} is taken by {by}"));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roots::Root;

    #[test]
    fn files_nest_config_comes_first_and_built_in_names_stay_built_in() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("p");
        let dir = p.join(".opencode/command");
        let write = |rel: &str, text: &str| {
            let f = dir.join(rel);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, text).unwrap();
        };
        write(
            "review.md",
            "---\ndescription: Review a file\nargument-hint: <path>\nsubagent: true\n---\nReview $ARGUMENTS.\n",
        );
        write("team/deploy.md", "Deploy $1.");
        write("compact.md", "Mine.");
        write("empty.md", "---\ndescription: nothing\n---\n");
        write("fix.md", "From a file.");
        write("bad name.md", "x");
        let roots = Roots::new(
            vec![Root {
                dir: dir.clone(),
                scope: Scope::Project,
            }],
            &p,
            &tmp.path().join("home"),
        );
        let mut config = BTreeMap::new();
        config.insert(
            "fix".to_string(),
            CommandConfig {
                template: "Fix it.".into(),
                ..Default::default()
            },
        );
        let cat = CommandCatalog::discover(&roots, &config);
        let names: Vec<&str> = cat.commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["fix", "review", "team/deploy"]);
        let review = cat.get("review").unwrap();
        assert!(review.config.subtask);
        assert_eq!(review.config.template, "Review $ARGUMENTS.");
        assert_eq!(review.argument_hint.as_deref(), Some("<path>"));
        assert_eq!(cat.get("fix").unwrap().config.template, "Fix it.");
        let lines = command_lines(&cat, &roots);
        for line in [
            "commands (3):",
            "  /fix          config",
            "  /review       .opencode/command/review.md  Review a file  (from the repository)",
            "hidden by a built-in command (1):",
            "  .opencode/command/compact.md: /compact is Podcode's own command; rename the file to use it",
            "  .opencode/command/empty.md: the file has no prompt after its front matter",
            "  .opencode/command/bad name.md: the name \"bad name\" has characters a command cannot have (use letters, digits, `-`, `_`, `.`, `:`)",
            "shadowed (1), not offered:",
            "  .opencode/command/fix.md: /fix is taken by config",
        ] {
            assert!(
                lines.iter().any(|l| l == line),
                "{line:?} missing: {lines:#?}"
            );
        }
    }
}
