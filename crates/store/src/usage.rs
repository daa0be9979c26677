//! Token and cost totals per session: the loop adds each model request's usage as it ends
//! (in the transaction that writes the request's last parts), and the front ends read the totals (`podcode sessions`, the
//! TUI status line), for one session or for a session with its sub-agents (`tree_usage`).
//! Per-message usage lives in each assistant message's `step` part.

use podcode_protocol::StepUsage;
use rusqlite::{Connection, OptionalExtension, params};

use crate::{Store, StoreError};

impl Store {
    /// Adds one request's usage to its session's totals.
    pub fn add_session_usage(&self, session_id: &str, u: &StepUsage) -> Result<(), StoreError> {
        let conn = self.conn()?;
        add_usage(&conn, session_id, u)
    }

    /// A session's totals (zero for a session that made no request); `None` when there is
    /// no such session.
    pub fn session_usage(&self, session_id: &str) -> Result<Option<StepUsage>, StoreError> {
        let conn = self.conn()?;
        let row = conn
            .prepare_cached(
                "SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, \
                 reasoning_tokens, cost FROM sessions WHERE id = ?1",
            )?
            .query_row([session_id], |r| {
                let n = |i: usize| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
                Ok(StepUsage {
                    input_tokens: n(0)?,
                    output_tokens: n(1)?,
                    cache_read_tokens: n(2)?,
                    cache_write_tokens: n(3)?,
                    reasoning_tokens: n(4)?,
                    cost: r.get(5)?,
                })
            })
            .optional()?;
        Ok(row)
    }
}

impl Store {
    /// The totals of a session and every sub-agent session under it (recursively): what
    /// the whole tree spent. `cost` is `None` only when no session of the tree has one;
    /// `None` when there is no such session.
    pub fn tree_usage(&self, session_id: &str) -> Result<Option<StepUsage>, StoreError> {
        let conn = self.conn()?;
        let row = conn
            .prepare_cached(
                "WITH RECURSIVE tree(id) AS (
                     SELECT id FROM sessions WHERE id = ?1
                     UNION SELECT s.id FROM sessions s JOIN tree t ON s.parent_id = t.id
                 )
                 SELECT count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0), \
                 coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0), \
                 coalesce(sum(reasoning_tokens), 0), sum(cost) \
                 FROM sessions WHERE id IN (SELECT id FROM tree)",
            )?
            .query_row([session_id], |r| {
                let n = |i: usize| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
                if n(0)? == 0 {
                    return Ok(None);
                }
                Ok(Some(StepUsage {
                    input_tokens: n(1)?,
                    output_tokens: n(2)?,
                    cache_read_tokens: n(3)?,
                    cache_write_tokens: n(4)?,
                    reasoning_tokens: n(5)?,
                    cost: r.get(6)?,
                }))
            })?;
        Ok(row)
    }
}

/// `add_session_usage` on `conn` (a transaction's, when the caller groups it with more).
pub(crate) fn add_usage(
    conn: &Connection,
    session_id: &str,
    u: &StepUsage,
) -> Result<(), StoreError> {
    let touched = conn
        .prepare_cached(
            "UPDATE sessions SET input_tokens = input_tokens + ?2, \
             output_tokens = output_tokens + ?3, \
             cache_read_tokens = cache_read_tokens + ?4, \
             cache_write_tokens = cache_write_tokens + ?5, \
             reasoning_tokens = reasoning_tokens + ?6, \
             cost = CASE WHEN ?7 IS NULL THEN cost ELSE coalesce(cost, 0) + ?7 END \
             WHERE id = ?1",
        )?
        .execute(params![
            session_id,
            u.input_tokens as i64,
            u.output_tokens as i64,
            u.cache_read_tokens as i64,
            u.cache_write_tokens as i64,
            u.reasoning_tokens as i64,
            u.cost,
        ])?;
    if touched == 0 {
        return Err(StoreError::NotFound {
            kind: "session",
            id: session_id.to_string(),
        });
    }
    Ok(())
}
