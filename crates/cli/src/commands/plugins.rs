//! `podcode plugins [--json]`: every plugin and tool file found, with its status — loaded
//! (and its tools), failed (and why), skipped (untrusted), and per tool whether it was
//! refused (a protected id) or shadowed by a later source.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use podcode_plugins::FileStatus;
use serde_json::json;

use crate::app::{App, tokio_runtime};

pub fn run(cwd: Option<PathBuf>, json_out: bool) -> Result<ExitCode> {
    let app = App::load(cwd)?;
    let loaded = tokio_runtime()?.block_on(async {
        let loaded = app.tools().await;
        loaded.host.shutdown().await;
        loaded
    });
    let registry = &loaded.registry;
    // A tool of this file that is not the registered one lost to a protected id or a later file.
    let fate = |file: &str, id: &str| -> &'static str {
        match registry.get(id) {
            Some(t) if t.source.name == file => "loaded",
            Some(t) if t.protected => "refused (protected built-in)",
            Some(_) => "shadowed",
            None => "refused",
        }
    };
    if json_out {
        let files: Vec<_> = loaded
            .reports
            .iter()
            .map(|r| {
                let name = r.file.path.display().to_string();
                let tools: Vec<_> = match &r.status {
                    FileStatus::Loaded { tools, .. } => tools
                        .iter()
                        .map(|id| json!({"id": id, "status": fate(&name, id)}))
                        .collect(),
                    _ => Vec::new(),
                };
                json!({"report": r, "tools": tools})
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"runtime": loaded.host.runtime().map(|r| r.name()), "files": files})
            )?
        );
        return Ok(ExitCode::SUCCESS);
    }
    match loaded.host.runtime() {
        Some(r) => println!("JavaScript runtime: {}", r.name()),
        None => println!("JavaScript runtime: none found (install Bun: npm install -g bun)"),
    }
    if loaded.reports.is_empty() {
        println!(
            "No plugin or tool files found. Put one in .podcode/plugins/, .opencode/tools/ or ~/.config/podcode/plugins/."
        );
        return Ok(ExitCode::SUCCESS);
    }
    for r in &loaded.reports {
        let name = r.file.path.display().to_string();
        match &r.status {
            FileStatus::Loaded {
                format,
                tools,
                hooks,
            } => {
                println!("loaded   {name} ({format})");
                for id in tools {
                    println!("           tool {id}: {}", fate(&name, id));
                }
                if !hooks.is_empty() {
                    println!("           hooks: {}", hooks.join(", "));
                }
            }
            FileStatus::Failed { message } => println!("failed   {name}\n           {message}"),
            FileStatus::Skipped { reason } => println!("skipped  {name}\n           {reason}"),
        }
        for w in &r.warnings {
            println!("           warning: {w}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
