//! `podcode permissions list|reset`: the "always" approvals remembered per project.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Subcommand;
use podcode_core::list_text::approval_lines;

use crate::start::engine;

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
    let engine = engine(cwd)?;
    match cmd {
        PermissionsCommand::List { all, json } => {
            let rows = engine.approvals(all)?;
            if json {
                crate::print::json(&rows)?;
            } else if rows.is_empty() {
                println!(
                    "No remembered approvals{}.",
                    if all { "" } else { " for this project" }
                );
            } else {
                crate::print::lines(approval_lines(&rows));
            }
        }
        PermissionsCommand::Reset { id, all } => {
            let removed = engine.reset_approvals(id.as_deref(), all)?;
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
