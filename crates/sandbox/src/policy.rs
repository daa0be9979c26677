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
    pub mode: Mode,
    /// Whether the process may open IPv4/IPv6 sockets (Unix sockets always work).
    pub network: bool,
    /// Directories (and files) the process may change; ignored in `read-only`.
    pub writable: Vec<PathBuf>,
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

    pub fn to_json(&self) -> String {
        // A struct of strings, bools and paths always serializes.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// `path` with `.` and `..` resolved lexically (no filesystem access).
fn normalize(path: &Path) -> PathBuf {
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
fn canonical_prefix(path: &Path) -> PathBuf {
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
}
