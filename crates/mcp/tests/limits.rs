//! Large results from a stdio MCP server. A long text result is streamed, never held
//! whole: the model sees the truncated head with the spill note, and the spill file holds
//! every byte. What cannot be streamed (an image's data, an error's message) over the
//! per-message limit fails the call at once, saying its size, and the server goes on; the
//! limit is `max_message_bytes` under `[mcp.<name>]`. The server is a small real stdio MCP
//! server (`tests/servers/huge-line.mjs`, run with Node) that writes a result of any size
//! on one line, in pieces.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::Read;
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

/// Keep in step with UNIT in tests/servers/huge-line.mjs (64 bytes as UTF-8).
const UNIT: &str = "line \"quoted\" \\ tab\t é ✓ 0123456789 abcdefghijklmnopqrstuvwx\n";

/// Whether the file at `path` is exactly `units` copies of UNIT then "THE END", after `prefix`.
fn holds_exactly(path: &std::path::Path, prefix: &str, units: usize) -> bool {
    let mut file = std::fs::File::open(path).unwrap();
    let mut expected = prefix.as_bytes().to_vec();
    let mut left = units;
    let mut got = vec![0u8; 1 << 20];
    let mut ended = false;
    loop {
        while expected.len() < got.len() && left > 0 {
            expected.extend_from_slice(UNIT.as_bytes());
            left -= 1;
        }
        if left == 0 && !ended {
            expected.extend_from_slice(b"THE END");
            ended = true;
        }
        let want = expected.len().min(got.len());
        if want == 0 {
            // Nothing more expected: the file must end here too.
            return file.read(&mut got).unwrap() == 0;
        }
        if file.read_exact(&mut got[..want]).is_err() || got[..want] != expected[..want] {
            return false;
        }
        expected.drain(..want);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_200_mb_text_result_is_truncated_and_its_spill_file_is_complete() {
    let (h, source, _cache) = rig(server(&[], podcode_mcp::DEFAULT_MAX_MESSAGE_BYTES)).await;
    let units = 200_000_000 / UNIT.len();
    let out = h.call_json("big_dump", json!({ "units": units })).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    let t = out.truncated.clone().expect("truncated");
    assert_eq!(t.total_bytes, (units * UNIT.len() + 7) as u64);
    assert!(t.spill_error.is_none(), "{t:?}");
    // The model reads the head, unescaped, and where the rest is.
    assert!(
        out.model_text.starts_with(UNIT)
            && out.model_text.contains(&t.spill_path.display().to_string()),
        "{}",
        &out.model_text[out.model_text.len().saturating_sub(600)..]
    );
    assert!(
        holds_exactly(&t.spill_path, "", units),
        "the spill file differs"
    );
    // No temporary file is left behind, and the server goes on.
    let leftovers = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("podcode-mcp-{}-", std::process::id()))
        })
        .count();
    assert_eq!(leftovers, 0);
    let out = h.call_json("big_ping_me", json!({})).await;
    assert_eq!(out.model_text, "pong");
    assert_eq!(source.status()[0].state, ServerState::Ready);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_result_keeps_its_other_content_in_order_and_an_id_written_last_is_found() {
    let (h, _source, _cache) = rig(server(&["--id-last"], 4096)).await;
    // 2 MB: streamed although far over the 4 KiB limit, which only caps what is not text.
    let units = 2_000_000 / UNIT.len();
    let out = h
        .call_json("big_dump", json!({ "units": units, "kind": "mixed" }))
        .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(out.result.attachments.len(), 1);
    assert_eq!(out.result.attachments[0].url, "data:image/png;base64,AAAA");
    let t = out.truncated.clone().expect("truncated");
    assert!(holds_exactly(
        &t.spill_path,
        "first\n\n[image attached: image/png]\n\n",
        units
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_is_error_result_fails_the_call_with_the_text_as_its_output() {
    let (h, _source, _cache) = rig(server(&[], podcode_mcp::DEFAULT_MAX_MESSAGE_BYTES)).await;
    let units = 2_000_000 / UNIT.len();
    let out = h
        .call_json("big_dump", json!({ "units": units, "kind": "is_error" }))
        .await;
    assert_eq!(out.status, CallStatus::Failed, "{}", out.model_text);
    assert!(
        out.model_text.starts_with(&format!(
            "The big_dump tool failed: {}\n\nOutput before it stopped:\n{UNIT}",
            podcode_mcp::streamed_error_text("big")
        )),
        "{}",
        &out.model_text[..600]
    );
    let t = out.truncated.clone().expect("truncated");
    assert!(holds_exactly(&t.spill_path, "", units));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_over_the_limit_fails_at_once_with_its_size_and_the_server_goes_on() {
    let (h, source, _cache) = rig(server(&[], podcode_mcp::DEFAULT_MAX_MESSAGE_BYTES)).await;
    let bytes = 100 * 1024 * 1024;
    let out = h
        .call_json("big_dump", json!({ "bytes": bytes, "kind": "image" }))
        .await;
    assert_eq!(out.status, CallStatus::Failed, "{}", out.model_text);
    // The whole JSON-RPC line: the data plus the envelope around it.
    let envelope = r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"image","mimeType":"image/png","data":""}]}}"#.len();
    assert_eq!(
        out.model_text,
        format!(
            "The big_dump tool failed: {}",
            oversized_text("big", (bytes + envelope) as u64, 16 * 1024 * 1024)
        )
    );
    assert!(
        out.model_text.starts_with("The big_dump tool failed: MCP server `big` answered with a message of 100.0 MiB (104857697 bytes), over the 16 MiB limit"),
        "{}",
        out.model_text
    );

    let out = h.call_json("big_ping_me", json!({})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(out.model_text, "pong");
    assert_eq!(source.status()[0].state, ServerState::Ready);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_limit_is_configurable_and_an_id_anywhere_is_found() {
    for order in ["--id-last", "--id-middle"] {
        let mut config = server(&[order], 4096);
        // An answer that is dropped silently would show up as the timeout text.
        config.timeout = 30;
        let (h, _source, _cache) = rig(config).await;
        let out = h
            .call_json("big_dump", json!({ "bytes": 5000, "kind": "error" }))
            .await;
        assert_eq!(out.status, CallStatus::Failed, "{}", out.model_text);
        assert!(
            out.model_text
                .contains("over the 4.0 KiB limit for one message")
                && out
                    .model_text
                    .contains("`max_message_bytes` under [mcp.big]"),
            "{order}: {}",
            out.model_text
        );
        let out = h
            .call_json("big_dump", json!({ "bytes": 3000, "kind": "image" }))
            .await;
        assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
        let out = h.call_json("big_dump", json!({ "bytes": 5000 })).await;
        assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
        assert_eq!(out.model_text, "x".repeat(5000));
    }
}

/// A text cut mid-emoji (each half of the pair a lone `\ud83d` / `\ude00` escape) arrives
/// with U+FFFD in place of each broken half instead of failing the call.
#[tokio::test(flavor = "multi_thread")]
async fn a_text_with_half_a_surrogate_pair_arrives_with_a_replacement_character() {
    let mut config = server(&[], podcode_mcp::DEFAULT_MAX_MESSAGE_BYTES);
    // A message that is dropped would show up as the timeout text.
    config.timeout = 60;
    let (h, _source, _cache) = rig(config).await;
    let out = h.call_json("big_cut_me", json!({})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        "cut \u{fffd} here, \u{fffd} there, whole 😀"
    );
}
