//! `podcode tools [--json]`: the merged tool set exactly as the model will see it, with
//! where each tool came from, what it replaced, and every load problem.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use podcode_core::list_text::tool_lines;

use crate::start::{engine, tokio_runtime};

pub fn run(cwd: Option<PathBuf>, json_out: bool) -> Result<ExitCode> {
    let engine = engine(cwd)?;
    let listing = tokio_runtime()?.block_on(async {
        let listing = engine.tool_listing().await;
        engine.shutdown().await;
        listing
    });
    if json_out {
        return crate::print::json(&listing);
    }
    Ok(crate::print::lines(tool_lines(&listing)))
}
