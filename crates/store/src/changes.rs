//! The change journal (`changes` table): every file edit a tool reports through
//! `recordChange`, and every revert of one (a row whose `reverts` names the undone change).
//! Each insert commits on its own so the journal survives a crash. Only `done` rows are
//! changes; `pending` rows are intents of writes still in flight (see `intents`).

use podcode_protocol::{ChangeOp, ChangeRecord, RecordedChange, new_id, now_millis};
use rusqlite::types::Type;
use rusqlite::{OptionalExtension, Row, params};

use crate::{Store, StoreError};

pub(crate) const COLUMNS: &str =
    "id, session_id, call_id, file, op, old_content, new_content, time, reverts";

pub(crate) fn from_row(row: &Row<'_>) -> rusqlite::Result<RecordedChange> {
    let op: String = row.get(4)?;
    let op = ChangeOp::parse(&op).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            4,
            Type::Text,
            Box::new(StoreError::Corrupt {
                column: "changes.op",
                value: op,
            }),
        )
    })?;
    Ok(RecordedChange {
        id: row.get(0)?,
        session_id: row.get(1)?,
        call_id: row.get(2)?,
        file: row.get(3)?,
        op,
        old_content: row.get(5)?,
        new_content: row.get(6)?,
        time: row.get(7)?,
        reverts: row.get(8)?,
    })
}

impl Store {
    /// Journals one change (committed before this returns). `reverts` is the id of the change
    /// this one undoes, if it is a revert.
    pub fn record_change(
        &self,
        session_id: &str,
        call_id: Option<&str>,
        change: &ChangeRecord,
        reverts: Option<&str>,
    ) -> Result<RecordedChange, StoreError> {
        let rec = RecordedChange {
            id: new_id("chg"),
            session_id: session_id.to_string(),
            call_id: call_id.map(str::to_string),
            file: change.file.clone(),
            op: change.op,
            old_content: change.old_content.clone(),
            new_content: change.new_content.clone(),
            time: now_millis(),
            reverts: reverts.map(str::to_string),
        };
        let conn = self.conn()?;
        conn.prepare_cached(&format!(
            "INSERT INTO changes ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
        ))?
        .execute(params![
            rec.id,
            rec.session_id,
            rec.call_id,
            rec.file,
            rec.op.as_str(),
            rec.old_content,
            rec.new_content,
            rec.time,
            rec.reverts
        ])?;
        Ok(rec)
    }

    /// One journaled change by id; `None` when there is no such change.
    pub fn change(&self, id: &str) -> Result<Option<RecordedChange>, StoreError> {
        let conn = self.conn()?;
        let row = conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM changes WHERE id = ?1 AND state = 'done'"
            ))?
            .query_row([id], from_row)
            .optional()?;
        Ok(row)
    }

    /// Oldest first. Filter by session and/or call; both `None` = all.
    pub fn changes(
        &self,
        session_id: Option<&str>,
        call_id: Option<&str>,
    ) -> Result<Vec<RecordedChange>, StoreError> {
        let conn = self.conn()?;
        let (filter, args): (&str, Vec<&str>) = match (session_id, call_id) {
            (Some(s), Some(c)) => (
                "WHERE state = 'done' AND session_id = ?1 AND call_id = ?2",
                vec![s, c],
            ),
            (Some(s), None) => ("WHERE state = 'done' AND session_id = ?1", vec![s]),
            (None, Some(c)) => ("WHERE state = 'done' AND call_id = ?1", vec![c]),
            (None, None) => ("WHERE state = 'done'", vec![]),
        };
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM changes {filter} ORDER BY rowid"
        ))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args), from_row)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Oldest first: the changes of a session and of its sub-agent sessions (recursively),
    /// since a sub-agent edits on behalf of the prompt that started it.
    pub fn changes_in_tree(&self, session_id: &str) -> Result<Vec<RecordedChange>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "WITH RECURSIVE tree(id) AS (
                 SELECT ?1
                 UNION SELECT s.id FROM sessions s JOIN tree t ON s.parent_id = t.id
             )
             SELECT {COLUMNS} FROM changes
             WHERE state = 'done' AND session_id IN (SELECT id FROM tree) ORDER BY rowid"
        ))?;
        let rows = stmt
            .query_map([session_id], from_row)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// The id of the change that reverted `id`, if any (the newest one when it was reverted,
    /// redone and reverted again).
    pub fn reverted_by(&self, id: &str) -> Result<Option<String>, StoreError> {
        let conn = self.conn()?;
        let row = conn
            .prepare_cached(
                "SELECT id FROM changes WHERE reverts = ?1 AND state = 'done' ORDER BY rowid DESC LIMIT 1",
            )?
            .query_row([id], |row| row.get(0))
            .optional()?;
        Ok(row)
    }
}
