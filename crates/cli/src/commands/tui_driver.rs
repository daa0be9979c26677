//! The TUI's side of the `Op`/`Event` API: `TurnDriver` turns the UI's ops into agent
//! turns (with attached files), their cancellation, and model or agent switches; `CliServices`
//! answers the UI's pickers and resumes from the store.
//!
//! Each agent profile has its own permission rules, so switching agents builds a new tool
//! runtime. The UI reads one event stream no matter how many runtimes there were: every
//! runtime's broadcast is forwarded into `ui_events`, and the driver emits its own
//! `Configured`/`Warning` events there too.

use std::sync::Arc;

use podcode_agent::{Agent, AgentOptions, AgentProfile, filter_registry, resolve_profile};
use podcode_protocol::{Event, Op, StepUsage, TurnEnd, TurnSummary};
use podcode_providers::ModelClient;
use podcode_store::Store;
use podcode_tools::{Asker, ToolHook};
use podcode_tui::{Entry, PickItem, TuiServices};
use tokio::sync::{Mutex, broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use crate::app::App;
use crate::reloader::Reloader;

/// What every agent the driver builds shares.
pub struct DriverParts {
    pub app: Arc<App>,
    pub store: Arc<Store>,
    pub asker: Arc<dyn Asker>,
    pub hooks: Vec<Arc<dyn ToolHook>>,
    pub reloader: Arc<Reloader>,
    pub ui_events: broadcast::Sender<Event>,
}

struct Current {
    agent: Arc<Agent>,
    profile: AgentProfile,
    model: Arc<dyn ModelClient>,
    /// The user chose the model (`--model`, `/model`): an agent switch keeps it.
    model_pinned: bool,
    turn: Option<CancellationToken>,
}

pub struct TurnDriver {
    parts: DriverParts,
    current: Mutex<Current>,
}

impl TurnDriver {
    pub fn new(
        parts: DriverParts,
        profile: AgentProfile,
        model: Arc<dyn ModelClient>,
        model_pinned: bool,
    ) -> Self {
        let agent = build_agent(&parts, &profile, model.clone());
        Self {
            parts,
            current: Mutex::new(Current {
                agent,
                profile,
                model,
                model_pinned,
                turn: None,
            }),
        }
    }

    /// Runs ops until the UI drops its sender.
    pub async fn serve(self: Arc<Self>, mut ops: mpsc::UnboundedReceiver<Op>) {
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
                Op::PermissionReply { .. } | Op::Revert { .. } => {}
            }
        }
    }

    pub async fn abort(&self) {
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
        let ui = self.parts.ui_events.clone();
        tokio::spawn(async move {
            let out = agent
                .run_turn_with_files(&session_id, &text, &files, token)
                .await;
            if let Err(e) = out {
                // The loop could not even record the turn: tell the UI it ended.
                let _ = ui.send(Event::TurnFinished {
                    session_id: session_id.clone(),
                    summary: failed_summary(&session_id, e.to_string()),
                });
            }
        });
    }

    fn warn(&self, message: String) {
        let _ = self.parts.ui_events.send(Event::Warning { message });
    }

    async fn set_model(&self, name: &str) {
        let env = |k: &str| std::env::var(k).ok();
        let model = match podcode_providers::resolve(&self.parts.app.config, Some(name), &env) {
            Ok(m) => m,
            Err(e) => return self.warn(format!("model not changed: {e}")),
        };
        let mut cur = self.current.lock().await;
        cur.model = model;
        cur.model_pinned = true;
        self.rebuild(&mut cur);
    }

    async fn set_agent(&self, name: &str) {
        let profile = match resolve_profile(&self.parts.app.config, name) {
            Ok(p) => p,
            Err(e) => return self.warn(format!("agent not changed: {e}")),
        };
        let mut cur = self.current.lock().await;
        if !cur.model_pinned
            && let Some(wanted) = &profile.model
        {
            let env = |k: &str| std::env::var(k).ok();
            match podcode_providers::resolve(&self.parts.app.config, Some(wanted), &env) {
                Ok(m) => cur.model = m,
                Err(e) => self.warn(format!(
                    "agent {name} names model {wanted}, which is not usable ({e}); keeping {}",
                    cur.model.model()
                )),
            }
        }
        cur.profile = profile;
        self.rebuild(&mut cur);
    }

    /// A new agent (and tool runtime, for the profile's permission rules); a running turn
    /// finishes with the old one.
    fn rebuild(&self, cur: &mut Current) {
        cur.agent = build_agent(&self.parts, &cur.profile, cur.model.clone());
        let _ = self.parts.ui_events.send(Event::Configured {
            agent: cur.profile.name.clone(),
            model: cur.model.model().to_string(),
        });
    }
}

fn build_agent(
    parts: &DriverParts,
    profile: &AgentProfile,
    model: Arc<dyn ModelClient>,
) -> Arc<Agent> {
    let app = &parts.app;
    let runtime = Arc::new(app.runtime_with_rules(
        filter_registry(&parts.reloader.registry(), profile),
        parts.hooks.clone(),
        parts.store.clone(),
        parts.asker.clone(),
        &profile.permission,
    ));
    let mut events = runtime.subscribe();
    let ui = parts.ui_events.clone();
    // Ends when the runtime (and with it its sender) is dropped.
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(e) => {
                    let _ = ui.send(e);
                }
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    let _ = ui.send(Event::Warning {
                        message: format!("{n} events were dropped (the screen could not keep up)"),
                    });
                }
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
    });
    let mut opts = AgentOptions::new(app.cwd.clone(), app.project.clone());
    opts.config_dir = Some(app.dirs.config_dir.clone());
    Arc::new(
        Agent::new(runtime, model, parts.store.clone(), profile.clone(), opts)
            .with_reloader(parts.reloader.clone()),
    )
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

/// The UI's pickers and resume, over the CLI's config and store.
pub struct CliServices {
    pub app: Arc<App>,
    pub store: Arc<Store>,
    pub reloader: Arc<Reloader>,
    /// The model in use at start (listed first).
    pub start_model: String,
}

impl TuiServices for CliServices {
    fn transcript(&self, session_id: &str) -> Result<(Vec<Entry>, StepUsage), String> {
        super::tui::load_transcript(&self.store, session_id).map_err(|e| e.to_string())
    }

    fn models(&self) -> Vec<PickItem> {
        let mut items: Vec<PickItem> = Vec::new();
        let mut add = |value: &str, detail: String| {
            if !value.is_empty() && !items.iter().any(|i| i.value == value) {
                items.push(PickItem::new(value, &detail));
            }
        };
        add(&self.start_model, "in use at start".into());
        let config = &self.app.config;
        if let Some(m) = &config.model {
            add(m, "config default".into());
        }
        for (name, agent) in &config.agent {
            if let Some(m) = &agent.model {
                add(m, format!("agent {name}"));
            }
        }
        if let Ok(sessions) = self.store.list_sessions() {
            for s in sessions {
                if let Some(m) = &s.model {
                    add(m, "used before".into());
                }
            }
        }
        items
    }

    fn agents(&self) -> Vec<PickItem> {
        let mut items = vec![
            PickItem::new("build", "every tool; edits and commands ask as configured"),
            PickItem::new("plan", "read-only: no edits, no shell"),
        ];
        for (name, agent) in &self.app.config.agent {
            if items.iter().any(|i| &i.value == name) {
                continue;
            }
            let detail = agent
                .prompt
                .as_deref()
                .and_then(|p| p.lines().next())
                .unwrap_or("from config")
                .chars()
                .take(60)
                .collect::<String>();
            items.push(PickItem::new(name, &detail));
        }
        items
    }

    fn plugins(&self) -> Vec<String> {
        self.reloader.plugin_report()
    }
}
