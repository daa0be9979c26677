//! The `sessions` table: one row per conversation (or sub-agent run), with its agent, working
//! directories, model and title.

use podcode_protocol::{new_id, now_millis};
use rusqlite::{OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use crate::{Store, StoreError};

/// What `create_session` needs; id and times are assigned by the store.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NewSession {
    /// The session whose `task` call starts this one (sub-agents); `None` for a top-level session.
    pub parent_id: Option<String>,
    /// The top-level session of the tree this one belongs to; `None` for a top-level session.
    pub root_id: Option<String>,
    /// The agent profile it starts with.
    pub agent: String,
    /// Where its tools work (the worktree in a worktree session).
    pub cwd: String,
    /// The user's checkout (equal to `cwd` unless in a worktree).
    pub main_cwd: String,
    /// The model it starts with (`provider/model-id`); `None`: the config's default.
    pub model: Option<String>,
    /// Title shown in pickers; may be empty until the first prompt gives one.
    pub title: String,
}

/// A stored session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRow {
    /// The session's id.
    pub id: String,
    /// The session whose `task` call started this one; `None` for a top-level session.
    pub parent_id: Option<String>,
    /// The top-level session of its tree; `None` for a top-level session.
    pub root_id: Option<String>,
    /// The agent profile it runs.
    pub agent: String,
    /// Where its tools work (the worktree in a worktree session).
    pub cwd: String,
    /// The user's checkout (equal to `cwd` unless in a worktree).
    pub main_cwd: String,
    /// The model it uses (`provider/model-id`), when one was chosen.
    pub model: Option<String>,
    /// Title shown in pickers; may be empty.
    pub title: String,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Bumped whenever a message is added to the session.
    pub updated_at: i64,
}

const COLUMNS: &str =
    "id, parent_id, root_id, agent, cwd, main_cwd, model, title, created_at, updated_at";

fn from_row(row: &Row<'_>) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        id: row.get(0)?,
        parent_id: row.get(1)?,
        root_id: row.get(2)?,
        agent: row.get(3)?,
        cwd: row.get(4)?,
        main_cwd: row.get(5)?,
        model: row.get(6)?,
        title: row.get(7)?,
        created_at: row.get(8)?,
        updated_at: row.get(9)?,
    })
}

impl Store {
    /// Stores a new session with a fresh id and the current time.
    pub fn create_session(&self, s: &NewSession) -> Result<SessionRow, StoreError> {
        let now = now_millis();
        self.insert_session(SessionRow {
            id: new_id("ses"),
            parent_id: s.parent_id.clone(),
            root_id: s.root_id.clone(),
            agent: s.agent.clone(),
            cwd: s.cwd.clone(),
            main_cwd: s.main_cwd.clone(),
            model: s.model.clone(),
            title: s.title.clone(),
            created_at: now,
            updated_at: now,
        })
    }

    /// Stores `row` again under its own id, with fresh times: a session a front end held
    /// back until its first prompt (`podcode-core`'s `drafts.rs`).
    pub fn restore_session(&self, row: &SessionRow) -> Result<SessionRow, StoreError> {
        let now = now_millis();
        self.insert_session(SessionRow {
            created_at: now,
            updated_at: now,
            ..row.clone()
        })
    }

    /// The one INSERT of a session row, shared by a new session and a restored one.
    fn insert_session(&self, row: SessionRow) -> Result<SessionRow, StoreError> {
        self.conn()?
            .prepare_cached(&format!(
                "INSERT INTO sessions ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
            ))?
            .execute(params![
                row.id,
                row.parent_id,
                row.root_id,
                row.agent,
                row.cwd,
                row.main_cwd,
                row.model,
                row.title,
                row.created_at,
                row.updated_at
            ])?;
        Ok(row)
    }

    /// One session by id; `None` when there is no such session.
    pub fn session(&self, id: &str) -> Result<Option<SessionRow>, StoreError> {
        let conn = self.conn()?;
        let row = conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"))?
            .query_row([id], from_row)
            .optional()?;
        Ok(row)
    }

    /// Every session, newest first.
    pub fn list_sessions(&self) -> Result<Vec<SessionRow>, StoreError> {
        let conn = self.conn()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM sessions ORDER BY created_at DESC, rowid DESC"
        ))?;
        let rows = stmt.query_map([], from_row)?.collect::<Result<_, _>>()?;
        Ok(rows)
    }
}
