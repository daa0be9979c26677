//! `StoreError`: everything that can go wrong opening, migrating, reading or writing the store.

use std::path::PathBuf;

/// Why a store operation failed; the text names the store and what it was doing.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database file or its directory could not be created.
    #[error("store: cannot create {path}: {source}")]
    Io {
        /// The path that could not be created.
        path: PathBuf,
        /// The filesystem error.
        #[source]
        source: std::io::Error,
    },
    /// SQLite reported an error (locked, full disk, constraint).
    #[error("store: sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A JSON column could not be written or read.
    #[error("store: bad JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Another thread panicked while holding the connection.
    #[error("store: the connection lock is poisoned (a thread panicked while using the store)")]
    Poisoned,
    /// A row asked for by id does not exist.
    #[error("store: no {kind} with id {id}")]
    NotFound {
        /// What was looked up (`session`, `change`, …).
        kind: &'static str,
        /// The id asked for.
        id: String,
    },
    /// A value passed in is not one the store accepts (an unknown role, say).
    #[error("store: invalid {what}: {value:?}")]
    Invalid {
        /// What the value was for.
        what: &'static str,
        /// The value refused.
        value: String,
    },
    /// A stored value is not one this version writes (edited by hand, or a newer Podcode).
    #[error("store: corrupt value in column {column}: {value:?}")]
    Corrupt {
        /// The column it was read from.
        column: &'static str,
        /// The value found.
        value: String,
    },
    #[error(
        "store: database schema version {found} is newer than this Podcode supports ({supported}); upgrade Podcode"
    )]
    /// The database was migrated by a newer Podcode; this one refuses to touch it.
    TooNew {
        /// The database's schema version.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
}

impl StoreError {
    /// Maps a foreign-key violation to `NotFound { kind, id }`; other errors pass through.
    pub(crate) fn missing_parent(err: rusqlite::Error, kind: &'static str, id: &str) -> Self {
        match &err {
            rusqlite::Error::SqliteFailure(e, _)
                if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY =>
            {
                StoreError::NotFound {
                    kind,
                    id: id.to_string(),
                }
            }
            _ => StoreError::Sqlite(err),
        }
    }
}
