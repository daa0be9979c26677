//! Where skills may live, highest precedence first. The project's folders come first,
//! nearest the working directory first, walking up to the project root; then the user's.
//! In each place Podcode's own folder comes before opencode's (`skills/`, and the legacy
//! `skill/`), Claude Code's and the shared `.agents/`, so a Podcode-specific skill can
//! stand in for one the repository carries for another agent.

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

/// One folder whose subfolders may hold skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillRoot {
    /// The folder (`<project>/.claude/skills`).
    pub dir: PathBuf,
    /// Whose it is.
    pub scope: Scope,
}

/// The folders scanned for skills, highest precedence first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillRoots {
    roots: Vec<SkillRoot>,
    /// The project root, for showing project paths short.
    project: PathBuf,
    /// The home directory, for showing user paths as `~/…`.
    home: PathBuf,
}

/// The project-level folders, in precedence order, under one directory.
const PROJECT_FOLDERS: [&str; 5] = [
    ".podcode/skills",
    ".opencode/skills",
    ".opencode/skill",
    ".claude/skills",
    ".agents/skills",
];

impl SkillRoots {
    /// The usual places: in every directory from `cwd` up to `project` (both included; only
    /// `cwd` when it is not inside `project`), `.podcode/skills`, `.opencode/skills`,
    /// `.opencode/skill`, `.claude/skills`, `.agents/skills`; then the user's Podcode config
    /// dir's `skills/`, `$OPENCODE_CONFIG_DIR`'s and opencode's global config dir's
    /// `skills/` and `skill/`, `~/.claude/skills` and `~/.agents/skills`.
    pub fn standard(dirs: &Dirs, cwd: &Path, project: &Path) -> Self {
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
            for folder in PROJECT_FOLDERS {
                out.push(level.join(folder), Scope::Project);
            }
        }
        out.push(dirs.config_dir.join("skills"), Scope::User);
        let opencode = dirs
            .opencode
            .custom_dir
            .iter()
            .chain(std::iter::once(&dirs.opencode.config_dir));
        for dir in opencode {
            out.push(dir.join("skills"), Scope::User);
            out.push(dir.join("skill"), Scope::User);
        }
        out.push(dirs.home.join(".claude/skills"), Scope::User);
        out.push(dirs.home.join(".agents/skills"), Scope::User);
        out
    }

    /// Exactly `roots`, in this order (for tests and embeddings).
    pub fn new(roots: Vec<SkillRoot>, project: &Path, home: &Path) -> Self {
        Self {
            roots,
            project: project.to_path_buf(),
            home: home.to_path_buf(),
        }
    }

    fn push(&mut self, dir: PathBuf, scope: Scope) {
        if !self.roots.iter().any(|r| r.dir == dir) {
            self.roots.push(SkillRoot { dir, scope });
        }
    }

    /// The folders, highest precedence first.
    pub fn roots(&self) -> &[SkillRoot] {
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
        let roots = SkillRoots::standard(&dirs, Path::new("/p/sub"), Path::new("/p"));
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
    fn a_cwd_outside_the_project_is_the_only_project_level() {
        let dirs = Dirs::under(Path::new("/r"));
        let roots = SkillRoots::standard(&dirs, Path::new("/elsewhere"), Path::new("/p"));
        assert_eq!(
            roots.roots()[0].dir,
            Path::new("/elsewhere/.podcode/skills")
        );
        assert_eq!(roots.roots()[5].scope, Scope::User);
    }
}
