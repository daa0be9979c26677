//! `podcode run "prompt"`: one non-interactive agent turn. Assistant text streams to
//! stdout, each tool call is a one-line card on stderr (tool, title, status, duration), and
//! a closing summary (steps, tokens and cost with what sub-agents spent, changed files)
//! follows on stderr. With `--format json` stdout carries the event stream instead, one
//! JSON event per line (a sub-agent's as `subagent` events tagged with its session id).
//! Exit status: 0 answered (or summarized at the step limit), 1 error, 130 aborted,
//! 2 when no model is configured.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use podcode_core::one_turn::{exit_status, prompt_and_title, stdin_if_dash, until_turn_end};
use podcode_core::turn_text::{AnswerText, TurnNotes, summary_lines};
use podcode_core::{Engine, EngineError, SessionOptions};
use podcode_protocol::{Event, TurnSummary, sanitize_for_terminal as clean};
use tokio::sync::broadcast;

use crate::asker::{Answerer, answer_asks};
use crate::start::{engine_quiet, trusted_engine_probing};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args)]
pub struct RunArgs {
    /// What to ask the agent (with --command: the command's arguments); `-` reads it from
    /// standard input.
    #[arg(required_unless_present = "command")]
    pub prompt: Vec<String>,
    /// Run custom command NAME (a .podcode/commands/NAME.md file, …; `podcode commands`
    /// lists them) with the prompt as its arguments.
    #[arg(long, value_name = "NAME")]
    pub command: Option<String>,
    /// `text`: streamed answer on stdout; `json`: one event per line on stdout.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Allow every permission ask (deny rules still hold).
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub target: super::SessionArgs,
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
    // A stored session goes on in the workspace of its own directory (its checkout, config,
    // rules and tools), wherever `run` is started. The sandbox probe runs beside the turn.
    let (engine, mut warnings) = match &args.target.session {
        Some(id) => trusted_engine_probing(Some(engine_quiet(cwd)?.session_home(id)?))?,
        None => trusted_engine_probing(cwd)?,
    };
    let rt = podcode_core::one_turn::runtime().context("cannot start the async runtime")?;
    rt.block_on(async move {
        let words = stdin_if_dash(&args.prompt)?;
        let (prompt, title) = prompt_and_title(&words, args.command.as_deref());
        let pick = args.target.pick(&title);
        let session = engine
            .open_session(SessionOptions {
                pick,
                agent: args.target.agent.clone(),
                model: args.target.model.clone(),
                max_steps: args.max_steps,
                worktree: args.worktree,
            })
            .await;
        let session = match session {
            Ok(s) => s,
            Err(EngineError::NoModel(message)) => {
                crate::start::warn(warnings.take());
                eprintln!("{message}");
                return Ok(ExitCode::from(2));
            }
            Err(e) => {
                crate::start::warn(warnings.take());
                return Err(e.into());
            }
        };
        // Printed before the turn's first line, without the first request waiting for
        // the probe (a new data folder's first run probes: a few ms of processes).
        let warned = tokio::task::spawn_blocking(move || crate::start::warn(warnings.take()));
        crate::start::warn_tool_errors(&engine).await;
        if let Some(notice) = session.worktree_notice() {
            eprintln!("{notice}");
        }
        answer_asks(session.port(), Answerer::pick(args.yes));
        let events = session.subscribe();
        let printer = tokio::spawn(print_events(events, args.format, engine.clone(), warned));
        podcode_core::one_turn::abort_on_ctrl_c(&session);
        let turn = match &args.command {
            Some(name) => engine.send_command(&session, name, &prompt)?,
            None => engine.send_prompt(&session, &prompt)?,
        };
        let summary = printer.await.ok().flatten();
        let directory = session.directory().to_path_buf();
        session.close().await;
        engine.shutdown().await;
        let Some(summary) = summary else {
            bail!("the agent stopped without finishing the turn");
        };
        if args.format == Format::Text {
            let roots = [directory.as_path(), engine.cwd()];
            for line in summary_lines(&summary, &engine.sub_agents_spent(&turn)?, &roots) {
                eprintln!("{line}");
            }
        }
        Ok(ExitCode::from(exit_status(summary.end)))
    })
}

/// Renders the event stream until the turn ends; returns its summary.
async fn print_events(
    events: broadcast::Receiver<Event>,
    format: Format,
    engine: Arc<Engine>,
    warned: tokio::task::JoinHandle<()>,
) -> Option<TurnSummary> {
    let _ = warned.await;
    let live = std::io::stderr().is_terminal();
    let (mut notes, mut answer) = (TurnNotes::live(live), AnswerText::default());
    let render = |event: &Event| {
        if format == Format::Json {
            if let Ok(line) = serde_json::to_string(event) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", podcode_protocol::sanitize_json(&line));
                let _ = out.flush();
            }
        } else {
            render_text(event, &mut notes, &mut answer, &engine);
        }
    };
    let lagged = |n| eprintln!("warning: {n} events were dropped (the terminal could not keep up)");
    until_turn_end(events, render, lagged).await
}

fn render_text(event: &Event, notes: &mut TurnNotes, answer: &mut AnswerText, engine: &Engine) {
    let mut out = std::io::stdout().lock();
    if let Some(text) = answer.on(event, engine) {
        let _ = out.write_all(clean(&text).as_bytes());
    }
    let note = notes.note(event, engine);
    let ends_text =
        matches!(event, Event::StepFinished { .. }) || note.as_ref().is_some_and(|n| n.1);
    if ends_text && answer.end_line() {
        let _ = writeln!(out);
    }
    let _ = out.flush();
    if let Some((line, _)) = note {
        eprintln!("{line}");
    }
}
