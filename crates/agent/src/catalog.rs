//! `AgentCatalog`: every agent profile a workspace offers, and where each came from. Layers
//! apply in order, later ones refining earlier ones field by field: the built-ins, then
//! global agent files (opencode's directories, then Podcode's), then the project's agent
//! files (`.opencode/agent(s)`, then `.podcode/agent(s)`), then `[agent.NAME]` in config.
//! A file that cannot be read is kept as a problem naming the file and the reason; the
//! others still load. A project's agent files are code-like (they set prompts, models and
//! permission rules), so in a workspace the user has not trusted they are not loaded at all
//! and each is listed as a problem saying so — the same rule as the project's plugins.

use std::path::{Path, PathBuf};

use podcode_config::{AgentMode, Config, OpencodeDirs};

use crate::agent_files;
use crate::error::AgentError;
use crate::profile::AgentProfile;

/// Where agent files are looked for, lowest precedence first.
#[derive(Debug, Clone, Default)]
pub struct AgentDirs {
    /// The user's agent directories (always read).
    pub global: Vec<PathBuf>,
    /// The project's agent directories (read only when `trusted`).
    pub project: Vec<PathBuf>,
    /// Project files load only in a trusted workspace.
    pub trusted: bool,
}

impl AgentDirs {
    /// The usual directories: opencode's global ones (`OpencodeDirs::dirs`: `$XDG_CONFIG_HOME/opencode`
    /// or `~/.config/opencode`, then `$OPENCODE_CONFIG_DIR`), Podcode's `config_dir`, and the
    /// project's `.opencode/` and `.podcode/`; each with `agent/` and `agents/`.
    pub fn standard(
        opencode: &OpencodeDirs,
        config_dir: &Path,
        project: &Path,
        trusted: bool,
    ) -> Self {
        let mut roots = opencode.dirs();
        roots.push(config_dir.to_path_buf());
        let both = |root: &Path| [root.join("agent"), root.join("agents")];
        let mut global: Vec<PathBuf> = roots.iter().flat_map(|r| both(r)).collect();
        global.dedup();
        let project = [project.join(".opencode"), project.join(".podcode")]
            .iter()
            .flat_map(|r| both(r))
            .collect();
        Self {
            global,
            project,
            trusted,
        }
    }
}

/// One profile and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogEntry {
    /// The merged profile.
    pub profile: AgentProfile,
    /// `built-in`, `config`, or the file that defined it (`+ config` when config refines it).
    pub source: String,
    /// `disable: true` in its file: listed, never used.
    pub disabled: bool,
}

/// An agent file that could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentProblem {
    /// The agent file.
    pub file: String,
    /// Why it was not used.
    pub message: String,
}

/// Every agent profile Podcode knows: the built-ins, then agent files, then the config's
/// `[agent.NAME]` tables over them, with the problems met on the way.
#[derive(Debug, Clone, Default)]
pub struct AgentCatalog {
    entries: Vec<CatalogEntry>,
    problems: Vec<AgentProblem>,
}

impl AgentCatalog {
    /// The built-ins and the config's `[agent.NAME]` tables, no files.
    pub fn from_config(config: &Config) -> Self {
        Self::load(config, &AgentDirs::default())
    }

    /// The built-ins, the agent files in `dirs` and the config's tables, later ones refining
    /// earlier ones of the same name.
    pub fn load(config: &Config, dirs: &AgentDirs) -> Self {
        let mut cat = Self::default();
        for name in ["build", "plan", "explore", "general"] {
            if let Some(profile) = AgentProfile::builtin(name) {
                cat.entries.push(CatalogEntry {
                    profile,
                    source: "built-in".into(),
                    disabled: false,
                });
            }
        }
        for dir in &dirs.global {
            cat.load_dir(dir, true);
        }
        for dir in &dirs.project {
            cat.load_dir(dir, dirs.trusted);
        }
        for (name, c) in &config.agent {
            let at = cat.slot(name, "config");
            let entry = &mut cat.entries[at];
            if entry.source != "config" {
                entry.source.push_str(" + config");
            }
            entry.profile.apply(c);
        }
        cat
    }

    fn load_dir(&mut self, dir: &Path, allowed: bool) {
        let Ok(read) = std::fs::read_dir(dir) else {
            return;
        };
        let mut files: Vec<PathBuf> = read
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "md") && p.is_file())
            .collect();
        files.sort();
        for path in files {
            let shown = path.display().to_string();
            if !allowed {
                self.problems.push(AgentProblem {
                    file: shown,
                    message: "not loaded: this workspace is not trusted (run `podcode trust` to use the project's agent files)".into(),
                });
                continue;
            }
            let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let parsed = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read the file: {e}"))
                .and_then(|text| agent_files::parse(&text));
            match parsed {
                Ok(file) => {
                    let at = self.slot(name, &shown);
                    let entry = &mut self.entries[at];
                    entry.source = shown;
                    entry.profile.apply(&file.config);
                    entry.profile.hidden = file.hidden;
                    entry.disabled = file.disabled;
                }
                Err(message) => self.problems.push(AgentProblem {
                    file: shown,
                    message,
                }),
            }
        }
    }

    /// The entry named `name`, created (as a profile with every tool) when new.
    fn slot(&mut self, name: &str, source: &str) -> usize {
        if let Some(at) = self.entries.iter().position(|e| e.profile.name == name) {
            return at;
        }
        self.entries.push(CatalogEntry {
            profile: AgentProfile {
                name: name.to_string(),
                description: None,
                mode: AgentMode::All,
                ..AgentProfile::build()
            },
            source: source.to_string(),
            disabled: false,
        });
        self.entries.len() - 1
    }

    /// Every profile, built-ins first, disabled ones included.
    pub fn entries(&self) -> &[CatalogEntry] {
        &self.entries
    }

    /// Agent files that could not be used, for the user.
    pub fn problems(&self) -> &[AgentProblem] {
        &self.problems
    }

    /// The usable profile `name`.
    pub fn resolve(&self, name: &str) -> Result<AgentProfile, AgentError> {
        match self
            .entries
            .iter()
            .find(|e| e.profile.name == name && !e.disabled)
        {
            Some(e) => Ok(e.profile.clone()),
            None => Err(AgentError::UnknownAgent {
                name: name.to_string(),
                available: self.names(|_| true).join(", "),
            }),
        }
    }

    /// The usable profile `name` as a session's own agent (`--agent`, the TUI's agent
    /// switch): a profile with `mode: subagent` is refused, with the primary ones listed.
    pub fn resolve_primary(&self, name: &str) -> Result<AgentProfile, AgentError> {
        let profile = self.resolve(name)?;
        if profile.is_primary() {
            return Ok(profile);
        }
        Err(AgentError::SubagentOnly {
            name: name.to_string(),
            primary: self.names(|p| p.is_primary() && !p.hidden).join(", "),
        })
    }

    /// Usable profiles the `task` tool may start, in catalog order.
    pub fn subagents(&self) -> Vec<&AgentProfile> {
        self.entries
            .iter()
            .filter(|e| !e.disabled && e.profile.is_subagent() && !e.profile.hidden)
            .map(|e| &e.profile)
            .collect()
    }

    /// Names of usable profiles `keep` accepts.
    pub fn names(&self, keep: impl Fn(&AgentProfile) -> bool) -> Vec<String> {
        self.entries
            .iter()
            .filter(|e| !e.disabled && keep(&e.profile))
            .map(|e| e.profile.name.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn files_layer_over_built_ins_and_a_broken_file_does_not_stop_the_others() {
        let tmp = tempfile::tempdir().unwrap();
        let global = tmp.path().join("global/agents");
        let project = tmp.path().join("project/.opencode/agent");
        write(
            &global,
            "review.md",
            "---\ndescription: Global review\nmode: subagent\n---\nReview.",
        );
        write(&global, "broken.md", "---\nmode: [\n---\n");
        write(
            &project,
            "review.md",
            "---\ndescription: Project review\n---\n",
        );
        write(&project, "explore.md", "---\nmodel: fast/model\n---\n");
        write(&project, "off.md", "---\ndisable: true\n---\n");
        let dirs = AgentDirs {
            global: vec![global.clone()],
            project: vec![project.clone()],
            trusted: true,
        };
        let config: Config =
            serde_json::from_str(r#"{"agent": {"review": {"steps": 3}}}"#).unwrap();
        let cat = AgentCatalog::load(&config, &dirs);
        let review = cat.resolve("review").unwrap();
        assert_eq!(review.description.as_deref(), Some("Project review"));
        assert_eq!(review.prompt.as_deref(), Some("Review."));
        assert_eq!((review.mode, review.steps), (AgentMode::Subagent, Some(3)));
        let explore = cat.resolve("explore").unwrap();
        assert_eq!(explore.model.as_deref(), Some("fast/model"));
        assert!(
            !explore.offers("bash"),
            "a file refines the built-in, keeping its tools"
        );
        assert!(cat.resolve("off").is_err());
        let entry = cat
            .entries()
            .iter()
            .find(|e| e.profile.name == "review")
            .unwrap();
        assert_eq!(
            entry.source,
            format!("{} + config", project.join("review.md").display())
        );
        assert_eq!(cat.problems().len(), 1);
        assert_eq!(
            cat.problems()[0].file,
            global.join("broken.md").display().to_string()
        );
        assert!(
            cat.problems()[0]
                .message
                .starts_with("invalid front matter")
        );
        let subs: Vec<&str> = cat.subagents().iter().map(|p| p.name.as_str()).collect();
        assert_eq!(subs, ["explore", "general", "review"]);
        assert_eq!(
            cat.resolve_primary("review").unwrap_err().to_string(),
            "agent \"review\" is a sub-agent (mode: subagent), which only the task tool starts; primary agents: build, plan"
        );
        assert_eq!(cat.resolve_primary("plan").unwrap().name, "plan");
        assert!(matches!(
            cat.resolve_primary("nope"),
            Err(AgentError::UnknownAgent { .. })
        ));
    }

    #[test]
    fn an_untrusted_project_s_agent_files_are_listed_and_not_loaded() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join(".podcode/agents");
        write(
            &project,
            "sneaky.md",
            "---\npermission:\n  bash: allow\n---\n",
        );
        let dirs = AgentDirs {
            global: Vec::new(),
            project: vec![project.clone()],
            trusted: false,
        };
        let cat = AgentCatalog::load(&Config::default(), &dirs);
        assert!(cat.resolve("sneaky").is_err());
        assert_eq!(
            cat.problems(),
            [AgentProblem {
                file: project.join("sneaky.md").display().to_string(),
                message: "not loaded: this workspace is not trusted (run `podcode trust` to use the project's agent files)".into(),
            }]
        );
    }

    #[test]
    fn standard_dirs_read_opencode_and_podcode_locations() {
        let env = |k: &str| match k {
            "OPENCODE_CONFIG_DIR" => Some("/oc".to_string()),
            "HOME" => Some("/h".to_string()),
            _ => None,
        };
        let d = AgentDirs::standard(
            &OpencodeDirs::from_vars(env),
            Path::new("/h/.config/podcode"),
            Path::new("/p"),
            true,
        );
        let shown: Vec<String> = d.global.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(
            shown,
            [
                "/h/.config/opencode/agent",
                "/h/.config/opencode/agents",
                "/oc/agent",
                "/oc/agents",
                "/h/.config/podcode/agent",
                "/h/.config/podcode/agents"
            ]
        );
        let project: Vec<String> = d.project.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(
            project,
            [
                "/p/.opencode/agent",
                "/p/.opencode/agents",
                "/p/.podcode/agent",
                "/p/.podcode/agents"
            ]
        );
    }
}
