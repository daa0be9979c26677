//! Sessions: a `Session` drives one conversation with a model. It takes `Op`s (prompt,
//! abort, permission reply, revert, set model/agent) and yields one ordered stream of
//! `Event`s. Each agent profile has its own permission rules, so switching agents builds a
//! new tool runtime; every runtime hands its events, as they happen, to the session's one
//! writer (`sequence.rs`), which numbers them with the asks, sub-agents' events and the
//! driver's own. Several sessions can run at once in one engine.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a front end hears when it prompts a session whose turn still runs (HTTP answers 409
/// with it, ACP a JSON-RPC error): the session has one busy state, whoever drives it.
pub const BUSY_TEXT: &str =
    "this session is still answering the previous prompt: abort it or wait for it to finish";

use podcode_agent::{Agent, AgentOptions, AgentProfile, CommandTurn, filter_registry};
use podcode_protocol::{Event, Op, PermissionReply, StepUsage, TurnEnd, TurnSummary};
use podcode_providers::{ModelClient, ProviderError};
use tokio::sync::{Mutex, broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use crate::active::{ActiveSessions, Driver as ActiveDriver};
use crate::asker::EventAsker;
use crate::engine::{Engine, NewSessionSpec};
use crate::error::EngineError;
use crate::sequence::{Numbered, Sequencer};
use crate::toolset::ToolSets;
use crate::worktree::Place;

/// Events a session's stream holds for a slow reader. A broadcast keeps that many of the
/// newest events alive, so it is also what a long session costs in memory: the same as the
/// tool runtime's own stream.
pub(crate) const SESSION_EVENTS: usize = 1024;

/// Which stored session to drive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionPick {
    /// A new session with this title (may be empty: the first prompt names it).
    New {
        /// The title.
        title: String,
    },
    /// The newest session started in this directory.
    Continue,
    /// The session with this id.
    Id(String),
}

/// How to open a session: which one, with which agent and model.
pub struct SessionOptions {
    /// Which stored session (new, continue, by id).
    pub pick: SessionPick,
    /// `build`, `plan` or a profile from config.
    pub agent: String,
    /// `provider/model-id`; overrides the config and the profile.
    pub model: Option<String>,
    /// Model requests with tools per turn before the agent must summarize.
    pub max_steps: Option<u32>,
    /// A new session works in its own git worktree (`worktree.rs`); a stored worktree
    /// session always does.
    pub worktree: bool,
}

/// The ends of a session a front end holds: its event stream and where ops go.
#[derive(Clone)]
pub struct Port {
    /// The session's one writer: everything the session says goes through it.
    writer: Arc<Sequencer>,
    asker: Arc<EventAsker>,
    ops: Option<mpsc::UnboundedSender<Op>>,
    /// The session this port drives (its turns' `TurnFinished` settle `turns`).
    id: Arc<str>,
    /// Prompts accepted and not yet finished (the one running plus those queued): the
    /// session's one busy state, shared by every front end holding this port.
    turns: Arc<AtomicU64>,
    /// The engine's running turns: a sub-agent's session run by its parent's `task` call
    /// is busy for this port too.
    active: Arc<ActiveSessions>,
}

impl Port {
    pub(crate) fn new(
        id: &str,
        events: broadcast::Sender<Event>,
        ops: Option<mpsc::UnboundedSender<Op>>,
        active: Arc<ActiveSessions>,
    ) -> Self {
        let writer = Sequencer::new(events);
        let asker = EventAsker::new(writer.sink());
        let port = Self {
            writer,
            asker,
            ops,
            id: id.into(),
            turns: Arc::new(AtomicU64::new(0)),
            active,
        };
        if port.ops.is_some() {
            port.active.open_port(&port.id, port.downgrade());
        }
        port
    }

    /// This port without keeping the session alive (the engine's list of open sessions).
    fn downgrade(&self) -> WeakPort {
        WeakPort {
            writer: Arc::downgrade(&self.writer),
            asker: Arc::downgrade(&self.asker),
            ops: self.ops.as_ref().map(|o| o.downgrade()),
            id: self.id.clone(),
            turns: Arc::downgrade(&self.turns),
            active: Arc::downgrade(&self.active),
        }
    }

    /// True from the moment a prompt is accepted until its turn (and every queued one) has
    /// finished, and while a parent's `task` call runs this (sub-agent) session.
    pub fn busy(&self) -> bool {
        self.turns.load(Ordering::SeqCst) > 0 || self.run_by_task()
    }

    fn run_by_task(&self) -> bool {
        self.active.driver(&self.id) == Some(ActiveDriver::Task)
    }

    /// Starts a turn unless one runs or waits: the answer every front end gives a second
    /// prompt (`EngineError::Busy`). `send(Op::Prompt)` queues instead (the TUI).
    pub fn prompt(&self, text: String, files: Vec<String>) -> Result<(), EngineError> {
        self.start(Op::Prompt {
            session_id: self.id.to_string(),
            text,
            files,
        })
    }

    /// Runs custom command `name` with `arguments` as a turn, on the terms of `prompt`. An
    /// unknown name ends the turn with an error naming the commands there are.
    pub fn command(&self, name: String, arguments: String) -> Result<(), EngineError> {
        self.start(Op::Command {
            session_id: self.id.to_string(),
            name,
            arguments,
        })
    }

    fn start(&self, op: Op) -> Result<(), EngineError> {
        if self.run_by_task()
            || self
                .turns
                .compare_exchange(0, 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
        {
            return Err(EngineError::Busy(BUSY_TEXT.to_string()));
        }
        self.dispatch(op);
        Ok(())
    }

    fn dispatch(&self, op: Op) {
        let is_prompt = self.counts(&op);
        let sent = match &self.ops {
            Some(ops) => ops.send(op).is_ok(),
            None => false,
        };
        if is_prompt && !sent {
            self.turn_done();
        }
    }

    /// A prompt for this port's own session (the TUI may switch a driver to another).
    fn counts(&self, op: &Op) -> bool {
        matches!(op, Op::Prompt { session_id, .. } | Op::Command { session_id, .. } if *session_id == *self.id)
    }

    /// One accepted prompt has finished (or will never run).
    pub(crate) fn turn_done(&self) {
        let _ = self
            .turns
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    }
    pub(crate) fn asker(&self) -> Arc<EventAsker> {
        self.asker.clone()
    }
    pub(crate) fn emit(&self, event: Event) {
        // Settled before anyone hears the turn ended, so a front end that prompts again on
        // `TurnFinished` is never told the session is busy.
        if let Event::TurnFinished { session_id, .. } = &event
            && *session_id == *self.id
        {
            self.turn_done();
        }
        self.writer.publish(event);
    }
    /// `emit` as a shareable function (the tool runtime and sub-agents report through it):
    /// the turn's own `TurnFinished` settles the busy state on its way to the writer.
    pub(crate) fn sink(&self) -> podcode_tools::EventSink {
        let port = self.clone();
        Arc::new(move |event| port.emit(event))
    }
    /// Queues the session's events from now on for the event log.
    pub(crate) fn log_into(&self, queue: crate::sequence::LogQueue) {
        self.writer.log_into(&self.id, queue);
    }
    /// A receiver of the session's events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.writer.subscribe()
    }
    /// A receiver of the session's events from now on, each with its number in the
    /// session's one sequence (gapless from the session's opening).
    pub fn subscribe_numbered(&self) -> broadcast::Receiver<Arc<Numbered>> {
        self.writer.subscribe_numbered()
    }
    /// Sends an op; a permission reply is settled at once (the first reply wins). A prompt
    /// for this session while a turn runs waits for it (turns never overlap on one history).
    pub fn send(&self, op: Op) {
        match op {
            Op::PermissionReply { request_id, reply } => {
                self.asker.reply(&request_id, reply);
            }
            op => {
                if self.counts(&op) {
                    self.turns.fetch_add(1, Ordering::SeqCst);
                }
                self.dispatch(op);
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
    /// Closes every open ask because the turn is being stopped (send `Op::Abort` too): a
    /// later answer is refused and every front end closes its prompt now, not when the
    /// abort has reached the waiting calls.
    pub fn close_asks_for_stop(&self) {
        self.asker.close_for_stop();
    }
}

/// A session's port as the engine remembers it: gone once the front end closed the session.
pub(crate) struct WeakPort {
    writer: std::sync::Weak<Sequencer>,
    asker: std::sync::Weak<EventAsker>,
    ops: Option<mpsc::WeakUnboundedSender<Op>>,
    id: Arc<str>,
    turns: std::sync::Weak<AtomicU64>,
    active: std::sync::Weak<ActiveSessions>,
}

impl WeakPort {
    /// The port, while its session is open.
    pub(crate) fn upgrade(&self) -> Option<Port> {
        let ops = match &self.ops {
            Some(o) => Some(o.upgrade()?),
            None => None,
        };
        Some(Port {
            writer: self.writer.upgrade()?,
            asker: self.asker.upgrade()?,
            ops,
            id: self.id.clone(),
            turns: self.turns.upgrade()?,
            active: self.active.upgrade()?,
        })
    }
}

/// A conversation with a model, driven by ops.
pub struct Session {
    id: String,
    title: String,
    port: Port,
    driver: Arc<Driver>,
    serving: tokio::task::JoinHandle<()>,
    /// The worktree this session works in, when it has one.
    worktree: Option<std::path::PathBuf>,
    /// Where it works (the driver's place when opened).
    directory: std::path::PathBuf,
}

impl Session {
    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }
    /// The session's title (may be empty).
    pub fn title(&self) -> &str {
        &self.title
    }
    /// The directory the session works in (a worktree, or the engine's directory).
    pub fn directory(&self) -> &std::path::Path {
        &self.directory
    }
    /// The root of the session's own git worktree, for a worktree session.
    pub fn worktree(&self) -> Option<&std::path::Path> {
        self.worktree.as_deref()
    }
    /// The model in use now (`provider/model-id`).
    pub async fn model(&self) -> String {
        self.driver.current.lock().await.model.model().to_string()
    }
    /// The agent profile in use now.
    pub async fn agent(&self) -> String {
        self.driver.current.lock().await.profile.name.clone()
    }
    /// The session's event stream and op sender, for a front end to hold.
    pub fn port(&self) -> Port {
        self.port.clone()
    }
    /// A receiver of the session's events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.port.subscribe()
    }
    /// Sends an op to the session (prompt, reply, abort, …).
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
        // The store (a new one is made on first use) opens beside the tool set's load; an
        // error it meets is met again, and returned, where the session row is written.
        let store = self.clone();
        let opening = tokio::task::spawn_blocking(move || store.store().map(drop));
        // And the git status the first turn's system prompt shows (a process).
        self.git_prefetch.start(self.cwd().to_path_buf());
        // A sub-agent's session (a `task` call's child) opened by a client goes on as that
        // sub-agent, with its own tools and rules; any other session needs a primary agent.
        let child = match &opts.pick {
            SessionPick::Id(id) => self.session(id).is_ok_and(|s| s.parent_id.is_some()),
            _ => false,
        };
        let profile = if child {
            self.agents().resolve(&opts.agent)?
        } else {
            self.agents().resolve_primary(&opts.agent)?
        };
        let wanted = opts.model.clone().or_else(|| profile.model.clone());
        let model = resolve_model(self, wanted.as_deref())?;
        let model_name = model.model().to_string();
        let fresh_worktree = opts.worktree && matches!(opts.pick, SessionPick::New { .. });
        if fresh_worktree {
            // Refuse before a session row exists for a worktree that cannot be made.
            crate::worktree::check(self.cwd())?;
        }
        // The tool set (and with it plugins' `event` hooks) first: a new session's
        // `SessionCreated` then reaches them.
        let sets = self.tool_sets().await;
        let _ = opening.await;
        let (id, title) = self.pick_session(&opts.pick, &profile.name, &model_name)?;
        let (place, worktree) = self.session_place(&id, fresh_worktree)?;
        let (events, _) = broadcast::channel(SESSION_EVENTS);
        let (ops, op_rx) = mpsc::unbounded_channel();
        let port = Port::new(&id, events, Some(ops), self.active.clone());
        if let Some(log) = self.event_log.get() {
            log.attach(&port);
        }
        let driver = Arc::new(Driver {
            engine: self.clone(),
            sets,
            port: port.clone(),
            max_steps: opts.max_steps,
            gate: Arc::new(Mutex::new(())),
            place: std::sync::Mutex::new(place),
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
        let directory = place_of(&driver).directory;
        let serving = tokio::spawn(driver.clone().serve(op_rx));
        Ok(Session {
            id,
            title,
            port,
            driver,
            serving,
            worktree,
            directory,
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
                    .filter(|s| {
                        // A worktree session works elsewhere but was started here.
                        (s.cwd == cwd || s.main_cwd == cwd)
                            && s.parent_id.is_none()
                            && s.agent != "cli"
                    })
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
    // Read once: resolution and the choice of client both look at it.
    let credentials = engine.auth_store().all().unwrap_or_default();
    let stored = |p: &str| {
        credentials
            .get(p)
            .map(crate::plugin_auth::stored_credential)
    };
    let error = |e| match e {
        ProviderError::Config(message) => EngineError::NoModel(message),
        e => EngineError::Model(e),
    };
    let resolved = podcode_providers::resolve_model_with(engine.config(), wanted, &env, &stored)
        .map_err(error)?;
    match stored(&resolved.model.provider) {
        // Stored credentials: a plugin may sign the requests (decided at the first one).
        Some(credential) => Ok(Arc::new(crate::plugin_auth::PluginSignedClient::new(
            resolved,
            engine.tools_cell(),
            &credential,
        ))),
        None => resolved.client().map_err(error),
    }
}

/// An input waiting for its turn.
enum Queued {
    Prompt { text: String, files: Vec<String> },
    Command { name: String, arguments: String },
}

/// What a turn is run with.
#[derive(Default)]
struct TurnInput {
    text: String,
    files: Vec<String>,
    /// The custom command it came from.
    command: Option<String>,
    /// The sub-agent profile a `subtask` command runs in.
    subtask: Option<String>,
    /// What the user typed after the command's name.
    arguments: String,
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
    /// Where turns run: the place of the session the newest prompt was for (a front end
    /// may switch sessions, e.g. the TUI's `/new` in a fresh worktree).
    place: std::sync::Mutex<Place>,
    current: Mutex<Current>,
    /// Held by the running turn: a prompt queued behind it starts when it ends, so two
    /// turns never write one history at once.
    gate: Arc<Mutex<()>>,
}

impl Driver {
    async fn serve(self: Arc<Self>, mut ops: mpsc::UnboundedReceiver<Op>) {
        // Prompts wait their turn in their own queue, so an abort is taken while they wait.
        let (prompts, mut queued) = mpsc::unbounded_channel::<(String, Queued)>();
        let driver = self.clone();
        let queue = tokio::spawn(async move {
            while let Some((session_id, input)) = queued.recv().await {
                driver.prompt(session_id, input).await;
            }
        });
        while let Some(op) = ops.recv().await {
            match op {
                Op::Prompt {
                    session_id,
                    text,
                    files,
                } => {
                    let _ = prompts.send((session_id, Queued::Prompt { text, files }));
                }
                Op::Command {
                    session_id,
                    name,
                    arguments,
                } => {
                    let _ = prompts.send((session_id, Queued::Command { name, arguments }));
                }
                Op::Abort { .. } => self.abort().await,
                Op::SetModel { model, .. } => self.set_model(&model).await,
                Op::SetAgent { agent, .. } => self.set_agent(&agent).await,
                Op::Compact { session_id } => self.compact(session_id).await,
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
        queue.abort();
    }

    async fn abort(&self) {
        if let Some(t) = self.current.lock().await.turn.take() {
            t.cancel();
        }
        // A call waiting on an ask does not watch the abort itself: without this it would
        // be dropped only after the pipeline's grace period, its ask answerable meanwhile.
        self.port.asker.close_for_stop();
        self.port.asker.release_stopped();
    }

    async fn prompt(&self, session_id: String, input: Queued) {
        // Wait for the running turn (its abort stays possible: `serve` goes on taking ops).
        let gate = self.gate.clone().lock_owned().await;
        let token = CancellationToken::new();
        let prepared = {
            let mut cur = self.current.lock().await;
            match self.follow(&session_id, &mut cur) {
                Ok(()) => {
                    cur.turn = Some(token.clone());
                    self.prepare(&cur, input)
                }
                Err(e) => Err(e.to_string()),
            }
        };
        let (agent, turn_input) = match prepared {
            Ok((agent, input)) => (Ok(agent), input),
            Err(e) => (Err(e), TurnInput::default()),
        };
        let port = self.port.clone();
        let agent = match agent {
            Ok(agent) => agent,
            Err(error) => {
                port.emit(Event::TurnFinished {
                    session_id: session_id.clone(),
                    summary: failed_summary(&session_id, error),
                });
                return;
            }
        };
        // One running turn per session, whoever drives it: a parent's `task` call may be
        // running this (sub-agent) session right now.
        let Some(turn) = self.engine.active.hold(&session_id, ActiveDriver::Own) else {
            if let Some(t) = self.current.lock().await.turn.take() {
                t.cancel();
            }
            port.emit(Event::TurnFinished {
                session_id: session_id.clone(),
                summary: failed_summary(&session_id, BUSY_TEXT.to_string()),
            });
            return;
        };
        tokio::spawn(async move {
            // Dropped in reverse order: the session is free before the next queued turn
            // takes the gate.
            let _gate = gate;
            let _turn = turn;
            let out = match &turn_input.command {
                None => {
                    agent
                        .run_turn_with_files(
                            &session_id,
                            &turn_input.text,
                            &turn_input.files,
                            token,
                        )
                        .await
                }
                Some(name) => {
                    agent
                        .run_command_turn(
                            &session_id,
                            CommandTurn {
                                name,
                                arguments: &turn_input.arguments,
                                subtask: turn_input.subtask.as_deref(),
                            },
                            &turn_input.text,
                            &turn_input.files,
                            token,
                        )
                        .await
                }
            };
            if let Err(e) = out {
                // The loop could not even record the turn: tell the front end it ended.
                port.emit(Event::TurnFinished {
                    session_id: session_id.clone(),
                    summary: failed_summary(&session_id, e.to_string()),
                });
            }
        });
    }

    /// Moves the driver to where `session_id` works (its worktree, or the engine's
    /// directory) when that is not where it is now, rebuilding the agent there.
    /// Fails when the session may not run here (another project's, its directory gone):
    /// the turn is then refused rather than run in the wrong place.
    fn follow(&self, session_id: &str, cur: &mut Current) -> Result<(), EngineError> {
        let (place, _) = self.engine.session_place(session_id, false)?;
        if place_of(self) == place {
            return Ok(());
        }
        if let Ok(mut at) = self.place.lock() {
            *at = place;
        }
        self.rebuild(cur, false)
    }

    /// `/compact`: between turns only, so the conversation is not edited under a request —
    /// it waits for a running turn to finish, and a prompt sent after it waits for it.
    async fn compact(&self, session_id: String) {
        let agent = self.current.lock().await.agent.clone();
        let Some(agent) = agent else { return };
        let port = self.port.clone();
        let gate = self.gate.clone();
        tokio::spawn(async move {
            let _gate = gate.lock_owned().await;
            match agent.compact(&session_id, CancellationToken::new()).await {
                Ok(true) => {}
                Ok(false) => port.emit(Event::Warning {
                    message: "nothing to compact: the conversation is short".into(),
                }),
                Err(e) => port.emit(Event::Warning {
                    message: format!("could not compact: {e}"),
                }),
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
        let profile = match self.engine.agents().resolve_primary(name) {
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

    /// What a queued input runs with: the session's agent, or for a command naming an
    /// agent profile or a model, an agent built for this turn only.
    fn prepare(&self, cur: &Current, input: Queued) -> Result<(Arc<Agent>, TurnInput), String> {
        let session_agent = || {
            cur.agent
                .clone()
                .ok_or_else(|| "the session has no agent".to_string())
        };
        match input {
            Queued::Prompt { text, files } => Ok((
                session_agent()?,
                TurnInput {
                    text,
                    files,
                    command: None,
                    subtask: None,
                    arguments: String::new(),
                },
            )),
            Queued::Command { name, arguments } => {
                let place = place_of(self);
                let command = self
                    .engine
                    .prepare_command(&name, &arguments, &place.directory)?;
                // A sub-agent command runs in the session's agent, which starts the sub-agent
                // of the command's profile (`general` unless it names one).
                let subtask = command
                    .subtask
                    .then(|| command.agent.clone().unwrap_or_else(|| "general".into()));
                let agent =
                    if subtask.is_some() || (command.agent.is_none() && command.model.is_none()) {
                        session_agent()?
                    } else {
                        let profile = match &command.agent {
                            Some(a) => self.engine.agents().resolve(a).map_err(|e| {
                                format!("/{name} names agent {a}, which cannot run: {e}")
                            })?,
                            None => cur.profile.clone(),
                        };
                        let model = match &command.model {
                            Some(m) => resolve_model(&self.engine, Some(m)).map_err(|e| {
                                format!("/{name} names model {m}, which is not usable: {e}")
                            })?,
                            None => cur.model.clone(),
                        };
                        Arc::new(
                            self.build_agent(&profile, &model)
                                .map_err(|e| e.to_string())?,
                        )
                    };
                Ok((
                    agent,
                    TurnInput {
                        text: command.text,
                        files: command.files,
                        command: Some(command.name),
                        subtask,
                        arguments,
                    },
                ))
            }
        }
    }

    /// A new agent (and tool runtime, for the profile's permission rules); a running turn
    /// finishes with the old one.
    fn rebuild(&self, cur: &mut Current, announce: bool) -> Result<(), EngineError> {
        cur.agent = Some(Arc::new(self.build_agent(&cur.profile, &cur.model)?));
        if announce {
            self.port.emit(Event::Configured {
                agent: cur.profile.name.clone(),
                model: cur.model.model().to_string(),
            });
        }
        Ok(())
    }

    /// An agent for `profile` on `model` in the driver's place.
    fn build_agent(
        &self,
        profile: &AgentProfile,
        model: &Arc<dyn ModelClient>,
    ) -> Result<Agent, EngineError> {
        let set = self.sets.latest();
        let host = crate::task::TaskHost {
            engine: self.engine.clone(),
            sets: self.sets.clone(),
            model: model.clone(),
            sink: self.port.sink(),
            asker: self.port.asker(),
        };
        let place = place_of(self);
        let (registry, tools) = crate::task::tools_for(&host, &set, place.in_worktree);
        let registry = filter_registry(&registry, profile);
        let runtime = Arc::new(self.engine.runtime(
            registry,
            set.hooks.clone(),
            self.port.asker(),
            &profile.permission,
            &profile.name,
            runtime_sink(self.port.sink(), self.engine.bus()),
        )?);
        let engine = &self.engine;
        let mut opts = AgentOptions::new(place.directory.clone(), place.root.clone());
        opts.warned_models = engine.warned_models.clone();
        opts.git_prefetch = engine.git_prefetch.clone();
        opts.main_cwd = place.main_cwd.clone();
        opts.config_dir = Some(engine.dirs().config_dir.clone());
        opts.model_info = podcode_providers::model_info(engine.config(), model.model());
        opts.compaction = engine.config().compaction;
        opts.temperature = profile.temperature;
        if let Some(n) = self.max_steps.or(profile.steps) {
            opts.max_steps = n;
        }
        Ok(Agent::new(
            runtime,
            model.clone(),
            engine.store()?,
            profile.clone(),
            opts,
        )
        .with_reloader(tools))
    }
}

/// A runtime's events go to `sink` (the session's writer, or a child's wrapping sink) as
/// they happen, and to the engine's bus when a plugin's `event` hook listens.
pub(crate) fn runtime_sink(
    sink: podcode_tools::EventSink,
    bus: &broadcast::Sender<Event>,
) -> podcode_tools::EventSink {
    let bus = bus.clone();
    Arc::new(move |event| {
        if bus.receiver_count() > 0 {
            let _ = bus.send(event.clone());
        }
        sink(event);
    })
}

/// The driver's place now.
fn place_of(driver: &Driver) -> Place {
    match driver.place.lock() {
        Ok(p) => p.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
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
