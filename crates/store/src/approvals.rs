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
            Some(p) => conn
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM approvals WHERE project = ?1 ORDER BY rowid"
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
