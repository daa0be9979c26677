//! `podcode agents [--json]`: every agent profile this workspace offers — name, mode
//! (primary: the user picks it; subagent: only the `task` tool starts it; all: both), where
//! it came from (built-in, config, or the agent file) and its description — then every
//! agent file that could not be used, with the reason (malformed front matter, an
//! untrusted project's file). A broken file never hides the others.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use podcode_core::list_text::{agent_lines, agents_json};

use crate::start::engine;

pub fn run(cwd: Option<PathBuf>, json_out: bool) -> Result<ExitCode> {
    let engine = engine(cwd)?;
    let catalog = engine.agents();
    if json_out {
        return crate::print::json(&agents_json(&catalog));
    }
    Ok(crate::print::lines(agent_lines(&catalog)))
}
