//! `podcode tools [--json]`: the merged tool set exactly as the model will see it, with
//! where each tool came from, what it replaced, and every load problem.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use podcode_core::ProblemLevel;

use crate::start::{engine, tokio_runtime};

pub fn run(cwd: Option<PathBuf>, json_out: bool) -> Result<ExitCode> {
    let engine = engine(cwd)?;
    let listing = tokio_runtime()?.block_on(async {
        let listing = engine.tool_listing().await;
        engine.shutdown().await;
        listing
    });
    if json_out {
        println!(
            "{}",
            podcode_protocol::sanitize_json(&serde_json::to_string_pretty(&listing)?)
        );
        return Ok(ExitCode::SUCCESS);
    }
    let width = listing
        .tools
        .iter()
        .map(|t| t.id.len())
        .max()
        .unwrap_or(4)
        .max(4);
    println!("{:width$}  {:22}  SOURCE", "TOOL", "FLAGS");
    for t in &listing.tools {
        let mut flags = Vec::new();
        if t.protected {
            flags.push("protected");
        }
        if t.idempotent {
            flags.push("read-only");
        }
        if t.truncation == podcode_protocol::Truncation::Tail {
            flags.push("tail");
        }
        let mut source = t.source.name.clone();
        if let Some(r) = &t.replaced {
            source.push_str(&format!(" (replaces {r})"));
        }
        println!("{:width$}  {:22}  {source}", t.id, flags.join(","));
        let first = t.description.lines().next().unwrap_or_default();
        println!(
            "{:width$}  {}",
            "",
            podcode_protocol::sanitize_for_terminal(first)
        );
        if let Some(note) = &t.note {
            println!("{:width$}  note: {note}", "");
        }
    }
    if !listing.switched_off.is_empty() {
        println!(
            "\nSwitched off by config (tools.disable, or opencode's \"tools\": {{\"name\": false}}):"
        );
        for t in &listing.switched_off {
            let text = format!("{} (from {}; entry \"{}\")", t.id, t.source, t.by);
            println!("  {}", podcode_protocol::sanitize_for_terminal(&text));
        }
    }
    if !listing.problems.is_empty() {
        println!("\nProblems:");
        for p in &listing.problems {
            let level = match p.level {
                ProblemLevel::Error => "error",
                ProblemLevel::Warning => "warning",
            };
            let text = format!("{} ({})", p.message, p.source);
            println!(
                "  {level}: {}",
                podcode_protocol::sanitize_for_terminal(&text)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
