//! `podcode run "prompt"`: one non-interactive agent turn. Assistant text streams to
//! stdout, each tool call is a one-line card on stderr (tool, title, status, duration), and
//! a closing summary (steps, tokens and cost with what sub-agents spent, changed files)
//! follows on stderr. With
//! `--format json` stdout carries the event stream instead, one JSON event per line; a
//! sub-agent's events arrive as `subagent` events tagged with its session id.
//! Exit status: 0 answered (or summarized at the step limit), 1 error, 130 aborted,
//! 2 when no model is configured.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use podcode_core::{Engine, EngineError, SessionOptions, SessionPick};
use podcode_protocol::{
    Event, Op, StepUsage, TurnEnd, TurnSummary, compacted_text, sanitize_for_terminal as clean,
};
use tokio::sync::broadcast;

use crate::asker::{Answerer, answer_asks};
use crate::start::{tokio_runtime, trusted_engine};

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
    /// Model requests with tools before the agent must summarize (default 50).
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u32>,
    /// Work in a new git worktree (branch podcode/<session-id>) that starts with your
    /// uncommitted and untracked changes; your checkout is left alone until the agent's
    /// sync_to_main tool copies the work back. `podcode sessions prune` removes it.
    #[arg(long, conflicts_with_all = ["session", "continue_last"])]
    pub worktree: bool,
}

pub fn run(cwd: Option<PathBuf>, args: RunArgs) -> Result<ExitCode> {
    let engine = trusted_engine(cwd)?;
    let rt = tokio_runtime()?;
    rt.block_on(async move {
        let pick = if let Some(id) = &args.session {
            SessionPick::Id(id.clone())
        } else if args.continue_last {
            SessionPick::Continue
        } else {
            SessionPick::New {
                title: args.prompt.clone(),
            }
        };
        let session = match engine
            .open_session(SessionOptions {
                pick,
                agent: args.agent.clone(),
                model: args.model.clone(),
                max_steps: args.max_steps,
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
        for (message, source) in engine.tool_errors().await {
            eprintln!("warning: {}", clean(&format!("{message} ({source})")));
        }
        if let Some(dir) = session.worktree() {
            eprintln!(
                "working in worktree {} (branch podcode/{})",
                clean(&dir.to_string_lossy()),
                session.id()
            );
        }
        answer_asks(session.port(), Answerer::pick(args.yes));
        let printer = tokio::spawn(print_events(
            session.subscribe(),
            args.format,
            engine.clone(),
        ));
        let port = session.port();
        let id = session.id().to_string();
        let on_ctrl_c = port.clone();
        let abort_id = id.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\naborting… (Ctrl-C again to quit at once)");
                on_ctrl_c.send(Op::Abort {
                    session_id: abort_id,
                });
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            }
        });
        // The tree's figures before the turn: its summary counts what sub-agents spent in it.
        let before = engine.totals(&id)?;
        // A continued session that has no title yet (one opened elsewhere) takes this prompt's.
        engine.name_session(&id, &args.prompt)?;
        let totals_id = id.clone();
        port.send(Op::Prompt {
            session_id: id,
            text: args.prompt.clone(),
            files: Vec::new(),
        });
        let summary = printer.await.ok().flatten();
        session.close().await;
        engine.shutdown().await;
        let Some(summary) = summary else {
            bail!("the agent stopped without finishing the turn");
        };
        if args.format == Format::Text {
            let sub_agents = engine.totals(&totals_id)?.since(&before).sub_agents();
            print_summary(&summary, &sub_agents, engine.cwd());
        }
        Ok(match summary.end {
            TurnEnd::Answered | TurnEnd::MaxSteps => ExitCode::SUCCESS,
            TurnEnd::Aborted => ExitCode::from(130),
            TurnEnd::Error => ExitCode::FAILURE,
        })
    })
}

/// Renders the event stream until the turn ends; returns its summary.
async fn print_events(
    mut events: broadcast::Receiver<Event>,
    format: Format,
    engine: Arc<Engine>,
) -> Option<TurnSummary> {
    let mut at_line_start = true;
    let mut titles = std::collections::HashMap::<String, String>::new();
    loop {
        let event = match events.recv().await {
            Ok(e) => e,
            Err(broadcast::error::RecvError::Lagged(n)) => {
                eprintln!("warning: {n} events were dropped (the terminal could not keep up)");
                continue;
            }
            Err(_) => return None,
        };
        let done = match &event {
            Event::TurnFinished { summary, .. } => Some(summary.clone()),
            _ => None,
        };
        if format == Format::Json {
            if let Ok(line) = serde_json::to_string(&event) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", podcode_protocol::sanitize_json(&line));
                let _ = out.flush();
            }
        } else {
            render_text(&event, &mut at_line_start, &mut titles, &engine);
        }
        if done.is_some() {
            return done;
        }
    }
}

fn render_text(
    event: &Event,
    at_line_start: &mut bool,
    titles: &mut std::collections::HashMap<String, String>,
    engine: &Engine,
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
            let state = engine
                .call_state(call_id)
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
        Event::Toast {
            title,
            message,
            variant,
        } => {
            end_line(at_line_start);
            eprintln!(
                "{}",
                clean(&podcode_protocol::toast_text(title, message, variant))
            );
        }
        Event::Compacted {
            reason,
            pruned,
            summarized,
            tokens_before,
            tokens_after,
            ..
        } => {
            end_line(at_line_start);
            let note = compacted_text(reason, *pruned, *summarized, *tokens_before, *tokens_after);
            eprintln!("{note}");
        }
        Event::Subagent { .. } => {
            if let Some(line) = subagent_line(event, "") {
                end_line(at_line_start);
                eprintln!("{}", clean(&line));
            }
        }
        _ => {}
    }
}

/// A sub-agent's start, tool calls and end, one line each on stderr (its text stays in its
/// own session: `podcode sessions show <id>`).
fn subagent_line(event: &Event, outer: &str) -> Option<String> {
    let Event::Subagent {
        session_id,
        agent,
        description,
        event,
        ..
    } = event
    else {
        return None;
    };
    let who = format!("{outer}↳ {agent} · {description}");
    match event.as_ref() {
        Event::TurnStarted { .. } => Some(format!("{who}: started ({session_id})")),
        Event::ToolFinished {
            tool,
            result,
            duration_ms,
            ..
        } => Some(format!(
            "{who}: {}",
            card("✓", tool, &result.title, "completed", *duration_ms)
        )),
        Event::ToolFailed {
            tool,
            error,
            duration_ms,
            ..
        } => {
            let first = clip(error.lines().next().unwrap_or(""), 80);
            Some(format!(
                "{who}: {}",
                card("✗", tool, &first, "failed", *duration_ms)
            ))
        }
        Event::TurnFinished { summary, .. } => Some(format!(
            "{who}: finished · {} step{} · {} tool call{}",
            summary.steps,
            plural(summary.steps as usize),
            summary.tool_calls,
            plural(summary.tool_calls as usize)
        )),
        inner @ Event::Subagent { .. } => subagent_line(inner, &format!("{outer}  ")),
        _ => None,
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

/// The closing summary. Tokens and cost are the turn's with what its sub-agents spent
/// (`sub_agents`); when they spent any, the session's own figures follow in parentheses.
fn print_summary(s: &TurnSummary, sub_agents: &StepUsage, cwd: &std::path::Path) {
    let tokens_cost = |u: &StepUsage| {
        let tokens = if u.input_tokens + u.output_tokens == 0 {
            "tokens not reported".to_string()
        } else {
            format!("{} in / {} out tokens", u.input_tokens, u.output_tokens)
        };
        let cost = u.cost.map(|c| format!(" · ${c:.4}")).unwrap_or_default();
        format!("{tokens}{cost}")
    };
    let mut total = s.usage;
    total.add(sub_agents);
    let mut spent = tokens_cost(&total);
    if *sub_agents != StepUsage::default() {
        spent.push_str(&format!(
            " (this session {}; sub-agents {})",
            tokens_cost(&s.usage),
            tokens_cost(sub_agents)
        ));
    }
    let end = match s.end {
        TurnEnd::Answered => "done",
        TurnEnd::MaxSteps => "stopped at the step limit",
        TurnEnd::Aborted => "aborted",
        TurnEnd::Error => "failed",
    };
    eprintln!(
        "\n── {end}: {} step{} · {} tool call{} · {spent}",
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
