//! `podcode` (on a terminal) and `podcode tui`: the full-screen UI. Wiring only: the
//! engine opens the session (a new one is held back until its first prompt stores and
//! titles it: `Engine::first_prompt` runs before each prompt is sent), the UI reads its event stream (permission asks included) and
//! sends it ops; `podcode_tui::EngineServices` answers the UI's pickers, resumes, the
//! session list and the Changes view from the engine.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use podcode_core::{Drafts, EngineError, SessionOptions, SessionPick};
use podcode_protocol::Op;
use podcode_tui::{AppState, EngineServices, Entry, TuiParams};

use crate::start::{tokio_runtime, trusted_engine};

/// What `podcode tui --help` adds after the options: the keys and commands inside.
pub const KEYS_HELP: &str = "Inside the UI:
  enter sends (queued while a turn runs) · alt-enter or ctrl-j: new line · ↑/↓ history
  @path attaches a file (tab completes) · esc aborts the turn · ctrl-c twice quits
  ctrl-g or /changes: the Changes view (r change · c call · t since its prompt · a all)
  /new /sessions /model [provider/id] /agent [name] /tools /plugins /undo /help";

#[derive(Args, Default)]
pub struct TuiArgs {
    /// The agent profile: `build` (all tools), `plan` (read-only), or one from config or an
    /// agent file (`podcode agents` lists them).
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
    /// Work in a new git worktree (branch podcode/<session-id>) that starts with your
    /// uncommitted and untracked changes; your checkout is left alone until the agent's
    /// sync_to_main tool copies the work back. `podcode sessions prune` removes it.
    #[arg(long, conflicts_with_all = ["session", "continue_last"])]
    pub worktree: bool,
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
                pick: pick.clone(),
                agent: args.agent.clone(),
                model: args.model.clone(),
                max_steps: None,
                worktree: args.worktree,
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
        // A new session is stored when its first prompt is sent, and titled from it.
        let drafts = Arc::new(Drafts::new());
        if matches!(pick, SessionPick::New { .. }) {
            engine.hold_until_prompted(&drafts, session.id())?;
        }
        let model_name = session.model().await;
        let cwd_text = session.directory().to_string_lossy().into_owned();
        let mut state = AppState::new(&model_name, &args.agent, &cwd_text, session.id());
        state.status.title = session.title().to_string();
        if args.continue_last || args.session.is_some() {
            let (entries, _) = podcode_tui::transcript_entries(&engine, session.id())?;
            state.transcript.entries = entries;
            let totals = engine.totals(session.id())?;
            state.status.set_totals(totals.own, totals.tree);
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
        let (prompted, held) = (engine.clone(), drafts.clone());
        tokio::spawn(async move {
            while let Some(op) = op_rx.recv().await {
                if let Op::Prompt {
                    session_id, text, ..
                } = &op
                {
                    // When the store cannot be written the prompt goes on anyway: the
                    // turn then fails on the same store and the UI shows its error.
                    prompted.first_prompt(&held, session_id, text).ok();
                }
                forward.send(op);
            }
        });
        let services =
            Arc::new(EngineServices::new(engine.clone(), model_name).with_drafts(drafts));
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
