//! The opencode `client` a plugin receives, backed by the engine: a plugin tool run in a real
//! session (scripted model over real HTTP, real SQLite store, real sidecar) reads sessions
//! through `client.session.*` in opencode's `{ data, error }` shapes, and its
//! `client.tui.showToast` reaches the session's event stream as `Event::Toast`.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use podcode_core::testing::{ScratchWorkspace, open_build_session};
use podcode_protocol::{Event, Op, PermissionReply};
use podcode_providers::testing::{Reply, ScriptedModel};
use serde_json::Value;

const READER: &str = r#"
export const Reader = async ({ client }) => ({
  tool: {
    session_reads: {
      description: "Reads sessions through the opencode client",
      args: {},
      async execute(_args, ctx) {
        const list = await client.session.list();
        const one = await client.session.get({ path: { id: ctx.sessionID } });
        const msgs = await client.session.messages({ path: { id: ctx.sessionID } });
        const missing = await client.session.get({ path: { id: "ses_missing" } });
        const status = await client.session.status();
        const toast = await client.tui.showToast({ body: { title: "Reader", message: "read the sessions", variant: "success" } });
        let prompt;
        try { await client.session.prompt({ path: { id: ctx.sessionID } }); } catch (e) { prompt = e.message; }
        return JSON.stringify({
          listed: list.data.map((s) => s.id),
          listError: list.error ?? null,
          session: one.data,
          roles: msgs.data.map((m) => m.info.role),
          messageSessions: [...new Set(msgs.data.map((m) => m.info.sessionID))],
          missing,
          status,
          toast: toast.data,
          prompt,
        });
      },
    },
  },
});
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_reads_sessions_and_shows_a_toast_through_the_client() {
    let server = ScriptedModel::start(vec![]).await;
    let ws = ScratchWorkspace::new(&server.base_url(), "").unwrap();
    std::fs::create_dir_all(ws.root().join("config/plugins")).unwrap();
    std::fs::write(ws.root().join("config/plugins/reader.mjs"), READER).unwrap();
    let engine = ws.engine().unwrap();
    let session = open_build_session(&engine, "reading").await.unwrap();
    let mut events = session.subscribe();

    server.push(Reply::new().tool_call("c1", "session_reads", "{}"));
    server.push(Reply::new().text("done"));
    session.send(Op::Prompt {
        session_id: session.id().to_string(),
        text: "read the sessions".into(),
        files: Vec::new(),
    });
    let mut output = None;
    let mut toasts = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("an event within 60 s")
            .expect("the stream stays open");
        match e {
            Event::PermissionAsked { request_id, .. } => session.send(Op::PermissionReply {
                request_id,
                reply: PermissionReply::Once,
            }),
            Event::ToolFinished { result, .. } => output = Some(result.output.clone()),
            Event::ToolFailed { error, .. } => panic!("the tool failed: {error}"),
            Event::Toast { .. } => toasts.push(e),
            Event::TurnFinished { .. } => break,
            _ => {}
        }
    }
    let out: Value = serde_json::from_str(&output.expect("the tool ran")).unwrap();
    let id = session.id();
    assert_eq!(out["listed"], serde_json::json!([id]), "{out:#}");
    assert_eq!(out["listError"], Value::Null);
    let s = &out["session"];
    assert_eq!(s["id"], id);
    assert_eq!(s["title"], "reading");
    assert_eq!(s["directory"], ws.repo().display().to_string());
    assert!(s["time"]["created"].as_i64().unwrap() > 0, "{s:#}");
    assert_eq!(out["roles"][0], "user", "{out:#}");
    assert_eq!(out["roles"][1], "assistant", "{out:#}");
    assert_eq!(out["messageSessions"], serde_json::json!([id]));
    assert_eq!(
        out["missing"],
        serde_json::json!({"error": {"name": "NotFoundError", "data": {"message": "Session not found: ses_missing"}}})
    );
    assert_eq!(out["status"], serde_json::json!({"data": {}}));
    assert_eq!(out["toast"], true);
    assert_eq!(
        out["prompt"],
        "client.session.prompt is not supported in Podcode (it offers client.app.log, client.tui.showToast and client.session.list/get/messages/status)"
    );
    assert_eq!(
        toasts,
        [Event::Toast {
            title: "Reader".into(),
            message: "read the sessions".into(),
            variant: "success".into(),
        }]
    );
    session.close().await;
    engine.shutdown().await;
}

const KEEPER: &str = r#"
export const Keeper = async () => ({
  "experimental.session.compacting": async (input, output) => {
    output.context.push(`Keep the ticket number PRJ-42 (session ${input.sessionID}).`);
  },
});
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compacting_hook_adds_what_the_summary_must_keep() {
    let server = ScriptedModel::start(vec![
        Reply::new().text("first answer"),
        Reply::new().text("second answer"),
        Reply::new().text("The summary."),
    ])
    .await;
    let ws = ScratchWorkspace::new(&server.base_url(), "").unwrap();
    std::fs::create_dir_all(ws.root().join("config/plugins")).unwrap();
    std::fs::write(ws.root().join("config/plugins/keeper.mjs"), KEEPER).unwrap();
    let engine = ws.engine().unwrap();
    let session = open_build_session(&engine, "keeping").await.unwrap();
    let mut events = session.subscribe();
    for text in ["first", "second"] {
        session.send(Op::Prompt {
            session_id: session.id().to_string(),
            text: text.into(),
            files: Vec::new(),
        });
        loop {
            let e = tokio::time::timeout(Duration::from_secs(60), events.recv())
                .await
                .unwrap()
                .unwrap();
            if matches!(e, Event::TurnFinished { .. }) {
                break;
            }
        }
    }
    session.send(Op::Compact {
        session_id: session.id().to_string(),
    });
    loop {
        let e = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .unwrap()
            .unwrap();
        if matches!(e, Event::Compacted { .. }) {
            break;
        }
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let summarising = requests[2].to_string();
    assert!(
        summarising.contains(&format!(
            "Keep the ticket number PRJ-42 (session {}).",
            session.id()
        )),
        "{summarising}"
    );
}
