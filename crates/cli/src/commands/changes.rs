//! `podcode changes [--session ID] [show ID]` and `podcode revert`: the change journal from
//! the command line. Listing shows a diffstat per change; revert restores old contents,
//! refuses with a diff when a file changed since (unless --force), and journals itself.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use podcode_core::{conflict_text, unified_diff};
use podcode_protocol::{RecordedChange, RevertTarget};

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

fn diffstat(c: &RecordedChange) -> (usize, usize) {
    let old: &str = &podcode_protocol::display_text(c.old_content.as_deref());
    let new: &str = &podcode_protocol::display_text(c.new_content.as_deref());
    let diff = similar::TextDiff::from_lines(old, new);
    let (mut add, mut del) = (0, 0);
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => add += 1,
            similar::ChangeTag::Delete => del += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    (add, del)
}

pub fn run_changes(cwd: Option<PathBuf>, args: ChangesArgs) -> Result<ExitCode> {
    let engine = engine(cwd)?;
    if let Some(ChangesCommand::Show { id }) = args.command {
        let Some(c) = engine.change(&id)? else {
            bail!("no change with id {id} (see `podcode changes`)")
        };
        print!(
            "{}",
            podcode_protocol::sanitize_for_terminal(&unified_diff(
                &c.file,
                &podcode_protocol::display_text(c.old_content.as_deref()),
                &podcode_protocol::display_text(c.new_content.as_deref())
            ))
        );
        return Ok(ExitCode::SUCCESS);
    }
    let changes = engine.changes(args.session.as_deref(), args.call.as_deref())?;
    if args.json {
        println!(
            "{}",
            podcode_protocol::sanitize_json(&serde_json::to_string_pretty(&changes)?)
        );
        return Ok(ExitCode::SUCCESS);
    }
    if changes.is_empty() {
        println!("No changes journaled.");
        return Ok(ExitCode::SUCCESS);
    }
    for c in &changes {
        let (add, del) = diffstat(c);
        let when = humantime::format_rfc3339_seconds(
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(c.time.max(0) as u64),
        );
        let mut note = String::new();
        if let Some(r) = &c.reverts {
            note = format!("  (reverts {r})");
        } else if let Some(by) = engine.reverted_by(&c.id)? {
            note = format!("  (reverted by {by})");
        }
        println!(
            "{}  {when}  {:6}  +{add} -{del}  {}  {}  call {}{note}",
            c.id,
            c.op.as_str(),
            c.file,
            c.session_id,
            c.call_id.as_deref().unwrap_or("-")
        );
    }
    Ok(ExitCode::SUCCESS)
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
    if let Some(conflict) = &report.conflict {
        eprintln!(
            "{}",
            podcode_protocol::sanitize_for_terminal(&conflict_text(conflict))
        );
        return Ok(ExitCode::FAILURE);
    }
    if let Some(e) = &report.error {
        eprintln!("{e}");
        return Ok(ExitCode::FAILURE);
    }
    if report.reverted.is_empty() {
        println!(
            "Nothing to revert{}.",
            if report.skipped.is_empty() {
                ""
            } else {
                " (already reverted)"
            }
        );
    }
    for c in &report.reverted {
        println!("restored {} ({} → {})", c.file, c.op.as_str(), c.id);
    }
    Ok(ExitCode::SUCCESS)
}
