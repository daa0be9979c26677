//! The `approvals` table: permission patterns the user answered "always" to, remembered per
//! project (the project root's absolute path), listable and removable.

use podcode_protocol::{new_id, now_millis};
use podcode_records::ApprovalRow;
use rusqlite::{Row, params};

use crate::{Store, StoreError};

const COLUMNS: &str = "id, project, permission, pattern, created_at";

fn from_row(row: &Row<'_>) -> rusqlite::Result<ApprovalRow> {
    Ok(ApprovalRow {
        id: row.get(0)?,
        project: row.get(1)?,
        permission: row.get(2)?,
        pattern: row.get(3)?,
        created_at: row.get(4)?,
    })
}

impl Store {
    /// Remembers `(project, permission, pattern)`; adding it again returns the existing row.
    pub fn add_approval(
        &self,
        project: &str,
        permission: &str,
        pattern: &str,
    ) -> Result<ApprovalRow, StoreError> {
        let conn = self.conn()?;
        conn.prepare_cached(&format!(
            "INSERT INTO approvals ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT (project, permission, pattern) DO NOTHING"
        ))?
        .execute(params![
            new_id("apr"),
            project,
            permission,
            pattern,
            now_millis()
        ])?;
        let row = conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM approvals \
                 WHERE project = ?1 AND permission = ?2 AND pattern = ?3"
            ))?
            .query_row(params![project, permission, pattern], from_row)?;
        Ok(row)
    }

    /// One project's approvals, or every project's when `project` is `None`; oldest first.
    pub fn approvals(&self, project: Option<&str>) -> Result<Vec<ApprovalRow>, StoreError> {
        let conn = self.conn()?;
        let rows = match project {
            // `+project`: read in rowid order rather than through the (project, ...) index
            // and sorted. With the index, SQLite re-compiled the statement at every run
            // (this runs before every call that asks), ~100,000 instructions each time.
            Some(p) => conn
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM approvals WHERE +project = ?1 ORDER BY rowid"
                ))?
                .query_map([p], from_row)?
                .collect::<Result<_, _>>()?,
            None => conn
                .prepare_cached(&format!("SELECT {COLUMNS} FROM approvals ORDER BY rowid"))?
                .query_map([], from_row)?
                .collect::<Result<_, _>>()?,
        };
        Ok(rows)
    }

    /// Deletes one approval by id (within `project` when given), or all of a project
    /// (`project` Some, `id` None), or everything (both None). Returns how many went.
    pub fn remove_approvals(
        &self,
        project: Option<&str>,
        id: Option<&str>,
    ) -> Result<usize, StoreError> {
        let conn = self.conn()?;
        let removed = match (project, id) {
            (Some(p), Some(i)) => conn
                .prepare_cached("DELETE FROM approvals WHERE project = ?1 AND id = ?2")?
                .execute([p, i])?,
            (None, Some(i)) => conn
                .prepare_cached("DELETE FROM approvals WHERE id = ?1")?
                .execute([i])?,
            (Some(p), None) => conn
                .prepare_cached("DELETE FROM approvals WHERE project = ?1")?
                .execute([p])?,
            (None, None) => conn.prepare_cached("DELETE FROM approvals")?.execute([])?,
        };
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_s_approvals_are_read_in_order_by_a_statement_compiled_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("p.db")).unwrap();
        store.add_approval("/p", "bash", "git *").unwrap();
        store.add_approval("/q", "bash", "*").unwrap();
        store.add_approval("/p", "edit", "*").unwrap();
        for _ in 0..3 {
            let rows = store.approvals(Some("/p")).unwrap();
            let got: Vec<_> = rows.iter().map(|r| r.permission.as_str()).collect();
            assert_eq!(got, ["bash", "edit"]);
        }
        let conn = store.conn().unwrap();
        let stmt = conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM approvals WHERE +project = ?1 ORDER BY rowid"
            ))
            .unwrap();
        assert_eq!(stmt.get_status(rusqlite::StatementStatus::Run), 3);
        assert_eq!(stmt.get_status(rusqlite::StatementStatus::RePrepare), 0);
    }
}
