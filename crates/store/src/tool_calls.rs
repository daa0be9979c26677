//! The `tool_calls` table: one row per tool call, written when the call starts (`running`)
//! and completed when it ends, with its result, error and spill file.

use podcode_protocol::now_millis;
use podcode_records::{NewToolCall, ToolCallEnd, ToolCallState};
use rusqlite::types::Type;
use rusqlite::{OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::db::{json_col, to_json};
use crate::{Store, StoreError};

/// A stored tool call: what was asked and, once it ended, how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRow {
    /// The call's id, from the model/provider.
    pub id: String,
    /// The session it ran in.
    pub session_id: String,
    /// The assistant message that asked for it, when there is one.
    pub message_id: Option<String>,
    /// The tool's id.
    pub tool: String,
    /// The arguments as given.
    pub args: Value,
    /// Running, or how it ended.
    pub state: ToolCallState,
    /// The result's UI title (empty while running).
    pub title: String,
    /// The output the model received (empty while running).
    pub output: String,
    /// The result's front-end metadata.
    pub metadata: Value,
    /// The result's attachments as JSON (an array).
    pub attachments: Value,
    /// The model-facing error text, for a call that did not complete.
    pub error: Option<String>,
    /// The file holding the full output, when it was truncated.
    pub spill_path: Option<String>,
    /// When it started, in milliseconds since the Unix epoch.
    pub started_at: i64,
    /// When it ended; `None` while running.
    pub ended_at: Option<i64>,
}

const COLUMNS: &str = "id, session_id, message_id, tool, args, state, title, output, metadata, \
                       attachments, error, spill_path, started_at, ended_at";

/// The `state` column, refusing a value this version never writes.
fn state_col(row: &Row<'_>, i: usize) -> rusqlite::Result<ToolCallState> {
    let text: String = row.get(i)?;
    ToolCallState::parse(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            i,
            Type::Text,
            Box::new(StoreError::Corrupt {
                column: "tool_calls.state",
                value: text,
            }),
        )
    })
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<ToolCallRow> {
    Ok(ToolCallRow {
        id: row.get(0)?,
        session_id: row.get(1)?,
        message_id: row.get(2)?,
        tool: row.get(3)?,
        args: json_col(row, 4)?,
        state: state_col(row, 5)?,
        title: row.get(6)?,
        output: row.get(7)?,
        metadata: json_col(row, 8)?,
        attachments: json_col(row, 9)?,
        error: row.get(10)?,
        spill_path: row.get(11)?,
        started_at: row.get(12)?,
        ended_at: row.get(13)?,
    })
}

impl Store {
    /// Records a call as `running`. A second start with the same id is an error.
    pub fn start_tool_call(&self, call: &NewToolCall<'_>) -> Result<(), StoreError> {
        let args = to_json(call.args)?;
        let conn = self.conn()?;
        conn.prepare_cached(
            "INSERT INTO tool_calls (id, session_id, message_id, tool, args, state, started_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            call.id,
            call.session_id,
            call.message_id,
            call.tool,
            args,
            ToolCallState::Running.as_str(),
            now_millis()
        ])?;
        Ok(())
    }

    /// Stores how a started call ended; `NotFound` when it was never started.
    pub fn finish_tool_call(&self, id: &str, done: &ToolCallEnd<'_>) -> Result<(), StoreError> {
        let metadata = to_json(done.metadata)?;
        let attachments = to_json(done.attachments)?;
        let conn = self.conn()?;
        let updated = conn
            .prepare_cached(
                "UPDATE tool_calls SET state = ?2, title = ?3, output = ?4, metadata = ?5, \
                 attachments = ?6, error = ?7, spill_path = ?8, ended_at = ?9 WHERE id = ?1",
            )?
            .execute(params![
                id,
                done.state.as_str(),
                done.title,
                done.output,
                metadata,
                attachments,
                done.error,
                done.spill_path,
                now_millis()
            ])?;
        if updated == 0 {
            return Err(StoreError::NotFound {
                kind: "tool call",
                id: id.to_string(),
            });
        }
        Ok(())
    }

    /// One tool call by id; `None` when there is no such call.
    pub fn tool_call(&self, id: &str) -> Result<Option<ToolCallRow>, StoreError> {
        let conn = self.conn()?;
        let row = conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM tool_calls WHERE id = ?1"))?
            .query_row([id], from_row)
            .optional()?;
        Ok(row)
    }

    /// The arguments of `session_id`'s last completed call of `tool`, if any.
    pub fn last_completed_args(
        &self,
        session_id: &str,
        tool: &str,
    ) -> Result<Option<Value>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(
            "SELECT args FROM tool_calls WHERE session_id = ?1 AND tool = ?2 \
             AND state = 'completed' ORDER BY rowid DESC LIMIT 1",
        )?;
        let mut rows = stmt.query([session_id, tool])?;
        match rows.next()? {
            Some(row) => {
                let text: String = row.get(0)?;
                Ok(serde_json::from_str(&text).ok())
            }
            None => Ok(None),
        }
    }

    /// A session's calls, in the order they started.
    pub fn tool_calls(&self, session_id: &str) -> Result<Vec<ToolCallRow>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tool_calls WHERE session_id = ?1 ORDER BY rowid"
        ))?;
        let rows = stmt
            .query_map([session_id], from_row)?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }
}
