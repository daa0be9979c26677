//! `podcode sandbox status|run`: what the kernel enforces and what each kind of tool gets
//! (what a sandboxed command can read and write, `.git` and `/proc` included), and
//! running one command (its argv as given) in the sandbox the `bash` tool uses, so users
//! can try their `[sandbox]` settings. The hidden `podcode __sandbox-exec` (the helper itself) is
//! dispatched in `main` before any argument parsing.

use std::path::PathBuf;
use std::process::{ExitCode, Stdio};

use anyhow::{Context, Result};
use clap::Subcommand;

use crate::start::engine_quiet;

#[derive(Subcommand)]
pub enum SandboxCommand {
    /// What this kernel supports (Landlock, seccomp) and what bash, executable tools and
    /// plugins get under the current `[sandbox]` settings.
    Status {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Run CMD with its arguments exactly as given (no shell: for pipes or redirects use
    /// `sh -c '…'`) in this directory, in the sandbox and environment the bash tool uses
    /// (API keys removed, TMPDIR set), and say what the sandbox refused. Example:
    /// `podcode sandbox run -- touch ~/x`.
    #[command(trailing_var_arg = true)]
    Run {
        /// Use this agent profile's sandbox settings (default: build).
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// The command and its arguments (after `--`).
        #[arg(required = true, allow_hyphen_values = true, value_name = "CMD")]
        command: Vec<std::ffi::OsString>,
    },
}

pub fn run(cwd: Option<PathBuf>, cmd: SandboxCommand) -> Result<ExitCode> {
    let mut engine = engine_quiet(cwd)?;
    let exe =
        std::env::current_exe().context("cannot find the podcode binary for the sandbox helper")?;
    engine.use_sandbox_helper(podcode_core::sandbox_helper::helper_beside(&exe));
    match cmd {
        SandboxCommand::Status { json } => status(&engine, json),
        SandboxCommand::Run { agent, command } => run_command(&engine, agent.as_deref(), &command),
    }
}

fn status(engine: &podcode_core::Engine, json: bool) -> Result<ExitCode> {
    if json {
        let value = engine.sandbox_report().status_json();
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        crate::print::lines(engine.sandbox_report().status_lines(engine.project()));
    }
    Ok(ExitCode::SUCCESS)
}

fn run_command(
    engine: &podcode_core::Engine,
    agent: Option<&str>,
    words: &[std::ffi::OsString],
) -> Result<ExitCode> {
    crate::start::warn(engine.sandbox_warnings());
    let mut prepared = engine.sandbox_run(agent, words)?;
    let status = prepared
        .command
        .stdin(Stdio::inherit())
        .status()
        .context("could not start the command")?;
    // Read from the sandbox's own log, so a refusal is reported also when the command's
    // status hides it (`curl … | head` exits 0).
    for note in prepared.explain() {
        eprintln!("podcode: {note}");
    }
    let code = status.code().map_or(128, |c| u8::try_from(c).unwrap_or(1));
    Ok(ExitCode::from(code))
}
