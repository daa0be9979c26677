//! Schema migrations, keyed by `PRAGMA user_version`: migration N (1-based) brings the schema
//! from version N-1 to N. The pending ones are applied together inside one immediate
//! transaction, so a crash never leaves them half done, two processes opening the same file
//! at once never both apply them, and a new file is written once (one commit, not one per
//! migration: a first start writes a third of the pages). A new file (version 0) gets the
//! latest schema whole (`fresh_schema`) instead of every migration in turn.

use rusqlite::{Connection, TransactionBehavior};

use crate::StoreError;

/// Every migration, in order. Never edit a shipped entry; append a new one.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: initial schema.
    r#"
    CREATE TABLE sessions (
        id          TEXT PRIMARY KEY,
        parent_id   TEXT,
        root_id     TEXT,
        agent       TEXT NOT NULL,
        cwd         TEXT NOT NULL,
        main_cwd    TEXT NOT NULL,
        model       TEXT,
        title       TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL
    );
    CREATE INDEX sessions_parent ON sessions(parent_id);

    CREATE TABLE messages (
        id          TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        role        TEXT NOT NULL,
        content     TEXT NOT NULL,
        created_at  INTEGER NOT NULL
    );
    CREATE INDEX messages_session ON messages(session_id);

    CREATE TABLE parts (
        id          TEXT PRIMARY KEY,
        message_id  TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        session_id  TEXT NOT NULL,
        kind        TEXT NOT NULL,
        data        TEXT NOT NULL,
        created_at  INTEGER NOT NULL
    );
    CREATE INDEX parts_message ON parts(message_id);

    CREATE TABLE tool_calls (
        id          TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL,
        message_id  TEXT,
        tool        TEXT NOT NULL,
        args        TEXT NOT NULL,
        state       TEXT NOT NULL,
        title       TEXT NOT NULL DEFAULT '',
        output      TEXT NOT NULL DEFAULT '',
        metadata    TEXT NOT NULL DEFAULT 'null',
        attachments TEXT NOT NULL DEFAULT '[]',
        error       TEXT,
        spill_path  TEXT,
        started_at  INTEGER NOT NULL,
        ended_at    INTEGER
    );
    CREATE INDEX tool_calls_session ON tool_calls(session_id);

    CREATE TABLE changes (
        id           TEXT PRIMARY KEY,
        session_id   TEXT NOT NULL,
        call_id      TEXT,
        file         TEXT NOT NULL,
        op           TEXT NOT NULL,
        old_content  TEXT,
        new_content  TEXT,
        time         INTEGER NOT NULL,
        reverts      TEXT
    );
    CREATE INDEX changes_session ON changes(session_id);
    CREATE INDEX changes_call ON changes(call_id);
    CREATE INDEX changes_reverts ON changes(reverts);

    CREATE TABLE approvals (
        id          TEXT PRIMARY KEY,
        project     TEXT NOT NULL,
        permission  TEXT NOT NULL,
        pattern     TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        UNIQUE (project, permission, pattern)
    );
    "#,
    // 2: journal-first writes. A change is inserted as `pending` (an intent: old and new
    // content durable before the file is touched) and marked `done` once the file is in
    // place; `batch` groups the intents of one call that must land together, `temp_file`
    // is the staged file to clean up, `owner` the process that wrote the intent.
    r#"
    ALTER TABLE changes ADD COLUMN state TEXT NOT NULL DEFAULT 'done';
    ALTER TABLE changes ADD COLUMN batch TEXT;
    ALTER TABLE changes ADD COLUMN temp_file TEXT;
    ALTER TABLE changes ADD COLUMN owner TEXT;
    CREATE INDEX changes_pending ON changes(state) WHERE state = 'pending';
    "#,
    // Token and cost totals per session (each assistant message's own usage is in its
    // `step` part). `cost` stays NULL while no request had a known price.
    r#"
    ALTER TABLE sessions ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN cost REAL;
    "#,
    // 4: worktree sessions. A session that works in its own git worktree records where
    // (`path`, on `branch`), the user's checkout it came from (`main_root`), and `sync_base`:
    // the commit its changes are measured against (the fork commit, then each sync's).
    r#"
    CREATE TABLE session_worktrees (
        session_id  TEXT PRIMARY KEY,
        path        TEXT NOT NULL,
        branch      TEXT NOT NULL,
        fork_commit TEXT NOT NULL,
        sync_base   TEXT NOT NULL,
        main_root   TEXT NOT NULL,
        created_at  INTEGER NOT NULL
    );
    "#,
    // 5: the event log. Every event of a session `podcode serve` drives, in order, so a
    // client that reconnects replays what it missed. `seq` is the stream's event id:
    // AUTOINCREMENT so an id is never reused, even after a session's rows are deleted.
    r#"
    CREATE TABLE events (
        seq         INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id  TEXT NOT NULL,
        type        TEXT NOT NULL,
        data        TEXT NOT NULL,
        time        INTEGER NOT NULL
    );
    CREATE INDEX events_session ON events(session_id, seq);
    "#,
];

/// The schema version this build writes.
pub(crate) fn latest() -> i64 {
    MIGRATIONS.len() as i64
}

fn user_version(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn.pragma_query_value(None, "user_version", |row| row.get(0))?)
}

/// Applies every pending migration; a no-op on an up-to-date file.
pub(crate) fn run(conn: &mut Connection) -> Result<(), StoreError> {
    let supported = latest();
    let too_new = |found| StoreError::TooNew { found, supported };
    let current = user_version(conn)?;
    if current > supported {
        return Err(too_new(current));
    }
    if current == supported {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Re-read under the write lock: another process may have migrated meanwhile.
    let mut version = user_version(&tx)?;
    if version > supported {
        return Err(too_new(version));
    }
    if version == 0 {
        // A new file: the latest schema at once (see `fresh_schema`).
        tx.execute_batch(crate::fresh_schema::FRESH_SCHEMA)?;
        tx.pragma_update(None, "user_version", supported)?;
    } else if version < supported {
        while version < supported {
            tx.execute_batch(MIGRATIONS[version as usize])?;
            version += 1;
        }
        tx.pragma_update(None, "user_version", version)?;
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_conn(dir: &tempfile::TempDir) -> Connection {
        Connection::open(dir.path().join("m.db")).unwrap()
    }

    #[test]
    fn migrating_a_fresh_database_reaches_the_latest_version() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = file_conn(&dir);
        run(&mut conn).unwrap();
        assert_eq!(user_version(&conn).unwrap(), latest());
        run(&mut conn).unwrap();
        assert_eq!(user_version(&conn).unwrap(), latest());
    }

    #[test]
    fn a_file_part_way_up_gets_the_rest_and_a_failed_one_leaves_it_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = file_conn(&dir);
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        run(&mut conn).unwrap();
        assert_eq!(user_version(&conn).unwrap(), latest());

        // A file at 1 whose next migration fails (its table already exists): nothing of the
        // pending ones stays, the version included.
        let dir = tempfile::tempdir().unwrap();
        let mut conn = file_conn(&dir);
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute_batch(MIGRATIONS[1]).unwrap();
        assert!(run(&mut conn).is_err());
        assert_eq!(user_version(&conn).unwrap(), 1);
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = file_conn(&dir);
        conn.pragma_update(None, "user_version", latest() + 1)
            .unwrap();
        let err = run(&mut conn).unwrap_err();
        assert!(matches!(err, StoreError::TooNew { .. }), "{err}");
    }
}
