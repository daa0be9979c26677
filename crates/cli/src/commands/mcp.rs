//! `podcode mcp list [--json]`: each configured `[mcp.<name>]` server, started and waited
//! for (up to its `startup_timeout`), with its state, tool count and last error. A
//! successful start also caches the server's tool manifest, so later startups offer its
//! tools at once without waiting for it.
//!
//! `podcode mcp serve [--allow PERMISSION[:PATTERN]]…`: the workspace's merged tool set
//! served over MCP on stdio. Asks that no `--allow` rule (or config rule) opens are
//! rejected; every change is journaled under one session for the connection, revertable
//! with `podcode revert --session <id>` (the id is printed on stderr).

use std::path::PathBuf;
use std::process::ExitCode;

use std::sync::Arc;

use anyhow::Result;
use clap::Subcommand;
use podcode_protocol::{
    Event, Op, PermissionAction, PermissionReply, PermissionRequest, PermissionRule, prompt_text,
};

use crate::start::{engine, tokio_runtime};

#[derive(Subcommand)]
pub enum McpCommand {
    /// Start every configured MCP server and show its state, tool count and last error.
    List {
        /// Stable machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Serve this workspace's tools (built-ins, plugins, executables) to an MCP client on stdio.
    Serve {
        /// Allow asks for PERMISSION (optionally only for PATTERN, e.g. `bash:git *`); every
        /// other ask is rejected. Repeatable.
        #[arg(long = "allow", value_name = "PERMISSION[:PATTERN]")]
        allow: Vec<String>,
    },
}

/// What a client's model reads when a call needed an ask no `--allow` rule opened.
pub const SERVE_REJECT_FEEDBACK: &str = "podcode mcp serve rejects permission asks that no --allow rule opened; ask the user to restart the server with --allow for this permission";

/// What the client's model reads for a rejected ask: the reason, what was asked (the same
/// text as the CLI prompt, arguments included) and how the user can open it.
fn serve_rejection(tool: &str, request: &PermissionRequest) -> String {
    let p = prompt_text(tool, request);
    let mut text = format!("{SERVE_REJECT_FEEDBACK}. Asked: {}", p.title);
    if let Some(warning) = &p.warning {
        text.push_str(&format!("\n{warning}"));
    }
    for section in &p.sections {
        text.push_str(&format!("\n{}:", section.label));
        for line in &section.lines {
            text.push_str(&format!("\n  {line}"));
        }
    }
    text
}

/// `--allow` values as rules: `PERMISSION` or `PERMISSION:PATTERN`.
pub fn allow_rules(allow: &[String]) -> Vec<PermissionRule> {
    allow
        .iter()
        .map(|a| {
            let (permission, pattern) = a.split_once(':').unwrap_or((a.as_str(), "*"));
            PermissionRule::new(permission, pattern, PermissionAction::Allow)
        })
        .collect()
}

pub fn run(cwd: Option<PathBuf>, command: McpCommand) -> Result<ExitCode> {
    match command {
        McpCommand::List { json } => list(cwd, json),
        McpCommand::Serve { allow } => serve(cwd, &allow),
    }
}

fn serve(cwd: Option<PathBuf>, allow: &[String]) -> Result<ExitCode> {
    let engine = Arc::new(engine(cwd)?);
    let rules = allow_rules(allow);
    tokio_runtime()?.block_on(async {
        let tools = engine
            .open_tool_session("mcp", "MCP client connection", &rules)
            .await?;
        let session = tools.id().to_string();
        // The policy answers every ask that no rule opened: rejected, with the reason.
        let port = tools.port();
        let mut events = port.subscribe();
        tokio::spawn(async move {
            while let Ok(event) = events.recv().await {
                if let Event::PermissionAsked {
                    request_id,
                    tool,
                    request,
                    ..
                } = event
                {
                    port.send(Op::PermissionReply {
                        request_id,
                        reply: PermissionReply::Reject {
                            feedback: Some(serve_rejection(&tool, &request)),
                        },
                    });
                }
            }
        });
        eprintln!(
            "podcode mcp serve: changes are journaled under session {session} (undo with `podcode revert --session {session}`)"
        );
        let served = tools.serve_mcp_stdio().await;
        engine.shutdown().await;
        served?;
        Ok(ExitCode::SUCCESS)
    })
}

fn list(cwd: Option<PathBuf>, json_out: bool) -> Result<ExitCode> {
    let engine = engine(cwd)?;
    let status = tokio_runtime()?.block_on(engine.mcp_status());
    if json_out {
        println!(
            "{}",
            podcode_protocol::sanitize_json(&serde_json::to_string_pretty(
                &serde_json::json!({ "servers": status })
            )?)
        );
        return Ok(ExitCode::SUCCESS);
    }
    if status.is_empty() {
        println!(
            "no MCP servers configured; add one to config.toml:\n\n[mcp.everything]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-everything\"]"
        );
        return Ok(ExitCode::SUCCESS);
    }
    let width = status
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(6)
        .max(6);
    println!(
        "{:width$}  {:8}  {:>5}  TRANSPORT",
        "SERVER", "STATE", "TOOLS"
    );
    for s in &status {
        println!(
            "{:width$}  {:8}  {:>5}  {}",
            s.name,
            s.state.as_str(),
            s.tools,
            s.transport
        );
        if let Some(e) = &s.last_error {
            let e = podcode_protocol::sanitize_for_terminal(e);
            println!("{:width$}  last error: {e}", "");
        }
    }
    Ok(ExitCode::SUCCESS)
}
