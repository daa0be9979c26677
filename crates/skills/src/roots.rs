//! Where skills and custom commands may live, highest precedence first. The project's
//! folders come first, nearest the working directory first, walking up to the project
//! root; then the user's. In each place Podcode's own folder comes before opencode's
//! (plural, then the legacy singular), Claude Code's and (skills only) the shared
//! `.agents/`, so a Podcode-specific file can stand in for one the repository carries for
//! another agent.

use std::path::{Path, PathBuf};

use podcode_config::Dirs;

/// Whose a skill folder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The repository's (it came with the code, trusted or not).
    Project,
    /// The user's own (`~/.config/…`, `~/.claude/…`).
    User,
}

/// One folder whose files or subfolders may hold skills or commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// The folder (`<project>/.claude/skills`).
    pub dir: PathBuf,
    /// Whose it is.
    pub scope: Scope,
}

/// The folders scanned for skills or commands, highest precedence first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roots {
    roots: Vec<Root>,
    /// The project root, for showing project paths short.
    project: PathBuf,
    /// The home directory, for showing user paths as `~/…`.
    home: PathBuf,
}

/// The project-level skill folders, in precedence order, under one directory.
const SKILL_FOLDERS: &[&str] = &[
    ".podcode/skills",
    ".opencode/skills",
    ".opencode/skill",
    ".claude/skills",
    ".agents/skills",
];
/// The project-level command folders, in precedence order, under one directory.
const COMMAND_FOLDERS: &[&str] = &[
    ".podcode/commands",
    ".opencode/commands",
    ".opencode/command",
    ".claude/commands",
];

impl Roots {
    /// The usual places: in every directory from `cwd` up to `project` (both included; only
    /// `cwd` when it is not inside `project`), `.podcode/skills`, `.opencode/skills`,
    /// `.opencode/skill`, `.claude/skills`, `.agents/skills`; then the user's Podcode config
    /// dir's `skills/`, `$OPENCODE_CONFIG_DIR`'s and opencode's global config dir's
    /// `skills/` and `skill/`, `~/.claude/skills` and `~/.agents/skills`.
    pub fn skills(dirs: &Dirs, cwd: &Path, project: &Path) -> Self {
        Self::standard(dirs, cwd, project, SKILL_FOLDERS, "skills", true)
    }

    /// The same places for custom commands: `.podcode/commands`, `.opencode/commands`,
    /// `.opencode/command`, `.claude/commands` in the project's levels; the user's Podcode
    /// config dir's `commands/`, opencode's `commands/` and `command/`, `~/.claude/commands`.
    pub fn commands(dirs: &Dirs, cwd: &Path, project: &Path) -> Self {
        Self::standard(dirs, cwd, project, COMMAND_FOLDERS, "commands", false)
    }

    fn standard(
        dirs: &Dirs,
        cwd: &Path,
        project: &Path,
        folders: &[&str],
        kind: &str,
        shared_agents_dir: bool,
    ) -> Self {
        let mut out = Self {
            roots: Vec::new(),
            project: project.to_path_buf(),
            home: dirs.home.clone(),
        };
        let levels: Vec<&Path> = if cwd.starts_with(project) {
            cwd.ancestors()
                .take_while(|d| d.starts_with(project))
                .collect()
        } else {
            vec![cwd]
        };
        for level in levels {
            for folder in folders {
                out.push(level.join(folder), Scope::Project);
            }
        }
        let singular = kind.trim_end_matches('s');
        out.push(dirs.config_dir.join(kind), Scope::User);
        let opencode = dirs
            .opencode
            .custom_dir
            .iter()
            .chain(std::iter::once(&dirs.opencode.config_dir));
        for dir in opencode {
            out.push(dir.join(kind), Scope::User);
            out.push(dir.join(singular), Scope::User);
        }
        out.push(dirs.home.join(".claude").join(kind), Scope::User);
        if shared_agents_dir {
            out.push(dirs.home.join(".agents").join(kind), Scope::User);
        }
        out
    }

    /// Exactly `roots`, in this order (for tests and embeddings).
    pub fn new(roots: Vec<Root>, project: &Path, home: &Path) -> Self {
        Self {
            roots,
            project: project.to_path_buf(),
            home: home.to_path_buf(),
        }
    }

    fn push(&mut self, dir: PathBuf, scope: Scope) {
        if !self.roots.iter().any(|r| r.dir == dir) {
            self.roots.push(Root { dir, scope });
        }
    }

    /// The folders, highest precedence first.
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// `path` as a user reads it: relative to the project root, or `~/…` under the home.
    pub fn show(&self, path: &Path) -> String {
        if let Ok(rel) = path.strip_prefix(&self.project) {
            return rel.display().to_string();
        }
        if let Ok(rel) = path.strip_prefix(&self.home) {
            return format!("~/{}", rel.display());
        }
        path.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_folders_come_first_nearest_first_then_the_user_s() {
        let dirs = Dirs::under(Path::new("/r"));
        let roots = Roots::skills(&dirs, Path::new("/p/sub"), Path::new("/p"));
        let shown: Vec<String> = roots
            .roots()
            .iter()
            .map(|r| format!("{:?} {}", r.scope, r.dir.display()))
            .collect();
        assert_eq!(
            shown,
            [
                "Project /p/sub/.podcode/skills",
                "Project /p/sub/.opencode/skills",
                "Project /p/sub/.opencode/skill",
                "Project /p/sub/.claude/skills",
                "Project /p/sub/.agents/skills",
                "Project /p/.podcode/skills",
                "Project /p/.opencode/skills",
                "Project /p/.opencode/skill",
                "Project /p/.claude/skills",
                "Project /p/.agents/skills",
                "User /r/config/skills",
                "User /r/home/.config/opencode/skills",
                "User /r/home/.config/opencode/skill",
                "User /r/home/.claude/skills",
                "User /r/home/.agents/skills",
            ]
        );
        assert_eq!(
            roots.show(Path::new("/p/.claude/skills/a")),
            ".claude/skills/a"
        );
        assert_eq!(
            roots.show(Path::new("/r/home/.claude/skills/a")),
            "~/.claude/skills/a"
        );
    }

    #[test]
    fn commands_have_their_own_folders() {
        let dirs = Dirs::under(Path::new("/r"));
        let roots = Roots::commands(&dirs, Path::new("/p"), Path::new("/p"));
        let shown: Vec<String> = roots
            .roots()
            .iter()
            .map(|r| r.dir.display().to_string())
            .collect();
        assert_eq!(
            shown,
            [
                "/p/.podcode/commands",
                "/p/.opencode/commands",
                "/p/.opencode/command",
                "/p/.claude/commands",
                "/r/config/commands",
                "/r/home/.config/opencode/commands",
                "/r/home/.config/opencode/command",
                "/r/home/.claude/commands",
            ]
        );
    }

    #[test]
    fn a_cwd_outside_the_project_is_the_only_project_level() {
        let dirs = Dirs::under(Path::new("/r"));
        let roots = Roots::skills(&dirs, Path::new("/elsewhere"), Path::new("/p"));
        assert_eq!(
            roots.roots()[0].dir,
            Path::new("/elsewhere/.podcode/skills")
        );
        assert_eq!(roots.roots()[5].scope, Scope::User);
    }
}
