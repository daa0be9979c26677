//! A result over the per-message limit fails the call at once, saying its size, and the
//! server goes on; the limit is `max_message_bytes` under `[mcp.<name>]`. The server is a
//! small real stdio MCP server (`tests/servers/huge-line.mjs`, run with Node) that writes a
//! result of any size on one line.

use std::collections::BTreeMap;
use std::path::PathBuf;

use podcode_config::McpServerConfig;
use podcode_mcp::{McpSource, ServerState, oversized_text};
use podcode_protocol::{PermissionAction, PermissionRule};
use podcode_tools::testing::{Harness, Setup, harness};
use podcode_tools::{CallStatus, ToolRegistry};
use serde_json::json;

fn server(args: &[&str], max_message_bytes: u64) -> McpServerConfig {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/huge-line.mjs");
    let mut all = vec![script.to_string_lossy().into_owned()];
    all.extend(args.iter().map(|a| a.to_string()));
    McpServerConfig {
        command: Some("node".into()),
        args: all,
        // Far longer than the test may take: an answer that is dropped silently would show
        // up as the timeout text instead of the size.
        timeout: 600,
        max_message_bytes,
        ..Default::default()
    }
}

async fn rig(config: McpServerConfig) -> (Harness, McpSource, tempfile::TempDir) {
    let cache = tempfile::tempdir().unwrap();
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
    (h, source, cache)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_100_mb_result_fails_at_once_with_its_size_and_the_server_goes_on() {
    let (h, source, _cache) = rig(server(&[], podcode_mcp::DEFAULT_MAX_MESSAGE_BYTES)).await;
    let bytes = 100 * 1024 * 1024;
    let out = h.call_json("big_dump", json!({ "bytes": bytes })).await;
    assert_eq!(out.status, CallStatus::Failed, "{}", out.model_text);
    // The whole JSON-RPC line: the text plus the envelope around it.
    let envelope =
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":""}]}}"#.len();
    assert_eq!(
        out.model_text,
        format!(
            "The big_dump tool failed: {}",
            oversized_text("big", (bytes + envelope) as u64, 16 * 1024 * 1024)
        )
    );
    assert!(
        out.model_text.starts_with("The big_dump tool failed: MCP server `big` answered with a message of 100.0 MiB (104857673 bytes), over the 16 MiB limit"),
        "{}",
        out.model_text
    );

    let out = h.call_json("big_ping_me", json!({})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(out.model_text, "pong");
    assert_eq!(source.status()[0].state, ServerState::Ready);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_limit_is_configurable_and_an_id_written_last_is_found() {
    let (h, _source, _cache) = rig(server(&["--id-last"], 4096)).await;
    let out = h.call_json("big_dump", json!({ "bytes": 5000 })).await;
    assert_eq!(out.status, CallStatus::Failed, "{}", out.model_text);
    assert!(
        out.model_text
            .contains("over the 4.0 KiB limit for one message")
            && out
                .model_text
                .contains("`max_message_bytes` under [mcp.big]"),
        "{}",
        out.model_text
    );
    let out = h.call_json("big_dump", json!({ "bytes": 3000 })).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(out.model_text.len(), 3000);

    let (h, _source, _cache) = rig(server(&[], 1024 * 1024)).await;
    let out = h.call_json("big_dump", json!({ "bytes": 5000 })).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_an_id_to_fail_the_call_by_its_timeout_still_says_why() {
    let mut config = server(&["--id-middle"], 4096);
    config.timeout = 1;
    let (h, _source, _cache) = rig(config).await;
    let out = h.call_json("big_dump", json!({ "bytes": 5000 })).await;
    assert_eq!(out.status, CallStatus::Failed, "{}", out.model_text);
    assert!(
        out.model_text.starts_with(
            "The big_dump tool failed: MCP server `big` answered with a message of 5.0 KiB (5085 bytes)"
        ) && out.model_text.contains("over the 4.0 KiB limit"),
        "{}",
        out.model_text
    );
    let out = h.call_json("big_ping_me", json!({})).await;
    assert_eq!(out.model_text, "pong");
}
