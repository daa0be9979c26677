//! `podcode` (on a terminal) and `podcode tui`: the full-screen UI. Wiring only: the
//! arguments go to `podcode_tui::launch`, which opens the session and runs the UI.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use podcode_core::EngineError;
use podcode_tui::{LaunchOptions, TuiError};

use crate::start::{tokio_runtime, trusted_engine};

#[derive(Args, Default)]
pub struct TuiArgs {
    #[command(flatten)]
    pub target: super::SessionArgs,
    /// Work in a new git worktree (branch podcode/<session-id>) that starts with your
    /// uncommitted and untracked changes; your checkout is left alone until the agent's
    /// sync_to_main tool copies the work back. `podcode sessions prune` removes it.
    #[arg(long, conflicts_with_all = ["session", "continue_last"])]
    pub worktree: bool,
}

pub fn run(cwd: Option<PathBuf>, mut args: TuiArgs) -> Result<ExitCode> {
    if args.target.agent.is_empty() {
        args.target.agent = "build".into();
    }
    // Before the screen switches to the UI, while the terminal still reads lines.
    let engine = trusted_engine(cwd)?;
    tokio_runtime()?.block_on(async move {
        let opts = LaunchOptions {
            pick: args.target.pick(""),
            agent: args.target.agent,
            model: args.target.model,
            worktree: args.worktree,
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
        };
        match podcode_tui::launch(engine.clone(), opts).await {
            Err(TuiError::Engine(EngineError::NoModel(message))) => {
                eprintln!("{message}");
                Ok(ExitCode::from(2))
            }
            Err(e) => Err(e.into()),
            Ok(last) => {
                // After the UI left the screen: the reminder stays in the terminal.
                for line in engine.exit_lines(last.as_deref())? {
                    eprintln!("{line}");
                }
                Ok(ExitCode::SUCCESS)
            }
        }
    })
}
