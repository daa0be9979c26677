//! `POST /api/sessions/{id}/fork`: a new session with the conversation up to a user message,
//! opened and prompted like any other; the refusals (unknown session or message: 404; a
//! message of another session or not a prompt: 400).
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Running, Sse, Workspace};
use podcode_providers::testing::{Reply, ScriptedModel};
use serde_json::{Value, json};

/// The transcript's user items of a session: (message_id, text).
async fn prompts(server: &Running, id: &str) -> Vec<(String, String)> {
    let (status, body) = server.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(status, 200, "{body}");
    body["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["kind"] == "user")
        .map(|i| {
            let id = i["message_id"].as_str().unwrap().to_string();
            (id, i["text"].as_str().unwrap().to_string())
        })
        .collect()
}

async fn prompt(server: &Running, id: &str, text: &str) {
    let mut sse = Sse::connect(server, &format!("/api/sessions/{id}/events"), None).await;
    let (status, body) = server
        .post(
            &format!("/api/sessions/{id}/prompt"),
            json!({ "text": text }),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    sse.until("turn_finished").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_forked_at_a_prompt_holds_the_conversation_up_to_it() {
    let model = ScriptedModel::start(vec![
        Reply::new().text("answer one"),
        Reply::new().text("answer two"),
    ])
    .await;
    let ws = Workspace::new(&model);
    let server = Running::start(&ws).await;
    let id = server.session().await;
    server
        .client
        .patch(server.at(&format!("/api/sessions/{id}")))
        .bearer_auth(common::TOKEN)
        .json(&json!({"title": "ideas"}))
        .send()
        .await
        .unwrap();
    prompt(&server, &id, "first question").await;
    prompt(&server, &id, "second question").await;
    let asked = prompts(&server, &id).await;
    assert_eq!(asked.len(), 2);
    let fork_path = format!("/api/sessions/{id}/fork");

    let (status, fork) = server
        .post(&fork_path, json!({"messageId": asked[0].0}))
        .await;
    assert_eq!(status, 201, "{fork}");
    assert_eq!(fork["title"], "ideas (fork)");
    let fork_id = fork["id"].as_str().unwrap().to_string();
    assert_ne!(fork_id, id);
    let (_, original) = server.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(fork["directory"], original["session"]["directory"]);
    assert_eq!(fork["agent"], original["session"]["agent"]);
    let (_, detail) = server.get(&format!("/api/sessions/{fork_id}")).await;
    let texts: Vec<Value> = detail["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["text"].clone())
        .collect();
    assert_eq!(texts, [json!("first question")], "{detail}");
    assert_eq!(
        prompts(&server, &id).await,
        asked,
        "the original is untouched"
    );

    // The fork is driven like any session: the model reads the copied prompt.
    model.push(Reply::new().text("forked answer"));
    prompt(&server, &fork_id, "on the fork").await;
    let sent = model.requests().last().unwrap()["messages"].to_string();
    assert!(
        sent.contains("first question") && sent.contains("on the fork"),
        "{sent}"
    );
    assert!(!sent.contains("second question"), "{sent}");

    // Refusals.
    let (status, body) = server
        .post(&fork_path, json!({"messageId": "msg_nope"}))
        .await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = server
        .post(
            "/api/sessions/ses_nope/fork",
            json!({"messageId": asked[0].0}),
        )
        .await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = server
        .post(
            &format!("/api/sessions/{fork_id}/fork"),
            json!({"messageId": asked[1].0}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("another session"),
        "{body}"
    );
    let (_, export) = server.get(&format!("/api/sessions/{id}/export")).await;
    let answer = export["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap()["id"]
        .clone();
    let (status, body) = server.post(&fork_path, json!({"messageId": answer})).await;
    assert_eq!(status, 400, "{body}");
    server.stop().await;
}
