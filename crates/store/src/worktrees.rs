//! The `session_worktrees` table: for a session that works in its own git worktree, where
//! the worktree is, its branch, the user's checkout it was forked from, and the commit its
//! unsynced changes are measured from (`sync_base`: the fork commit, then each sync's).

use podcode_protocol::now_millis;
use podcode_records::WorktreeRow;
use rusqlite::{OptionalExtension, Row, params};

use crate::{Store, StoreError};

const COLUMNS: &str = "session_id, path, branch, fork_commit, sync_base, main_root, created_at";

fn from_row(row: &Row<'_>) -> rusqlite::Result<WorktreeRow> {
    Ok(WorktreeRow {
        session_id: row.get(0)?,
        path: row.get(1)?,
        branch: row.get(2)?,
        fork_commit: row.get(3)?,
        sync_base: row.get(4)?,
        main_root: row.get(5)?,
        created_at: row.get(6)?,
    })
}

impl Store {
    /// Records a session's worktree (`created_at` is set here).
    pub fn record_worktree(&self, row: &WorktreeRow) -> Result<WorktreeRow, StoreError> {
        let row = WorktreeRow {
            created_at: now_millis(),
            ..row.clone()
        };
        self.conn()?
            .prepare_cached(&format!(
                "INSERT INTO session_worktrees ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
            ))?
            .execute(params![
                row.session_id,
                row.path,
                row.branch,
                row.fork_commit,
                row.sync_base,
                row.main_root,
                row.created_at
            ])?;
        Ok(row)
    }

    /// The worktree of a session; `None` when the session has none.
    pub fn worktree(&self, session_id: &str) -> Result<Option<WorktreeRow>, StoreError> {
        let row = self
            .conn()?
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM session_worktrees WHERE session_id = ?1"
            ))?
            .query_row([session_id], from_row)
            .optional()?;
        Ok(row)
    }

    /// Every recorded worktree, newest first.
    pub fn worktrees(&self) -> Result<Vec<WorktreeRow>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM session_worktrees ORDER BY created_at DESC, rowid DESC"
        ))?;
        let rows = stmt.query_map([], from_row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Moves the sync base after a sync.
    pub fn set_sync_base(&self, session_id: &str, commit: &str) -> Result<(), StoreError> {
        self.conn()?
            .prepare_cached("UPDATE session_worktrees SET sync_base = ?2 WHERE session_id = ?1")?
            .execute(params![session_id, commit])?;
        Ok(())
    }

    /// Points a session at the directory it works in (its worktree, once created).
    pub fn set_session_cwd(&self, session_id: &str, cwd: &str) -> Result<(), StoreError> {
        self.conn()?
            .prepare_cached("UPDATE sessions SET cwd = ?2 WHERE id = ?1")?
            .execute(params![session_id, cwd])?;
        Ok(())
    }

    /// Forgets a session's worktree (after it was removed from disk).
    pub fn forget_worktree(&self, session_id: &str) -> Result<(), StoreError> {
        self.conn()?
            .prepare_cached("DELETE FROM session_worktrees WHERE session_id = ?1")?
            .execute([session_id])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktree_is_recorded_moved_and_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("p.db")).unwrap();
        let row = WorktreeRow {
            session_id: "ses_1".into(),
            path: "/data/worktrees/ses_1".into(),
            branch: "podcode/ses_1".into(),
            fork_commit: "abc".into(),
            sync_base: "abc".into(),
            main_root: "/repo".into(),
            created_at: 0,
        };
        store.record_worktree(&row).unwrap();
        assert_eq!(
            store.worktree("ses_1").unwrap().unwrap().branch,
            "podcode/ses_1"
        );
        store.set_sync_base("ses_1", "def").unwrap();
        assert_eq!(store.worktree("ses_1").unwrap().unwrap().sync_base, "def");
        assert_eq!(store.worktrees().unwrap().len(), 1);
        store.forget_worktree("ses_1").unwrap();
        assert!(store.worktree("ses_1").unwrap().is_none());
    }
}
