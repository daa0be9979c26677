//! The `messages` and `parts` tables: a session's conversation (free-form JSON content per
//! message) and the typed pieces of each message (text, reasoning, tool, step) the agent loop
//! streams.

use podcode_protocol::{StepUsage, new_id, now_millis};
use podcode_records::MessageRow;
use rusqlite::{Connection, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::db::{json_col, to_json};
use crate::{Store, StoreError};

/// The roles a message may have.
const ROLES: &[&str] = &["user", "assistant", "system", "tool"];

/// One part of a message (text, reasoning, a tool call, a step, an attached file), in the order the
/// parts were added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartRow {
    /// The part's id.
    pub id: String,
    /// The message it belongs to.
    pub message_id: String,
    /// The session of that message.
    pub session_id: String,
    /// The part's type (`text`, `reasoning`, `tool`, `step`, `file`).
    pub kind: String,
    /// The part's content as JSON, shaped by its kind.
    pub data: Value,
    /// When it was stored, in milliseconds since the Unix epoch.
    pub created_at: i64,
}

fn message_from_row(row: &Row<'_>) -> rusqlite::Result<MessageRow> {
    Ok(MessageRow {
        id: row.get(0)?,
        session_id: row.get(1)?,
        role: row.get(2)?,
        content: json_col(row, 3)?,
        created_at: row.get(4)?,
    })
}

fn part_from_row(row: &Row<'_>) -> rusqlite::Result<PartRow> {
    Ok(PartRow {
        id: row.get(0)?,
        message_id: row.get(1)?,
        session_id: row.get(2)?,
        kind: row.get(3)?,
        data: json_col(row, 4)?,
        created_at: row.get(5)?,
    })
}

impl Store {
    /// Appends a message (role `user`, `assistant`, `system` or `tool`) and bumps the
    /// session's `updated_at`. Returns the new `msg_…` id.
    pub fn add_message(
        &self,
        session_id: &str,
        role: &str,
        content: &Value,
    ) -> Result<String, StoreError> {
        if !ROLES.contains(&role) {
            return Err(StoreError::Invalid {
                what: "message role (want user, assistant, system or tool)",
                value: role.to_string(),
            });
        }
        let id = new_id("msg");
        let now = now_millis();
        let content = to_json(content)?;
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        let touched = tx
            .prepare_cached("UPDATE sessions SET updated_at = ?2 WHERE id = ?1")?
            .execute(params![session_id, now])?;
        if touched == 0 {
            return Err(StoreError::NotFound {
                kind: "session",
                id: session_id.to_string(),
            });
        }
        tx.prepare_cached(
            "INSERT INTO messages (id, session_id, role, content, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![id, session_id, role, content, now])?;
        tx.commit()?;
        Ok(id)
    }

    /// A session's messages, oldest first. Each call increments `message_reads()`.
    pub fn messages(&self, session_id: &str) -> Result<Vec<MessageRow>, StoreError> {
        self.count_message_read();
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(
            "SELECT id, session_id, role, content, created_at FROM messages \
             WHERE session_id = ?1 ORDER BY rowid",
        )?;
        let rows = stmt
            .query_map([session_id], message_from_row)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// One message by id.
    pub fn message(&self, id: &str) -> Result<Option<MessageRow>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(
            "SELECT id, session_id, role, content, created_at FROM messages WHERE id = ?1",
        )?;
        let mut rows = stmt.query_map([id], message_from_row)?;
        Ok(rows.next().transpose()?)
    }

    /// Appends a part (`text`, `reasoning`, `tool`, `step`, …) to a message. Returns the new
    /// `prt_…` id.
    pub fn add_part(
        &self,
        message_id: &str,
        session_id: &str,
        kind: &str,
        data: &Value,
    ) -> Result<String, StoreError> {
        let conn = self.conn()?;
        insert_part(&conn, message_id, session_id, kind, data)
    }

    /// What a model request writes as it ends, in one transaction: `parts` of its message in
    /// order (its tool calls, then its `step` part) and, when it reported any, its `usage`
    /// added to the session's totals. One commit instead of one per row: they are complete
    /// at the same moment, so a crash keeps all or none of them.
    pub fn end_step(
        &self,
        message_id: &str,
        session_id: &str,
        parts: &[(&str, Value)],
        usage: Option<&StepUsage>,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        if let Some(u) = usage {
            crate::usage::add_usage(&tx, session_id, u)?;
        }
        for (kind, data) in parts {
            insert_part(&tx, message_id, session_id, kind, data)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// A message's parts, oldest first.
    pub fn parts(&self, message_id: &str) -> Result<Vec<PartRow>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(
            "SELECT id, message_id, session_id, kind, data, created_at FROM parts \
             WHERE message_id = ?1 ORDER BY rowid",
        )?;
        let rows = stmt
            .query_map([message_id], part_from_row)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

fn insert_part(
    conn: &Connection,
    message_id: &str,
    session_id: &str,
    kind: &str,
    data: &Value,
) -> Result<String, StoreError> {
    let id = new_id("prt");
    let data = to_json(data)?;
    conn.prepare_cached(
        "INSERT INTO parts (id, message_id, session_id, kind, data, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        id,
        message_id,
        session_id,
        kind,
        data,
        now_millis()
    ])
    .map_err(|e| StoreError::missing_parent(e, "message", message_id))?;
    Ok(id)
}
