//! `podcode trust [--revoke] [--list]`: mark the current workspace as trusted to run its
//! own tools and plugins, or take that back.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use podcode_config::TrustList;

use crate::app::App;

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
    let app = App::load(cwd)?;
    let mut list = TrustList::load(&app.dirs.data_dir)?;
    if args.list {
        for root in list.roots() {
            println!("{root}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    list.set(&app.project, !args.revoke)?;
    if args.revoke {
        println!(
            "{} is no longer trusted: its .podcode/ tools and plugins will not load.",
            app.project.display()
        );
    } else {
        println!(
            "Trusted {}: its .podcode/ tools and plugins will load.",
            app.project.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
