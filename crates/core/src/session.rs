//! Sessions: a `Session` drives one conversation with a model. It takes `Op`s (prompt,
//! abort, permission reply, revert, set model/agent) and yields one ordered stream of
//! `Event`s. Each agent profile has its own permission rules, so switching agents builds a
//! new tool runtime; every runtime's events are forwarded into the session's stream and the
//! engine's bus. Several sessions can run at once in one engine.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use podcode_agent::{Agent, AgentOptions, AgentProfile, filter_registry, resolve_profile};
use podcode_protocol::{Event, Op, PermissionReply, StepUsage, TurnEnd, TurnSummary};
use podcode_providers::{ModelClient, ProviderError};
use podcode_tools::ToolRuntime;
use tokio::sync::{Mutex, broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use crate::asker::EventAsker;
use crate::engine::{Engine, NewSessionSpec};
use crate::error::EngineError;
use crate::toolset::{SessionTools, ToolSets};

/// Events a session's stream holds for a slow reader. A broadcast keeps that many of the
/// newest events alive, so it is also what a long session costs in memory: the same as the
/// tool runtime's own stream.
pub(crate) const SESSION_EVENTS: usize = 1024;

/// Which stored session to drive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionPick {
    /// A new session with this title (may be empty: the first prompt names it).
    New {
        title: String,
    },
    /// The newest session started in this directory.
    Continue,
    Id(String),
}

pub struct SessionOptions {
    pub pick: SessionPick,
    /// `build`, `plan` or a profile from config.
    pub agent: String,
    /// `provider/model-id`; overrides the config and the profile.
    pub model: Option<String>,
    /// Model requests with tools per turn before the agent must summarize.
    pub max_steps: Option<u32>,
}

/// The ends of a session a front end holds: its event stream and where ops go.
#[derive(Clone)]
pub struct Port {
    events: broadcast::Sender<Event>,
    asker: Arc<EventAsker>,
    ops: Option<mpsc::UnboundedSender<Op>>,
}

impl Port {
    pub(crate) fn new(
        events: broadcast::Sender<Event>,
        ops: Option<mpsc::UnboundedSender<Op>>,
    ) -> Self {
        let asker = EventAsker::new(events.clone());
        Self { events, asker, ops }
    }
    pub(crate) fn asker(&self) -> Arc<EventAsker> {
        self.asker.clone()
    }
    pub(crate) fn emit(&self, event: Event) {
        let _ = self.events.send(event);
    }
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }
    /// Sends an op; a permission reply is settled at once (the first reply wins).
    pub fn send(&self, op: Op) {
        match op {
            Op::PermissionReply { request_id, reply } => {
                self.asker.reply(&request_id, reply);
            }
            op => {
                if let Some(ops) = &self.ops {
                    let _ = ops.send(op);
                }
            }
        }
    }
    /// Answers one ask.
    pub fn reply(&self, request_id: &str, reply: PermissionReply) -> bool {
        self.asker.reply(request_id, reply)
    }
    /// Asks still waiting for an answer, oldest first (`Event::PermissionAsked`).
    pub fn open_asks(&self) -> Vec<Event> {
        self.asker.open_asks()
    }
}

/// A conversation with a model, driven by ops.
pub struct Session {
    id: String,
    title: String,
    port: Port,
    driver: Arc<Driver>,
    serving: tokio::task::JoinHandle<()>,
}

impl Session {
    pub fn id(&self) -> &str {
        &self.id
    }
    pub fn title(&self) -> &str {
        &self.title
    }
    /// The model in use now (`provider/model-id`).
    pub async fn model(&self) -> String {
        self.driver.current.lock().await.model.model().to_string()
    }
    pub async fn agent(&self) -> String {
        self.driver.current.lock().await.profile.name.clone()
    }
    pub fn port(&self) -> Port {
        self.port.clone()
    }
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.port.subscribe()
    }
    pub fn send(&self, op: Op) {
        self.port.send(op);
    }
    /// Aborts a running turn and stops taking ops.
    pub async fn close(self) {
        self.driver.abort().await;
        self.serving.abort();
        #[cfg(feature = "browser")]
        podcode_browser::close_session(&self.id).await;
    }
}

impl Engine {
    /// Opens (or creates) a session and starts driving it. Fails with `NoModel` when no
    /// model is usable — the message says how to configure one.
    pub async fn open_session(
        self: &Arc<Self>,
        opts: SessionOptions,
    ) -> Result<Session, EngineError> {
        let profile = resolve_profile(self.config(), &opts.agent)?;
        let wanted = opts.model.clone().or_else(|| profile.model.clone());
        let model = resolve_model(self, wanted.as_deref())?;
        let model_name = model.model().to_string();
        let (id, title) = self.pick_session(&opts.pick, &profile.name, &model_name)?;
        let sets = self.tool_sets().await;
        let (events, _) = broadcast::channel(SESSION_EVENTS);
        let (ops, op_rx) = mpsc::unbounded_channel();
        let port = Port::new(events, Some(ops));
        let driver = Arc::new(Driver {
            engine: self.clone(),
            sets,
            port: port.clone(),
            max_steps: opts.max_steps,
            current: Mutex::new(Current {
                agent: None,
                profile,
                model,
                model_pinned: opts.model.is_some(),
                turn: None,
            }),
        });
        {
            let mut cur = driver.current.lock().await;
            driver.rebuild(&mut cur, false)?;
        }
        let mut notices = driver.sets.subscribe_notices();
        let notice_port = port.clone();
        tokio::spawn(async move {
            while let Ok(e) = notices.recv().await {
                notice_port.emit(e);
            }
        });
        let serving = tokio::spawn(driver.clone().serve(op_rx));
        Ok(Session {
            id,
            title,
            port,
            driver,
            serving,
        })
    }

    fn pick_session(
        &self,
        pick: &SessionPick,
        agent: &str,
        model: &str,
    ) -> Result<(String, String), EngineError> {
        let store = self.store()?;
        match pick {
            SessionPick::Id(id) => match store.session(id)? {
                Some(s) => Ok((s.id, s.title)),
                None => Err(EngineError::UnknownSession(id.clone())),
            },
            SessionPick::Continue => {
                let cwd = self.cwd().to_string_lossy().into_owned();
                let newest = store
                    .list_sessions()?
                    .into_iter()
                    .filter(|s| s.cwd == cwd && s.parent_id.is_none() && s.agent != "cli")
                    .max_by_key(|s| s.updated_at);
                match newest {
                    Some(s) => Ok((s.id, s.title)),
                    None => Err(EngineError::NothingToContinue(cwd)),
                }
            }
            SessionPick::New { title } => {
                let title: String = title
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(60)
                    .collect();
                let id = self.create_session(&NewSessionSpec {
                    agent,
                    title: &title,
                    model: Some(model),
                })?;
                Ok((id, title))
            }
        }
    }
}

/// Resolves `provider/model-id` (or the configured default) to a client.
pub(crate) fn resolve_model(
    engine: &Engine,
    wanted: Option<&str>,
) -> Result<Arc<dyn ModelClient>, EngineError> {
    let env = |k: &str| std::env::var(k).ok();
    podcode_providers::resolve(engine.config(), wanted, &env).map_err(|e| match e {
        ProviderError::Config(message) => EngineError::NoModel(message),
        e => EngineError::Model(e),
    })
}

struct Current {
    agent: Option<Arc<Agent>>,
    profile: AgentProfile,
    model: Arc<dyn ModelClient>,
    /// The user chose the model (`--model`, `/model`): an agent switch keeps it.
    model_pinned: bool,
    turn: Option<CancellationToken>,
}

struct Driver {
    engine: Arc<Engine>,
    sets: Arc<ToolSets>,
    port: Port,
    max_steps: Option<u32>,
    current: Mutex<Current>,
}

impl Driver {
    async fn serve(self: Arc<Self>, mut ops: mpsc::UnboundedReceiver<Op>) {
        while let Some(op) = ops.recv().await {
            match op {
                Op::Prompt {
                    session_id,
                    text,
                    files,
                } => self.prompt(session_id, text, files).await,
                Op::Abort { .. } => self.abort().await,
                Op::SetModel { model, .. } => self.set_model(&model).await,
                Op::SetAgent { agent, .. } => self.set_agent(&agent).await,
                Op::PermissionReply { request_id, reply } => {
                    self.port.reply(&request_id, reply);
                }
                Op::Revert {
                    session_id,
                    target,
                    force,
                } => {
                    let report = self.engine.revert(&session_id, &target, force);
                    self.port.emit(Event::Reverted { session_id, report });
                }
            }
        }
    }

    async fn abort(&self) {
        if let Some(t) = self.current.lock().await.turn.take() {
            t.cancel();
        }
    }

    async fn prompt(&self, session_id: String, text: String, files: Vec<String>) {
        let token = CancellationToken::new();
        let agent = {
            let mut cur = self.current.lock().await;
            cur.turn = Some(token.clone());
            cur.agent.clone()
        };
        let Some(agent) = agent else {
            return;
        };
        let port = self.port.clone();
        tokio::spawn(async move {
            let out = agent
                .run_turn_with_files(&session_id, &text, &files, token)
                .await;
            if let Err(e) = out {
                // The loop could not even record the turn: tell the front end it ended.
                port.emit(Event::TurnFinished {
                    session_id: session_id.clone(),
                    summary: failed_summary(&session_id, e.to_string()),
                });
            }
        });
    }

    fn warn(&self, message: String) {
        self.port.emit(Event::Warning { message });
    }

    async fn set_model(&self, name: &str) {
        let model = match resolve_model(&self.engine, Some(name)) {
            Ok(m) => m,
            Err(e) => return self.warn(format!("model not changed: {e}")),
        };
        let mut cur = self.current.lock().await;
        cur.model = model;
        cur.model_pinned = true;
        if let Err(e) = self.rebuild(&mut cur, true) {
            self.warn(e.to_string());
        }
    }

    async fn set_agent(&self, name: &str) {
        let profile = match resolve_profile(self.engine.config(), name) {
            Ok(p) => p,
            Err(e) => return self.warn(format!("agent not changed: {e}")),
        };
        let mut cur = self.current.lock().await;
        if !cur.model_pinned
            && let Some(wanted) = &profile.model
        {
            match resolve_model(&self.engine, Some(wanted)) {
                Ok(m) => cur.model = m,
                Err(e) => self.warn(format!(
                    "agent {name} names model {wanted}, which is not usable ({e}); keeping {}",
                    cur.model.model()
                )),
            }
        }
        cur.profile = profile;
        if let Err(e) = self.rebuild(&mut cur, true) {
            self.warn(e.to_string());
        }
    }

    /// A new agent (and tool runtime, for the profile's permission rules); a running turn
    /// finishes with the old one.
    fn rebuild(&self, cur: &mut Current, announce: bool) -> Result<(), EngineError> {
        let set = self.sets.latest();
        let runtime = Arc::new(self.engine.runtime(
            filter_registry(&set.registry, &cur.profile),
            set.hooks.clone(),
            self.port.asker(),
            &cur.profile.permission,
        )?);
        forward_events(&runtime, &self.port, self.engine.bus());
        let engine = &self.engine;
        let mut opts =
            AgentOptions::new(engine.cwd().to_path_buf(), engine.project().to_path_buf());
        opts.config_dir = Some(engine.dirs().config_dir.clone());
        if let Some(n) = self.max_steps {
            opts.max_steps = n;
        }
        let tools = Arc::new(SessionTools {
            sets: self.sets.clone(),
            seen: AtomicU64::new(set.generation),
        });
        cur.agent = Some(Arc::new(
            Agent::new(
                runtime,
                cur.model.clone(),
                engine.store()?,
                cur.profile.clone(),
                opts,
            )
            .with_reloader(tools),
        ));
        if announce {
            self.port.emit(Event::Configured {
                agent: cur.profile.name.clone(),
                model: cur.model.model().to_string(),
            });
        }
        Ok(())
    }
}

/// Copies a runtime's events into the session's stream and the engine's bus; ends when the
/// runtime (and with it its sender) is dropped.
pub(crate) fn forward_events(runtime: &ToolRuntime, port: &Port, bus: &broadcast::Sender<Event>) {
    let mut events = runtime.subscribe();
    let port = port.clone();
    let bus = bus.clone();
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(e) => {
                    // The bus has readers only when a plugin's `event` hook listens.
                    if bus.receiver_count() > 0 {
                        let _ = bus.send(e.clone());
                    }
                    port.emit(e);
                }
                Err(broadcast::error::RecvError::Lagged(n)) => port.emit(Event::Warning {
                    message: format!("{n} events were dropped (the front end could not keep up)"),
                }),
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
    });
}

fn failed_summary(session_id: &str, error: String) -> TurnSummary {
    TurnSummary {
        session_id: session_id.into(),
        end: TurnEnd::Error,
        steps: 0,
        tool_calls: 0,
        usage: StepUsage::default(),
        changes: Vec::new(),
        files: Vec::new(),
        error: Some(error),
    }
}
