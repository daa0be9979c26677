//! `podcode run "prompt"`: one non-interactive agent turn. Assistant text streams to
//! stdout, each tool call is a one-line card on stderr (tool, title, status, duration), and
//! a closing summary (steps, tokens, cost, changed files) follows on stderr. With
//! `--format json` stdout carries the event stream instead, one JSON event per line.
//! Exit status: 0 answered (or summarized at the step limit), 1 error, 130 aborted,
//! 2 when no model is configured.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use podcode_agent::{Agent, AgentOptions, filter_registry, resolve_profile};
use podcode_protocol::{
    Event, PermissionReply, TurnEnd, TurnSummary, sanitize_for_terminal as clean,
};
use podcode_store::{NewSession, Store};
use podcode_tools::{Asker, FixedAsker};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::app::{App, tokio_runtime};
use crate::asker::{NoTerminalAsker, TerminalAsker, stdin_is_terminal};
use crate::reloader::{EventFeed, Reloader};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args)]
pub struct RunArgs {
    /// What to ask the agent.
    pub prompt: String,
    /// `text`: streamed answer on stdout; `json`: one event per line on stdout.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Allow every permission ask (deny rules still hold).
    #[arg(long, short = 'y')]
    pub yes: bool,
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
    /// Model requests with tools before the agent must summarize (default 50).
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u32>,
}

pub fn run(cwd: Option<PathBuf>, args: RunArgs) -> Result<ExitCode> {
    let mut app = App::load(cwd)?;
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
    let store = app.open_store()?;
    let session = pick_session(
        &app,
        &store,
        &args,
        &profile.name,
        &model.model().to_string(),
    )?;

    tokio_runtime()?.block_on(async move {
        let mut loaded = app.tools().await;
        for p in loaded.registry.problems() {
            if p.level == podcode_tools::ProblemLevel::Error {
                eprintln!(
                    "warning: {}",
                    clean(&format!("{} ({})", p.message, p.source))
                );
            }
        }
        let asker: Arc<dyn Asker> = if args.yes {
            Arc::new(FixedAsker(PermissionReply::Once))
        } else if stdin_is_terminal() {
            Arc::new(TerminalAsker)
        } else {
            Arc::new(NoTerminalAsker::default())
        };
        let reloader = Arc::new(Reloader::new(app.clone(), &mut loaded));
        let runtime = Arc::new(app.runtime_with_rules(
            filter_registry(&reloader.registry(), &profile),
            loaded.hooks,
            store.clone(),
            asker,
            &profile.permission,
        ));
        let weak = Arc::downgrade(&runtime);
        reloader.forward_events(EventFeed {
            subscribe: Arc::new(move || weak.upgrade().map(|r| r.subscribe())),
            warn: Arc::new(|m| eprintln!("warning: {}", clean(&m))),
        });
        let printer = tokio::spawn(print_events(
            runtime.subscribe(),
            args.format,
            store.clone(),
        ));

        let mut opts = AgentOptions::new(app.cwd.clone(), app.project.clone());
        opts.config_dir = Some(app.dirs.config_dir.clone());
        if let Some(n) = args.max_steps {
            opts.max_steps = n;
        }

        let agent = Agent::new(runtime, model, store.clone(), profile, opts)
            .with_reloader(reloader.clone());

        let abort = CancellationToken::new();
        let on_ctrl_c = abort.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\naborting… (Ctrl-C again to quit at once)");
                on_ctrl_c.cancel();
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            }
        });
        let result = agent.run_turn(&session, &args.prompt, abort).await;
        match &result {
            Ok(_) => {
                let _ = printer.await;
            }
            Err(_) => printer.abort(),
        }
        reloader.shutdown().await;
        let summary = result.context("the agent stopped")?;
        if args.format == Format::Text {
            print_summary(&summary, &app.cwd);
        }
        Ok(match summary.end {
            TurnEnd::Answered | TurnEnd::MaxSteps => ExitCode::SUCCESS,
            TurnEnd::Aborted => ExitCode::from(130),
            TurnEnd::Error => ExitCode::FAILURE,
        })
    })
}

/// A new session, the newest one of this directory (`--continue`), or `--session ID`.
fn pick_session(
    app: &App,
    store: &Store,
    args: &RunArgs,
    agent: &str,
    model: &str,
) -> Result<String> {
    if let Some(id) = &args.session {
        return match store.session(id)? {
            Some(s) => Ok(s.id),
            None => bail!("no session with id {id} (see `podcode sessions`)"),
        };
    }
    let cwd = app.cwd.to_string_lossy().into_owned();
    if args.continue_last {
        let mut sessions: Vec<_> = store
            .list_sessions()?
            .into_iter()
            .filter(|s| s.cwd == cwd && s.parent_id.is_none() && s.agent != "cli")
            .collect();
        sessions.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
        return match sessions.into_iter().next() {
            Some(s) => Ok(s.id),
            None => bail!("no session to continue in {cwd}; start one with `podcode run \"…\"`"),
        };
    }
    let title: String = args
        .prompt
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(60)
        .collect();
    let row = store.create_session(&NewSession {
        agent: agent.into(),
        cwd: cwd.clone(),
        main_cwd: cwd,
        model: Some(model.into()),
        title,
        ..Default::default()
    })?;
    Ok(row.id)
}

/// Renders the event stream until the turn ends.
async fn print_events(mut events: broadcast::Receiver<Event>, format: Format, store: Arc<Store>) {
    let mut at_line_start = true;
    let mut titles = std::collections::HashMap::<String, String>::new();
    loop {
        let event = match events.recv().await {
            Ok(e) => e,
            Err(broadcast::error::RecvError::Lagged(n)) => {
                eprintln!("warning: {n} events were dropped (the terminal could not keep up)");
                continue;
            }
            Err(_) => break,
        };
        let done = matches!(event, Event::TurnFinished { .. });
        if format == Format::Json {
            if let Ok(line) = serde_json::to_string(&event) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", podcode_protocol::sanitize_json(&line));
                let _ = out.flush();
            }
        } else {
            render_text(&event, &mut at_line_start, &mut titles, &store);
        }
        if done {
            break;
        }
    }
}

fn render_text(
    event: &Event,
    at_line_start: &mut bool,
    titles: &mut std::collections::HashMap<String, String>,
    store: &Store,
) {
    let end_line = |at: &mut bool| {
        if !*at {
            println!();
            *at = true;
        }
    };
    match event {
        Event::TextDelta { text, .. } => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(clean(text).as_bytes());
            let _ = out.flush();
            if !text.is_empty() {
                *at_line_start = text.ends_with('\n');
            }
        }
        Event::StepFinished { .. } => end_line(at_line_start),
        Event::ToolMetadata {
            call_id,
            title: Some(t),
            ..
        } => {
            titles.insert(call_id.clone(), t.clone());
        }
        Event::ToolFinished {
            tool,
            result,
            duration_ms,
            call_id,
            ..
        } => {
            end_line(at_line_start);
            let title = if result.title.is_empty() {
                titles.remove(call_id).unwrap_or_default()
            } else {
                result.title.clone()
            };
            eprintln!(
                "{}",
                clean(&card("✓", tool, &title, "completed", *duration_ms))
            );
        }
        Event::ToolFailed {
            call_id,
            tool,
            error,
            duration_ms,
        } => {
            end_line(at_line_start);
            let state = store
                .tool_call(call_id)
                .ok()
                .flatten()
                .map(|r| r.state.to_string())
                .unwrap_or_else(|| "failed".into());
            let first = error.lines().next().unwrap_or("");
            let title = titles.remove(call_id).unwrap_or_else(|| clip(first, 80));
            eprintln!("{}", clean(&card("✗", tool, &title, &state, *duration_ms)));
        }
        Event::StepRetry { attempt, error, .. } => {
            end_line(at_line_start);
            let error = clean(error);
            eprintln!("↻ the response was cut off ({error}); retrying (attempt {attempt})");
        }
        Event::Warning { message } => eprintln!("warning: {}", clean(message)),
        _ => {}
    }
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// One line per tool call: mark, tool, title, status, duration.
fn card(mark: &str, tool: &str, title: &str, status: &str, ms: u64) -> String {
    let dur = if ms >= 1000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{ms}ms")
    };
    if title.is_empty() {
        format!("{mark} {tool} · {status} · {dur}")
    } else {
        format!("{mark} {tool} — {title} · {status} · {dur}")
    }
}

fn print_summary(s: &TurnSummary, cwd: &std::path::Path) {
    let u = &s.usage;
    let tokens = if u.input_tokens + u.output_tokens == 0 {
        "tokens not reported".to_string()
    } else {
        format!("{} in / {} out tokens", u.input_tokens, u.output_tokens)
    };
    let cost = u.cost.map(|c| format!(" · ${c:.4}")).unwrap_or_default();
    let end = match s.end {
        TurnEnd::Answered => "done",
        TurnEnd::MaxSteps => "stopped at the step limit",
        TurnEnd::Aborted => "aborted",
        TurnEnd::Error => "failed",
    };
    eprintln!(
        "\n── {end}: {} step{} · {} tool call{} · {tokens}{cost}",
        s.steps,
        plural(s.steps as usize),
        s.tool_calls,
        plural(s.tool_calls as usize)
    );
    if let Some(e) = &s.error {
        eprintln!("error: {}", clean(e));
    }
    if !s.files.is_empty() {
        let files: Vec<String> = s
            .files
            .iter()
            .map(|f| {
                let p = std::path::Path::new(f);
                p.strip_prefix(cwd).unwrap_or(p).display().to_string()
            })
            .collect();
        eprintln!(
            "changed {} file{}: {}",
            files.len(),
            plural(files.len()),
            files.join(", ")
        );
        eprintln!(
            "review with `podcode changes --session {id}`, undo with `podcode revert --session {id}`",
            id = s.session_id
        );
    }
    eprintln!(
        "session {} (continue with `podcode run --continue \"…\"`)",
        s.session_id
    );
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
