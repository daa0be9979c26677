//! The `Store` handle: opening the database file (pragmas, migrations), the connection lock,
//! and the small column helpers every table module shares.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::types::Type;
use rusqlite::{Connection, Row};
use serde_json::Value;

use crate::StoreError;
use crate::migrations;

/// How long a writer waits for another connection's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// A handle on one Podcode database file. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Store {
    conn: Mutex<Connection>,
    path: PathBuf,
    message_reads: AtomicU64,
    /// Created by this handle's `open`, not synced yet (see `sync_if_new`).
    unsynced: AtomicBool,
}

impl Store {
    /// Creates parent dirs, opens the file, sets journal_mode=WAL, synchronous=NORMAL,
    /// foreign_keys=ON, busy_timeout 5s, and runs pending migrations (each in a transaction).
    /// A new file is created without syncs and synced on another thread right after.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        // A new file is made without waiting for the disk: switching it to WAL (through a
        // rollback journal) and creating the WAL took six syncs, 4-5 ms before a new
        // project's first model request. It holds nothing yet; `sync_if_new` makes it
        // durable once that request is out (a sync beside it slowed the writes before it).
        let fresh = std::fs::metadata(path).map_or(true, |m| m.len() == 0);
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        if fresh {
            conn.pragma_update(None, "synchronous", "OFF")?;
        }
        let mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Invalid {
                what: "journal mode (WAL could not be enabled)",
                value: mode,
            });
        }
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.set_prepared_statement_cache_capacity(64);
        migrations::run(&mut conn)?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        Ok(Store {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
            message_reads: AtomicU64::new(0),
            unsynced: AtomicBool::new(fresh),
        })
    }

    /// Syncs the file `open` created without syncs (the file, its WAL, their folder) on a
    /// thread of its own, once; nothing for a store that existed. Called when the first
    /// model request is out. Until then (or should this never run) SQLite's checkpoint,
    /// at the latest when the store closes, syncs them.
    pub fn sync_if_new(&self) {
        if self.unsynced.swap(false, Ordering::Relaxed) {
            sync_new_store(&self.path);
        }
    }

    /// Whether `open` created the file and `sync_if_new` has not synced it yet.
    pub fn is_unsynced(&self) -> bool {
        self.unsynced.load(Ordering::Relaxed)
    }

    /// The database file this store was opened on.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many times `messages()` has run on this handle (proves lazy loading in tests).
    pub fn message_reads(&self) -> u64 {
        self.message_reads.load(Ordering::Relaxed)
    }

    pub(crate) fn count_message_read(&self) {
        self.message_reads.fetch_add(1, Ordering::Relaxed);
    }

    /// Locks the connection; a poisoned lock becomes `StoreError::Poisoned`.
    pub(crate) fn conn(&self) -> Result<MutexGuard<'_, Connection>, StoreError> {
        self.conn.lock().map_err(|_| StoreError::Poisoned)
    }
}

/// Syncs a store made by `Store::open` without syncs (the file, its WAL, their folder) on a
/// thread of its own; what fails here is synced by SQLite's next checkpoint.
fn sync_new_store(path: &Path) {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let files = [path.to_path_buf(), PathBuf::from(wal)];
    let dir = path.parent().map(Path::to_path_buf);
    let spawned = std::thread::Builder::new()
        .name("podcode-store-sync".into())
        .spawn(move || {
            for file in files.iter().chain(dir.as_ref()) {
                let _ = std::fs::File::open(file).and_then(|f| f.sync_all());
            }
        });
    drop(spawned);
}

/// Serializes a JSON value for a TEXT column.
pub(crate) fn to_json(value: &Value) -> Result<String, StoreError> {
    Ok(serde_json::to_string(value)?)
}

/// Reads a TEXT column holding JSON.
pub(crate) fn json_col(row: &Row<'_>, idx: usize) -> rusqlite::Result<Value> {
    let text: String = row.get(idx)?;
    serde_json::from_str(&text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, Box::new(e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let store = std::sync::Arc::new(Store::open(&dir.path().join("p.db")).unwrap());
        let clone = store.clone();
        let joined = std::thread::spawn(move || {
            let _guard = clone.conn().unwrap();
            panic!("poison the lock");
        })
        .join();
        assert!(joined.is_err());
        let err = store.list_sessions().unwrap_err();
        assert!(matches!(err, StoreError::Poisoned), "{err}");
    }

    fn sync_mode(store: &Store) -> i64 {
        let conn = store.conn().unwrap();
        conn.pragma_query_value(None, "synchronous", |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn a_new_store_and_a_reopened_one_both_run_in_wal_with_normal_syncs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/p.db");
        let store = Store::open(&path).unwrap();
        // 1 = NORMAL: the new file's creation without syncs ended with the open.
        assert_eq!(sync_mode(&store), 1);
        assert!(store.is_unsynced());
        store.sync_if_new();
        assert!(!store.is_unsynced());
        let mode: String = (store.conn().unwrap())
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        store.add_approval("/p", "bash", "*").unwrap();
        drop(store);
        let again = Store::open(&path).unwrap();
        assert_eq!(sync_mode(&again), 1);
        assert!(
            !again.is_unsynced(),
            "an existing store was synced when it was made"
        );
        assert_eq!(again.approvals(Some("/p")).unwrap().len(), 1);
        // An empty file (a creation cut short before SQLite wrote anything) is a new store.
        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, b"").unwrap();
        let store = Store::open(&empty).unwrap();
        assert_eq!(sync_mode(&store), 1);
        assert!(store.is_unsynced());
        assert!(store.list_sessions().unwrap().is_empty());
    }
}
