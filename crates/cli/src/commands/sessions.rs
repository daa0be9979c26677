//! `podcode sessions`: list stored sessions (newest first, with tokens in/out and cost),
//! `show ID` prints a session's
//! transcript, `export ID` writes it as JSON (session, messages with their parts, tool
//! calls, changes) to stdout.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use podcode_core::{Engine, format_time};
use podcode_protocol::{sanitize_for_terminal as clean, sanitize_json, tokens};

use crate::start::engine;

#[derive(Args)]
pub struct SessionsArgs {
    #[command(subcommand)]
    pub command: Option<SessionsCommand>,
    /// Also list sessions of single `podcode tool call`s.
    #[arg(long)]
    pub all: bool,
    /// Machine-readable list.
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand)]
pub enum SessionsCommand {
    /// Print a session's transcript.
    Show {
        /// The session id (ses_…, see `podcode sessions`).
        id: String,
    },
    /// Write a session as JSON to stdout.
    Export {
        /// The session id (ses_…, see `podcode sessions`).
        id: String,
    },
}

pub fn run(cwd: Option<PathBuf>, args: SessionsArgs) -> Result<ExitCode> {
    let engine = engine(cwd)?;
    match args.command {
        None => list(&engine, args.all, args.json),
        Some(SessionsCommand::Show { id }) => {
            print!("{}", clean(&engine.session_text(&id)?));
            Ok(ExitCode::SUCCESS)
        }
        Some(SessionsCommand::Export { id }) => {
            let export = engine.session_export(&id)?;
            println!("{}", sanitize_json(&serde_json::to_string_pretty(&export)?));
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn list(engine: &Engine, all: bool, json_out: bool) -> Result<ExitCode> {
    let sessions = engine.sessions(all)?;
    if json_out {
        // Each session row with its token and cost totals under `usage`.
        let mut rows = Vec::new();
        for s in &sessions {
            let mut v = serde_json::to_value(s)?;
            v["usage"] = serde_json::to_value(engine.session_usage(&s.id)?)?;
            rows.push(v);
        }
        println!("{}", sanitize_json(&serde_json::to_string_pretty(&rows)?));
        return Ok(ExitCode::SUCCESS);
    }
    if sessions.is_empty() {
        eprintln!("no sessions yet; start one with `podcode run \"…\"`");
        return Ok(ExitCode::SUCCESS);
    }
    for s in sessions {
        let usage = engine.session_usage(&s.id)?;
        let mut spent = format!(
            "{}↑ {}↓",
            tokens(usage.input_tokens),
            tokens(usage.output_tokens)
        );
        if let Some(c) = usage.cost {
            spent.push_str(&format!(" ${c:.2}"));
        }
        println!(
            "{}  {}  {:<6}  {:<28}  {:<20}  {}",
            s.id,
            format_time(s.updated_at),
            s.agent,
            clean(s.model.as_deref().unwrap_or("-")),
            spent,
            clean(&s.title)
        );
    }
    Ok(ExitCode::SUCCESS)
}
