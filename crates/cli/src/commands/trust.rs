//! `podcode trust [--allow-secrets] [--revoke] [--list]`: mark the current workspace as
//! trusted to run its own tools and plugins (and, with `--allow-secrets`, to let its opencode
//! config read secrets), or take that back.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::start::engine;

#[derive(Args)]
pub struct TrustArgs {
    /// Stop trusting this workspace.
    #[arg(long)]
    revoke: bool,
    /// List every trusted workspace.
    #[arg(long, conflicts_with = "revoke")]
    list: bool,
    /// Also let the workspace's opencode config read secrets: `{file:}` outside the
    /// project and `{env:}` of secret-named variables (API keys, tokens, passwords).
    #[arg(long, conflicts_with_all = ["revoke", "list"])]
    allow_secrets: bool,
}

pub fn run(cwd: Option<PathBuf>, args: TrustArgs) -> Result<ExitCode> {
    let mut engine = engine(cwd)?;
    if args.list {
        for root in engine.trusted_roots()? {
            println!("{root}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.allow_secrets {
        engine.allow_secrets_now()?;
        println!(
            "Trusted {}: its own tools, plugins, agents and MCP servers (.podcode/, .opencode/, its config) will load, and its opencode config may read files outside it and secret environment variables.",
            engine.project().display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    engine.set_trusted(!args.revoke)?;
    if args.revoke {
        println!(
            "{} is no longer trusted: its own tools, plugins, agents and MCP servers (.podcode/, .opencode/, its config) will not load, and its config may not read secrets.",
            engine.project().display()
        );
    } else {
        println!(
            "Trusted {}: its own tools, plugins, agents and MCP servers (.podcode/, .opencode/, its config) will load.",
            engine.project().display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
