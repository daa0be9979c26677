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
use podcode_core::list_text::mcp_lines;

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

pub fn run(cwd: Option<PathBuf>, command: McpCommand) -> Result<ExitCode> {
    match command {
        McpCommand::List { json } => list(cwd, json),
        McpCommand::Serve { allow } => serve(cwd, &allow),
    }
}

fn serve(cwd: Option<PathBuf>, allow: &[String]) -> Result<ExitCode> {
    let engine = Arc::new(engine(cwd)?);
    tokio_runtime()?.block_on(async {
        let tools = engine.open_mcp_serve_session(allow).await?;
        let session = tools.id().to_string();
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
        return crate::print::json(&serde_json::json!({ "servers": status }));
    }
    if status.is_empty() {
        println!(
            "no MCP servers configured; add one to config.toml:\n\n[mcp.everything]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-everything\"]"
        );
        return Ok(ExitCode::SUCCESS);
    }
    Ok(crate::print::lines(mcp_lines(&status)))
}
