//! `SessionRegistry`: the one owner of a process's live sessions. Front ends that drive
//! sessions by id (`podcode serve`, `podcode acp`) open, create, look up and close them
//! here and hold handles (`LiveSession`), never maps of their own, so a session has one
//! driver, one busy state (`Port::busy`, `Port::prompt`) and one event log however many
//! front ends reach it.
//!
//! A session runs in its own workspace: opening a stored session loads (once) the engine
//! of the directory it was started in — that directory's config layers, trust, permission
//! rules, sandbox policy and tool set — exactly as `podcode run` started there would, and
//! never the engine of the process's own directory. A session whose directory is gone is
//! refused. Engines are kept per directory (and per set of editor-given MCP servers) until
//! `shutdown`. One registry may be shared by several front ends of one process (the HTTP
//! server and an ACP connection): a session then has one busy state across them. A `task`
//! call's sub-agent is a child session its parent opens in its own engine (`child.rs`); the
//! engine's running turns (`active.rs`) make a child busy for a client that opens it here
//! while its parent runs it, and refuse a `task` call resuming a child a client is prompting.
//! A client opening a child goes on as its sub-agent profile.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use tokio::sync::Mutex;

use crate::client_mcp::ClientMcpServer;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::event_log::EventLog;
use crate::session::{Port, Session, SessionOptions, SessionPick};

/// Makes the engine for a directory (the binary sets up the sandbox helper and reports the
/// config's warnings on it).
pub type EngineFactory = Arc<dyn Fn(&Path) -> Result<Engine, EngineError> + Send + Sync>;

/// The agent profile a resumed session falls back to when its own is gone.
const FALLBACK_AGENT: &str = "build";

/// A session the registry drives, with the engine of its own workspace.
pub struct LiveSession {
    /// The session itself (its id, directory, model, agent).
    pub session: Session,
    /// The engine of the session's own workspace.
    pub engine: Arc<Engine>,
}

impl LiveSession {
    /// Where ops go and events come from (shared by every front end holding it).
    pub fn port(&self) -> Port {
        self.session.port()
    }
    /// True while a turn runs or waits.
    pub fn busy(&self) -> bool {
        self.session.port().busy()
    }
}

/// How a stored session is resumed when the registry opens it.
#[derive(Debug, Clone, Default)]
pub struct Resume {
    /// The agent profile to use instead of the stored one.
    pub agent: Option<String>,
    /// The model to use instead of the stored one.
    pub model: Option<String>,
}

/// Every live session of this process and the engine of each workspace they run in.
pub struct SessionRegistry {
    home: Arc<Engine>,
    factory: EngineFactory,
    engines: std::sync::Mutex<HashMap<String, Arc<Engine>>>,
    live: Mutex<HashMap<String, Arc<LiveSession>>>,
    log: std::sync::OnceLock<Arc<EventLog>>,
}

impl SessionRegistry {
    /// A registry whose home engine (the process's directory) is `home`; other
    /// directories' engines are made by `factory` when a session there is opened.
    pub fn new(home: Arc<Engine>, factory: EngineFactory) -> Self {
        let mut engines = HashMap::new();
        engines.insert(engine_key(home.cwd(), &[]), home.clone());
        Self {
            home,
            factory,
            engines: std::sync::Mutex::new(engines),
            live: Mutex::new(HashMap::new()),
            log: std::sync::OnceLock::new(),
        }
    }

    /// A registry whose other engines are made like `home`: the same config and data
    /// directories and sandbox helper, each reading its own directory's config and trust.
    pub fn for_engine(home: Arc<Engine>) -> Self {
        let dirs = home.dirs().clone();
        let helper = home.sandbox_helper.clone();
        let factory: EngineFactory = Arc::new(move |dir: &Path| {
            let mut engine = Engine::load_in(Some(dir.to_path_buf()), dirs.clone())?;
            if let Some(helper) = &helper {
                engine.use_sandbox_helper(helper.clone());
            }
            Ok(engine)
        });
        Self::new(home, factory)
    }

    /// The engine of the process's own directory.
    pub fn home(&self) -> &Arc<Engine> {
        &self.home
    }

    /// Logs every event of every session opened from now on in one event log (numbered
    /// by one writer; `event_log.rs`), whichever workspace the session runs in.
    pub fn event_log(&self) -> Result<Arc<EventLog>, EngineError> {
        if let Some(log) = self.log.get() {
            return Ok(log.clone());
        }
        let log = self.home.event_log()?;
        Ok(self.log.get_or_init(|| log).clone())
    }

    /// The engine for `dir` (with an editor's MCP servers), loaded on first use.
    pub fn engine_for(
        &self,
        dir: &Path,
        servers: &[ClientMcpServer],
    ) -> Result<Arc<Engine>, EngineError> {
        let dir = dir
            .canonicalize()
            .map_err(|e| EngineError::Io(format!("{}: {e}", dir.display())))?;
        let key = engine_key(&dir, servers);
        if let Some(e) = lock(&self.engines).get(&key) {
            return Ok(e.clone());
        }
        let mut engine = (self.factory)(&dir)?;
        engine.add_mcp_servers(servers.to_vec());
        if let Some(log) = self.log.get() {
            engine.share_event_log(log.clone());
        }
        let engine = Arc::new(engine);
        // Two first opens at once: the first engine stored wins, the other is dropped.
        Ok(lock(&self.engines).entry(key).or_insert(engine).clone())
    }

    /// The session `id` if it is open.
    pub async fn live(&self, id: &str) -> Option<Arc<LiveSession>> {
        self.live.lock().await.get(id).cloned()
    }

    /// The session `id`, opened when stored but not open: in the engine of the directory
    /// it was started in. `UnknownSession` when there is no such session, `DirectoryGone`
    /// when its directory no longer exists.
    pub async fn open(&self, id: &str, resume: Resume) -> Result<Arc<LiveSession>, EngineError> {
        self.open_with(id, resume, &[]).await
    }

    /// `open` with an editor's MCP servers (ACP's `session/load`).
    pub async fn open_with(
        &self,
        id: &str,
        resume: Resume,
        servers: &[ClientMcpServer],
    ) -> Result<Arc<LiveSession>, EngineError> {
        let mut live = self.live.lock().await;
        if let Some(s) = live.get(id) {
            return Ok(s.clone());
        }
        let row = self.home.session(id)?;
        let home = Path::new(&row.main_cwd);
        if !home.is_dir() {
            return Err(EngineError::DirectoryGone {
                id: id.to_string(),
                dir: row.main_cwd.clone(),
            });
        }
        let engine = self.engine_for(home, servers)?;
        // Resume with the agent and model it was using, when they are still usable.
        let agent = resume.agent.unwrap_or_else(|| {
            if engine.agents().resolve(&row.agent).is_ok() {
                row.agent.clone()
            } else {
                FALLBACK_AGENT.to_string()
            }
        });
        let model = resume.model.or_else(|| {
            row.model
                .clone()
                .filter(|m| engine.check_model(Some(m)).is_ok())
        });
        let session = engine
            .open_session(SessionOptions {
                pick: SessionPick::Id(row.id.clone()),
                agent,
                model,
                max_steps: None,
                worktree: false,
            })
            .await?;
        let handle = Arc::new(LiveSession { session, engine });
        live.insert(id.to_string(), handle.clone());
        Ok(handle)
    }

    /// Creates a session in `dir` (the home directory when `None`) and opens it.
    pub async fn create(
        &self,
        dir: Option<&Path>,
        servers: &[ClientMcpServer],
        opts: SessionOptions,
    ) -> Result<Arc<LiveSession>, EngineError> {
        let engine = match dir {
            Some(dir) => self.engine_for(dir, servers)?,
            None if servers.is_empty() => self.home.clone(),
            None => self.engine_for(self.home.cwd(), servers)?,
        };
        let session = engine.open_session(opts).await?;
        let id = session.id().to_string();
        let handle = Arc::new(LiveSession { session, engine });
        self.live.lock().await.insert(id, handle.clone());
        Ok(handle)
    }

    /// Stops driving `id` (aborting a running turn); false when it was not open.
    pub async fn close(&self, id: &str) -> bool {
        let Some(handle) = self.live.lock().await.remove(id) else {
            return false;
        };
        close_handle(handle).await;
        true
    }

    /// Closes every session (aborting running turns; a request still holding one ends its
    /// turn as aborted), keeping the engines for requests that are still finishing.
    pub async fn close_all(&self) {
        let all: Vec<_> = self.live.lock().await.drain().map(|(_, s)| s).collect();
        for handle in all {
            close_handle(handle).await;
        }
    }

    /// Closes every session and shuts every engine down (the front end is stopping).
    pub async fn shutdown(&self) {
        self.close_all().await;
        let engines: Vec<_> = lock(&self.engines).drain().map(|(_, e)| e).collect();
        for engine in engines {
            engine.shutdown().await;
        }
    }
}

impl Engine {
    /// The directory stored session `id` was started in (its checkout, also for a worktree
    /// session), where it runs: `DirectoryGone` when that no longer exists.
    pub fn session_home(&self, id: &str) -> Result<std::path::PathBuf, EngineError> {
        let row = self.session(id)?;
        Path::new(&row.main_cwd)
            .canonicalize()
            .map_err(|_| EngineError::DirectoryGone {
                id: id.to_string(),
                dir: row.main_cwd.clone(),
            })
    }

    /// Fails unless stored session `id` belongs to this engine's project and its
    /// directory exists: run elsewhere, its tools would act on the wrong checkout under the
    /// wrong rules.
    pub(crate) fn check_home(&self, id: &str) -> Result<(), EngineError> {
        let row = self.session(id)?;
        let home = Path::new(&row.main_cwd);
        let Ok(home) = home.canonicalize() else {
            return Err(EngineError::DirectoryGone {
                id: id.to_string(),
                dir: row.main_cwd,
            });
        };
        if podcode_config::project_root(&home) != self.project() {
            return Err(EngineError::OtherProject {
                id: id.to_string(),
                home: home.display().to_string(),
                here: self.project().display().to_string(),
            });
        }
        Ok(())
    }
}

fn engine_key(dir: &Path, servers: &[ClientMcpServer]) -> String {
    if servers.is_empty() {
        return dir.display().to_string();
    }
    format!(
        "{}\u{0}{}",
        dir.display(),
        serde_json::to_string(servers).unwrap_or_default()
    )
}

async fn close_handle(handle: Arc<LiveSession>) {
    match Arc::try_unwrap(handle) {
        Ok(handle) => handle.session.close().await,
        // A request still holds it: abort the turn; the session ends when it lets go.
        Err(handle) => handle.port().send(podcode_protocol::Op::Abort {
            session_id: handle.session.id().to_string(),
        }),
    }
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
