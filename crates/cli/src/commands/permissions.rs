//! `podcode permissions list|reset`: the "always" approvals remembered per project.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Subcommand;

use crate::app::App;

#[derive(Subcommand)]
pub enum PermissionsCommand {
    /// List remembered approvals for this project (or every project with --all).
    List {
        /// Every project's approvals, not only this one's.
        #[arg(long)]
        all: bool,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Forget one approval by id, or all of this project's (or every project's with --all).
    Reset {
        /// The approval id from `podcode permissions list`.
        id: Option<String>,
        /// Forget every project's approvals, not only this one's.
        #[arg(long, conflicts_with = "id")]
        all: bool,
    },
}

pub fn run(cwd: Option<PathBuf>, cmd: PermissionsCommand) -> Result<ExitCode> {
    let app = App::load(cwd)?;
    let store = app.open_store()?;
    let project = app.project_key();
    match cmd {
        PermissionsCommand::List { all, json } => {
            let rows = store.approvals((!all).then_some(project.as_str()))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else if rows.is_empty() {
                println!(
                    "No remembered approvals{}.",
                    if all { "" } else { " for this project" }
                );
            } else {
                for r in rows {
                    let when = humantime::format_rfc3339_seconds(
                        std::time::UNIX_EPOCH
                            + std::time::Duration::from_millis(r.created_at.max(0) as u64),
                    );
                    println!(
                        "{}  {} {}  ({}, {when})",
                        r.id, r.permission, r.pattern, r.project
                    );
                }
            }
        }
        PermissionsCommand::Reset { id, all } => {
            let removed = match (id, all) {
                (Some(id), _) => store.remove_approvals(None, Some(&id))?,
                (None, true) => store.remove_approvals(None, None)?,
                (None, false) => store.remove_approvals(Some(&project), None)?,
            };
            if removed == 0 {
                bail!(
                    "nothing to reset: no matching approval (see `podcode permissions list --all`)"
                );
            }
            println!("Forgot {removed} approval(s).");
        }
    }
    Ok(ExitCode::SUCCESS)
}
