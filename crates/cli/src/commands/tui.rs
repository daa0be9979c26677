//! `podcode` (on a terminal) and `podcode tui`: the full-screen UI. Wiring only: the same
//! App → tools → runtime → agent chain as `podcode run`, with a `UiAsker` for permission
//! prompts; the UI's ops go to `tui_driver::TurnDriver` and its events come back on one
//! broadcast. This module picks the session and loads a resumed one's transcript.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Result, bail};
use clap::Args;
use podcode_agent::resolve_profile;
use podcode_protocol::{Op, StepUsage};
use podcode_store::{NewSession, Store};
use podcode_tui::{AppState, Entry, TuiParams, UiAsker};
use tokio::sync::{broadcast, mpsc};

use super::tui_driver::{CliServices, DriverParts, TurnDriver};
use crate::app::{App, tokio_runtime};
use crate::reloader::{EventFeed, Reloader};

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
    let mut app = App::load(cwd)?;
    // Before the screen switches to the UI, while the terminal still reads lines.
    crate::trust_prompt::ask_to_trust(&mut app);
    let app = Arc::new(app);
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
        let (entries, usage) = load_transcript(&store, &session_id)?;
        state.entries = entries;
        state.usage = usage;
    }
    state.no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());

    tokio_runtime()?.block_on(async move {
        let mut loaded = app.tools().await;
        let mut state = state;
        for p in loaded.registry.problems() {
            if p.level == podcode_tools::ProblemLevel::Error {
                state
                    .entries
                    .push(Entry::Notice(format!("⚠ {} ({})", p.message, p.source)));
            }
        }
        state.tools_info = loaded.registry.listing();
        let (asker, asks) = UiAsker::channel();
        let (ui_events, events) = broadcast::channel(4096);
        let reloader = Arc::new(Reloader::new(app.clone(), &mut loaded));
        // Plugins' event hooks see the UI's stream (every runtime's events); their failures
        // show as warnings on the screen instead of garbling it through stderr.
        let (feed_tx, warn_tx) = (ui_events.clone(), ui_events.clone());
        reloader.forward_events(EventFeed {
            subscribe: Arc::new(move || Some(feed_tx.subscribe())),
            warn: Arc::new(move |message| {
                let _ = warn_tx.send(podcode_protocol::Event::Warning { message });
            }),
        });
        let driver = Arc::new(TurnDriver::new(
            DriverParts {
                app: app.clone(),
                store: store.clone(),
                asker: Arc::new(asker),
                hooks: loaded.hooks.clone(),
                reloader: reloader.clone(),
                ui_events,
            },
            profile,
            model,
            args.model.is_some(),
        ));
        let (ops, op_rx) = mpsc::unbounded_channel::<Op>();
        let serving = tokio::spawn(driver.clone().serve(op_rx));
        let services = Arc::new(CliServices {
            app: app.clone(),
            store: store.clone(),
            reloader: reloader.clone(),
            start_model: model_name,
        });
        let result = podcode_tui::run(TuiParams {
            state,
            store: store.clone(),
            events,
            asks,
            ops,
            services,
        })
        .await;
        driver.abort().await;
        serving.abort();
        reloader.shutdown().await;
        result?;
        Ok(ExitCode::SUCCESS)
    })
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

/// The stored conversation of a resumed session, as transcript entries, and its usage.
pub fn load_transcript(store: &Store, session_id: &str) -> Result<(Vec<Entry>, StepUsage)> {
    use podcode_agent::StoredPart;
    use podcode_store::ToolCallState;
    use podcode_tui::{ToolCard, ToolStatus};
    let mut entries = Vec::new();
    let mut usage = StepUsage::default();
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
                StoredPart::Text(t) => entries.push(Entry::Assistant {
                    message_id: m.id.clone(),
                    text: t.text,
                }),
                StoredPart::Reasoning(r) => entries.push(Entry::Reasoning {
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
                        ToolCallState::TimedOut => ToolStatus::TimedOut,
                    };
                    entries.push(Entry::Tool(ToolCard {
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
                        diff: call
                            .metadata
                            .get("diff")
                            .and_then(|d| d.as_str())
                            .filter(|d| !d.is_empty())
                            .map(str::to_string),
                    }));
                }
                StoredPart::Step(st) => usage.add(&st.usage),
                StoredPart::File(f) => attached.push(f.path),
                StoredPart::Other(..) => {}
            }
        }
        if !user_text.is_empty() {
            entries.push(Entry::User(user_text));
        }
        for path in attached {
            entries.push(Entry::Notice(format!("📎 attached {path}")));
        }
    }
    Ok((entries, usage))
}
