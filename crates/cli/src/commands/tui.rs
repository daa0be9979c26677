//! `podcode` (on a terminal) and `podcode tui`: the full-screen UI. Wiring only: the same
//! App → tools → runtime → agent chain as `podcode run`, with a `UiAsker` for permission
//! prompts; the UI sends `Op::Prompt`/`Op::Abort`, which this module turns into agent turns
//! and their cancellation, and reads the runtime's event broadcast.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Result, bail};
use clap::Args;
use podcode_agent::{Agent, AgentOptions, resolve_profile};
use podcode_protocol::{Event, Op, StepUsage, TurnEnd, TurnSummary};
use podcode_store::{NewSession, Store};
use podcode_tools::Asker;
use podcode_tui::{AppState, TuiParams, UiAsker};
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use crate::app::{App, tokio_runtime};

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
    let app = Arc::new(App::load(cwd)?);
    let profile = resolve_profile(&app.config, &args.agent)?;
    let wanted = args.model.clone().or_else(|| profile.model.clone());
    let env = |k: &str| std::env::var(k).ok();
    let model = match podcode_providers::resolve(&app.config, wanted.as_deref(), &env) {
        Ok(m) => m,
        Err(podcode_providers::ProviderError::Config(message)) => {
            eprintln!("{message}");
            return Ok(ExitCode::from(2));
        }
        Err(e) => bail!("{e}"),
    };
    let model_name = model.model().to_string();
    let store = app.open_store()?;
    let cwd_text = app.cwd.to_string_lossy().into_owned();
    let (session_id, title) = pick_session(&store, &args, &cwd_text, &profile.name, &model_name)?;

    let mut state = AppState::new(&model_name, &profile.name, &cwd_text, &session_id);
    state.title = title;
    if args.continue_last || args.session.is_some() {
        load_transcript(&store, &session_id, &mut state)?;
    }
    state.no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());

    tokio_runtime()?.block_on(async move {
        let loaded = app.tools().await;
        let mut state = state;
        for p in loaded.registry.problems() {
            if p.level == podcode_tools::ProblemLevel::Error {
                state.entries.push(podcode_tui::Entry::Notice(format!(
                    "⚠ {} ({})",
                    p.message, p.source
                )));
            }
        }
        state.tools_info = loaded.registry.listing();
        let (asker, asks) = UiAsker::channel();
        let asker: Arc<dyn Asker> = Arc::new(asker);
        let plugin_hooks = loaded.plugin_hooks.clone();
        let runtime = Arc::new(app.runtime_with_rules(
            loaded.registry,
            loaded.hooks,
            store.clone(),
            asker,
            &profile.permission,
        ));
        if let Some(h) = &plugin_hooks {
            h.forward_events(runtime.subscribe());
        }
        let events = runtime.subscribe();
        let mut opts = AgentOptions::new(app.cwd.clone(), app.project.clone());
        opts.config_dir = Some(app.dirs.config_dir.clone());
        let agent = Arc::new(Agent::new(
            runtime.clone(),
            model,
            store.clone(),
            profile,
            opts,
        ));

        let (ops, mut op_rx) = mpsc::unbounded_channel::<Op>();
        let current: Arc<Mutex<Option<CancellationToken>>> = Arc::default();
        let driver = {
            let current = current.clone();
            let runtime = runtime.clone();
            tokio::spawn(async move {
                while let Some(op) = op_rx.recv().await {
                    match op {
                        Op::Prompt {
                            session_id, text, ..
                        } => {
                            let token = CancellationToken::new();
                            *current.lock().await = Some(token.clone());
                            let agent = agent.clone();
                            let runtime = runtime.clone();
                            tokio::spawn(async move {
                                if let Err(e) = agent.run_turn(&session_id, &text, token).await {
                                    // The loop could not even record the turn: tell the UI.
                                    runtime.emit(Event::TurnFinished {
                                        session_id: session_id.clone(),
                                        summary: failed_summary(&session_id, e.to_string()),
                                    });
                                }
                            });
                        }
                        Op::Abort { .. } => {
                            if let Some(t) = current.lock().await.take() {
                                t.cancel();
                            }
                        }
                        _ => {}
                    }
                }
            })
        };

        let result = podcode_tui::run(TuiParams {
            state,
            store: store.clone(),
            events,
            asks,
            ops,
        })
        .await;
        if let Some(t) = current.lock().await.take() {
            t.cancel();
        }
        driver.abort();
        loaded.host.shutdown().await;
        result?;
        Ok(ExitCode::SUCCESS)
    })
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

/// `--session ID`, the newest session of this directory (`--continue`), or a new one.
fn pick_session(
    store: &Store,
    args: &TuiArgs,
    cwd: &str,
    agent: &str,
    model: &str,
) -> Result<(String, String)> {
    if let Some(id) = &args.session {
        return match store.session(id)? {
            Some(s) => Ok((s.id, s.title)),
            None => bail!("no session with id {id} (see `podcode sessions`)"),
        };
    }
    if args.continue_last {
        let newest = store
            .list_sessions()?
            .into_iter()
            .filter(|s| s.cwd == cwd && s.parent_id.is_none() && s.agent != "cli")
            .max_by_key(|s| s.updated_at);
        return match newest {
            Some(s) => Ok((s.id, s.title)),
            None => bail!("no session to continue in {cwd}"),
        };
    }
    let row = store.create_session(&NewSession {
        agent: agent.into(),
        cwd: cwd.into(),
        main_cwd: cwd.into(),
        model: Some(model.into()),
        title: String::new(),
        ..Default::default()
    })?;
    Ok((row.id, String::new()))
}

/// The stored conversation of a resumed session, as transcript entries.
fn load_transcript(store: &Store, session_id: &str, state: &mut AppState) -> Result<()> {
    use podcode_agent::StoredPart;
    use podcode_store::ToolCallState;
    use podcode_tui::{Entry, ToolCard, ToolStatus};
    for m in store.messages(session_id)? {
        let synthetic = m.content.get("synthetic").and_then(|v| v.as_bool()) == Some(true);
        if m.role == "user" && synthetic {
            continue;
        }
        let mut user_text = String::new();
        let mut attached = Vec::new();
        for part in store.parts(&m.id)? {
            match StoredPart::parse(&part) {
                StoredPart::Text(t) if m.role == "user" => user_text.push_str(&t.text),
                StoredPart::Text(t) => state.entries.push(Entry::Assistant {
                    message_id: m.id.clone(),
                    text: t.text,
                }),
                StoredPart::Reasoning(r) => state.entries.push(Entry::Reasoning {
                    message_id: m.id.clone(),
                    text: r.text,
                }),
                StoredPart::Tool(t) => {
                    let Some(call) = store.tool_call(&t.call_id)? else {
                        continue;
                    };
                    let status = match call.state {
                        ToolCallState::Running | ToolCallState::Interrupted => {
                            ToolStatus::Interrupted
                        }
                        ToolCallState::Completed => ToolStatus::Done,
                        ToolCallState::Failed => ToolStatus::Failed,
                        ToolCallState::Denied => ToolStatus::Denied,
                    };
                    state.entries.push(Entry::Tool(ToolCard {
                        call_id: call.id,
                        tool: call.tool,
                        title: call.title,
                        status,
                        elapsed_ms: call
                            .ended_at
                            .map(|e| e.saturating_sub(call.started_at).max(0) as u64)
                            .unwrap_or(0),
                        output: call.error.unwrap_or(call.output),
                        attachments: call.attachments.as_array().map_or(0, |a| a.len()),
                        spill_path: call.spill_path,
                        expanded: false,
                    }));
                }
                StoredPart::Step(st) => state.usage.add(&st.usage),
                StoredPart::File(f) => attached.push(f.path),
                StoredPart::Other(..) => {}
            }
        }
        if !user_text.is_empty() {
            state.entries.push(Entry::User(user_text));
        }
        for path in attached {
            state
                .entries
                .push(Entry::Notice(format!("📎 attached {path}")));
        }
    }
    Ok(())
}
