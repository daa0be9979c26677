//! `podcode sandbox status|run`: what the kernel enforces and what each kind of tool gets
//! (what a sandboxed command can read and write, `.git` and `/proc` included), and
//! running one command (its argv as given) in the sandbox the `bash` tool uses, so users
//! can try their `[sandbox]` settings. The hidden `podcode __sandbox-exec` (the helper itself) is
//! dispatched in `main` before any argument parsing.

use std::path::PathBuf;
use std::process::{ExitCode, Stdio};

use anyhow::{Context, Result};
use clap::Subcommand;
use podcode_core::sandbox_helper::{LandlockSupport, NamespaceSupport};

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
    let r = engine.sandbox_report();
    let landlock = match r.kernel.landlock {
        LandlockSupport::Available(abi) => serde_json::json!({"available": true, "abi": abi}),
        other => serde_json::json!({"available": false, "reason": other.to_string()}),
    };
    let confined = r.mode != "full";
    let write_rule = match r.mode.as_str() {
        "read-only" => "writes nothing (only /dev/null and the terminal)".to_string(),
        "workspace-write" => {
            "writes only the workspace, the session directory, its temp dir and the roots below"
                .to_string()
        }
        _ => "writes anywhere you can (mode full: no sandbox)".to_string(),
    };
    let isolated = r.kernel.namespaces == NamespaceSupport::Available;
    let proc_rule = if !confined {
        "every process you can see, and the environment and memory of yours (mode full)"
    } else if isolated {
        "only the sandbox's own processes (own PID namespace and /proc): not Podcode's nor any other of yours"
    } else {
        "every process you can see, and the environment of those of yours it may trace (no PID namespace here)"
    };
    let protected_rule = if r.mode != "workspace-write" {
        None
    } else if isolated {
        Some(
            "read-only (own mount namespace); a write there asks to run the command outside the sandbox",
        )
    } else {
        Some("WRITABLE like the rest of the workspace: no mount namespace here")
    };
    let net = |on: bool| {
        if !confined || on {
            "network on"
        } else {
            "network off"
        }
    };
    if json {
        let value = serde_json::json!({
            "landlock": landlock,
            "seccomp": r.kernel.seccomp,
            "mode": r.mode,
            "bash": {"sandboxed": confined, "network": !confined || r.command_network},
            "executables": {"sandboxed": confined, "network": !confined || r.command_network},
            "plugins": {"sandboxed": confined, "network": !confined || r.plugin_network},
            "mcp_servers": {"sandboxed": confined, "network": !confined || r.plugin_network},
            "writable": r.writable,
            "temp_root": r.temp_root,
            "hidden_env": r.hidden_env,
            "namespaces": r.kernel.namespaces.to_string(),
            "reads": if confined { "every file you can read" } else { "everything you can" },
            "proc": proc_rule,
            "protected": {"names": podcode_core::sandbox_helper::PROTECTED_NAMES, "found": r.protected, "rule": protected_rule},
            "missing": r.kernel.missing_protection(),
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("Kernel");
    println!("  Landlock  {}", r.kernel.landlock);
    println!(
        "  seccomp   {}",
        if r.kernel.seccomp {
            "available"
        } else {
            "not available"
        }
    );
    println!("  namespaces {}", r.kernel.namespaces);
    println!();
    println!(
        "Mode {} (set `[sandbox] mode` in the config: read-only, workspace-write, full)",
        r.mode
    );
    println!(
        "  bash               {write_rule}; {}",
        net(r.command_network)
    );
    println!(
        "  executable tools   {write_rule}; {}",
        net(r.command_network)
    );
    println!(
        "  plugin host        {write_rule}; {}",
        net(r.plugin_network)
    );
    println!(
        "  MCP servers        stdio ones as the plugin host, and may write ~/.npm, ~/.cache (package caches); `sandbox = false` under [mcp.NAME] opts one out"
    );
    if confined && r.mode == "workspace-write" {
        println!();
        println!("Always writable");
        println!("  {}  (the workspace)", engine.project().display());
        for w in &r.writable {
            println!("  {}", w.display());
        }
        println!(
            "  {}/<session>  (each session's TMPDIR)",
            r.temp_root.display()
        );
    }
    println!();
    println!("What a sandboxed command can read");
    println!("  files      every file you can read (the `sensitive` ask guards key files)");
    println!("  /proc      {proc_rule}");
    if let Some(rule) = protected_rule {
        println!();
        println!(".git, .podcode and .opencode in the workspace: {rule}");
        println!("  (in a linked worktree also the git dirs its .git file names)");
        for p in &r.protected {
            println!("  {}", p.display());
        }
        println!("  In a --worktree session only the worktree is writable, not your checkout.");
    }
    if !r.hidden_env.is_empty() {
        println!();
        println!(
            "Hidden from commands and plugins (and masked in tool output): {}",
            r.hidden_env.join(", ")
        );
    }
    let missing = r.kernel.missing_protection();
    if confined && !missing.is_empty() {
        println!();
        for m in missing {
            println!("warning: {m}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn run_command(
    engine: &podcode_core::Engine,
    agent: Option<&str>,
    words: &[std::ffi::OsString],
) -> Result<ExitCode> {
    for warning in engine.sandbox_warnings() {
        eprintln!("warning: {warning}");
    }
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
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::from(128),
    })
}
