//! Custom commands over the API, against a real server (real engine, SQLite store, the
//! scripted model over HTTP): `GET /api/commands` lists a command file of the repository
//! and one from config, `POST /api/sessions/{id}/command` runs one as a turn (the model is
//! sent the filled-in template, the session is titled as typed), a second command while
//! it runs is refused, an unknown name ends its turn with the engine's error text, and an
//! empty name is a 400.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Running, Sse, Workspace};
use podcode_providers::testing::{Gate, Reply, ScriptedModel};
use serde_json::json;

const REVIEW: &str = "---\ndescription: Review a file for bugs\nargument-hint: <path> [focus]\n---\n\
     Review $1 for real bugs. Focus on: $2\n";

const FIX: &str =
    "[commands.fix]\ntemplate = \"Fix $ARGUMENTS now.\"\ndescription = \"Fix something\"\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_are_listed_and_run_as_turns() {
    let gate = Gate::new();
    let model = ScriptedModel::start(vec![
        Reply::new()
            .text("Looking ")
            .text("at it.")
            .hold_after(1, &gate),
    ])
    .await;
    let ws = Workspace::with_config(&model, FIX);
    std::fs::create_dir_all(ws.repo().join(".podcode/commands")).unwrap();
    std::fs::write(ws.repo().join(".podcode/commands/review.md"), REVIEW).unwrap();
    let server = Running::start(&ws).await;

    let (status, list) = server.get("/api/commands").await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(
        list,
        json!([
            {"name": "fix", "description": "Fix something", "argument_hint": null,
             "source": "config", "from_repository": false},
            {"name": "review", "description": "Review a file for bugs",
             "argument_hint": "<path> [focus]", "source": ".podcode/commands/review.md",
             "from_repository": true},
        ])
    );

    let id = server.session().await;
    let mut sse = Sse::connect(&server, &format!("/api/sessions/{id}/events"), None).await;
    let path = format!("/api/sessions/{id}/command");
    let (status, body) = server
        .post(
            &path,
            json!({"name": "/review", "arguments": "src/a.rs division"}),
        )
        .await;
    assert_eq!((status, body), (202, json!({"session_id": id})));
    let started = sse.until("turn_started").await;
    // The stored prompt is the filled-in template.
    assert_eq!(
        started[0].data["text"].as_str().unwrap().trim(),
        "Review src/a.rs for real bugs. Focus on: division"
    );
    // One turn at a time, commands and prompts alike.
    let (status, body) = server
        .post(&path, json!({"name": "fix", "arguments": "it"}))
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"], podcode_server::BUSY_TEXT);
    gate.open();
    let finished = sse.until("turn_finished").await.pop().unwrap();
    assert_eq!(finished.data["summary"]["end"], "answered", "{finished:?}");
    let sent = podcode_providers::testing::user_texts(&model.requests()[0]);
    assert!(
        sent.contains("Review src/a.rs for real bugs. Focus on: division"),
        "{sent}"
    );
    assert!(!sent.contains("$1"), "{sent}");
    let (_, detail) = server.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(detail["session"]["title"], "/review src/a.rs division");

    // An unknown name: accepted, and the turn ends saying which commands there are.
    let (status, _) = server.post(&path, json!({"name": "nope"})).await;
    assert_eq!(status, 202);
    let finished = sse.until("turn_finished").await.pop().unwrap();
    assert_eq!(finished.data["summary"]["end"], "error", "{finished:?}");
    assert_eq!(
        finished.data["summary"]["error"],
        "no command named /nope; commands: /fix /review"
    );
    assert_eq!(model.requests().len(), 1, "nothing was sent to the model");

    // No name at all is the client's mistake.
    for name in ["", "  ", "/"] {
        let (status, body) = server
            .post(&path, json!({"name": name, "arguments": "x"}))
            .await;
        assert_eq!(status, 400, "{name:?}: {body}");
        assert_eq!(body["error"], podcode_server::NO_COMMAND_NAME_TEXT);
    }
    // An unknown session is a 404, as for a prompt.
    let (status, _) = server
        .post("/api/sessions/nosuch/command", json!({"name": "fix"}))
        .await;
    assert_eq!(status, 404);
    server.stop().await;
}
