//! Against real MCP servers nobody here wrote: `@modelcontextprotocol/server-everything`
//! and `@modelcontextprotocol/server-filesystem`, installed by `.ci/run` (`npm ci` in
//! `tests/servers`). Every call goes through the full tool pipeline.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use podcode_config::McpServerConfig;
use podcode_mcp::{McpSource, ServerState};
use podcode_protocol::{Event, PermissionAction, PermissionRule};
use podcode_tools::testing::{Harness, Setup, harness};
use podcode_tools::{CallStatus, RawArgs, ToolRegistry};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The real MCP servers are a test prerequisite, never a reason to skip.
fn bin(name: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/servers/node_modules/.bin")
        .join(name);
    assert!(
        p.exists(),
        "{} missing: run `npm ci` in crates/mcp/tests/servers (bash .ci/run does)",
        p.display()
    );
    p
}

fn stdio(bin: &Path, args: &[&str]) -> McpServerConfig {
    McpServerConfig {
        command: Some(bin.to_string_lossy().into_owned()),
        args: args.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

struct Rig {
    h: Harness,
    source: McpSource,
    _cache: tempfile::TempDir,
}

async fn rig(servers: Vec<(&str, McpServerConfig)>) -> Rig {
    let cache = tempfile::tempdir().unwrap();
    let configs: BTreeMap<_, _> = servers
        .into_iter()
        .map(|(n, c)| (n.to_string(), c))
        .collect();
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
    Rig {
        h,
        source,
        _cache: cache,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn everything_text_image_validation_and_progress() {
    let everything = bin("mcp-server-everything");
    let r = rig(vec![("everything", stdio(&everything, &[]))]).await;

    let out =
        r.h.call_json("everything_echo", json!({"message": "hello mcp"}))
            .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(out.model_text, "Echo: hello mcp");

    let out =
        r.h.call_json("everything_get-sum", json!({"a": 2, "b": 3}))
            .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert!(out.model_text.contains('5'), "{}", out.model_text);

    let out = r.h.call_json("everything_get-tiny-image", json!({})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    let image = &out.result.attachments[0];
    assert_eq!(image.mime, "image/png");
    assert!(image.url.starts_with("data:image/png;base64,iVBOR"));
    assert!(out.model_text.contains("[image attached: image/png]"));

    // The server's schema is validated before the call leaves the process.
    let out = r.h.call_json("everything_echo", json!({})).await;
    assert_eq!(out.status, CallStatus::Failed);
    assert!(out.model_text.contains("message"), "{}", out.model_text);

    // Progress notifications become live metadata.
    let mut events = r.h.runtime.subscribe();
    let out =
        r.h.call_json(
            "everything_trigger-long-running-operation",
            json!({"duration": 1, "steps": 3}),
        )
        .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    let mut progress = Vec::new();
    while let Ok(e) = events.try_recv() {
        if let Event::ToolMetadata {
            metadata: Some(m), ..
        } = e
        {
            progress.push(m["progress"].as_f64().unwrap_or(-1.0));
        }
    }
    assert!(progress.len() >= 2, "progress events: {progress:?}");
    assert_eq!(
        r.source.status()[0].state,
        ServerState::Ready,
        "{:?}",
        r.source.status()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_cancels_and_a_killed_server_recovers() {
    let everything = bin("mcp-server-everything");
    let r = rig(vec![("everything", stdio(&everything, &[]))]).await;
    // Ten minutes: far longer than any wait below, so "at once" needs no tight bound.
    let long = json!({"duration": 600, "steps": 600});

    // Abort: the call ends at once and the server keeps serving.
    let abort = CancellationToken::new();
    let a = abort.clone();
    let mut events = r.h.runtime.subscribe();
    tokio::spawn(async move {
        // Counted from the call's start, not the test's: a busy machine may take long to
        // get there.
        while let Ok(e) = events.recv().await {
            if matches!(e, Event::ToolStarted { .. }) {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        a.cancel();
    });
    let t = Instant::now();
    let out =
        r.h.call_with(
            "everything_trigger-long-running-operation",
            RawArgs::Json(long.clone()),
            abort,
        )
        .await;
    assert_eq!(out.status, CallStatus::Aborted, "{}", out.model_text);
    assert!(t.elapsed() < Duration::from_secs(120));
    let out =
        r.h.call_json("everything_echo", json!({"message": "still here"}))
            .await;
    assert_eq!(out.model_text, "Echo: still here");

    // Kill the server mid-call: the call fails with the reason, the next call restarts it.
    let server = r.source.servers()[0].clone();
    let pid = server.pid().await.expect("a stdio server has a pid");
    let mut events = r.h.runtime.subscribe();
    tokio::spawn(async move {
        while let Ok(e) = events.recv().await {
            if matches!(e, Event::ToolStarted { .. }) {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        // SAFETY: sending a signal to the test's own child process.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGKILL);
        }
    });
    let out =
        r.h.call_json("everything_trigger-long-running-operation", long)
            .await;
    assert_eq!(out.status, CallStatus::Failed, "{}", out.model_text);
    assert!(
        out.model_text
            .contains("MCP server `everything` stopped during the call"),
        "{}",
        out.model_text
    );
    // The server's state follows its exit asynchronously: wait for it (bounded).
    let deadline = Instant::now() + Duration::from_secs(120);
    while r.source.status()[0].state != ServerState::Failed && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let status = &r.source.status()[0];
    assert_eq!(status.state, ServerState::Failed, "{status:?}");
    assert!(status.last_error.is_some());
    let (_, problems) = r.source.tools();
    assert!(
        problems[0]
            .message
            .starts_with("MCP server `everything` is unavailable:"),
        "{problems:?}"
    );

    let out =
        r.h.call_json("everything_echo", json!({"message": "back"}))
            .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(out.model_text, "Echo: back");
    assert_ne!(server.pid().await, Some(pid));
    assert_eq!(r.source.status()[0].state, ServerState::Ready);
}

#[tokio::test(flavor = "multi_thread")]
async fn filesystem_reads_and_reports_errors() {
    let fs = bin("mcp-server-filesystem");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "alpha\n").unwrap();
    let r = rig(vec![("fs", stdio(&fs, &[root.to_str().unwrap()]))]).await;

    let file = root.join("a.txt");
    let out =
        r.h.call_json("fs_read_text_file", json!({"path": file}))
            .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(out.model_text.trim(), "alpha");

    // isError results fail the call with the server's own message.
    let missing = root.join("missing.txt");
    let out =
        r.h.call_json("fs_read_text_file", json!({"path": missing}))
            .await;
    assert_eq!(out.status, CallStatus::Failed, "{}", out.model_text);
    assert!(out.model_text.contains("ENOENT"), "{}", out.model_text);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_request_waits_for_servers_whose_tools_are_not_known_yet() {
    let everything = bin("mcp-server-everything");
    let cache = tempfile::tempdir().unwrap();
    let configs: BTreeMap<_, _> = ["one", "two"]
        .iter()
        .map(|n| (n.to_string(), stdio(&everything, &[])))
        .collect();
    let source = McpSource::new(&configs, cache.path().join("mcp.json"));
    source.start().await;
    let (sources, problems) = source.tools();
    assert!(problems.is_empty(), "{problems:?}");
    // Each server's tools, then the resource tools (the everything server has resources).
    assert_eq!(
        source_names(&sources),
        ["mcp:one", "mcp:two", "mcp:resources"]
    );
    assert!(sources[1].1.iter().any(|t| t.spec().id == "two_echo"));
    for s in source.status() {
        assert_eq!(s.state, ServerState::Ready, "{s:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn startup_does_not_wait_for_servers_with_no_first_request_wait() {
    let everything = bin("mcp-server-everything");
    let cache = tempfile::tempdir().unwrap();
    let configs: BTreeMap<_, _> = ["one", "two", "three"]
        .iter()
        .map(|n| {
            let mut c = stdio(&everything, &[]);
            c.first_request_wait = 0;
            (n.to_string(), c)
        })
        .collect();
    let source = McpSource::new(&configs, cache.path().join("mcp.json"));
    let t = Instant::now();
    source.start().await;
    let (sources, problems) = source.tools();
    let elapsed = t.elapsed();
    // Structural: start() returned while every server was still starting.
    for s in source.status() {
        assert_eq!(s.state, ServerState::Starting, "{s:?}");
    }
    assert!(sources.is_empty());
    assert_eq!(problems.len(), 3);
    assert_eq!(
        problems[0].message,
        "MCP server `one` is starting in the background; its tools join once it is ready"
    );
    eprintln!(
        "NUMBER startup with 3 stdio MCP servers (first_request_wait = 0): start() + tools() returned in {elapsed:?}, none awaited"
    );

    // Once they are up, their manifests are cached: the next startup offers the tools at once.
    source.start_and_wait().await;
    let again = McpSource::new(&configs, cache.path().join("mcp.json"));
    again.start().await;
    let (sources, _) = again.tools();
    assert_eq!(
        source_names(&sources),
        ["mcp:one", "mcp:three", "mcp:two", "mcp:resources"]
    );
    assert!(sources[0].1.iter().any(|t| t.spec().id == "one_echo"));
}

#[tokio::test(flavor = "multi_thread")]
async fn streamable_http_server_by_url() {
    let everything = bin("mcp-server-everything");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = tokio::process::Command::new(&everything)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    {
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains("listening on port") {
                break;
            }
        }
    }
    let config = McpServerConfig {
        url: Some(format!("http://127.0.0.1:{port}/mcp")),
        headers: [("X-Podcode-Test".to_string(), "1".to_string())].into(),
        ..Default::default()
    };
    let r = rig(vec![("web", config)]).await;
    let out =
        r.h.call_json("web_echo", json!({"message": "over http"}))
            .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(out.model_text, "Echo: over http");
    assert_eq!(
        r.source.status()[0].transport,
        format!("http://127.0.0.1:{port}/mcp")
    );
    let _ = child.kill().await;
}

#[tokio::test]
async fn a_server_that_fails_to_start_is_retried_with_backoff() {
    let server = podcode_mcp::McpServer::new(
        "gone".into(),
        McpServerConfig {
            command: Some("/nonexistent/mcp-server".into()),
            ..Default::default()
        },
    );
    let first = server.client().await.err().unwrap().to_string();
    assert_eq!(
        first,
        "MCP server `gone` is unavailable: could not start `/nonexistent/mcp-server`: No such file or directory (os error 2)"
    );
    // Within the backoff window the next use fails at once and says when it retries.
    let second = server.client().await.err().unwrap().to_string();
    assert!(
        second.ends_with("(next restart attempt in 1 s)"),
        "{second}"
    );
    let (state, last_error, tools) = server.status();
    assert_eq!(state, ServerState::Failed);
    assert_eq!(tools, 0);
    assert!(last_error.unwrap().starts_with("could not start"));
}

fn source_names(sources: &[podcode_mcp::SourceTools]) -> Vec<String> {
    sources.iter().map(|(o, _)| o.name.clone()).collect()
}

fn registry_of(source: &McpSource) -> ToolRegistry {
    let (sources, _) = source.tools();
    let mut registry = ToolRegistry::new();
    for (s, tools) in sources {
        registry.merge(s, tools);
    }
    registry
}

/// A server that declares resources adds the three resource tools (opencode's names); they
/// list and read through the pipeline and gate themselves with `read` on `mcp:<server>:<uri>`.
#[tokio::test(flavor = "multi_thread")]
async fn resources_are_listed_and_read_through_the_resource_tools() {
    let fs_root = tempfile::tempdir().unwrap();
    let fs_only = rig(vec![(
        "fs",
        stdio(
            &bin("mcp-server-filesystem"),
            &[fs_root.path().to_str().unwrap()],
        ),
    )])
    .await;
    // A server without resources adds none.
    assert!(
        fs_only
            .h
            .runtime
            .registry()
            .get("list_mcp_resources")
            .is_none()
    );

    let r = rig(vec![
        ("everything", stdio(&bin("mcp-server-everything"), &[])),
        (
            "fs",
            stdio(
                &bin("mcp-server-filesystem"),
                &[fs_root.path().to_str().unwrap()],
            ),
        ),
    ])
    .await;
    let out = r.h.call_json("list_mcp_resources", json!({})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    let listed: serde_json::Value = serde_json::from_str(&out.model_text).unwrap();
    let resources = listed["resources"].as_array().unwrap();
    assert!(!resources.is_empty(), "{listed}");
    assert!(
        resources
            .iter()
            .all(|r| r["server"] == "everything"
                && r["uri"].as_str().unwrap().starts_with("demo://")),
        "{listed}"
    );

    let out =
        r.h.call_json(
            "list_mcp_resource_templates",
            json!({"server": "everything"}),
        )
        .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    let templates: serde_json::Value = serde_json::from_str(&out.model_text).unwrap();
    assert!(
        templates["resourceTemplates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["uriTemplate"] == "demo://resource/dynamic/text/{resourceId}"),
        "{templates}"
    );

    // A listed static resource, and a template filled in, read back as text.
    let first = resources[0]["uri"].as_str().unwrap();
    let out =
        r.h.call_json(
            "read_mcp_resource",
            json!({"server": "everything", "uri": first}),
        )
        .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert!(
        out.model_text
            .starts_with(&format!("Resource: {first}\nMIME: ")),
        "{}",
        out.model_text
    );
    let uri = "demo://resource/dynamic/text/3";
    let out =
        r.h.call_json(
            "read_mcp_resource",
            json!({"server": "everything", "uri": uri}),
        )
        .await;
    assert!(
        out.model_text.starts_with(
            "Resource: demo://resource/dynamic/text/3\nMIME: text/plain\nResource 3: "
        ),
        "{}",
        out.model_text
    );

    // A server without resources is named, with the ones that have them.
    let out =
        r.h.call_json("read_mcp_resource", json!({"server": "fs", "uri": "x"}))
            .await;
    assert_eq!(out.status, CallStatus::Failed);
    assert_eq!(
        out.model_text,
        format!(
            "The read_mcp_resource tool failed: {}",
            podcode_mcp::no_resources_text("fs", &["everything".into()])
        )
    );

    // `read` rules apply to `mcp:<server>:<uri>`.
    let guarded = harness(
        registry_of(&r.source),
        Setup {
            rules: vec![
                PermissionRule::new("*", "*", PermissionAction::Allow),
                PermissionRule::new(
                    "read",
                    "mcp:everything:demo://resource/dynamic/*",
                    PermissionAction::Deny,
                ),
            ],
            ..Default::default()
        },
    );
    let out = guarded
        .call_json(
            "read_mcp_resource",
            json!({"server": "everything", "uri": uri}),
        )
        .await;
    assert_eq!(out.status, CallStatus::Denied, "{}", out.model_text);
    let out = guarded
        .call_json(
            "read_mcp_resource",
            json!({"server": "everything", "uri": first}),
        )
        .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
}
