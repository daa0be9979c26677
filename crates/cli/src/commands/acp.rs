//! `podcode acp`: serve the Agent Client Protocol on stdin/stdout for an editor (Zed,
//! JetBrains, Neovim clients). Everything lives in `podcode-acp`; this module makes each
//! working directory's engine the way every command does (sandbox helper, config warnings
//! on stderr — stdout belongs to the protocol).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use podcode_acp::{AcpOptions, serve};

use crate::start::{engine, tokio_runtime};

pub const ACP_HELP: &str = "The editor starts `podcode acp` and talks to it over stdin/stdout (JSON-RPC,\n\
    one message per line); stdout carries protocol messages only, notes go to stderr.\n\
    Each session works in the directory the editor names; its permission asks appear in\n\
    the editor (allow once / always / reject), its edits are journaled as always\n\
    (`podcode changes`, `podcode revert`), and its sessions are the ones `podcode sessions`\n\
    lists. A workspace's own tools, plugins and agent files load only once it is trusted\n\
    (`podcode trust` in that directory).\n\n\
    Zed (settings.json):\n  \
    \"agent_servers\": {\n    \
    \"Podcode\": { \"command\": \"podcode\", \"args\": [\"acp\"] }\n  \
    }";

#[derive(Args)]
pub struct AcpArgs {
    /// The agent profile new sessions start with (the editor's mode picker switches it).
    #[arg(long, default_value = "build")]
    pub agent: String,
    /// The model new sessions start with, as `provider/model-id` (overrides config).
    #[arg(long, short = 'm')]
    pub model: Option<String>,
}

pub fn run(cwd: Option<PathBuf>, args: AcpArgs) -> Result<ExitCode> {
    if cwd.is_some() {
        eprintln!(
            "podcode acp: --cwd is not used: each session works in the directory the editor names"
        );
    }
    let opts = AcpOptions {
        factory: Arc::new(|dir| engine(Some(dir.to_path_buf())).map_err(|e| format!("{e:#}"))),
        agent: args.agent,
        model: args.model,
    };
    tokio_runtime()?.block_on(async move {
        serve(tokio::io::stdin(), tokio::io::stdout(), opts).await?;
        Ok(ExitCode::SUCCESS)
    })
}
