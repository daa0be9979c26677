//! `podcode sessions`: list stored sessions (newest first, with tokens in/out and cost of the
//! session with its sub-agents, its own beside them when they differ; a
//! worktree session with its worktree and unsynced changes), `show ID` prints a session's
//! transcript, `export ID` writes it as JSON (session, messages with their parts, tool
//! calls, changes) to stdout, `prune` removes worktree sessions' worktrees and branches.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};

use podcode_core::Engine;
use podcode_protocol::sanitize_for_terminal as clean;

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
    /// Remove the worktree and branch of worktree sessions (`--worktree`). Without ids:
    /// every one of this repository whose changes are all synced (and any whose directory
    /// vanished). A worktree with unsynced changes (or a sync reverted since) is kept, and
    /// said why, unless --force; keeping one is no failure (exit status 0).
    Prune {
        /// Only these sessions (ses_…).
        ids: Vec<String>,
        /// Also remove worktrees with unsynced changes (their work is lost).
        #[arg(long)]
        force: bool,
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
        Some(SessionsCommand::Export { id }) => crate::print::json(&engine.session_export(&id)?),
        Some(SessionsCommand::Prune { ids, force }) => prune(&engine, &ids, force),
    }
}

fn prune(engine: &Engine, ids: &[String], force: bool) -> Result<ExitCode> {
    let (lines, none) = engine.prune_lines(ids, force)?;
    if let Some(note) = none {
        eprintln!("{note}");
    }
    Ok(crate::print::lines(lines))
}

fn list(engine: &Engine, all: bool, json_out: bool, tree: bool) -> Result<ExitCode> {
    if json_out {
        return crate::print::json(&engine.sessions_json(all)?);
    }
    let lines = engine.session_lines(all, tree)?;
    if lines.is_empty() {
        eprintln!("no sessions yet; start one with `podcode run \"…\"`");
    }
    Ok(crate::print::lines(lines))
}
