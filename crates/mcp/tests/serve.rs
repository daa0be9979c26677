//! `ToolServer` driven by a real MCP client (rmcp's): list the merged tools, call a
//! built-in (`read`) and a custom-source tool, all through the pipeline.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use podcode_mcp::ToolServer;
use podcode_protocol::{PermissionAction, PermissionRule};
use podcode_tools::testing::{Harness, Setup, echo, harness};
use podcode_tools::{SourceKind, ToolOrigin, ToolRegistry};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

fn args(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_real_mcp_client_lists_and_calls_builtins_and_custom_tools() {
    let mut registry = ToolRegistry::new();
    podcode_builtins::register_all(&mut registry);
    registry.merge(
        ToolOrigin::new(SourceKind::Executable, "/tools/shout"),
        vec![echo("shout")],
    );
    let Harness {
        dir: _dir,
        workspace,
        runtime,
        session,
        ..
    } = harness(
        registry,
        Setup {
            rules: podcode_builtins::default_rules()
                .into_iter()
                .chain([PermissionRule::new("shout", "*", PermissionAction::Allow)])
                .collect(),
            ..Default::default()
        },
    );
    std::fs::write(workspace.join("notes.txt"), "first line\n").unwrap();
    let identity = podcode_tools::CallIdentity {
        session_id: session,
        agent: "mcp".into(),
        main_cwd: workspace.clone(),
        directory: workspace.clone(),
        worktree: workspace.clone(),
        ..Default::default()
    };
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(ToolServer::new(Arc::new(runtime), identity).serve_on(server_io));
    let client = ().serve(client_io).await.unwrap();

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"read") && names.contains(&"shout"),
        "{names:?}"
    );
    let read = tools.iter().find(|t| t.name == "read").unwrap();
    assert!(read.input_schema.contains_key("properties"));

    let file = workspace.join("notes.txt");
    let r = client
        .call_tool(
            CallToolRequestParams::new("read").with_arguments(args(json!({"filePath": file}))),
        )
        .await
        .unwrap();
    assert_ne!(r.is_error, Some(true), "{:?}", r.content);
    let text = serde_json::to_value(&r.content).unwrap()[0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("first line"), "{text}");

    let r = client
        .call_tool(CallToolRequestParams::new("shout").with_arguments(args(json!({"text": "hey"}))))
        .await
        .unwrap();
    let v = serde_json::to_value(&r).unwrap();
    assert_ne!(v["isError"], true, "{v}");
    assert_eq!(v["content"][0]["text"], "hey");

    // A validation failure comes back as an error result the client's model can read.
    let r = client
        .call_tool(CallToolRequestParams::new("read").with_arguments(args(json!({}))))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
}
