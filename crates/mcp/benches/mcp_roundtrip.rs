//! MCP latency, against baselines measured in the same run, with the real
//! `@modelcontextprotocol/server-everything` (`npm ci` in crates/mcp/tests/servers):
//! - startup: building the tool source with three stdio servers not marked `required`
//!   (they start in the background) against a source with no servers — target: no added
//!   latency before the first model request;
//! - warm round trip of the trivial `echo` tool through the whole pipeline against the same
//!   call made with the bare rmcp client — target: median overhead < 2 ms.
//!
//! Run: `cargo bench -p podcode-mcp --bench mcp_roundtrip`.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use podcode_config::McpServerConfig;
use podcode_mcp::McpSource;
use podcode_protocol::{PermissionAction, PermissionRule};
use podcode_tools::testing::{Setup, harness};
use podcode_tools::{CallStatus, ToolRegistry};
use serde_json::json;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn everything() -> McpServerConfig {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/servers/node_modules/.bin/mcp-server-everything");
    assert!(
        bin.exists(),
        "{} missing: run `npm ci` in crates/mcp/tests/servers",
        bin.display()
    );
    McpServerConfig {
        command: Some(bin.to_string_lossy().into_owned()),
        ..Default::default()
    }
}

async fn startup() {
    let cache = tempfile::tempdir().expect("tempdir");
    let mut none = Vec::new();
    let mut three = Vec::new();
    for i in 0..20 {
        let t = Instant::now();
        let source = McpSource::new(&BTreeMap::new(), cache.path().join(format!("none{i}.json")));
        source.start().await;
        let _ = source.tools();
        none.push(t.elapsed());

        // Not waited for (`first_request_wait = 0`): what starting them adds to a start-up.
        let configs: BTreeMap<String, McpServerConfig> = ["one", "two", "three"]
            .iter()
            .map(|n| {
                let mut c = everything();
                c.first_request_wait = 0;
                (n.to_string(), c)
            })
            .collect();
        let t = Instant::now();
        let source = McpSource::new(&configs, cache.path().join(format!("three{i}.json")));
        source.start().await;
        let _ = source.tools();
        three.push(t.elapsed());
    }
    let (n, t) = (median(none), median(three));
    println!(
        "MCP startup, tool source ready for the first request: 3 stdio servers not waited for {:.0} µs vs none {:.0} µs (added {:.0} µs); target: no added latency",
        t.as_secs_f64() * 1e6,
        n.as_secs_f64() * 1e6,
        t.saturating_sub(n).as_secs_f64() * 1e6
    );
}

async fn round_trip() {
    let cache = tempfile::tempdir().expect("tempdir");
    let configs: BTreeMap<String, McpServerConfig> =
        [("everything".to_string(), everything())].into();
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
    let client = source.servers()[0].client().await.expect("client");
    let n = 500;
    let (mut bare, mut piped) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..50 {
        h.call_json("everything_echo", json!({"message": "x"}))
            .await;
    }
    for _ in 0..n {
        let mut args = serde_json::Map::new();
        args.insert("message".into(), json!("x"));
        let t = Instant::now();
        client
            .call_tool(rmcp::model::CallToolRequestParams::new("echo").with_arguments(args))
            .await
            .expect("bare call");
        bare.push(t.elapsed());
        let t = Instant::now();
        let out = h
            .call_json("everything_echo", json!({"message": "x"}))
            .await;
        piped.push(t.elapsed());
        assert_eq!(out.status, CallStatus::Completed);
    }
    let (b, p) = (median(bare), median(piped));
    println!(
        "MCP warm round trip (echo, {n} calls): through the pipeline {:.3} ms, bare rmcp {:.3} ms, overhead {:.3} ms (ratio {:.2}x); target overhead < 2 ms",
        p.as_secs_f64() * 1e3,
        b.as_secs_f64() * 1e3,
        p.saturating_sub(b).as_secs_f64() * 1e3,
        p.as_secs_f64() / b.as_secs_f64()
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(startup());
    rt.block_on(round_trip());
}
