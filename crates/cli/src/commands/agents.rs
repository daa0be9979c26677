//! `podcode agents [--json]`: every agent profile this workspace offers — name, mode
//! (primary: the user picks it; subagent: only the `task` tool starts it; all: both), where
//! it came from (built-in, config, or the agent file) and its description — then every
//! agent file that could not be used, with the reason (malformed front matter, an
//! untrusted project's file). A broken file never hides the others.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use podcode_protocol::{sanitize_for_terminal as clean, sanitize_json};
use serde_json::json;

use crate::start::engine;

pub fn run(cwd: Option<PathBuf>, json_out: bool) -> Result<ExitCode> {
    let engine = engine(cwd)?;
    let catalog = engine.agents();
    if json_out {
        let agents: Vec<_> = catalog
            .entries()
            .iter()
            .map(|e| {
                let p = &e.profile;
                json!({
                    "name": p.name,
                    "mode": p.mode.as_str(),
                    "source": e.source,
                    "description": p.description,
                    "model": p.model,
                    "hidden": p.hidden,
                    "disabled": e.disabled,
                })
            })
            .collect();
        let problems: Vec<_> = catalog
            .problems()
            .iter()
            .map(|p| json!({"file": p.file, "message": p.message}))
            .collect();
        let out = json!({"agents": agents, "problems": problems});
        println!("{}", sanitize_json(&serde_json::to_string_pretty(&out)?));
        return Ok(ExitCode::SUCCESS);
    }
    let width = catalog
        .entries()
        .iter()
        .map(|e| e.profile.name.chars().count())
        .max()
        .unwrap_or(0);
    for e in catalog.entries() {
        let p = &e.profile;
        let mut flags = String::new();
        if e.disabled {
            flags.push_str(" (disabled)");
        }
        if p.hidden {
            flags.push_str(" (hidden)");
        }
        println!(
            "{:<width$}  {:<8}  {}{}",
            clean(&p.name),
            p.mode.as_str(),
            clean(&e.source),
            flags
        );
        if let Some(d) = &p.description {
            println!("{:<width$}  {}", "", clean(d.lines().next().unwrap_or("")));
        }
    }
    for p in catalog.problems() {
        println!("⚠ {}: {}", clean(&p.file), clean(&p.message));
    }
    Ok(ExitCode::SUCCESS)
}
