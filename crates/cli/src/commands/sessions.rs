//! `podcode sessions`: list stored sessions (newest first), `show ID` prints a session's
//! transcript, `export ID` writes it as JSON (session, messages with their parts, tool
//! calls, changes) to stdout.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use podcode_core::{Engine, SessionRow, format_time};
use podcode_protocol::{sanitize_for_terminal as clean, sanitize_json};

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
    /// Show sub-agent sessions under the session whose `task` call started them.
    #[arg(long)]
    pub tree: bool,
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
        None => list(&engine, args.all, args.json, args.tree),
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

fn list(engine: &Engine, all: bool, json_out: bool, tree: bool) -> Result<ExitCode> {
    let sessions = engine.sessions(all)?;
    if json_out {
        println!(
            "{}",
            sanitize_json(&serde_json::to_string_pretty(&sessions)?)
        );
        return Ok(ExitCode::SUCCESS);
    }
    if sessions.is_empty() {
        eprintln!("no sessions yet; start one with `podcode run \"…\"`");
        return Ok(ExitCode::SUCCESS);
    }
    if tree {
        print_tree(&sessions);
        return Ok(ExitCode::SUCCESS);
    }
    for s in sessions {
        println!("{}", line(&s, ""));
    }
    Ok(ExitCode::SUCCESS)
}

fn line(s: &SessionRow, indent: &str) -> String {
    format!(
        "{indent}{}  {}  {:<7}  {:<28}  {}",
        s.id,
        format_time(s.updated_at),
        clean(&s.agent),
        clean(s.model.as_deref().unwrap_or("-")),
        clean(&s.title)
    )
}

/// Top sessions newest first, each followed by its sub-agents (oldest first, as they were
/// started), indented one step per level. A child whose parent is not listed is a top.
fn print_tree(sessions: &[SessionRow]) {
    let ids: std::collections::HashSet<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    let is_top = |s: &SessionRow| s.parent_id.as_deref().is_none_or(|p| !ids.contains(p));
    fn walk(all: &[SessionRow], s: &SessionRow, depth: usize) {
        let indent = if depth == 0 {
            String::new()
        } else {
            format!("{}└─ ", "   ".repeat(depth - 1))
        };
        println!("{}", line(s, &indent));
        let mut kids: Vec<&SessionRow> = all
            .iter()
            .filter(|c| c.parent_id.as_deref() == Some(s.id.as_str()))
            .collect();
        kids.sort_by_key(|c| c.created_at);
        for k in kids {
            walk(all, k, depth + 1);
        }
    }
    for s in sessions.iter().filter(|s| is_top(s)) {
        walk(sessions, s, 0);
    }
}
