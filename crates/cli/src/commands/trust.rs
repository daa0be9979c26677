//! `podcode trust [--revoke] [--list]`: mark the current workspace as trusted to run its
//! own tools and plugins, or take that back.

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
}

pub fn run(cwd: Option<PathBuf>, args: TrustArgs) -> Result<ExitCode> {
    let engine = engine(cwd)?;
    if args.list {
        for root in engine.trusted_roots()? {
            println!("{root}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    engine.set_trusted(!args.revoke)?;
    if args.revoke {
        println!(
            "{} is no longer trusted: its .podcode/ tools and plugins will not load.",
            engine.project().display()
        );
    } else {
        println!(
            "Trusted {}: its .podcode/ tools and plugins will load.",
            engine.project().display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
