//! The `sync_to_main` tool: brings a worktree session's changes into the user's checkout.
//!
//! Data flow: the session's worktree record (path, sync base, the user's checkout) is read
//! from the store ▸ the worktree is snapshotted into a tree (`git::Git::snapshot`, committed
//! or not) ▸ `git diff-tree -M` against the sync base lists what changed ▸ `plan` decides per
//! file against the main workspace (three-way merge; any conflict refuses the whole sync and
//! returns the hunks) ▸ the user approves the `sync_to_main` ask, which shows the diffstat and
//! the diff ▸ every file is written through `ToolContext::apply_changes` (journaled, binary
//! bytes and permission bits included, so `podcode revert` undoes a sync exactly) ▸
//! the sync base moves to a commit of what was synced, so the next sync only carries newer
//! work. The main workspace lies outside the session's directory: this is the one tool that
//! writes there, and only to paths git reported under the recorded checkout root.

pub mod git;
mod plan;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use podcode_protocol::{FileContent, PermissionRequest, ToolResult, ToolSpec};
use podcode_tools::{FileWrite, Tool, ToolContext, ToolError, unified_diff};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::write::{clip_diff, diff_stats, parse_args};
use git::{Git, GitError};
use plan::{FileConflict, Planned};

pub(crate) const SYNC_DESCRIPTION: &str = "\
Copies your changes from this session's worktree into the user's main workspace (their own \
checkout), merged with whatever the user changed there meanwhile.

This session works in its own git worktree, a separate copy of the repository: nothing you \
change reaches the user's files until you call sync_to_main. Call it when the work is done and \
checked (tests pass), or when the user asks for it.

- Every change since the last sync is applied, committed or not: edits, new files, deletions, \
renames, executable-bit changes and binary files.
- Each file is merged three-way (the version you started from, the user's current file, \
yours). If any file conflicts, nothing is changed and the conflicting hunks are returned.
- The user approves the diff first; a sync can be undone with `podcode revert`.
- `paths` limits the sync to these files or folders (relative to the repository root); \
`message` says in one line what the change does.";

pub(crate) const NOT_WORKTREE_TEXT: &str = "sync_to_main only works in a worktree session \
(started with `podcode run --worktree` or `podcode tui --worktree`). This session works \
directly in the user's workspace, so your edits are already in their files and there is \
nothing to sync.";

/// Arguments of `sync_to_main`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SyncArgs {
    /// Only sync these files or folders, relative to the repository root (default: every change).
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    /// One line saying what the synced change does; shown to the user and recorded with the sync.
    #[serde(default)]
    pub message: Option<String>,
}

/// `sync_to_main`: brings a worktree session's changes into the user's checkout, journaled so
/// `podcode revert` undoes them.
pub struct SyncToMainTool {
    spec: ToolSpec,
}

impl SyncToMainTool {
    /// The tool with its spec; it holds no state between calls.
    pub fn new() -> Self {
        let spec = ToolSpec::new(
            "sync_to_main",
            SYNC_DESCRIPTION,
            crate::params_schema::<SyncArgs>(),
        );
        Self { spec }
    }
}

impl Default for SyncToMainTool {
    fn default() -> Self {
        Self::new()
    }
}

fn git_failed(e: GitError) -> ToolError {
    ToolError::failed(format!(
        "sync_to_main could not read the worktree: {e}. Nothing was changed."
    ))
}

/// A scratch file name for a temporary git index.
pub fn scratch_index() -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "podcode-index-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

#[async_trait]
impl Tool for SyncToMainTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let args: SyncArgs = parse_args(args)?;
        let id = ctx.identity();
        let worktrees = ctx.worktrees();
        // A sub-agent of a worktree session works in its root's worktree.
        let mut row = None;
        for sid in std::iter::once(&id.session_id).chain(id.root_id.iter()) {
            if let Some(r) = worktrees
                .worktree_of(sid)
                .map_err(|e| ToolError::failed(e.to_string()))?
            {
                row = Some(r);
                break;
            }
        }
        let Some(row) = row else {
            return Err(ToolError::failed(NOT_WORKTREE_TEXT));
        };
        let git = Git::new(&row.path);
        let main_root = PathBuf::from(&row.main_root);
        let paths = args.paths.unwrap_or_default();
        let work = {
            let git = git.clone();
            let base = row.sync_base.clone();
            let main_root = main_root.clone();
            tokio::task::spawn_blocking(move || -> Result<_, GitError> {
                let tree = git.snapshot(&scratch_index())?;
                let changes = git.changes(&base, &tree, &paths)?;
                let plan = plan::plan(&git, &main_root, &changes)?;
                Ok((changes, plan))
            })
        };
        let (changes, plan) = work
            .await
            .map_err(|e| ToolError::failed(format!("sync_to_main stopped: {e}")))?
            .map_err(git_failed)?;
        if !plan.conflicts.is_empty() {
            return Err(ToolError::failed(conflicts_text(
                &main_root,
                &plan.conflicts,
            )));
        }
        if plan.writes.is_empty() {
            let text = if plan.already > 0 {
                format!(
                    "Nothing to sync: the main workspace ({}) already has every change from the worktree.",
                    main_root.display()
                )
            } else {
                "Nothing to sync: the worktree has no changes since the last sync.".to_string()
            };
            return Ok(ToolResult::text(text).with_title("nothing to sync"));
        }

        let (stat, diff) = preview(&plan.writes);
        let mut patterns: Vec<String> = plan.writes.iter().map(|w| w.rel.clone()).collect();
        patterns.dedup();
        ctx.ask(PermissionRequest {
            permission: "sync_to_main".into(),
            patterns,
            always: vec!["*".into()],
            // The prompt shows `description` (what and where, then the diffstat) before `diff`.
            metadata: json!({
                "description": format!("{}\ninto {}:\n{stat}", args.message.as_deref().unwrap_or("sync the worktree's changes"), main_root.display()),
                "stat": stat,
                "diff": diff,
                "mainCwd": main_root,
            }),
        })
        .await?;

        apply(&ctx, &plan.writes)?;
        let message = args
            .message
            .clone()
            .unwrap_or_else(|| "podcode: sync to main".into());
        let synced = {
            let git = git.clone();
            let row = row.clone();
            tokio::task::spawn_blocking(move || {
                move_base(&git, &row.session_id, &row.sync_base, &changes, &message)
            })
        };
        match synced.await {
            Ok(Ok(commit)) => {
                if let Err(e) = worktrees.move_sync_base(&row.session_id, &commit) {
                    ctx.warn(format!("the sync is done, but its point could not be recorded ({e}); the next sync may offer the same changes again"));
                }
            }
            Ok(Err(e)) => ctx.warn(format!("the sync is done, but its point could not be recorded ({e}); the next sync may offer the same changes again")),
            Err(e) => ctx.warn(format!("the sync is done, but recording it stopped: {e}")),
        }
        let output = format!(
            "Synced {} into the main workspace ({}):\n{stat}\n{}",
            plural(plan.writes.len(), "file"),
            main_root.display(),
            clip_diff(&diff, 80)
        );
        Ok(ToolResult::text(output.trim_end())
            .with_title(format!("synced {}", plural(plan.writes.len(), "file")))
            .with_metadata(json!({ "diff": diff, "files": plan.writes.iter().map(|w| &w.rel).collect::<Vec<_>>() })))
    }
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn text_of(bytes: &Option<Vec<u8>>) -> Option<Option<String>> {
    match bytes {
        None => Some(None),
        Some(b) if !b.contains(&0) => String::from_utf8(b.clone()).ok().map(Some),
        Some(_) => None,
    }
}

/// The diffstat (one line per file) and the unified diff the user approves.
fn preview(writes: &[Planned]) -> (String, String) {
    let mut stat = String::new();
    let mut diff = String::new();
    for w in writes {
        let kind = match (&w.old, &w.new) {
            (None, _) => "new",
            (Some(_), None) => "deleted",
            _ if w.merged => "merged",
            _ => "changed",
        };
        match (text_of(&w.old), text_of(&w.new)) {
            (Some(old), Some(new)) => {
                let (old, new) = (old.unwrap_or_default(), new.unwrap_or_default());
                let (a, d) = diff_stats(&old, &new);
                stat.push_str(&format!(" {} ({kind}, +{a} -{d})", w.rel));
                diff.push_str(&unified_diff(&w.rel, &old, &new));
            }
            _ => {
                let size = |b: &Option<Vec<u8>>| b.as_ref().map_or(0, Vec::len);
                stat.push_str(&format!(
                    " {} ({kind}, binary, {} → {} bytes)",
                    w.rel,
                    size(&w.old),
                    size(&w.new)
                ));
                diff.push_str(&format!(
                    "Binary file {}: {} → {} bytes\n",
                    w.rel,
                    size(&w.old),
                    size(&w.new)
                ));
            }
        }
        if w.new.is_some() && w.old.is_some() && exec_of(&w.abs) != Some(w.executable) {
            stat.push_str(if w.executable {
                " [now executable]"
            } else {
                " [no longer executable]"
            });
        } else if w.new.is_some() && w.old.is_none() && w.executable {
            stat.push_str(" [executable]");
        }
        stat.push('\n');
    }
    (stat, diff)
}

fn exec_of(path: &Path) -> Option<bool> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o111 != 0)
}

/// Writes the plan through the journal, all or nothing: text as text; binary files and
/// permission bits in the journal's `FileContent` envelope, so `podcode revert` restores
/// bytes and modes exactly.
fn apply(ctx: &ToolContext, writes: &[Planned]) -> Result<(), ToolError> {
    let journaled: Vec<FileWrite> = writes.iter().filter_map(journal_write).collect();
    if journaled.is_empty() {
        return Ok(());
    }
    ctx.apply_changes(&journaled).map_err(|e| {
        ToolError::failed(format!("sync_to_main could not write the main workspace: {e}. Nothing was changed; call sync_to_main again."))
    })?;
    Ok(())
}

/// One planned file as a journaled write (`None` when nothing would change). Permission
/// bits are recorded when the file is binary, deleted, or its executable bit changes; a
/// text edit that keeps the mode stays plain text in the journal.
fn journal_write(w: &Planned) -> Option<FileWrite> {
    let old_mode = mode_of(&w.abs);
    let new_mode = w.new.as_ref().map(|_| {
        let base = old_mode.unwrap_or(0o644);
        if w.executable {
            base | ((base & 0o444) >> 2) | 0o100
        } else {
            base & !0o111
        }
    });
    let binary = |b: &Option<Vec<u8>>| {
        b.as_deref()
            .is_some_and(|b| b.contains(&0) || std::str::from_utf8(b).is_err())
    };
    let exec_changes = match old_mode {
        Some(m) => w.new.is_some() && (m & 0o111 != 0) != w.executable,
        None => w.executable,
    };
    let record_mode = binary(&w.old) || binary(&w.new) || w.new.is_none() || exec_changes;
    let old = w
        .old
        .as_ref()
        .map(|b| FileContent::encode(b, if record_mode { old_mode } else { None }));
    let new = w
        .new
        .as_ref()
        .map(|b| FileContent::encode(b, if record_mode { new_mode } else { None }));
    (old != new).then(|| FileWrite {
        file: w.abs.clone(),
        old,
        new,
        reverts: None,
    })
}

fn mode_of(path: &Path) -> Option<u32> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777)
}

/// A commit of the sync base with the synced paths set to the worktree's versions.
fn move_base(
    git: &Git,
    session_id: &str,
    base: &str,
    changes: &[git::TreeChange],
    message: &str,
) -> Result<String, GitError> {
    let mut entries = Vec::new();
    for c in changes {
        if c.old_path != c.new_path || !c.has_new() {
            entries.push((0, None, c.old_path.clone()));
        }
        if c.has_new() {
            entries.push((c.new_mode, Some(c.new_blob.clone()), c.new_path.clone()));
        }
    }
    let tree = git.edit_tree(base, &entries, &scratch_index())?;
    let commit = git.commit_tree(&tree, base, message)?;
    git.run(&["update-ref", &git::sync_ref(session_id), &commit])?;
    Ok(commit)
}

/// The model-facing refusal: every conflicting file with its reason and hunks.
pub(crate) fn conflicts_text(main_root: &Path, conflicts: &[FileConflict]) -> String {
    let mut out = format!(
        "sync_to_main changed nothing: {} {} with the user's main workspace ({}).\n",
        plural(conflicts.len(), "file"),
        if conflicts.len() == 1 {
            "conflicts"
        } else {
            "conflict"
        },
        main_root.display()
    );
    for c in conflicts {
        out.push_str(&format!("\n{}: {}.\n", c.rel, c.reason));
        out.push_str(&c.hunks);
    }
    out.push_str(
        "\nIn each hunk, the lines between <<<<<<< and ||||||| are the user's current version, \
between ||||||| and ======= the version you started from, and between ======= and >>>>>>> \
yours. Tell the user which files conflict and why; to sync everything else now, call \
sync_to_main again with `paths` listing only the files that do not conflict.",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_conflict_text_names_files_reasons_and_hunks() {
        let text = conflicts_text(
            Path::new("/home/u/repo"),
            &[FileConflict {
                rel: "src/a.rs".into(),
                reason: "the worktree and the user's main workspace changed the same lines".into(),
                hunks: "@@ main workspace line 3 @@\n<<<<<<< main workspace\nx\n||||||| fork point\ny\n=======\nz\n>>>>>>> worktree\n".into(),
            }],
        );
        assert_eq!(
            text,
            "sync_to_main changed nothing: 1 file conflicts with the user's main workspace (/home/u/repo).\n\
\n\
src/a.rs: the worktree and the user's main workspace changed the same lines.\n\
@@ main workspace line 3 @@\n<<<<<<< main workspace\nx\n||||||| fork point\ny\n=======\nz\n>>>>>>> worktree\n\
\n\
In each hunk, the lines between <<<<<<< and ||||||| are the user's current version, between ||||||| and ======= the version you started from, and between ======= and >>>>>>> yours. Tell the user which files conflict and why; to sync everything else now, call sync_to_main again with `paths` listing only the files that do not conflict."
        );
    }

    #[test]
    fn the_description_and_refusal_are_pinned() {
        assert!(SYNC_DESCRIPTION.starts_with(
            "Copies your changes from this session's worktree into the user's main workspace"
        ));
        assert!(SYNC_DESCRIPTION.ends_with("`message` says in one line what the change does."));
        assert_eq!(
            NOT_WORKTREE_TEXT,
            "sync_to_main only works in a worktree session (started with `podcode run --worktree` or `podcode tui --worktree`). This session works directly in the user's workspace, so your edits are already in their files and there is nothing to sync."
        );
    }
}
