//! The few `git` plumbing commands worktree sessions need, run through the real `git` CLI
//! (what the user's repository is already configured for: object format, hooks, config).
//! Every command runs with hooks switched off and a fixed identity for the commits Podcode
//! makes itself; a failure carries git's own message.
//!
//! `snapshot` turns a checkout (tracked, modified and untracked-not-ignored files) into a
//! tree object through a *temporary* index seeded from the real one (so unchanged files are
//! not hashed again), leaving the user's index, stash and files as they were.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Why a git command failed, phrased for the model and the user.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git could not be started.
    #[error("could not run git ({0}); is git installed?")]
    Spawn(std::io::Error),
    /// git ran and exited with an error.
    #[error("git {args} failed in {dir}: {message}")]
    Failed {
        /// The arguments, joined with spaces.
        args: String,
        /// The directory it ran in.
        dir: String,
        /// git's stderr, trimmed.
        message: String,
    },
    /// A file around the git call could not be read or written.
    #[error("{0}")]
    Io(String),
}

/// `git` in one directory.
#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
}

/// One changed path between two trees (`git diff-tree --raw -M`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeChange {
    /// `A`dded, `M`odified, `D`eleted, `R`enamed, `T`ype changed.
    pub status: char,
    /// File mode before (`0o100644`, `0o100755`, `0o120000` for a symlink; 0 when added).
    pub old_mode: u32,
    /// File mode after (0 when deleted).
    pub new_mode: u32,
    /// Blob id before (all zeros when added).
    pub old_blob: String,
    /// Blob id after (all zeros when deleted).
    pub new_blob: String,
    /// Path before (the rename's source).
    pub old_path: String,
    /// Path after (equal to `old_path` unless renamed).
    pub new_path: String,
}

/// The ref that keeps a session's sync base reachable (`git gc`), whatever its branch does.
pub fn sync_ref(session_id: &str) -> String {
    format!("refs/podcode/sync/{session_id}")
}

const NULL_BLOB: &str = "0000000000000000000000000000000000000000";

impl Git {
    /// git run in `dir` (`git -C dir`).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }
    /// The directory git runs in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn command(&self, args: &[&str], index: Option<&Path>) -> Command {
        let mut cmd = Command::new("git");
        cmd.current_dir(&self.dir)
            .args([
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "core.quotePath=false",
            ])
            .args(args)
            .env("GIT_AUTHOR_NAME", "Podcode")
            .env("GIT_AUTHOR_EMAIL", "podcode@localhost")
            .env("GIT_COMMITTER_NAME", "Podcode")
            .env("GIT_COMMITTER_EMAIL", "podcode@localhost")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .stdin(Stdio::null());
        match index {
            Some(i) => cmd.env("GIT_INDEX_FILE", i),
            None => cmd.env_remove("GIT_INDEX_FILE"),
        };
        cmd
    }

    /// Runs git; stdout as bytes, or git's stderr as the error.
    pub fn run_bytes(&self, args: &[&str], index: Option<&Path>) -> Result<Vec<u8>, GitError> {
        let out = self
            .command(args, index)
            .output()
            .map_err(GitError::Spawn)?;
        if out.status.success() {
            return Ok(out.stdout);
        }
        Err(GitError::Failed {
            args: args.join(" "),
            dir: self.dir.display().to_string(),
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }

    /// Runs git; trimmed stdout.
    pub fn run(&self, args: &[&str]) -> Result<String, GitError> {
        self.run_with(args, None)
    }

    /// `run` with `GIT_INDEX_FILE` pointing at `index` when given, so a temporary index leaves the
    /// user's staging area alone.
    pub fn run_with(&self, args: &[&str], index: Option<&Path>) -> Result<String, GitError> {
        let out = self.run_bytes(args, index)?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// The checkout's root, or `None` outside a git repository.
    pub fn toplevel(&self) -> Option<PathBuf> {
        self.run(&["rev-parse", "--show-toplevel"])
            .ok()
            .map(PathBuf::from)
    }

    /// The commit HEAD points at, or `None` in a repository without commits.
    pub fn head(&self) -> Option<String> {
        self.run(&["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
            .ok()
            .filter(|s| !s.is_empty())
    }

    /// A tree of the checkout as it is on disk: tracked files with their modifications,
    /// deletions, and untracked files that are not ignored. `scratch` is a file path the
    /// temporary index may use (it is removed afterwards).
    pub fn snapshot(&self, scratch: &Path) -> Result<String, GitError> {
        let index = PathBuf::from(self.run(&[
            "rev-parse",
            "--path-format=absolute",
            "--git-path",
            "index",
        ])?);
        // Seeding from the real index keeps its stat data, so only changed files are hashed.
        if index.exists() {
            std::fs::copy(&index, scratch)
                .map_err(|e| GitError::Io(format!("cannot copy the git index: {e}")))?;
        } else {
            let _ = std::fs::remove_file(scratch);
        }
        let tree = self
            .run_with(&["add", "-A", "--", ":/"], Some(scratch))
            .and_then(|_| self.run_with(&["write-tree"], Some(scratch)));
        let _ = std::fs::remove_file(scratch);
        tree
    }

    /// `commit-tree` with one parent.
    pub fn commit_tree(&self, tree: &str, parent: &str, message: &str) -> Result<String, GitError> {
        self.run(&["commit-tree", tree, "-p", parent, "-m", message])
    }

    /// The paths changed from `from` to `to` (trees or commits), renames detected.
    pub fn changes(
        &self,
        from: &str,
        to: &str,
        paths: &[String],
    ) -> Result<Vec<TreeChange>, GitError> {
        let mut args = vec![
            "diff-tree",
            "-r",
            "-z",
            "--raw",
            "-M",
            "--no-commit-id",
            from,
            to,
            "--",
        ];
        args.extend(paths.iter().map(String::as_str));
        let out = self.run_bytes(&args, None)?;
        Ok(parse_raw(&out))
    }

    /// A blob's bytes.
    pub fn blob(&self, id: &str) -> Result<Vec<u8>, GitError> {
        self.run_bytes(&["cat-file", "blob", id], None)
    }

    /// A new tree: `base` with each `(mode, blob, path)` put in, or the path removed when
    /// the blob is `None`.
    pub fn edit_tree(
        &self,
        base: &str,
        entries: &[(u32, Option<String>, String)],
        scratch: &Path,
    ) -> Result<String, GitError> {
        let _ = std::fs::remove_file(scratch);
        let result = (|| {
            self.run_with(&["read-tree", base], Some(scratch))?;
            for (mode, blob, path) in entries {
                match blob {
                    Some(b) => {
                        let info = format!("{mode:o},{b},{path}");
                        self.run_with(
                            &["update-index", "--add", "--cacheinfo", &info],
                            Some(scratch),
                        )?
                    }
                    None => self.run_with(
                        &["update-index", "--force-remove", "--", path],
                        Some(scratch),
                    )?,
                };
            }
            self.run_with(&["write-tree"], Some(scratch))
        })();
        let _ = std::fs::remove_file(scratch);
        result
    }
}

fn parse_raw(out: &[u8]) -> Vec<TreeChange> {
    let fields: Vec<String> = out
        .split(|b| *b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    let mut changes = Vec::new();
    let mut i = 0;
    while i < fields.len() {
        let meta = &fields[i];
        let Some(meta) = meta.strip_prefix(':') else {
            i += 1;
            continue;
        };
        let parts: Vec<&str> = meta.split(' ').collect();
        if parts.len() < 5 {
            break;
        }
        let status = parts[4].chars().next().unwrap_or('M');
        let mode = |s: &str| u32::from_str_radix(s, 8).unwrap_or(0);
        let two = matches!(status, 'R' | 'C');
        let old_path = fields.get(i + 1).cloned().unwrap_or_default();
        let new_path = if two {
            fields.get(i + 2).cloned().unwrap_or_default()
        } else {
            old_path.clone()
        };
        changes.push(TreeChange {
            status,
            old_mode: mode(parts[0]),
            new_mode: mode(parts[1]),
            old_blob: parts[2].to_string(),
            new_blob: parts[3].to_string(),
            old_path,
            new_path,
        });
        i += if two { 3 } else { 2 };
    }
    changes
}

impl TreeChange {
    /// Whether the path existed before the change.
    pub fn had_old(&self) -> bool {
        self.old_blob != NULL_BLOB && self.status != 'A'
    }
    /// Whether the path exists after the change.
    pub fn has_new(&self) -> bool {
        self.new_blob != NULL_BLOB && self.status != 'D'
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_diff_output_is_parsed_with_renames() {
        let z = "0000000000000000000000000000000000000000";
        let raw = format!(
            ":100644 100755 {a} {b} M\0run.sh\0:100644 000000 {a} {z} D\0gone.txt\0:100644 100644 {a} {b} R087\0old.rs\0new.rs\0",
            a = "1".repeat(40),
            b = "2".repeat(40),
        );
        let c = parse_raw(raw.as_bytes());
        assert_eq!(c.len(), 3);
        assert_eq!(
            (c[0].status, c[0].old_mode, c[0].new_mode),
            ('M', 0o100644, 0o100755)
        );
        assert!(!c[1].has_new() && c[1].had_old());
        assert_eq!(
            (c[2].old_path.as_str(), c[2].new_path.as_str()),
            ("old.rs", "new.rs")
        );
    }
}
