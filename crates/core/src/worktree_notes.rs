//! What the front ends tell the user about a worktree session: where it works (at start),
//! and when the user leaves it, how to get the work back or drop it — or, for a worktree
//! the session never changed, that it was removed (an unused worktree and branch would
//! otherwise pile up until `podcode sessions prune`).

use std::path::Path;

use podcode_builtins::sync_to_main::git::Git;
use podcode_builtins::sync_to_main::scratch_index;
use podcode_protocol::sanitize_for_terminal as clean;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::session::Session;
use crate::worktree::{WorktreeInfo, remove, status};

impl Session {
    /// `working in worktree <dir> (branch podcode/<id>)` for a worktree session.
    pub fn worktree_notice(&self) -> Option<String> {
        let dir = self.worktree()?;
        Some(format!(
            "working in worktree {} (branch podcode/{})",
            clean(&dir.to_string_lossy()),
            self.id()
        ))
    }
}

impl Engine {
    /// The lines for the user leaving session `id` (the TUI closed): how to resume it and,
    /// for a worktree session, how to sync or remove its worktree. A worktree the session
    /// changed nothing in (no journaled change, its files as they were forked) is removed
    /// with its branch; the session then goes on in the user's checkout, and one without a
    /// message is deleted.
    pub fn exit_lines(&self, id: Option<&str>) -> Result<Vec<String>, EngineError> {
        let Some(id) = id else {
            return Ok(Vec::new());
        };
        let resume = format!("Resume this session with: podcode --session {id}");
        let store = self.store()?;
        let Some(row) = store.worktree(id)? else {
            return Ok(vec![resume]);
        };
        let unused = store.changes(Some(id), None)?.is_empty() && {
            let git = Git::new(&row.path);
            Path::new(&row.path).is_dir()
                && git
                    .snapshot(&scratch_index())
                    .and_then(|tree| git.changes(&row.fork_commit, &tree, &[]))
                    .is_ok_and(|c| c.is_empty())
        };
        if !unused {
            return Ok(vec![resume, left_text(&status(&row, &store))]);
        }
        remove(&row)?;
        store.forget_worktree(id)?;
        let mut out = vec![
            clean(&format!(
                "removed the worktree {} and branch {}: the session changed nothing in it",
                row.path, row.branch
            ))
            .into_owned(),
        ];
        if store.messages(id)?.is_empty() {
            store.delete_session(id)?;
        } else {
            store.set_session_cwd(id, &self.cwd().to_string_lossy())?;
            out.push(format!("{resume} (it goes on in your checkout)"));
        }
        Ok(out)
    }
}

/// What is left in a worktree the user leaves, and how to bring it back or drop it.
fn left_text(w: &WorktreeInfo) -> String {
    let place = format!("the session's worktree {} (branch {})", w.path, w.branch);
    let text = match w.unsynced {
        Some(0) => format!(
            "{place} has nothing unsynced: `podcode sessions prune {}` removes it",
            w.session_id
        ),
        Some(n) => format!(
            "{place} has {n} unsynced change{}: resume the session and ask for sync_to_main to copy them into your checkout, or discard them with `podcode sessions prune --force {}`",
            if n == 1 { "" } else { "s" },
            w.session_id
        ),
        None => format!(
            "{place}: {} (`podcode sessions prune {}` forgets it)",
            w.problem.as_deref().unwrap_or("state unknown"),
            w.session_id
        ),
    };
    clean(&text).into_owned()
}
