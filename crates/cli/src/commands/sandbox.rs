//! `podcode sandbox status|run`: what the kernel enforces and what each kind of tool gets,
//! and running one command exactly the way the `bash` tool would, so users can try their
//! `[sandbox]` settings. The hidden `podcode __sandbox-exec` (the helper itself) is
//! dispatched in `main` before any argument parsing.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};

use anyhow::{Context, Result};
use clap::Subcommand;
use podcode_core::sandbox_helper::LandlockSupport;

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
    /// Run a command the way the bash tool would: `$SHELL -c "CMD…"` in this directory, in
    /// the same sandbox and environment (API keys removed, TMPDIR set). Example:
    /// `podcode sandbox run -- touch ~/x` shows what the sandbox refuses.
    #[command(trailing_var_arg = true)]
    Run {
        /// Use this agent profile's sandbox settings (default: build).
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// The command and its arguments (after `--`).
        #[arg(required = true, allow_hyphen_values = true, value_name = "CMD")]
        command: Vec<String>,
    },
}

pub fn run(cwd: Option<PathBuf>, cmd: SandboxCommand) -> Result<ExitCode> {
    let mut engine = engine_quiet(cwd)?;
    engine.use_sandbox_helper(
        std::env::current_exe().context("cannot find the podcode binary for the sandbox helper")?,
    );
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
    words: &[String],
) -> Result<ExitCode> {
    for warning in engine.sandbox_warnings() {
        eprintln!("warning: {warning}");
    }
    let mut prepared = engine.sandbox_run(agent, words)?;
    let mut child = prepared
        .command
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("could not start the command")?;
    // Echo both streams as they come and keep their ends, to explain a denial afterwards.
    let tee = |mut from: Box<dyn Read + Send>, to_err: bool| {
        std::thread::spawn(move || {
            let mut tail: Vec<u8> = Vec::new();
            let mut buf = [0u8; 8192];
            while let Ok(n) = from.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let _ = if to_err {
                    std::io::stderr().write_all(&buf[..n])
                } else {
                    std::io::stdout().write_all(&buf[..n])
                };
                tail.extend_from_slice(&buf[..n]);
                let excess = tail.len().saturating_sub(16 * 1024);
                tail.drain(..excess);
            }
            tail
        })
    };
    let out = child.stdout.take().map(|o| tee(Box::new(o), false));
    let err = child.stderr.take().map(|e| tee(Box::new(e), true));
    let status = child.wait().context("could not wait for the command")?;
    let mut seen = Vec::new();
    for t in [out, err].into_iter().flatten() {
        seen.extend(t.join().unwrap_or_default());
    }
    if !status.success()
        && let Some(note) = prepared.explain(&String::from_utf8_lossy(&seen))
    {
        eprintln!("podcode: {note}");
    }
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::from(128),
    })
}
