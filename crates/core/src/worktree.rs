//! Worktree sessions: a session that works in its own git worktree instead of the user's
//! checkout. `fork` makes the worktree under `<data>/worktrees/<session-id>` on branch
//! `podcode/<session-id>`, from a commit of HEAD *plus* the user's uncommitted and untracked
//! (not ignored) changes, built through a temporary index — the user's index, stash and files
//! are not touched. The store records it (`session_worktrees`); a session opened on such a
//! row works in the worktree, with `main_cwd` the user's checkout, and `sync_to_main` (in
//! podcode-builtins) carries its changes back. `status` tells how many paths are unsynced
//! (syncs reverted since included: `worktree_state`) or that the directory vanished;
//! `remove` deletes the worktree, its branch and its row.

use std::path::{Path, PathBuf};

use podcode_builtins::sync_to_main::git::{Git, GitError, sync_ref};
use podcode_builtins::sync_to_main::scratch_index;
use podcode_store::{Store, WorktreeRow};
use serde::Serialize;

use crate::engine::Engine;
use crate::error::EngineError;

/// Where a session works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    /// The session's working directory (`ctx.directory`).
    pub directory: PathBuf,
    /// The user's checkout (`ctx.mainCwd`).
    pub main_cwd: PathBuf,
    /// The git root the session sees (`ctx.worktree`).
    pub root: PathBuf,
    /// The session has its own worktree (and so `sync_to_main`).
    pub in_worktree: bool,
}

/// A worktree session as `podcode sessions` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorktreeInfo {
    /// The session working in it.
    pub session_id: String,
    /// The worktree directory.
    pub path: String,
    /// Its branch (`podcode/<session-id>`).
    pub branch: String,
    /// The user's checkout it was made from.
    pub main_root: String,
    /// `None` when the directory is gone.
    pub unsynced: Option<usize>,
    /// Files among the unsynced that a sync carried to the checkout and a revert took back.
    pub reverted: Vec<String>,
    /// Why `unsynced` could not be counted (the directory vanished, git failed).
    pub problem: Option<String>,
}

fn git_error(e: GitError) -> EngineError {
    EngineError::Worktree(e.to_string())
}

/// The checkout root and HEAD commit a worktree can fork from, or why not.
pub(crate) fn check(cwd: &Path) -> Result<(PathBuf, String), EngineError> {
    let git = Git::new(cwd);
    let Some(root) = git.toplevel() else {
        return Err(EngineError::Worktree(format!(
            "--worktree needs a git repository, and {} is not inside one (run `git init` and commit first, or leave out --worktree)",
            cwd.display()
        )));
    };
    let Some(head) = git.head() else {
        return Err(EngineError::Worktree(format!(
            "--worktree needs a commit to start from, and the repository at {} has none yet (make a first commit, or leave out --worktree)",
            root.display()
        )));
    };
    Ok((root, head))
}

/// Creates the worktree for `session_id` under `data_dir/worktrees/` (see the module doc).
pub fn fork(cwd: &Path, data_dir: &Path, session_id: &str) -> Result<WorktreeRow, EngineError> {
    let (root, head) = check(cwd)?;
    let git = Git::new(&root);
    let tree = git.snapshot(&scratch_index()).map_err(git_error)?;
    let head_tree = git.run(&["rev-parse", "HEAD^{tree}"]).map_err(git_error)?;
    let fork = if tree == head_tree {
        head
    } else {
        let message = format!(
            "podcode: your uncommitted and untracked changes, forked for session {session_id}"
        );
        git.commit_tree(&tree, &head, &message).map_err(git_error)?
    };
    let dir = data_dir.join("worktrees");
    std::fs::create_dir_all(&dir)
        .map_err(|e| EngineError::Worktree(format!("cannot create {}: {e}", dir.display())))?;
    let path = dir.join(session_id);
    let branch = format!("podcode/{session_id}");
    let shown = path.to_string_lossy().into_owned();
    git.run(&["worktree", "add", "--quiet", "-b", &branch, &shown, &fork])
        .map_err(git_error)?;
    // Keeps the sync base reachable (git gc) even if the agent rewrites its branch.
    git.run(&["update-ref", &sync_ref(session_id), &fork])
        .map_err(git_error)?;
    let path = path.canonicalize().unwrap_or(path);
    Ok(WorktreeRow {
        session_id: session_id.into(),
        path: path.to_string_lossy().into_owned(),
        branch,
        fork_commit: fork.clone(),
        sync_base: fork,
        main_root: root.to_string_lossy().into_owned(),
        created_at: 0,
    })
}

/// Where a session with this worktree row works: the same subfolder of the worktree the
/// user started in (when it exists there), the checkout as `main_cwd`.
pub(crate) fn place_in(row: &WorktreeRow, cwd: &Path) -> Place {
    let path = PathBuf::from(&row.path);
    let main = PathBuf::from(&row.main_root);
    let directory = cwd
        .strip_prefix(&main)
        .ok()
        // `join("")` would add a trailing slash: the same directory, spelled differently.
        .filter(|rel| !rel.as_os_str().is_empty())
        .map(|rel| path.join(rel))
        .filter(|d| d.is_dir())
        .unwrap_or_else(|| path.clone());
    let main_cwd = if cwd.starts_with(&main) {
        cwd.to_path_buf()
    } else {
        main
    };
    Place {
        directory,
        main_cwd,
        root: path,
        in_worktree: true,
    }
}

/// How many paths the worktree changed since its sync base, and which synced ones were
/// reverted in the checkout since.
pub(crate) fn status(row: &WorktreeRow, store: &Store) -> WorktreeInfo {
    let mut info = WorktreeInfo {
        session_id: row.session_id.clone(),
        path: row.path.clone(),
        branch: row.branch.clone(),
        main_root: row.main_root.clone(),
        unsynced: None,
        reverted: Vec::new(),
        problem: None,
    };
    if !Path::new(&row.path).is_dir() {
        info.problem = Some("the worktree directory is gone".into());
        return info;
    }
    let git = Git::new(&row.path);
    match git
        .snapshot(&scratch_index())
        .and_then(|tree| git.changes(&row.sync_base, &tree, &[]))
    {
        Ok(changes) => {
            let mut paths: std::collections::BTreeSet<String> =
                changes.into_iter().map(|c| c.new_path).collect();
            match crate::worktree_state::reverted_syncs(store, row) {
                Ok(reverted) => {
                    paths.extend(reverted.iter().cloned());
                    info.reverted = reverted.into_iter().collect();
                }
                Err(e) => info.problem = Some(e.to_string()),
            }
            info.unsynced = Some(paths.len());
        }
        Err(e) => info.problem = Some(e.to_string()),
    }
    info
}

/// Removes the worktree directory, its branch and sync ref. A directory that vanished is
/// only unregistered. Returns what was done, for the user.
pub(crate) fn remove(row: &WorktreeRow) -> Result<String, EngineError> {
    let main = Git::new(&row.main_root);
    let path = Path::new(&row.path);
    if !Path::new(&row.main_root).is_dir() {
        if path.is_dir() {
            std::fs::remove_dir_all(path).map_err(|e| {
                EngineError::Worktree(format!("cannot remove {}: {e}", path.display()))
            })?;
        }
        return Ok(format!(
            "removed {} (its repository {} is gone)",
            row.path, row.main_root
        ));
    }
    let note = if path.is_dir() {
        main.run(&["worktree", "remove", "--force", &row.path])
            .map_err(git_error)?;
        format!("removed {} and branch {}", row.path, row.branch)
    } else {
        main.run(&["worktree", "prune"]).map_err(git_error)?;
        format!(
            "{} was already gone; removed branch {}",
            row.path, row.branch
        )
    };
    // Either may already be gone (removed by hand): that is the state we want.
    let _ = main.run(&["branch", "-D", &row.branch]);
    let _ = main.run(&["update-ref", "-d", &sync_ref(&row.session_id)]);
    Ok(note)
}

/// What `prune` did with one worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PruneNote {
    /// The session it belonged to.
    pub session_id: String,
    /// Whether the worktree was removed.
    pub removed: bool,
    /// What was done, or why not.
    pub note: String,
}

impl Engine {
    /// Where session `id` works: a new worktree when `create`, its recorded one, or this
    /// engine's directory. Also returns the worktree root for a worktree session.
    pub(crate) fn session_place(
        &self,
        id: &str,
        create: bool,
    ) -> Result<(Place, Option<PathBuf>), EngineError> {
        if !create {
            self.check_home(id)?;
        }
        let store = self.store()?;
        let row = if create {
            let row = store.record_worktree(&fork(self.cwd(), &self.dirs().data_dir, id)?)?;
            let place = place_in(&row, self.cwd());
            store.set_session_cwd(id, &place.directory.to_string_lossy())?;
            Some(row)
        } else {
            store.worktree(id)?
        };
        let Some(row) = row else {
            let place = Place {
                directory: self.cwd().to_path_buf(),
                main_cwd: self.cwd().to_path_buf(),
                root: self.project().to_path_buf(),
                in_worktree: false,
            };
            return Ok((place, None));
        };
        if !Path::new(&row.path).is_dir() {
            return Err(EngineError::Worktree(format!(
                "session {id} worked in the worktree {}, which is gone; `podcode sessions prune {id}` forgets it",
                row.path
            )));
        }
        let place = place_in(&row, self.cwd());
        let root = place.root.clone();
        Ok((place, Some(root)))
    }

    /// `/new` from session `like`: a new session, in a fresh worktree (forked from the
    /// user's checkout as it is now, like `--worktree`) when `like` works in one, so the new
    /// conversation works the way the one it replaces did. Returns the new id and, for a
    /// worktree, the directory it works in.
    pub fn create_session_like(
        &self,
        like: &str,
        spec: &crate::engine::NewSessionSpec<'_>,
    ) -> Result<(String, Option<PathBuf>), EngineError> {
        let in_worktree = self.store()?.worktree(like)?.is_some();
        if in_worktree {
            check(self.cwd())?;
        }
        let id = self.create_session(spec)?;
        if !in_worktree {
            return Ok((id, None));
        }
        let (place, _) = self.session_place(&id, true)?;
        Ok((id, Some(place.directory)))
    }

    /// The worktree of every session that has one (status counted now).
    pub fn worktrees(&self) -> Result<Vec<WorktreeInfo>, EngineError> {
        let store = self.store()?;
        Ok(store
            .worktrees()?
            .iter()
            .map(|r| status(r, &store))
            .collect())
    }

    /// Removes the worktrees of `ids` (every worktree of this repository when empty). One
    /// with unsynced changes is kept unless `force`; a vanished directory is only forgotten.
    pub fn prune_worktrees(
        &self,
        ids: &[String],
        force: bool,
    ) -> Result<Vec<PruneNote>, EngineError> {
        let store = self.store()?;
        let project = self.project().to_string_lossy().into_owned();
        let mut rows = Vec::new();
        if ids.is_empty() {
            rows = store
                .worktrees()?
                .into_iter()
                .filter(|r| r.main_root == project)
                .collect();
        } else {
            for id in ids {
                match store.worktree(id)? {
                    Some(r) => rows.push(r),
                    None => {
                        store
                            .session(id)?
                            .ok_or_else(|| EngineError::UnknownSession(id.clone()))?;
                        return Err(EngineError::Worktree(format!(
                            "session {id} has no worktree"
                        )));
                    }
                }
            }
        }
        let mut notes = Vec::new();
        for row in rows {
            let info = status(&row, &store);
            let present = Path::new(&row.path).is_dir();
            if let (Some(problem), true, false) = (&info.problem, present, force) {
                notes.push(PruneNote {
                    session_id: row.session_id.clone(),
                    removed: false,
                    note: format!(
                        "kept {}: could not tell whether it has unsynced changes ({problem}); pass --force to remove it anyway",
                        row.path
                    ),
                });
                continue;
            }
            if let Some(n) = info.unsynced.filter(|n| *n > 0 && !force) {
                let why = crate::worktree_state::reverted_text(&info.reverted)
                    .map(|t| format!("{t}; "))
                    .unwrap_or_default();
                notes.push(PruneNote {
                    session_id: row.session_id.clone(),
                    removed: false,
                    note: format!(
                        "kept {}: {n} unsynced change{} ({why}sync them with the session's sync_to_main, or pass --force to discard)",
                        row.path,
                        if n == 1 { "" } else { "s" }
                    ),
                });
                continue;
            }
            let note = remove(&row)?;
            store.forget_worktree(&row.session_id)?;
            notes.push(PruneNote {
                session_id: row.session_id,
                removed: true,
                note,
            });
        }
        Ok(notes)
    }
}
