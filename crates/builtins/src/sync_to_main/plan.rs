//! What a sync would do to the main workspace, decided file by file before anything is
//! written. For each path the worktree changed since the sync base, the user's current file
//! in the main workspace is compared with the base ("fork point") and the worktree's version:
//! unchanged in main → take the worktree's; already equal → nothing; changed on both sides →
//! a three-way merge by `git merge-file`, whose conflicting hunks (with the main workspace's
//! line numbers) become a `FileConflict`. Deletions, renames (main's edits carried to the
//! new name), binary files and executable-bit changes are planned the same way.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use super::git::{Git, GitError, TreeChange};

const EXEC: u32 = 0o100755;
const FILE: u32 = 0o100644;

/// One file to change in the main workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Planned {
    /// Relative to the repository root.
    pub rel: String,
    pub abs: PathBuf,
    /// The main workspace's bytes now (`None`: the file does not exist).
    pub old: Option<Vec<u8>>,
    /// What it will hold (`None`: deleted).
    pub new: Option<Vec<u8>>,
    /// The executable bit the file must end with (when it exists afterwards).
    pub executable: bool,
    /// The worktree's and main's changes were merged.
    pub merged: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileConflict {
    pub rel: String,
    /// Why, in one sentence, then the conflicting hunks (may be empty).
    pub reason: String,
    pub hunks: String,
}

#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub writes: Vec<Planned>,
    pub conflicts: Vec<FileConflict>,
    /// Changes that are already in the main workspace.
    pub already: usize,
}

/// The main workspace's file: bytes, executable bit. A symbolic link, on the file or on a
/// folder below the checkout root, is refused: a sync writes inside the checkout only.
fn read_main(root: &Path, abs: &Path) -> Result<Option<(Vec<u8>, bool)>, String> {
    use std::os::unix::fs::PermissionsExt;
    let mut dir = abs.parent();
    while let Some(d) = dir.filter(|d| d.starts_with(root) && *d != root) {
        if std::fs::symlink_metadata(d).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(format!(
                "its folder {} is a symbolic link in the main workspace",
                d.display()
            ));
        }
        dir = d.parent();
    }
    match std::fs::symlink_metadata(abs) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read it: {e}")),
        Ok(m) if m.file_type().is_symlink() => {
            Err("it is a symbolic link in the main workspace".into())
        }
        Ok(m) if m.is_dir() => Err("it is a folder in the main workspace".into()),
        Ok(m) => std::fs::read(abs)
            .map(|b| Some((b, m.permissions().mode() & 0o111 != 0)))
            .map_err(|e| format!("cannot read it: {e}")),
    }
}

fn conflict(rel: &str, reason: impl Into<String>) -> FileConflict {
    FileConflict {
        rel: rel.to_string(),
        reason: reason.into(),
        hunks: String::new(),
    }
}

/// Plans every change; `Err` only when git itself fails.
pub(crate) fn plan(git: &Git, main_root: &Path, changes: &[TreeChange]) -> Result<Plan, GitError> {
    let mut plan = Plan::default();
    for c in changes {
        let unsupported = [c.old_mode, c.new_mode]
            .iter()
            .any(|m| *m != 0 && *m != EXEC && *m != FILE);
        if unsupported {
            plan.conflicts.push(conflict(
                &c.new_path,
                "it is a symbolic link or submodule, which sync_to_main does not copy",
            ));
            continue;
        }
        plan_one(git, main_root, c, &mut plan)?;
    }
    Ok(plan)
}

fn plan_one(git: &Git, root: &Path, c: &TreeChange, plan: &mut Plan) -> Result<(), GitError> {
    let theirs = if c.has_new() {
        Some(git.blob(&c.new_blob)?)
    } else {
        None
    };
    let base = if c.had_old() {
        Some(git.blob(&c.old_blob)?)
    } else {
        None
    };
    let exec = c.new_mode == EXEC;
    let old_abs = root.join(&c.old_path);
    let new_abs = root.join(&c.new_path);
    let ours_old = match read_main(root, &old_abs) {
        Ok(v) => v,
        Err(why) => {
            plan.conflicts.push(conflict(&c.old_path, why));
            return Ok(());
        }
    };
    let write =
        |rel: &str, abs: &Path, old: Option<Vec<u8>>, new: Option<Vec<u8>>, merged| Planned {
            rel: rel.to_string(),
            abs: abs.to_path_buf(),
            old,
            new,
            executable: exec,
            merged,
        };
    match (base, theirs) {
        // Added in the worktree.
        (None, Some(theirs)) => match ours_old {
            None => plan.writes.push(write(&c.new_path, &new_abs, None, Some(theirs), false)),
            Some((ours, x)) if ours == theirs => {
                if x != exec {
                    plan.writes.push(write(&c.new_path, &new_abs, Some(ours.clone()), Some(ours), false));
                } else {
                    plan.already += 1;
                }
            }
            Some(_) => plan.conflicts.push(conflict(
                &c.new_path,
                "it is new in the worktree, but the main workspace has a different file at this path",
            )),
        },
        // Deleted in the worktree.
        (Some(base), None) => match ours_old {
            None => plan.already += 1,
            Some((ours, _)) if ours == base => {
                plan.writes.push(write(&c.old_path, &old_abs, Some(ours), None, false))
            }
            Some(_) => plan.conflicts.push(conflict(
                &c.old_path,
                "it is deleted in the worktree, but the user changed it in the main workspace",
            )),
        },
        // Modified (same path) or renamed.
        (Some(base), Some(theirs)) => {
            let renamed = c.old_path != c.new_path;
            let Some((ours, ours_exec)) = ours_old else {
                let what = if renamed { "renamed" } else { "changed" };
                plan.conflicts.push(conflict(
                    &c.old_path,
                    format!("it is {what} in the worktree, but the user deleted it in the main workspace"),
                ));
                return Ok(());
            };
            if renamed {
                match read_main(root, &new_abs) {
                    Ok(None) => {}
                    Ok(Some((other, _))) if other == theirs => {}
                    Ok(Some(_)) => {
                        plan.conflicts.push(conflict(
                            &c.new_path,
                            format!("{} is renamed to it in the worktree, but the main workspace already has a different file there", c.old_path),
                        ));
                        return Ok(());
                    }
                    Err(why) => {
                        plan.conflicts.push(conflict(&c.new_path, why));
                        return Ok(());
                    }
                }
            }
            let (content, merged) = if ours == base || ours == theirs {
                (theirs, false)
            } else {
                match merge3(&base, &ours, &theirs) {
                    Merge::Clean(m) => (m, true),
                    Merge::Binary => {
                        plan.conflicts.push(conflict(
                            &c.new_path,
                            "it is a binary file that both the worktree and the user's main workspace changed",
                        ));
                        return Ok(());
                    }
                    Merge::Conflict(hunks) => {
                        plan.conflicts.push(FileConflict {
                            rel: c.new_path.clone(),
                            reason: "the worktree and the user's main workspace changed the same lines".into(),
                            hunks,
                        });
                        return Ok(());
                    }
                    Merge::Failed(why) => {
                        plan.conflicts.push(conflict(&c.new_path, why));
                        return Ok(());
                    }
                }
            };
            if renamed {
                let existing = read_main(root, &new_abs).ok().flatten().map(|(b, _)| b);
                plan.writes.push(write(&c.old_path, &old_abs, Some(ours), None, false));
                plan.writes.push(write(&c.new_path, &new_abs, existing, Some(content), merged));
            } else if content == ours && ours_exec == exec {
                plan.already += 1;
            } else {
                plan.writes.push(write(&c.new_path, &new_abs, Some(ours), Some(content), merged));
            }
        }
        (None, None) => {}
    }
    Ok(())
}

enum Merge {
    Clean(Vec<u8>),
    Conflict(String),
    Binary,
    Failed(String),
}

fn is_binary(bytes: &[u8]) -> bool {
    bytes.contains(&0) || std::str::from_utf8(bytes).is_err()
}

/// `git merge-file --diff3` on three versions; the conflicting hunks when it conflicts.
fn merge3(base: &[u8], ours: &[u8], theirs: &[u8]) -> Merge {
    if [base, ours, theirs].iter().any(|b| is_binary(b)) {
        return Merge::Binary;
    }
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "podcode-merge-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let run = || -> std::io::Result<std::process::Output> {
        std::fs::create_dir_all(&dir)?;
        for (name, bytes) in [("ours", ours), ("base", base), ("theirs", theirs)] {
            std::fs::write(dir.join(name), bytes)?;
        }
        Command::new("git")
            .current_dir(&dir)
            .args(["merge-file", "-p", "--diff3"])
            .args(["-L", "main workspace", "-L", "fork point", "-L", "worktree"])
            .args(["ours", "base", "theirs"])
            .output()
    };
    let out = run();
    let _ = std::fs::remove_dir_all(&dir);
    match out {
        Err(e) => Merge::Failed(format!("git merge-file could not run: {e}")),
        Ok(o) => match o.status.code() {
            Some(0) => Merge::Clean(o.stdout),
            Some(n) if (1..=127).contains(&n) => {
                Merge::Conflict(conflict_hunks(&String::from_utf8_lossy(&o.stdout)))
            }
            _ => Merge::Failed(format!(
                "git merge-file failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            )),
        },
    }
}

/// Lines of context shown before and after each conflicting hunk.
const CONTEXT: usize = 2;

/// The conflict blocks of a `--diff3` merge, each with a little context and the line of
/// the main workspace's file it starts at.
pub(crate) fn conflict_hunks(merged: &str) -> String {
    let lines: Vec<&str> = merged.lines().collect();
    let mut out = String::new();
    let mut main_line = 0usize;
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with("<<<<<<< ") {
            main_line += 1;
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i;
        let mut in_ours = true;
        let mut ours_lines = 0;
        while end < lines.len() && !lines[end].starts_with(">>>>>>> ") {
            if end > start && (lines[end].starts_with("||||||| ") || lines[end] == "=======") {
                in_ours = false;
            } else if end > start && in_ours {
                ours_lines += 1;
            }
            end += 1;
        }
        let from = start.saturating_sub(CONTEXT);
        let to = (end + 1 + CONTEXT).min(lines.len());
        out.push_str(&format!("@@ main workspace line {} @@\n", main_line + 1));
        for l in &lines[from..to] {
            out.push_str(l);
            out.push('\n');
        }
        main_line += ours_lines;
        i = end + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_merge_keeps_both_sides() {
        let base = b"a\nb\nc\nd\ne\n";
        let ours = b"A\nb\nc\nd\ne\n";
        let theirs = b"a\nb\nc\nd\nE\n";
        match merge3(base, ours, theirs) {
            Merge::Clean(m) => assert_eq!(m, b"A\nb\nc\nd\nE\n"),
            _ => panic!("expected a clean merge"),
        }
    }

    #[test]
    fn a_conflict_lists_the_hunk_with_main_line_numbers() {
        let base = b"one\ntwo\nthree\nfour\n";
        let ours = b"one\ntwo\nTHREE main\nfour\n";
        let theirs = b"one\ntwo\nthree worktree\nfour\n";
        let Merge::Conflict(h) = merge3(base, ours, theirs) else {
            panic!("expected a conflict");
        };
        assert_eq!(
            h,
            "@@ main workspace line 3 @@\none\ntwo\n<<<<<<< main workspace\nTHREE main\n||||||| fork point\nthree\n=======\nthree worktree\n>>>>>>> worktree\nfour\n"
        );
    }

    #[test]
    fn binary_content_is_never_merged() {
        assert!(matches!(merge3(b"\0a", b"\0b", b"\0c"), Merge::Binary));
    }
}
