//! `podcode plugins [--json] [--refresh]`: every plugin and tool file found, with its status —
//! loaded (and its tools), failed (and why), skipped (untrusted) —, its load time and whether
//! it came from the manifest cache, and per tool whether it was refused (a protected id) or
//! shadowed by a later source. `--refresh` drops the manifest caches first.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use podcode_plugins::FileStatus;
use podcode_tools::ToolRegistry;
use serde_json::json;

use crate::app::{App, LoadedTools, tokio_runtime};

pub fn run(cwd: Option<PathBuf>, json_out: bool, refresh: bool) -> Result<ExitCode> {
    let app = App::load(cwd)?;
    if refresh {
        podcode_plugins::ManifestCache::drop_all(&app.dirs.data_dir.join("cache"));
    }
    let loaded = tokio_runtime()?.block_on(async {
        let loaded = app.tools().await;
        loaded.host.shutdown().await;
        loaded
    });
    let fate = |file: &str, id: &str| fate(&loaded.registry, file, id);
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
    for line in plugin_lines(&loaded) {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

/// What became of tool `id` of plugin `file`: a tool that is not the registered one lost
/// to a protected id or a later file.
fn fate(registry: &ToolRegistry, file: &str, id: &str) -> &'static str {
    match registry.get(id) {
        Some(t) if t.source.name == file => "loaded",
        Some(t) if t.protected => "refused (protected built-in)",
        Some(_) => "shadowed",
        None => "refused",
    }
}

/// The text report: the JavaScript runtime, then each file with its status and tools (the
/// TUI's `/plugins` shows the same lines).
pub fn plugin_lines(loaded: &LoadedTools) -> Vec<String> {
    let fate = |file: &str, id: &str| fate(&loaded.registry, file, id);
    let mut out = Vec::new();
    match loaded.host.runtime() {
        Some(r) => out.push(format!("JavaScript runtime: {}", r.name())),
        None => out.push("JavaScript runtime: none found (install Bun: npm install -g bun)".into()),
    }
    if loaded.reports.is_empty() {
        out.push(
            "No plugin or tool files found. Put one in .podcode/plugins/, .opencode/tools/ or ~/.config/podcode/plugins/."
                .into(),
        );
        return out;
    }
    for r in &loaded.reports {
        let name = r.file.path.display().to_string();
        let timing = match (r.load_ms, r.cached) {
            (Some(ms), true) => format!(", {ms} ms, from cache"),
            (Some(ms), false) => format!(", {ms} ms"),
            (None, _) => String::new(),
        };
        match &r.status {
            FileStatus::Loaded {
                format,
                tools,
                hooks,
            } => {
                out.push(format!("loaded   {name} ({format}{timing})"));
                for id in tools {
                    out.push(format!("           tool {id}: {}", fate(&name, id)));
                }
                if !hooks.is_empty() {
                    out.push(format!("           hooks: {}", hooks.join(", ")));
                }
            }
            FileStatus::Failed { message } => {
                match timing.strip_prefix(", ") {
                    Some(t) => out.push(format!("failed   {name} ({t})")),
                    None => out.push(format!("failed   {name}")),
                }
                out.push(format!("           {message}"));
            }
            FileStatus::Skipped { reason } => {
                out.push(format!("skipped  {name}"));
                out.push(format!("           {reason}"));
            }
        }
        for w in &r.warnings {
            out.push(format!("           warning: {w}"));
        }
    }
    out
}
