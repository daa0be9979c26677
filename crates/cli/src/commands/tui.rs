//! `podcode` (on a terminal) and `podcode tui`: the full-screen UI. Wiring only: the
//! engine opens the session, the UI reads its event stream (permission asks included) and
//! sends it ops; `CliServices` answers the UI's pickers, resumes, the session list and the
//! Changes view from the engine.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use podcode_core::{
    ChangeEntry, Engine, EngineError, NewSessionSpec, SessionOptions, SessionPick, ToolCallState,
    TranscriptItem,
};
use podcode_protocol::{RevertReport, RevertTarget, StepUsage};
use podcode_tui::{
    AppState, ChangeItem, Entry, PickItem, ToolCard, ToolStatus, TuiParams, TuiServices,
};

use crate::start::{tokio_runtime, trusted_engine};

/// What `podcode tui --help` adds after the options: the keys and commands inside.
pub const KEYS_HELP: &str = "Inside the UI:
  enter sends (queued while a turn runs) · alt-enter or ctrl-j: new line · ↑/↓ history
  @path attaches a file (tab completes) · esc aborts the turn · ctrl-c twice quits
  ctrl-g or /changes: the Changes view (r change · c call · t since its prompt · a all)
  /new /sessions /model [provider/id] /agent [name] /tools /plugins /undo /help";

#[derive(Args, Default)]
pub struct TuiArgs {
    /// The agent profile: `build` (all tools), `plan` (read-only) or one from config.
    #[arg(long, default_value = "build")]
    pub agent: String,
    /// The model as `provider/model-id` (overrides config and the agent profile).
    #[arg(long, short = 'm')]
    pub model: Option<String>,
    /// Continue the most recent session started in this directory.
    #[arg(long = "continue", short = 'c', conflicts_with = "session")]
    pub continue_last: bool,
    /// Continue session ID.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
}

pub fn run(cwd: Option<PathBuf>, mut args: TuiArgs) -> Result<ExitCode> {
    if args.agent.is_empty() {
        args.agent = "build".into();
    }
    // Before the screen switches to the UI, while the terminal still reads lines.
    let engine = trusted_engine(cwd)?;
    tokio_runtime()?.block_on(async move {
        let pick = match (&args.session, args.continue_last) {
            (Some(id), _) => SessionPick::Id(id.clone()),
            (None, true) => SessionPick::Continue,
            (None, false) => SessionPick::New {
                title: String::new(),
            },
        };
        let session = match engine
            .open_session(SessionOptions {
                pick,
                agent: args.agent.clone(),
                model: args.model.clone(),
                max_steps: None,
            })
            .await
        {
            Ok(s) => s,
            Err(EngineError::NoModel(message)) => {
                eprintln!("{message}");
                return Ok(ExitCode::from(2));
            }
            Err(e) => return Err(e.into()),
        };
        let model_name = session.model().await;
        let cwd_text = engine.cwd().to_string_lossy().into_owned();
        let mut state = AppState::new(&model_name, &args.agent, &cwd_text, session.id());
        state.status.title = session.title().to_string();
        if args.continue_last || args.session.is_some() {
            let (entries, usage) = transcript_entries(&engine, session.id())?;
            state.transcript.entries = entries;
            state.status.usage = usage;
        }
        state.no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        for (message, source) in engine.tool_errors().await {
            state
                .transcript
                .entries
                .push(Entry::Notice(format!("⚠ {message} ({source})")));
        }
        state.tools_info = engine.tool_lines().await;
        let port = session.port();
        let (ops, mut op_rx) = tokio::sync::mpsc::unbounded_channel();
        let forward = port.clone();
        tokio::spawn(async move {
            while let Some(op) = op_rx.recv().await {
                forward.send(op);
            }
        });
        let services = Arc::new(CliServices {
            engine: engine.clone(),
            start_model: model_name,
        });
        let result = podcode_tui::run(TuiParams {
            state,
            events: port.subscribe(),
            open_asks: port.open_asks(),
            ops,
            services,
        })
        .await;
        session.close().await;
        engine.shutdown().await;
        result?;
        Ok(ExitCode::SUCCESS)
    })
}

/// A stored conversation as transcript entries, and the tokens it used.
fn transcript_entries(engine: &Engine, session_id: &str) -> Result<(Vec<Entry>, StepUsage)> {
    let (items, usage) = engine.transcript(session_id)?;
    let mut entries = Vec::new();
    for item in items {
        match item {
            TranscriptItem::User { text, files } => {
                if !text.is_empty() {
                    entries.push(Entry::User(text));
                }
                for path in files {
                    entries.push(Entry::Notice(format!("📎 attached {path}")));
                }
            }
            TranscriptItem::Assistant { message_id, text } => {
                entries.push(Entry::Assistant { message_id, text })
            }
            TranscriptItem::Reasoning { message_id, text } => {
                entries.push(Entry::Reasoning { message_id, text })
            }
            TranscriptItem::Tool(call) => entries.push(Entry::Tool(ToolCard {
                call_id: call.call_id,
                tool: call.tool,
                title: call.title,
                status: match call.state {
                    ToolCallState::Completed => ToolStatus::Done,
                    ToolCallState::Failed => ToolStatus::Failed,
                    ToolCallState::Denied => ToolStatus::Denied,
                    ToolCallState::TimedOut => ToolStatus::TimedOut,
                    ToolCallState::Running | ToolCallState::Interrupted => ToolStatus::Interrupted,
                },
                elapsed_ms: call.elapsed_ms,
                output: call.output,
                attachments: call.attachments,
                spill_path: call.spill_path,
                expanded: false,
                diff: call.diff,
            })),
        }
    }
    Ok((entries, usage))
}

/// The UI's pickers, resumes, session list and Changes view, over the engine.
struct CliServices {
    engine: Arc<Engine>,
    /// The model in use at start (listed first).
    start_model: String,
}

fn change_item(e: ChangeEntry) -> ChangeItem {
    ChangeItem {
        change: e.change,
        turn: e.turn,
        call_label: e.call_label,
        reverted: e.reverted,
        display: e.display,
        diff: e.diff,
    }
}

impl TuiServices for CliServices {
    fn transcript(&self, session_id: &str) -> Result<(Vec<Entry>, StepUsage), String> {
        transcript_entries(&self.engine, session_id).map_err(|e| e.to_string())
    }

    fn models(&self) -> Vec<PickItem> {
        let choices = self.engine.model_choices(&self.start_model);
        choices
            .iter()
            .map(|c| PickItem::new(&c.value, &c.detail))
            .collect()
    }

    fn agents(&self) -> Vec<PickItem> {
        let choices = self.engine.agent_choices();
        choices
            .iter()
            .map(|c| PickItem::new(&c.value, &c.detail))
            .collect()
    }

    fn plugins(&self) -> Vec<String> {
        let engine = self.engine.clone();
        tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(engine.plugin_report())
        })
    }

    fn sessions_here(&self, cwd: &str, current: &str) -> Result<Vec<PickItem>, String> {
        let mut sessions: Vec<_> = self
            .engine
            .sessions(false)
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|s| s.cwd == cwd && s.parent_id.is_none() && s.id != current)
            .filter(|s| self.engine.has_messages(&s.id).unwrap_or(false))
            .collect();
        sessions.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
        Ok(sessions
            .into_iter()
            .map(|s| PickItem {
                label: if s.title.is_empty() {
                    "(untitled)".into()
                } else {
                    s.title.clone()
                },
                detail: format!(
                    "{} · {} · {}",
                    podcode_tui::ago(s.updated_at),
                    s.agent,
                    s.id
                ),
                value: s.id,
            })
            .collect())
    }

    fn new_session(&self, agent: &str, model: &str) -> Result<String, String> {
        self.engine
            .create_session(&NewSessionSpec {
                agent,
                title: "",
                model: Some(model),
            })
            .map_err(|e| e.to_string())
    }

    fn session_title(&self, id: &str) -> Result<Option<String>, String> {
        match self.engine.session(id) {
            Ok(s) => Ok(Some(s.title)),
            Err(EngineError::UnknownSession(_)) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    fn changes(&self, session_id: &str) -> Result<Vec<ChangeItem>, String> {
        Ok(self
            .engine
            .change_entries(session_id)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(change_item)
            .collect())
    }

    fn revert(&self, session_id: &str, target: RevertTarget, force: bool) -> RevertReport {
        self.engine.revert(session_id, &target, force)
    }
}
