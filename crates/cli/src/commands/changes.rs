//! `podcode changes [--session ID] [show ID]` and `podcode revert`: the change journal from
//! the command line. Listing shows a diffstat per change; revert restores old contents,
//! refuses with a diff when a file changed since (unless --force), and journals itself.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use podcode_core::change_text::{change_diff, revert_lines};
use podcode_protocol::RevertTarget;

use crate::start::engine;

#[derive(Args)]
pub struct ChangesArgs {
    /// Only this session's changes.
    #[arg(long)]
    session: Option<String>,
    /// Only this tool call's changes.
    #[arg(long)]
    call: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    #[command(subcommand)]
    command: Option<ChangesCommand>,
}

#[derive(Subcommand)]
enum ChangesCommand {
    /// Print one change as a unified diff.
    Show {
        /// The change id (chg_…, see `podcode changes`).
        id: String,
    },
}

#[derive(Args)]
pub struct RevertArgs {
    /// A change id (chg_…).
    #[arg(required_unless_present_any = ["call", "session", "since"], conflicts_with_all = ["call", "session", "since"])]
    change: Option<String>,
    /// Revert every change a tool call made.
    #[arg(long, conflicts_with_all = ["session", "since"])]
    call: Option<String>,
    /// Revert everything changed since a message (msg_…, see `podcode sessions show`).
    #[arg(long, value_name = "MESSAGE", conflicts_with = "session")]
    since: Option<String>,
    /// Revert every change of a session.
    #[arg(long)]
    session: Option<String>,
    /// Overwrite files that changed since Podcode wrote them.
    #[arg(long)]
    force: bool,
}

pub fn run_changes(cwd: Option<PathBuf>, args: ChangesArgs) -> Result<ExitCode> {
    let engine = engine(cwd)?;
    if let Some(ChangesCommand::Show { id }) = args.command {
        let Some(c) = engine.change(&id)? else {
            bail!("no change with id {id} (see `podcode changes`)")
        };
        print!("{}", change_diff(&c));
        return Ok(ExitCode::SUCCESS);
    }
    let changes = engine.changes(args.session.as_deref(), args.call.as_deref())?;
    if args.json {
        return crate::print::json(&changes);
    }
    if changes.is_empty() {
        println!("No changes journaled.");
        return Ok(ExitCode::SUCCESS);
    }
    Ok(crate::print::lines(engine.change_lines(&changes)?))
}

pub fn run_revert(cwd: Option<PathBuf>, args: RevertArgs) -> Result<ExitCode> {
    let engine = engine(cwd)?;
    let target = match (&args.change, &args.call, &args.since, &args.session) {
        (Some(c), ..) => RevertTarget::Change(c.clone()),
        (_, Some(c), ..) => RevertTarget::Call(c.clone()),
        (_, _, Some(m), _) => RevertTarget::SinceMessage(m.clone()),
        (.., Some(s)) => RevertTarget::Session(s.clone()),
        _ => bail!("name a change, --call, --since or --session"),
    };
    let session_id = engine.session_of(&target)?;
    let report = engine.revert(&session_id, &target, args.force);
    match revert_lines(&report) {
        Ok(lines) => Ok(crate::print::lines(lines)),
        Err(text) => {
            eprintln!("{text}");
            Ok(ExitCode::FAILURE)
        }
    }
}
