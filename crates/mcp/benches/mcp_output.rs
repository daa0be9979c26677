//! Benchmark: an MCP tool returning 200 MB of text must leave Podcode's memory bounded and
//! the spill file complete (long `tools/call` lines are stream-parsed, their texts written
//! to disk as they arrive, then streamed into truncation).
//!
//! The parent re-executes this binary with `PODCODE_MCP_BENCH_CHILD=1`; the child starts
//! the real stdio server `tests/servers/huge-line.mjs` (Node), calls its `dump` tool once
//! through the real pipeline with the default truncation limits, and prints its own peak
//! RSS (`VmHWM`: Podcode's side only, the server is another process), the spill file's size
//! and the time. The parent checks the spill file held every byte and prints:
//!
//! `MCP 200 MB text result: peak RSS X MiB (target < 64 MiB), Y s`
//!
//! Run: `cargo bench -p podcode-mcp --bench mcp_output`; `PODCODE_MCP_BENCH_MB` overrides
//! the size for quick runs.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use podcode_config::McpServerConfig;
use podcode_mcp::McpSource;
use podcode_protocol::{PermissionAction, PermissionRule};
use podcode_tools::ToolRegistry;
use podcode_tools::testing::child_report::{peak_rss_kib, run_self};
use podcode_tools::testing::{Setup, harness};
use serde_json::json;

const CHILD_ENV: &str = "PODCODE_MCP_BENCH_CHILD";
const MB_ENV: &str = "PODCODE_MCP_BENCH_MB";
const TARGET_MIB: f64 = 64.0;
/// The server's unit (tests/servers/huge-line.mjs): 64 bytes as UTF-8, escapes included.
const UNIT_BYTES: u64 = 64;

fn megabytes() -> u64 {
    std::env::var(MB_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|m| *m > 0)
        .unwrap_or(200)
}

fn units() -> u64 {
    megabytes() * 1000 * 1000 / UNIT_BYTES
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
    let rss_mib = report.peak_rss_mib();
    let secs = report.number("secs");
    let spill = report.number("spill_bytes") as u64;
    assert_eq!(
        spill,
        units() * UNIT_BYTES + 7,
        "the spill file does not hold the whole output"
    );
    println!(
        "MCP {mb} MB text result: peak RSS {rss_mib:.1} MiB (target < {TARGET_MIB:.0} MiB), {secs:.2} s [{}]",
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
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/huge-line.mjs");
    let config = McpServerConfig {
        command: Some("node".into()),
        args: vec![script.to_string_lossy().into_owned()],
        timeout: 600,
        ..Default::default()
    };
    let cache = tempfile::tempdir().expect("tempdir");
    let configs: BTreeMap<_, _> = [("big".to_string(), config)].into();
    let source = McpSource::new(&configs, cache.path().join("mcp.json"));
    source.start_and_wait().await;
    let (sources, problems) = source.tools();
    assert!(problems.is_empty(), "{problems:?}");
    let mut registry = ToolRegistry::new();
    for (s, tools) in sources {
        registry.merge(s, tools);
    }
    let h = harness(
        registry,
        Setup {
            rules: vec![PermissionRule::new("*", "*", PermissionAction::Allow)],
            ..Default::default()
        },
    );
    let start = Instant::now();
    let out = h.call_json("big_dump", json!({ "units": units() })).await;
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
    drop(source);
    println!("secs={secs:.3}");
    println!("peak_rss_kib={peak}");
    println!("spill_bytes={spill}");
}
