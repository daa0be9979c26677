//! The `events` table: the event log of the sessions `podcode serve` drives. The engine
//! appends events in batches (one transaction each); `seq`, assigned here, is the event id
//! a reconnecting client sends back to replay what it missed. Also what a server does to a
//! session's row: naming an untitled one from its first prompt, and deleting it with every
//! row stored under it (`delete_session`), the log included.

use podcode_protocol::now_millis;
use rusqlite::{Row, params};

use crate::{Store, StoreError};

/// One logged event: `data` is the event's JSON as the engine serialised it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    /// Position in the event log, increasing in the order events were appended.
    pub seq: i64,
    /// The session the event belongs to.
    pub session_id: String,
    /// The event's type name (`text_delta`, `tool_started`, …).
    pub kind: String,
    /// The event's JSON.
    pub data: String,
    /// When it was logged, in milliseconds since the Unix epoch.
    pub time: i64,
}

/// An event to append: session, type name and JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEvent {
    /// The session the event belongs to.
    pub session_id: String,
    /// The event's type name (`text_delta`, `tool_started`, …).
    pub kind: String,
    /// The event's JSON.
    pub data: String,
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<EventRow> {
    Ok(EventRow {
        seq: row.get(0)?,
        session_id: row.get(1)?,
        kind: row.get(2)?,
        data: row.get(3)?,
        time: row.get(4)?,
    })
}

impl Store {
    /// Appends events in one transaction and returns their `seq`s, in order.
    pub fn append_events(&self, events: &[NewEvent]) -> Result<Vec<i64>, StoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        let time = now_millis();
        let mut seqs = Vec::with_capacity(events.len());
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO events (session_id, type, data, time) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for e in events {
                stmt.execute(params![e.session_id, e.kind, e.data, time])?;
                seqs.push(tx.last_insert_rowid());
            }
        }
        tx.commit()?;
        Ok(seqs)
    }

    /// Up to `limit` logged events after `after`, oldest first; of one session or of all.
    pub fn events_after(
        &self,
        after: i64,
        session_id: Option<&str>,
        limit: usize,
    ) -> Result<Vec<EventRow>, StoreError> {
        let conn = self.conn()?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = match session_id {
            Some(id) => conn
                .prepare_cached(
                    "SELECT seq, session_id, type, data, time FROM events
                     WHERE session_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
                )?
                .query_map(params![id, after, limit], from_row)?
                .collect::<Result<Vec<_>, _>>()?,
            None => conn
                .prepare_cached(
                    "SELECT seq, session_id, type, data, time FROM events
                     WHERE seq > ?1 ORDER BY seq LIMIT ?2",
                )?
                .query_map(params![after, limit], from_row)?
                .collect::<Result<Vec<_>, _>>()?,
        };
        Ok(rows)
    }

    /// The newest event's `seq` (0 when the log is empty).
    pub fn last_event_seq(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn()?
            .prepare_cached("SELECT COALESCE(MAX(seq), 0) FROM events")?
            .query_row([], |r| r.get(0))?)
    }

    /// Names an untitled session (a session with a title keeps it). Returns whether it did.
    pub fn name_session(&self, id: &str, title: &str) -> Result<bool, StoreError> {
        let n = self.conn()?.execute(
            "UPDATE sessions SET title = ?2 WHERE id = ?1 AND title = ''",
            params![id, title],
        )?;
        Ok(n > 0)
    }

    /// Sets a session's title, replacing any (a plugin's `client.session.update`). Returns
    /// whether the session exists.
    pub fn retitle_session(&self, id: &str, title: &str) -> Result<bool, StoreError> {
        let n = self.conn()?.execute(
            "UPDATE sessions SET title = ?2 WHERE id = ?1",
            params![id, title],
        )?;
        Ok(n > 0)
    }

    /// Deletes a session and everything stored under it: its sub-agent sessions (recursively),
    /// messages and parts, tool calls, change journal, worktree record and event log. Files
    /// on disk are not touched. Returns whether the session existed.
    pub fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        // The session and every descendant (sub-agent sessions name their root or parent).
        let ids: Vec<String> = tx
            .prepare(
                "WITH RECURSIVE tree(id) AS (
                     SELECT id FROM sessions WHERE id = ?1
                     UNION SELECT s.id FROM sessions s JOIN tree t ON s.parent_id = t.id
                 ) SELECT id FROM tree",
            )?
            .query_map([id], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        if ids.is_empty() {
            return Ok(false);
        }
        for sid in &ids {
            tx.execute("DELETE FROM parts WHERE session_id = ?1", [sid])?;
            tx.execute("DELETE FROM messages WHERE session_id = ?1", [sid])?;
            tx.execute("DELETE FROM tool_calls WHERE session_id = ?1", [sid])?;
            tx.execute("DELETE FROM changes WHERE session_id = ?1", [sid])?;
            tx.execute("DELETE FROM session_worktrees WHERE session_id = ?1", [sid])?;
            tx.execute("DELETE FROM events WHERE session_id = ?1", [sid])?;
            tx.execute("DELETE FROM sessions WHERE id = ?1", [sid])?;
        }
        tx.commit()?;
        Ok(true)
    }
}
