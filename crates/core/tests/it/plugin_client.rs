//! The opencode `client` a plugin receives, backed by the engine: a plugin tool run in a real
//! session (scripted model over real HTTP, real SQLite store, real sidecar) reads sessions
//! through `client.session.*` in opencode's `{ data, error }` shapes, and its
//! `client.tui.showToast` reaches the session's event stream as `Event::Toast`; a prompt
//! asking for a reply and `client.session.command` start turns in an open session (queued
//! behind a running one), and are refused for a session no front end has open.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use podcode_core::testing::{ScratchWorkspace, open_build_session};
use podcode_protocol::{Event, Op, PermissionReply};
use podcode_providers::testing::{Reply, ScriptedModel};
use serde_json::Value;

/// Prompts `session` with `text` and waits for the turn's end.
async fn prompt_and_wait(
    session: &podcode_core::Session,
    events: &mut tokio::sync::broadcast::Receiver<Event>,
    text: &str,
) {
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
        const notOpen = await client.session.command({ path: { id: "ses_closed" }, body: { command: "x" } });
        // How real plugins add context: a prompt that asks for no reply.
        const injected = await client.session.prompt({ path: { id: ctx.sessionID }, body: { noReply: true, parts: [{ type: "text", text: "Context from the plugin: ticket PRJ-7.", synthetic: true }] } });
        const replyAsked = await client.session.prompt({ path: { id: ctx.sessionID }, body: { parts: [{ type: "text", text: "hi" }] } });
        const renamed = await client.session.update({ path: { id: ctx.sessionID }, body: { title: "renamed by a plugin" } });
        return JSON.stringify({
          keys: Object.keys(one.data).sort(),
          injected: injected.data,
          replyAsked: replyAsked.error ?? null,
          replyStarted: replyAsked.data,
          renamed: renamed.data.title,
          notOpen: notOpen.error,
          listed: list.data.map((s) => s.id),
          listError: list.error ?? null,
          session: one.data,
          roles: msgs.data.map((m) => m.info.role),
          messageSessions: [...new Set(msgs.data.map((m) => m.info.sessionID))],
          missing,
          status,
          toast: toast.data,
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
    // The prompt the tool asked a reply to: its own turn, after this one.
    server.push(Reply::new().text("hello"));
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
    // The session runs this tool's turn: it is busy.
    assert_eq!(
        out["status"],
        serde_json::json!({"data": {id: {"type": "busy"}}})
    );
    assert_eq!(out["toast"], true);
    assert_eq!(
        out["notOpen"],
        serde_json::json!({"name": "BadRequestError", "data": {"message": format!("session ses_closed {}", podcode_core::SESSION_NOT_OPEN)}})
    );
    // opencode's Session keys, where Podcode has the value (no share, revert, summary yet).
    assert_eq!(
        out["keys"],
        serde_json::json!([
            "agent",
            "cost",
            "directory",
            "id",
            "model",
            "projectID",
            "slug",
            "time",
            "title",
            "tokens",
            "version"
        ]),
        "{out:#}"
    );
    let injected = &out["injected"];
    assert_eq!(injected["info"]["role"], "user", "{out:#}");
    assert_eq!(injected["info"]["sessionID"], id);
    assert_eq!(
        injected["parts"][0]["text"],
        "Context from the plugin: ticket PRJ-7."
    );
    assert_eq!(injected["parts"][0]["synthetic"], true);
    // Asked while this session's turn ran: queued, then run as a turn of its own.
    assert_eq!(out["replyAsked"], Value::Null, "{out:#}");
    assert_eq!(
        out["replyStarted"],
        serde_json::json!({"sessionID": id, "queued": true})
    );
    loop {
        let e = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("the queued prompt's turn")
            .expect("the stream stays open");
        if matches!(e, Event::TurnFinished { .. }) {
            break;
        }
    }
    let hi = server.requests().last().unwrap().clone();
    let last_user = podcode_providers::testing::user_texts(&hi);
    assert!(
        last_user.lines().last().is_some_and(|l| l.contains("hi")),
        "{last_user}"
    );
    assert_eq!(out["renamed"], "renamed by a plugin");
    assert_eq!(
        toasts,
        [Event::Toast {
            title: "Reader".into(),
            message: "read the sessions".into(),
            variant: "success".into(),
        }]
    );
    // The injected context goes with the next request, and no transcript shows it.
    server.push(Reply::new().text("noted"));
    prompt_and_wait(&session, &mut events, "next").await;
    let last = server.requests().last().unwrap().to_string();
    assert!(
        last.contains("Context from the plugin: ticket PRJ-7."),
        "{last}"
    );
    let (items, _) = engine.transcript(id).unwrap();
    let prompts: Vec<&str> = items
        .iter()
        .filter_map(|i| match i {
            podcode_protocol::Item::User { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(prompts, ["read the sessions", "hi", "next"]);
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
        prompt_and_wait(&session, &mut events, text).await;
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

/// Runs a command when the session first goes idle, as an "auto-continue" plugin does.
const FOLLOW_UP: &str = r#"
import { appendFileSync } from "node:fs";
let done = false;
export const FollowUp = async ({ client, directory }) => ({
  event: async ({ event }) => {
    if (event.type !== "session.idle" || done) return;
    done = true;
    const res = await client.session.command({ path: { id: event.properties.sessionID }, body: { command: "/check", arguments: "the build" } });
    appendFileSync(`${directory}/follow-up.json`, JSON.stringify(res));
  },
});
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_hook_runs_a_custom_command_when_the_session_goes_idle() {
    let server = ScriptedModel::start(vec![
        Reply::new().text("started"),
        Reply::new().text("checked"),
    ])
    .await;
    let ws = ScratchWorkspace::new(
        &server.base_url(),
        "[commands.check]\ntemplate = \"Check $ARGUMENTS carefully.\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.root().join("config/plugins")).unwrap();
    std::fs::write(ws.root().join("config/plugins/follow.mjs"), FOLLOW_UP).unwrap();
    let engine = ws.engine().unwrap();
    let session = open_build_session(&engine, "following").await.unwrap();
    let mut events = session.subscribe();
    prompt_and_wait(&session, &mut events, "start").await;
    // The plugin hears the turn end and runs the command: a second turn.
    loop {
        let e = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("the command's turn")
            .expect("the stream stays open");
        if matches!(e, Event::TurnFinished { .. }) {
            break;
        }
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let sent = podcode_providers::testing::user_texts(&requests[1]);
    assert!(
        sent.lines()
            .last()
            .is_some_and(|l| l.contains("Check the build carefully.")),
        "{sent}"
    );
    let res: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.repo().join("follow-up.json")).unwrap())
            .unwrap();
    assert_eq!(
        res,
        serde_json::json!({"data": {"sessionID": session.id(), "queued": false}})
    );
    session.close().await;
    engine.shutdown().await;
}
