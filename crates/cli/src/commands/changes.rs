//! `podcode changes [--session ID] [show ID]` and `podcode revert`: the change journal from
//! the command line. Listing shows a diffstat per change; revert restores old contents,
//! refuses with a diff when a file changed since (unless --force), and journals itself.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use podcode_protocol::RecordedChange;
use podcode_store::Store;
use podcode_tools::{RevertOptions, RevertTarget, revert, unified_diff};

use crate::app::App;

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
    let old = c.old_content.as_deref().unwrap_or("");
    let new = c.new_content.as_deref().unwrap_or("");
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
    let app = App::load(cwd)?;
    let store = app.open_store()?;
    if let Some(ChangesCommand::Show { id }) = args.command {
        let Some(c) = store.change(&id)? else {
            bail!("no change with id {id} (see `podcode changes`)")
        };
        print!(
            "{}",
            unified_diff(
                &c.file,
                c.old_content.as_deref().unwrap_or(""),
                c.new_content.as_deref().unwrap_or("")
            )
        );
        return Ok(ExitCode::SUCCESS);
    }
    let changes = store.changes(args.session.as_deref(), args.call.as_deref())?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&changes)?);
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
        } else if let Some(by) = store.reverted_by(&c.id)? {
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

fn session_of(store: &Store, args: &RevertArgs) -> Result<String> {
    if let Some(s) = &args.session {
        return Ok(s.clone());
    }
    if let Some(id) = &args.change
        && let Some(c) = store.change(id)?
    {
        return Ok(c.session_id);
    }
    if let Some(id) = &args.call
        && let Some(c) = store.tool_call(id)?
    {
        return Ok(c.session_id);
    }
    if let Some(id) = &args.since
        && let Some(m) = store.message(id)?
    {
        return Ok(m.session_id);
    }
    bail!("no change, call, message or session with that id (see `podcode changes`)")
}

pub fn run_revert(cwd: Option<PathBuf>, args: RevertArgs) -> Result<ExitCode> {
    let app = App::load(cwd)?;
    let store = app.open_store()?;
    let session_id = session_of(&store, &args)?;
    let target = match (&args.change, &args.call, &args.since, &args.session) {
        (Some(c), ..) => RevertTarget::Change(c.clone()),
        (_, Some(c), ..) => RevertTarget::Call(c.clone()),
        (_, _, Some(m), _) => RevertTarget::SinceMessage(m.clone()),
        (.., Some(s)) => RevertTarget::Session(s.clone()),
        _ => bail!("name a change, --call, --since or --session"),
    };
    match revert(
        &store,
        &target,
        &RevertOptions {
            force: args.force,
            session_id,
        },
    ) {
        Ok(outcome) => {
            if outcome.reverted.is_empty() {
                println!(
                    "Nothing to revert{}.",
                    if outcome.skipped.is_empty() {
                        ""
                    } else {
                        " (already reverted)"
                    }
                );
            }
            for c in &outcome.reverted {
                println!("restored {} ({} → {})", c.file, c.op.as_str(), c.id);
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(ExitCode::FAILURE)
        }
    }
}
