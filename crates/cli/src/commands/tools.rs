//! `podcode tools [--json]`: the merged tool set exactly as the model will see it, with
//! where each tool came from, what it replaced, and every load problem.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use podcode_tools::{ProblemLevel, ToolRegistry};
use serde_json::{Value, json};

use crate::app::{App, tokio_runtime};

pub fn listing_json(registry: &ToolRegistry) -> Value {
    let tools: Vec<Value> = registry
        .tools()
        .iter()
        .map(|t| {
            let spec = t.tool.spec();
            json!({
                "id": spec.id,
                "description": spec.description,
                "parameters": spec.parameters,
                "truncation": spec.truncation,
                "idempotent": spec.idempotent,
                "source": t.source,
                "protected": t.protected,
                "replaced": t.replaced,
            })
        })
        .collect();
    json!({ "tools": tools, "problems": registry.problems() })
}

pub fn run(cwd: Option<PathBuf>, json_out: bool) -> Result<ExitCode> {
    let app = App::load(cwd)?;
    let registry = tokio_runtime()?.block_on(async {
        let loaded = app.tools().await;
        loaded.host.shutdown().await;
        loaded.registry
    });
    if json_out {
        println!(
            "{}",
            podcode_protocol::sanitize_json(&serde_json::to_string_pretty(&listing_json(
                &registry
            ))?)
        );
        return Ok(ExitCode::SUCCESS);
    }
    let width = registry
        .tools()
        .iter()
        .map(|t| t.id().len())
        .max()
        .unwrap_or(4)
        .max(4);
    println!("{:width$}  {:22}  SOURCE", "TOOL", "FLAGS");
    for t in registry.tools() {
        let spec = t.tool.spec();
        let mut flags = Vec::new();
        if t.protected {
            flags.push("protected");
        }
        if spec.idempotent {
            flags.push("read-only");
        }
        if spec.truncation == podcode_protocol::Truncation::Tail {
            flags.push("tail");
        }
        let mut source = t.source.name.clone();
        if let Some(r) = &t.replaced {
            source.push_str(&format!(" (replaces {r})"));
        }
        println!("{:width$}  {:22}  {source}", spec.id, flags.join(","));
        let first = spec.description.lines().next().unwrap_or_default();
        println!(
            "{:width$}  {}",
            "",
            podcode_protocol::sanitize_for_terminal(first)
        );
    }
    if !registry.problems().is_empty() {
        println!("\nProblems:");
        for p in registry.problems() {
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
