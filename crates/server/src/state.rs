//! What every handler shares: the engine, the credentials (token, sign-ins, the failure
//! limiter, the names it answers to), the event log and the sessions this server drives. A stored session is opened on first use (resume by id) and stays open
//! until the server stops or it is deleted; a watcher per open session keeps `busy` true
//! from the moment a prompt is accepted until its turn finishes, so a second prompt is
//! refused instead of racing the first.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use podcode_core::{Engine, EventLog, Session, SessionOptions, SessionPick};
use podcode_protocol::{Event, Op};
use tokio::sync::Mutex;
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
    sessions: Mutex<HashMap<String, Arc<Live>>>,
}

/// A session this server drives.
pub struct Live {
    pub session: Session,
    busy: Arc<AtomicBool>,
}

impl Live {
    pub fn busy(&self) -> bool {
        self.busy.load(Ordering::SeqCst)
    }
    /// Marks a turn as started; false when one already runs.
    pub fn claim_turn(&self) -> bool {
        self.busy
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }
}

/// What a new session is created with.
pub struct NewSession {
    pub title: String,
    pub agent: Option<String>,
    pub model: Option<String>,
    pub worktree: bool,
}

impl AppState {
    pub fn new(
        engine: Arc<Engine>,
        tokens: crate::token::Tokens,
        log: Arc<EventLog>,
        hosts: Hosts,
        port: u16,
    ) -> Self {
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
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// The open session `id`, if the server drives it.
    pub async fn live(&self, id: &str) -> Option<Arc<Live>> {
        self.sessions.lock().await.get(id).cloned()
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

    /// The session `id`, opened (resumed) when it is stored but not open. 404 when unknown,
    /// 409 when it belongs to another project.
    pub async fn open(&self, id: &str) -> ApiResult<Arc<Live>> {
        let mut sessions = self.sessions.lock().await;
        if let Some(live) = sessions.get(id) {
            return Ok(live.clone());
        }
        self.ensure_ours(id)?;
        let row = self.engine.session(id)?;
        // Resume with the agent and model it was using, when they are still usable.
        let agent = if self.engine.agents().resolve(&row.agent).is_ok() {
            row.agent.clone()
        } else {
            DEFAULT_AGENT.to_string()
        };
        let model = row
            .model
            .clone()
            .filter(|m| self.engine.check_model(Some(m)).is_ok());
        let session = self
            .engine
            .open_session(SessionOptions {
                pick: SessionPick::Id(row.id.clone()),
                agent,
                model,
                max_steps: None,
                worktree: false,
            })
            .await?;
        let live = watch(session);
        sessions.insert(id.to_string(), live.clone());
        Ok(live)
    }

    /// Creates a session and opens it.
    pub async fn create(&self, spec: NewSession) -> ApiResult<Arc<Live>> {
        let agent = spec.agent.unwrap_or_else(|| DEFAULT_AGENT.to_string());
        let session = self
            .engine
            .open_session(SessionOptions {
                pick: SessionPick::New { title: spec.title },
                agent,
                model: spec.model,
                max_steps: None,
                worktree: spec.worktree,
            })
            .await?;
        let live = watch(session);
        self.sessions
            .lock()
            .await
            .insert(live.session.id().to_string(), live.clone());
        Ok(live)
    }

    /// Stops driving `id` (aborting a running turn); false when it was not open.
    pub async fn close(&self, id: &str) -> bool {
        let Some(live) = self.sessions.lock().await.remove(id) else {
            return false;
        };
        close_live(live).await;
        true
    }

    /// Closes every session (the server is stopping).
    pub async fn close_all(&self) {
        let all: Vec<_> = self.sessions.lock().await.drain().map(|(_, l)| l).collect();
        for live in all {
            close_live(live).await;
        }
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

async fn close_live(live: Arc<Live>) {
    match Arc::try_unwrap(live) {
        Ok(live) => live.session.close().await,
        // A request still holds it: abort the turn; the session ends when it lets go.
        Err(live) => live.session.send(Op::Abort {
            session_id: live.session.id().to_string(),
        }),
    }
}

/// Wraps a session and follows its turns to keep `busy` true while one runs.
fn watch(session: Session) -> Arc<Live> {
    let busy = Arc::new(AtomicBool::new(false));
    let mut events = session.subscribe();
    let id = session.id().to_string();
    let flag = busy.clone();
    tokio::spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            match events.recv().await {
                Ok(Event::TurnStarted { session_id, .. }) if session_id == id => {
                    flag.store(true, Ordering::SeqCst);
                }
                Ok(Event::TurnFinished { session_id, .. }) if session_id == id => {
                    flag.store(false, Ordering::SeqCst);
                }
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => break,
            }
        }
    });
    Arc::new(Live { session, busy })
}
