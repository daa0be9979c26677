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
use podcode_core::{EngineError, EngineFactory, SessionRegistry};

use crate::start::{engine_in, tokio_runtime};

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
    // Read once: every directory's engine gets the same places. The process's own directory
    // is the registry's home (where the store is read from); each session runs in the engine
    // of its own directory.
    let dirs = podcode_core::Dirs::from_env();
    let home = Arc::new(engine_in(None, dirs.clone())?);
    let factory: EngineFactory = Arc::new(move |dir: &std::path::Path| {
        engine_in(Some(dir.to_path_buf()), dirs.clone())
            .map_err(|e| EngineError::Io(format!("{e:#}")))
    });
    let opts = AcpOptions {
        sessions: Arc::new(SessionRegistry::new(home, factory)),
        agent: args.agent,
        model: args.model,
    };
    tokio_runtime()?.block_on(async move {
        serve(tokio::io::stdin(), tokio::io::stdout(), opts).await?;
        Ok(ExitCode::SUCCESS)
    })
}
