//! What a sandboxed process may do: the `Mode` (read-only, workspace-write, full), whether
//! it may open network sockets, and the directories it may write. The engine builds one
//! `Policy` per spawn (`Sandbox::policy`) and hands it to the helper as JSON on its
//! command line; the helper (`helper::run_helper`) turns it into Landlock rules and a
//! seccomp filter.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How much of the filesystem a sandboxed command may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Read everything, write nothing (except `/dev/null` and friends).
    ReadOnly,
    /// Read everything; write only the workspace, the session's directory, the spill
    /// directory, the session's temp dir and configured extra roots.
    #[default]
    WorkspaceWrite,
    /// No sandbox: commands run with every right the user has (Podcode before sandboxing).
    Full,
}

impl Mode {
    /// The config spelling: `read-only`, `workspace-write` or `full`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::WorkspaceWrite => "workspace-write",
            Mode::Full => "full",
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Device files every command may write whatever the mode: shells redirect to `/dev/null`,
/// programs talk to the terminal.
pub const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// One spawn's rules, exactly as the helper applies them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// What the process may write.
    pub mode: Mode,
    /// Whether the process may open IPv4/IPv6 sockets (Unix sockets always work).
    pub network: bool,
    /// Directories (and files) the process may change; ignored in `read-only`.
    pub writable: Vec<PathBuf>,
    /// Paths inside the writable roots that stay read-only: `.git` (and, for a git
    /// worktree, the directories its `.git` file points to), `.podcode` and `.opencode`,
    /// which hold code Podcode or git runs outside the sandbox. See `protected_paths`.
    #[serde(default)]
    pub protect: Vec<PathBuf>,
    /// Files the process must not read (credential stores): each one that exists reads as
    /// empty inside the sandbox (`/dev/null` bound over it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hide: Vec<PathBuf>,
    /// Where the helper appends what it refused (one JSON object a line, see
    /// `denial::read_log`); `None`: nothing is recorded.
    #[serde(default)]
    pub denial_log: Option<PathBuf>,
    /// A layer over the home directory the process writes into instead of the home itself
    /// (the plugin host's: plugins keep their own dot-folders there); `None`: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home_layer: Option<HomeLayer>,
}

/// An overlay of `home` whose changes land in `dir/upper` (with `dir/work` as the overlay's
/// work directory): the process sees its home with its own changes on top and may change
/// it freely; the real home is never written. The policy's writable roots inside `home`
/// stay the real directories.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HomeLayer {
    /// The home directory to lay over.
    pub home: PathBuf,
    /// Where the layer's changes are kept (`upper/`) and the overlay works (`work/`).
    pub dir: PathBuf,
}

/// Names beneath a writable root that sandboxed commands may not change: git runs hooks,
/// filters and `core.fsmonitor` from `.git`, and Podcode loads config, plugins and tools
/// from `.podcode` and `.opencode` once the project is trusted.
pub const PROTECTED_NAMES: &[&str] = &[".git", ".podcode", ".opencode"];

/// The existing paths to keep read-only for `roots`: each root's `.git`, `.podcode` and
/// `.opencode`, and when `.git` is a file (a linked worktree or a submodule) the git
/// directory it names and that directory's common dir (`commondir`).
pub fn protected_paths<'a>(roots: impl IntoIterator<Item = &'a Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let push = |p: PathBuf, out: &mut Vec<PathBuf>| {
        if let Ok(c) = p.canonicalize()
            && !out.contains(&c)
        {
            out.push(c);
        }
    };
    for root in roots {
        for name in PROTECTED_NAMES {
            let p = root.join(name);
            if *name == ".git"
                && p.is_file()
                && let Some(gitdir) = gitdir_of(&p)
            {
                if let Ok(common) = std::fs::read_to_string(gitdir.join("commondir")) {
                    push(gitdir.join(common.trim()), &mut out);
                }
                push(gitdir, &mut out);
            }
            push(p, &mut out);
        }
    }
    out
}

/// The directory a `.git` file (`gitdir: <path>`) points to.
fn gitdir_of(file: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let parent = file.parent()?;
    Some(parent.join(target))
}

impl Policy {
    /// Whether `path` lies under one of the writable roots (always false in read-only).
    /// Both sides are compared as given and canonicalized, so a symlinked workspace still
    /// matches.
    pub fn allows_write(&self, path: &Path) -> bool {
        match self.mode {
            Mode::Full => true,
            Mode::ReadOnly => false,
            Mode::WorkspaceWrite => {
                // `ws/../x` is not under `ws`: resolve `..` before comparing.
                let path = &normalize(path);
                let canon = canonical_prefix(path);
                if self.is_protected(path) {
                    return false;
                }
                self.writable.iter().any(|root| {
                    path.starts_with(root)
                        || canon.starts_with(root)
                        || root
                            .canonicalize()
                            .is_ok_and(|r| path.starts_with(&r) || canon.starts_with(&r))
                })
            }
        }
    }

    /// Whether `path` lies in one of the protected paths (`.git` and the like).
    pub fn is_protected(&self, path: &Path) -> bool {
        let path = &normalize(path);
        let canon = canonical_prefix(path);
        self.protect
            .iter()
            .any(|p| path.starts_with(p) || canon.starts_with(p))
    }

    /// The policy as the helper's `--policy` argument.
    pub fn to_json(&self) -> String {
        // A struct of strings, bools and paths always serializes.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// `path` with `.` and `..` resolved lexically (no filesystem access).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The canonical form of the longest existing ancestor of `path`, with the rest appended:
/// a file that does not exist yet still resolves through a symlinked parent.
pub(crate) fn canonical_prefix(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut cur = path;
    loop {
        if let Ok(c) = cur.canonicalize() {
            let mut out = c;
            for part in missing.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                cur = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_spell_like_the_config() {
        for (mode, text) in [
            (Mode::ReadOnly, "\"read-only\""),
            (Mode::WorkspaceWrite, "\"workspace-write\""),
            (Mode::Full, "\"full\""),
        ] {
            assert_eq!(serde_json::to_string(&mode).unwrap(), text);
            assert_eq!(format!("\"{mode}\""), text);
        }
        assert_eq!(Mode::default(), Mode::WorkspaceWrite);
    }

    #[test]
    fn writes_are_allowed_under_the_roots_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = Policy {
            mode: Mode::WorkspaceWrite,
            network: false,
            writable: vec![dir.path().to_path_buf()],
            protect: Vec::new(),
            hide: Vec::new(),
            denial_log: None,
            home_layer: None,
        };
        assert!(p.allows_write(&dir.path().join("new/file")));
        assert!(!p.allows_write(Path::new("/etc/passwd")));
        assert!(!p.allows_write(&dir.path().join("../escape")));
        assert!(p.allows_write(&dir.path().join("a/../b")));
        let ro = Policy {
            mode: Mode::ReadOnly,
            ..p.clone()
        };
        assert!(!ro.allows_write(&dir.path().join("x")));
        let back: Policy = serde_json::from_str(&p.to_json()).unwrap();
        assert_eq!(back, p);
    }

    #[test]
    fn git_and_podcode_dirs_are_protected_also_through_a_worktree_file() {
        let root = tempfile::tempdir().unwrap();
        let main = root.path().join("main");
        let gitdir = main.join(".git/worktrees/wt");
        std::fs::create_dir_all(&gitdir).unwrap();
        std::fs::write(gitdir.join("commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(main.join(".podcode")).unwrap();
        let wt = root.path().join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
        let canon = |p: &Path| p.canonicalize().unwrap();
        let got = protected_paths([wt.as_path(), main.as_path()]);
        assert_eq!(
            got,
            vec![
                canon(&main.join(".git")),
                canon(&gitdir),
                canon(&wt.join(".git")),
                canon(&main.join(".podcode")),
            ]
        );
        let p = Policy {
            mode: Mode::WorkspaceWrite,
            network: false,
            writable: vec![canon(&wt), canon(&main)],
            protect: got,
            hide: Vec::new(),
            denial_log: None,
            home_layer: None,
        };
        assert!(!p.allows_write(&main.join(".git/hooks/pre-commit")));
        assert!(!p.allows_write(&main.join(".podcode/config.toml")));
        assert!(!p.allows_write(&wt.join(".git")));
        assert!(p.allows_write(&wt.join("src/lib.rs")));
        assert!(p.allows_write(&main.join(".gitignore")));
    }
}
