//! `podcode sessions`: list stored sessions (newest first, with tokens in/out and cost of the
//! session with its sub-agents, its own beside them when they differ; a
//! worktree session with its worktree and unsynced changes), `show ID` prints a session's
//! transcript, `export ID` writes it as JSON (session, messages with their parts, tool
//! calls, changes) to stdout, `prune` removes worktree sessions' worktrees and branches.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use std::collections::HashMap;

use podcode_core::{Engine, SessionRow, WorktreeInfo, format_time};
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
    /// vanished). A worktree with unsynced changes is kept unless --force.
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
        Some(SessionsCommand::Export { id }) => {
            let export = engine.session_export(&id)?;
            println!("{}", sanitize_json(&serde_json::to_string_pretty(&export)?));
            Ok(ExitCode::SUCCESS)
        }
        Some(SessionsCommand::Prune { ids, force }) => prune(&engine, &ids, force),
    }
}

fn prune(engine: &Engine, ids: &[String], force: bool) -> Result<ExitCode> {
    let notes = engine.prune_worktrees(ids, force)?;
    if notes.is_empty() {
        eprintln!(
            "no worktree sessions in {}",
            clean(&engine.project().to_string_lossy())
        );
    }
    for n in &notes {
        println!("{}  {}", n.session_id, clean(&n.note));
    }
    let kept = notes.iter().any(|n| !n.removed);
    Ok(if kept {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// One line about a session's worktree.
fn worktree_line(w: &WorktreeInfo) -> String {
    let state = match (w.unsynced, &w.problem) {
        (Some(0), _) => "nothing unsynced".to_string(),
        (Some(1), _) => "1 unsynced change".to_string(),
        (Some(n), _) => format!("{n} unsynced changes"),
        (None, Some(p)) => format!("{p} (`podcode sessions prune {}` forgets it)", w.session_id),
        (None, None) => "state unknown".to_string(),
    };
    format!("  worktree {} (branch {}): {state}", w.path, w.branch)
}

fn list(engine: &Engine, all: bool, json_out: bool, tree: bool) -> Result<ExitCode> {
    let sessions = engine.sessions(all)?;
    let worktrees: HashMap<String, WorktreeInfo> = engine
        .worktrees()?
        .into_iter()
        .map(|w| (w.session_id.clone(), w))
        .collect();
    if json_out {
        // Each session row with its token and cost totals under `usage`, and its worktree.
        let mut rows = Vec::new();
        for s in &sessions {
            let mut row = serde_json::to_value(s)?;
            let totals = engine.totals(&s.id)?;
            row["usage"] = serde_json::to_value(totals.own)?;
            row["tree_usage"] = serde_json::to_value(totals.tree)?;
            if let (Some(w), Some(obj)) = (worktrees.get(&s.id), row.as_object_mut()) {
                obj.insert("worktree".into(), serde_json::to_value(w)?);
            }
            rows.push(row);
        }
        println!("{}", sanitize_json(&serde_json::to_string_pretty(&rows)?));
        return Ok(ExitCode::SUCCESS);
    }
    if sessions.is_empty() {
        eprintln!("no sessions yet; start one with `podcode run \"…\"`");
        return Ok(ExitCode::SUCCESS);
    }
    let mut spent = HashMap::new();
    for s in &sessions {
        spent.insert(s.id.clone(), spent_text(engine, &s.id)?);
    }
    if tree {
        print_tree(&sessions, &spent);
        return Ok(ExitCode::SUCCESS);
    }
    for s in sessions {
        println!(
            "{}",
            line(&s, spent.get(&s.id).map_or("", String::as_str), "")
        );
        if let Some(w) = worktrees.get(&s.id) {
            println!("{}", clean(&worktree_line(w)));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Tokens in and out, and the cost when a price is known, of the session with its
/// sub-agents: `12.3k↑ 1.2k↓ $0.04`; when sub-agents spent some, the session's own figures
/// follow: `15.1k↑ 1.5k↓ $0.10 (own 12.3k↑ 1.2k↓ $0.04)`.
fn spent_text(engine: &Engine, id: &str) -> Result<String> {
    let totals = engine.totals(id)?;
    let mut spent = usage_text(&totals.tree);
    if totals.has_sub_agents() {
        spent.push_str(&format!(" (own {})", usage_text(&totals.own)));
    }
    Ok(spent)
}

fn usage_text(usage: &podcode_protocol::StepUsage) -> String {
    let mut spent = format!(
        "{}↑ {}↓",
        tokens(usage.input_tokens),
        tokens(usage.output_tokens)
    );
    if let Some(c) = usage.cost {
        spent.push_str(&format!(" ${c:.2}"));
    }
    spent
}

fn line(s: &SessionRow, spent: &str, indent: &str) -> String {
    format!(
        "{indent}{}  {}  {:<7}  {:<28}  {:<20}  {}",
        s.id,
        format_time(s.updated_at),
        clean(&s.agent),
        clean(s.model.as_deref().unwrap_or("-")),
        spent,
        clean(&s.title)
    )
}

/// Top sessions newest first, each followed by its sub-agents (oldest first, as they were
/// started), indented one step per level. A child whose parent is not listed is a top.
fn print_tree(sessions: &[SessionRow], spent: &HashMap<String, String>) {
    let ids: std::collections::HashSet<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    let is_top = |s: &SessionRow| s.parent_id.as_deref().is_none_or(|p| !ids.contains(p));
    fn walk(all: &[SessionRow], spent: &HashMap<String, String>, s: &SessionRow, depth: usize) {
        let indent = if depth == 0 {
            String::new()
        } else {
            format!("{}└─ ", "   ".repeat(depth - 1))
        };
        let empty = String::new();
        println!("{}", line(s, spent.get(&s.id).unwrap_or(&empty), &indent));
        let mut kids: Vec<&SessionRow> = all
            .iter()
            .filter(|c| c.parent_id.as_deref() == Some(s.id.as_str()))
            .collect();
        kids.sort_by_key(|c| c.created_at);
        for k in kids {
            walk(all, spent, k, depth + 1);
        }
    }
    for s in sessions.iter().filter(|s| is_top(s)) {
        walk(sessions, spent, s, 0);
    }
}
