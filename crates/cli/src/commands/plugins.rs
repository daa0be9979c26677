//! `podcode plugins [--json] [--refresh]`: every plugin and tool file found, with its status —
//! loaded (and its tools), failed (and why), skipped (untrusted) —, its load time and whether
//! it came from the manifest cache, and per tool whether it was refused (a protected id) or
//! shadowed by a later source. `--refresh` drops the manifest caches first.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::start::{engine, tokio_runtime};

pub fn run(cwd: Option<PathBuf>, json_out: bool, refresh: bool) -> Result<ExitCode> {
    let engine = engine(cwd)?;
    if refresh {
        engine.drop_manifest_caches();
    }
    let (lines, json) = tokio_runtime()?.block_on(async {
        let report = if json_out {
            (Vec::new(), Some(engine.plugin_report_json().await))
        } else {
            (engine.plugin_report().await, None)
        };
        engine.shutdown().await;
        report
    });
    if let Some(json) = json {
        return crate::print::json(&json);
    }
    for line in lines {
        println!("{}", podcode_protocol::sanitize_for_terminal(&line));
    }
    Ok(ExitCode::SUCCESS)
}
