//! The latest schema written out whole, for a new file: running every migration on one
//! re-read the whole schema after each `ALTER TABLE` (SQLite reloads it), ~9 million
//! instructions, 3 ms, before a new project's first model request; this is ~a fifth of
//! that. It must be exactly what the migrations make: the test below compares every
//! table's columns, indexes and foreign keys. A new migration is appended to `MIGRATIONS`
//! and its effect written in here too.

/// What `MIGRATIONS` builds, as of version `migrations::latest()`.
pub(crate) const FRESH_SCHEMA: &str = r#"
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
        updated_at  INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        reasoning_tokens INTEGER NOT NULL DEFAULT 0,
        cost REAL
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
        reverts      TEXT,
        state        TEXT NOT NULL DEFAULT 'done',
        batch        TEXT,
        temp_file    TEXT,
        owner        TEXT
    );
    CREATE INDEX changes_session ON changes(session_id);
    CREATE INDEX changes_call ON changes(call_id);
    CREATE INDEX changes_reverts ON changes(reverts);
    CREATE INDEX changes_pending ON changes(state) WHERE state = 'pending';

    CREATE TABLE approvals (
        id          TEXT PRIMARY KEY,
        project     TEXT NOT NULL,
        permission  TEXT NOT NULL,
        pattern     TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        UNIQUE (project, permission, pattern)
    );

    CREATE TABLE session_worktrees (
        session_id  TEXT PRIMARY KEY,
        path        TEXT NOT NULL,
        branch      TEXT NOT NULL,
        fork_commit TEXT NOT NULL,
        sync_base   TEXT NOT NULL,
        main_root   TEXT NOT NULL,
        created_at  INTEGER NOT NULL
    );

    CREATE TABLE events (
        seq         INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id  TEXT NOT NULL,
        type        TEXT NOT NULL,
        data        TEXT NOT NULL,
        time        INTEGER NOT NULL
    );
    CREATE INDEX events_session ON events(session_id, seq);
"#;

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::FRESH_SCHEMA;
    use crate::migrations::{MIGRATIONS, latest};

    /// Every table and index with what defines it: columns (name, type, not null,
    /// default, key), foreign keys, each index's columns, uniqueness and partial `WHERE`.
    fn shape(conn: &Connection) -> Vec<String> {
        let objects: Vec<(String, String, Option<String>)> = conn
            .prepare("SELECT type, name, sql FROM sqlite_schema ORDER BY type, name")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let mut out = Vec::new();
        for (kind, name, sql) in objects {
            let rows = |pragma: &str| -> Vec<String> {
                let mut stmt = conn
                    .prepare(&format!("SELECT * FROM pragma_{pragma}(?1)"))
                    .unwrap();
                let n = stmt.column_count();
                stmt.query_map([&name], |r| {
                    Ok((0..n)
                        .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
                        .collect::<Vec<_>>()
                        .join("|"))
                })
                .unwrap()
                .map(Result::unwrap)
                .collect()
            };
            match kind.as_str() {
                "table" => {
                    out.push(format!("table {name}: {:?}", rows("table_xinfo")));
                    out.push(format!("fks {name}: {:?}", rows("foreign_key_list")));
                    out.push(format!("indexes {name}: {:?}", rows("index_list")));
                }
                "index" => {
                    out.push(format!("index {name}: {:?}", rows("index_xinfo")));
                    // A written index's text is the same either way (a partial one's WHERE).
                    out.push(format!("index sql {name}: {sql:?}"));
                }
                other => out.push(format!("{other} {name}")),
            }
        }
        out
    }

    #[test]
    fn the_fresh_schema_is_exactly_what_the_migrations_build() {
        let migrated = Connection::open_in_memory().unwrap();
        for m in MIGRATIONS {
            migrated.execute_batch(m).unwrap();
        }
        let fresh = Connection::open_in_memory().unwrap();
        fresh.execute_batch(FRESH_SCHEMA).unwrap();
        let (want, got) = (shape(&migrated), shape(&fresh));
        assert!(want.len() > 20, "{want:?}");
        for (w, g) in want.iter().zip(&got) {
            assert_eq!(w, g);
        }
        assert_eq!(want.len(), got.len());
        assert_eq!(
            latest(),
            5,
            "a new migration: write its effect in FRESH_SCHEMA too"
        );
    }
}
