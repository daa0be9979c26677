//! Intents: the journal rows of a file write that has not happened yet. A writer inserts
//! every change of one batch as `pending` (old and new content synced to disk, so they
//! survive a crash or power loss) before it touches any file, and marks them `done` once
//! every file is in place. A write that fails removes its intents again. Whatever is still
//! `pending` when no process owns it any more was interrupted; recovery (in podcode-tools)
//! compares the disk with old and new content and completes or rolls back each batch.

use podcode_protocol::{RecordedChange, new_id, now_millis};
use rusqlite::params;

use podcode_records::{Intent, PendingChange};

use crate::changes::{COLUMNS, from_row};
use crate::{Store, StoreError};

impl Store {
    /// Journals `intents` as one pending batch, in one transaction that is synced to disk
    /// before this returns. Returns the records (ids to complete or discard) and the batch id.
    pub fn begin_changes(
        &self,
        session_id: &str,
        call_id: Option<&str>,
        intents: &[Intent],
        owner: &str,
    ) -> Result<(Vec<RecordedChange>, String), StoreError> {
        let batch = new_id("bat");
        let mut conn = self.conn()?;
        // The old content must be on disk, not only in the OS cache, before the file is
        // replaced: a power loss right after the rename would otherwise lose both.
        conn.pragma_update(None, "synchronous", "FULL")?;
        let result = (|| {
            let tx = conn.transaction()?;
            let mut records = Vec::with_capacity(intents.len());
            {
                let mut stmt = tx.prepare_cached(&format!(
                    "INSERT INTO changes ({COLUMNS}, state, batch, temp_file, owner) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'pending', ?10, ?11, ?12)"
                ))?;
                for intent in intents {
                    let rec = RecordedChange {
                        id: new_id("chg"),
                        session_id: session_id.to_string(),
                        call_id: call_id.map(str::to_string),
                        file: intent.change.file.clone(),
                        op: intent.change.op,
                        old_content: intent.change.old_content.clone(),
                        new_content: intent.change.new_content.clone(),
                        time: now_millis(),
                        reverts: intent.reverts.clone(),
                    };
                    stmt.execute(params![
                        rec.id,
                        rec.session_id,
                        rec.call_id,
                        rec.file,
                        rec.op.as_str(),
                        rec.old_content,
                        rec.new_content,
                        rec.time,
                        rec.reverts,
                        batch,
                        intent.temp_file,
                        owner
                    ])?;
                    records.push(rec);
                }
            }
            tx.commit()?;
            Ok::<_, StoreError>(records)
        })();
        let reset = conn.pragma_update(None, "synchronous", "NORMAL");
        let records = result?;
        reset?;
        Ok((records, batch))
    }

    /// Marks intents as done: the files hold their new content.
    pub fn complete_changes(&self, ids: &[String]) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        {
            let mut stmt = tx.prepare_cached(
                "UPDATE changes SET state = 'done', temp_file = NULL, owner = NULL \
                 WHERE id = ?1 AND state = 'pending'",
            )?;
            for id in ids {
                stmt.execute([id])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Removes intents whose write did not happen (the files hold their old content).
    pub fn discard_intents(&self, ids: &[String]) -> Result<(), StoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction()?;
        {
            let mut stmt =
                tx.prepare_cached("DELETE FROM changes WHERE id = ?1 AND state = 'pending'")?;
            for id in ids {
                stmt.execute([id])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Every intent still pending, oldest first.
    pub fn pending_changes(&self) -> Result<Vec<PendingChange>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS}, batch, temp_file, owner FROM changes \
             WHERE state = 'pending' ORDER BY rowid"
        ))?;
        let rows = stmt
            .query_map([], |row| {
                Ok(PendingChange {
                    change: from_row(row)?,
                    batch: row.get::<_, Option<String>>(9)?.unwrap_or_default(),
                    temp_file: row.get(10)?,
                    owner: row.get::<_, Option<String>>(11)?.unwrap_or_default(),
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use podcode_protocol::{ChangeOp, ChangeRecord};

    fn intent(file: &str, old: Option<&str>, new: Option<&str>) -> Intent {
        Intent {
            change: ChangeRecord {
                file: file.into(),
                op: ChangeOp::Modify,
                old_content: old.map(str::to_string),
                new_content: new.map(str::to_string),
            },
            reverts: None,
            temp_file: Some(format!("{file}.tmp")),
        }
    }

    #[test]
    fn intents_are_invisible_until_completed_and_gone_when_discarded() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.db")).unwrap();
        let (recs, batch) = store
            .begin_changes(
                "ses_1",
                Some("call_1"),
                &[
                    intent("/w/a", Some("a0"), Some("a1")),
                    intent("/w/b", None, Some("b1")),
                ],
                "1:2",
            )
            .unwrap();
        assert!(store.changes(None, None).unwrap().is_empty());
        assert!(store.change(&recs[0].id).unwrap().is_none());
        let pending = store.pending_changes().unwrap();
        assert_eq!(pending.len(), 2);
        assert_eq!(pending[0].batch, batch);
        assert_eq!(pending[1].temp_file.as_deref(), Some("/w/b.tmp"));
        assert_eq!(pending[0].owner, "1:2");
        assert_eq!(pending[0].change, recs[0]);

        store.complete_changes(&[recs[0].id.clone()]).unwrap();
        store.discard_intents(&[recs[1].id.clone()]).unwrap();
        // Discarding a done change does nothing: only intents can be removed.
        store.discard_intents(&[recs[0].id.clone()]).unwrap();
        assert!(store.pending_changes().unwrap().is_empty());
        let done = store.changes(None, None).unwrap();
        assert_eq!(done, vec![recs[0].clone()]);
    }
}
