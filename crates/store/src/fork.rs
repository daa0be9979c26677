//! Copying a conversation into another session (a fork): the messages up to and including
//! one of them, their parts and the tool calls they made, every row under a new id. The
//! change journal is not copied: a fork works on the files as they are.

use std::collections::HashMap;

use podcode_protocol::new_id;
use rusqlite::{Transaction, params};
use serde_json::Value;

use crate::db::to_json;
use crate::{Store, StoreError};

/// The message and tool-call ids of a copy, old → new.
type IdMap = HashMap<String, String>;

impl Store {
    /// Copies `from`'s messages up to and including `until` into `to` (which must exist and
    /// be empty of messages for the copy to read as a conversation), with their parts and
    /// tool calls, each under a new id; a part's `call_id` names the copied call. Returns
    /// how many messages were copied. `NotFound` when `until` is not a message of `from`.
    pub fn copy_messages_until(
        &self,
        from: &str,
        to: &str,
        until: &str,
    ) -> Result<usize, StoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        let last: Option<i64> = tx
            .prepare_cached("SELECT rowid FROM messages WHERE id = ?1 AND session_id = ?2")?
            .query_map(params![until, from], |r| r.get(0))?
            .next()
            .transpose()?;
        let Some(last) = last else {
            return Err(StoreError::NotFound {
                kind: "message",
                id: until.to_string(),
            });
        };
        let messages = copy_messages(&tx, from, to, last)?;
        let ids: IdMap = messages.iter().cloned().collect();
        let calls = copy_calls(&tx, from, to, &ids)?;
        copy_parts(&tx, to, &messages, &calls)?;
        tx.commit()?;
        Ok(messages.len())
    }
}

/// The messages of `from` up to rowid `last`, copied into `to`: (old id, new id), in order.
fn copy_messages(
    tx: &Transaction<'_>,
    from: &str,
    to: &str,
    last: i64,
) -> Result<Vec<(String, String)>, StoreError> {
    let rows: Vec<(String, String, String, i64)> = tx
        .prepare_cached(
            "SELECT id, role, content, created_at FROM messages \
             WHERE session_id = ?1 AND rowid <= ?2 ORDER BY rowid",
        )?
        .query_map(params![from, last], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<Result<_, _>>()?;
    let mut ids = Vec::with_capacity(rows.len());
    let mut insert = tx.prepare_cached(
        "INSERT INTO messages (id, session_id, role, content, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (old, role, content, created_at) in rows {
        let new = new_id("msg");
        insert
            .execute(params![new, to, role, content, created_at])
            .map_err(|e| StoreError::missing_parent(e, "session", to))?;
        ids.push((old, new));
    }
    Ok(ids)
}

/// The tool calls the copied messages made, copied into `to`; old id → new id.
fn copy_calls(
    tx: &Transaction<'_>,
    from: &str,
    to: &str,
    messages: &IdMap,
) -> Result<IdMap, StoreError> {
    const COLS: &str = "tool, args, state, title, output, metadata, attachments, error, \
                        spill_path, started_at, ended_at";
    let mut select = tx.prepare_cached(
        "SELECT id, message_id FROM tool_calls WHERE session_id = ?1 ORDER BY rowid",
    )?;
    let calls: Vec<(String, Option<String>)> = select
        .query_map([from], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut insert = tx.prepare_cached(&format!(
        "INSERT INTO tool_calls (id, session_id, message_id, {COLS}) \
         SELECT ?1, ?2, ?3, {COLS} FROM tool_calls WHERE id = ?4"
    ))?;
    let mut ids = IdMap::new();
    for (old, message) in calls {
        let Some(new_message) = message.as_ref().and_then(|m| messages.get(m)) else {
            continue;
        };
        let new = new_id("call");
        insert.execute(params![new, to, new_message, old])?;
        ids.insert(old, new);
    }
    Ok(ids)
}

/// The parts of the copied messages, copied with their `call_id` pointing at the copied call.
fn copy_parts(
    tx: &Transaction<'_>,
    to: &str,
    messages: &[(String, String)],
    calls: &IdMap,
) -> Result<(), StoreError> {
    let mut select = tx.prepare_cached(
        "SELECT kind, data, created_at FROM parts WHERE message_id = ?1 ORDER BY rowid",
    )?;
    let mut insert = tx.prepare_cached(
        "INSERT INTO parts (id, message_id, session_id, kind, data, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for (old, new) in messages {
        let parts: Vec<(String, String, i64)> = select
            .query_map([old], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        for (kind, data, created_at) in parts {
            let data = renamed_call(&data, calls)?;
            insert.execute(params![new_id("prt"), new, to, kind, data, created_at])?;
        }
    }
    Ok(())
}

/// A part's JSON with its `call_id` (a `tool` or `file` part's) renamed to the copied call's.
fn renamed_call(data: &str, calls: &IdMap) -> Result<String, StoreError> {
    let mut value: Value = serde_json::from_str(data)?;
    let renamed = value
        .get("call_id")
        .and_then(Value::as_str)
        .and_then(|old| calls.get(old))
        .cloned();
    match renamed {
        Some(new) => {
            value["call_id"] = Value::String(new);
            to_json(&value)
        }
        None => Ok(data.to_string()),
    }
}
