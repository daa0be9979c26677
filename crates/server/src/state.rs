//! What every handler shares: the engine, the credentials (token, sign-ins, the failure
//! limiter, the names it answers to), the event log and the engine's `SessionRegistry`,
//! which owns the sessions this server drives: a stored session is opened on first use
//! (resume by id) in the workspace of the directory it was started in, and stays open until
//! the server stops or it is deleted. Its one busy state (`Port::prompt`) refuses a second
//! prompt from any client instead of racing the first.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use podcode_core::{
    Engine, EventLog, LiveSession, Resume, SessionOptions, SessionPick, SessionRegistry,
};
use tokio_util::sync::CancellationToken;

use crate::error::{ApiError, ApiResult};
use crate::guard::Hosts;
use crate::limit::Limiter;
use crate::login::Grants;

/// The agent a session uses when none is named.
pub const DEFAULT_AGENT: &str = "build";

pub struct AppState {
    pub engine: Arc<Engine>,
    pub tokens: crate::token::Tokens,
    /// The sign-in cookie's name (per port).
    pub cookie: String,
    pub grants: Grants,
    pub limiter: Limiter,
    pub hosts: Hosts,
    /// The project directory, resolved: sessions whose checkout is not inside it belong to
    /// another project.
    project: PathBuf,
    pub log: Arc<EventLog>,
    /// Cancelled when the server stops: ends the event streams.
    pub stop: CancellationToken,
    /// The live sessions, each in its own workspace (the engine's registry).
    pub sessions: Arc<SessionRegistry>,
}

/// A session this server drives: the registry's handle.
pub type Live = LiveSession;

/// What a new session is created with.
pub struct NewSession {
    pub title: String,
    pub agent: Option<String>,
    pub model: Option<String>,
    pub worktree: bool,
}

impl AppState {
    pub fn new(
        sessions: Arc<SessionRegistry>,
        tokens: crate::token::Tokens,
        log: Arc<EventLog>,
        hosts: Hosts,
        port: u16,
    ) -> Self {
        let engine = sessions.home().clone();
        let project = resolved(engine.project());
        Self {
            engine,
            tokens,
            cookie: crate::login::cookie_name(port),
            grants: Grants::default(),
            limiter: Limiter::default(),
            hosts,
            project,
            log,
            stop: CancellationToken::new(),
            sessions,
        }
    }

    /// The open session `id`, if the server drives it.
    pub async fn live(&self, id: &str) -> Option<Arc<Live>> {
        self.sessions.live(id).await
    }

    /// The project directory another project's session `row` belongs to; `None` when it is
    /// this server's. A session belongs where its checkout is (`main_cwd`: the user's
    /// directory, also for a worktree session, whose `cwd` is the worktree).
    pub fn foreign(&self, row: &podcode_core::SessionRow) -> Option<PathBuf> {
        let home = resolved(Path::new(&row.main_cwd));
        (!home.starts_with(&self.project)).then_some(home)
    }

    /// Refuses to drive another project's session: its tools would run under this
    /// project's rules, in this server's directory (409 saying where to serve it from).
    pub fn ensure_ours(&self, id: &str) -> ApiResult<()> {
        let row = self.engine.session(id)?;
        match self.foreign(&row) {
            None => Ok(()),
            Some(home) => Err(ApiError::Conflict(foreign_text(id, &home, &self.project))),
        }
    }

    /// The session `id`, opened (resumed) when it is stored but not open — in the
    /// workspace of the directory it was started in, whichever project this server serves.
    /// 404 when unknown, 409 when its directory is gone.
    pub async fn open(&self, id: &str) -> ApiResult<Arc<Live>> {
        Ok(self.sessions.open(id, Resume::default()).await?)
    }

    /// Creates a session in this server's directory and opens it.
    pub async fn create(&self, spec: NewSession) -> ApiResult<Arc<Live>> {
        let agent = spec.agent.unwrap_or_else(|| DEFAULT_AGENT.to_string());
        let opts = SessionOptions {
            pick: SessionPick::New { title: spec.title },
            agent,
            model: spec.model,
            max_steps: None,
            worktree: spec.worktree,
        };
        Ok(self.sessions.create(None, &[], opts).await?)
    }

    /// Stops driving `id` (aborting a running turn); false when it was not open.
    pub async fn close(&self, id: &str) -> bool {
        self.sessions.close(id).await
    }

    /// Closes every session and shuts every engine down (the server is stopping).
    pub async fn close_all(&self) {
        self.sessions.shutdown().await;
    }
}

/// Why another project's session is refused (user-facing).
pub fn foreign_text(id: &str, home: &Path, project: &Path) -> String {
    format!(
        "session {id} belongs to {}, not to this server's project ({}): run `podcode serve` in \
         {} to drive it",
        home.display(),
        project.display(),
        home.display()
    )
}

/// `path` with links resolved, or as given when it no longer exists.
fn resolved(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}
