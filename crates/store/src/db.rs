//! The `Store` handle: opening the database file (pragmas, migrations), the connection lock,
//! and the small column helpers every table module shares.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
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
}

impl Store {
    /// Creates parent dirs, opens the file, sets journal_mode=WAL, synchronous=NORMAL,
    /// foreign_keys=ON, busy_timeout 5s, and runs pending migrations (each in a transaction).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Invalid {
                what: "journal mode (WAL could not be enabled)",
                value: mode,
            });
        }
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.set_prepared_statement_cache_capacity(64);
        migrations::run(&mut conn)?;
        Ok(Store {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
            message_reads: AtomicU64::new(0),
        })
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
}
