//! `StoreError`: everything that can go wrong opening, migrating, reading or writing the store.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store: cannot create {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("store: sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("store: bad JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("store: the connection lock is poisoned (a thread panicked while using the store)")]
    Poisoned,
    #[error("store: no {kind} with id {id}")]
    NotFound { kind: &'static str, id: String },
    #[error("store: invalid {what}: {value:?}")]
    Invalid { what: &'static str, value: String },
    #[error("store: corrupt value in column {column}: {value:?}")]
    Corrupt { column: &'static str, value: String },
    #[error(
        "store: database schema version {found} is newer than this Podcode supports ({supported}); upgrade Podcode"
    )]
    TooNew { found: i64, supported: i64 },
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
