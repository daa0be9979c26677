//! Benchmark: a plugin tool returning 200 MB must leave Podcode's memory bounded and the
//! spill file complete (the sidecar streams long outputs in chunks into truncation).
//!
//! The parent re-executes this binary with `PODCODE_PLUGIN_BENCH_CHILD=1`; the child loads
//! one plugin tool in the real sidecar (Bun, else Node; `PODCODE_JS_RUNTIME=node` forces
//! Node), calls it once through the real pipeline with the default truncation limits, and
//! prints its own peak RSS (`VmHWM`: Podcode's side only, the sidecar is another process),
//! the spill file's size and the time. The parent checks the spill file held every byte and
//! prints:
//!
//! `plugin 200 MB result: peak RSS X MiB (target < 64 MiB), Y s`
//!
//! `PODCODE_PLUGIN_BENCH_MB` overrides the size for quick runs.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use podcode_plugins::*;
use podcode_protocol::{PermissionAction, PermissionRule};
use podcode_tools::ToolRegistry;
use podcode_tools::testing::child_report::{peak_rss_kib, run_self};
use podcode_tools::testing::{Setup, harness};
use serde_json::json;

const CHILD_ENV: &str = "PODCODE_PLUGIN_BENCH_CHILD";
const MB_ENV: &str = "PODCODE_PLUGIN_BENCH_MB";
const TARGET_MIB: f64 = 64.0;
/// 64-byte lines, then "THE END": exactly `mb` MB plus 7 bytes.
const PLUGIN: &str = r#"import { tool } from "@opencode-ai/plugin"
export default tool({ description: "a long result", args: { mb: tool.schema.number() }, async execute({ mb }) {
  const line = "0123456789abcdef".repeat(4).slice(0, 63) + "\n"
  return line.repeat(mb * 1000 * 1000 / 64) + "THE END"
} })
"#;

fn megabytes() -> u64 {
    std::env::var(MB_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|m| *m > 0)
        .unwrap_or(200)
}

fn main() {
    if std::env::var_os(CHILD_ENV).is_some() {
        child();
    } else {
        parent();
    }
}

fn parent() {
    let mb = megabytes();
    let report = run_self(&[(CHILD_ENV, "1")]);
    let field = |name: &str| report.text(name);
    let rss_mib = report.peak_rss_mib();
    let secs = report.number("secs");
    let spill = report.number("spill_bytes") as u64;
    assert_eq!(
        spill,
        mb * 1000 * 1000 + 7,
        "the spill file does not hold the whole output"
    );
    println!(
        "plugin {mb} MB result ({}): peak RSS {rss_mib:.1} MiB (target < {TARGET_MIB:.0} MiB), {secs:.2} s [{}]",
        field("runtime"),
        if rss_mib < TARGET_MIB {
            "ok"
        } else {
            "OVER TARGET"
        }
    );
    println!("  spill file complete: {spill} bytes");
}

#[tokio::main]
async fn child() {
    let mb = megabytes();
    let ws = tempfile::tempdir().expect("tempdir");
    let data = tempfile::tempdir().expect("tempdir");
    let tools = ws.path().join(".opencode/tools");
    std::fs::create_dir_all(&tools).expect("mkdir");
    std::fs::write(tools.join("big.mjs"), PLUGIN).expect("write");
    let runtime = detect_runtime().expect("bench: Bun or Node on PATH");
    let host = PluginHost::new(
        Some(runtime.clone()),
        HostOptions {
            data_dir: data.path().to_path_buf(),
            plugin_config: json!({}),
            directory: ws.path().to_path_buf(),
            worktree: ws.path().to_path_buf(),
            // Unconfined, as the published figures were measured (the sandbox costs one
            // helper exec at sidecar start, nothing per call).
            sandbox: None,
        },
    );
    let files = find_plugin_files(&PluginDirs {
        home: ws.path().join("home"),
        opencode: vec![ws.path().join("home/.config/opencode")],
        podcode_config: ws.path().join("cfg"),
        project_root: ws.path().to_path_buf(),
    });
    let out = load_plugin_tools(
        &files,
        true,
        &host,
        &mut ManifestCache::default(),
        &json!({}),
    )
    .await;
    let mut registry = ToolRegistry::new();
    for (source, tools) in out.sources {
        registry.merge(source, tools);
    }
    let h = harness(
        registry,
        Setup {
            rules: vec![PermissionRule::new("*", "*", PermissionAction::Allow)],
            ..Default::default()
        },
    );
    let start = Instant::now();
    let out = h.call("big", &json!({ "mb": mb }).to_string()).await;
    let secs = start.elapsed().as_secs_f64();
    let peak = peak_rss_kib();
    let t = out
        .truncated
        .clone()
        .unwrap_or_else(|| panic!("not truncated: {:?} {}", out.status, out.model_text));
    let spill = std::fs::metadata(&t.spill_path)
        .map(|m| m.len())
        .unwrap_or(0);
    let _ = std::fs::remove_file(&t.spill_path);
    host.shutdown().await;
    println!("runtime={}", runtime.name());
    println!("secs={secs:.3}");
    println!("peak_rss_kib={peak}");
    println!("spill_bytes={spill}");
}
