//! Several clients on one session: a permission ask answered by one of two clients (the
//! other sees it resolved; its late reply gets 409), a change listed and reverted (the file
//! restored on disk, and the model's next request says so), a revert conflict reported as
//! data then forced; and an event stream dropped mid-turn, reconnected with
//! `Last-Event-ID`: nothing lost, nothing twice.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{ALLOW_EDITS, Msg, Running, Sse, Workspace, text_of};
use podcode_providers::testing::{Reply, ScriptedModel};
use serde_json::json;

fn write_call(id: &str, file: &Path, content: &str) -> Reply {
    Reply::new().tool_call(
        id,
        "write",
        json!({"filePath": file, "content": content}).to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_of_two_clients_answers_an_ask_and_a_change_is_reverted_from_the_api() {
    let model = ScriptedModel::start(vec![]).await;
    let ws = Workspace::new(&model);
    let file = ws.repo().join("notes.txt");
    std::fs::write(&file, "v0\n").unwrap();
    model.push(write_call("c1", &file, "v1\n"));
    model.push(Reply::new().text("Written."));
    let server = Running::start(&ws).await;
    let id = server.session().await;
    let mut a = Sse::connect(&server, &format!("/api/sessions/{id}/events"), None).await;
    let mut b = Sse::connect(&server, "/api/events", None).await;

    server
        .post(
            &format!("/api/sessions/{id}/prompt"),
            json!({"text": "write v1"}),
        )
        .await;
    let ask_a = a.until("permission_asked").await.pop().unwrap();
    let ask_b = b.until("permission_asked").await.pop().unwrap();
    assert_eq!(ask_a.id, ask_b.id, "one event, one id on both streams");
    assert_eq!(ask_a.data["tool"], "write");
    assert_eq!(ask_a.data["request"]["permission"], "edit");
    let request_id = ask_a.data["request_id"].as_str().unwrap().to_string();
    // A page that joins late finds the ask open.
    let (_, asks) = server.get(&format!("/api/sessions/{id}/asks")).await;
    assert_eq!(asks[0]["request_id"], request_id.as_str());
    let (_, detail) = server.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(detail["asks"][0]["request_id"], request_id.as_str());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v0\n");

    let reply = format!("/api/sessions/{id}/asks/{request_id}");
    let (status, body) = server.post(&reply, json!({"reply": "maybe"})).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        server.post(&reply, json!({"reply": "once"})).await,
        (200, json!({"resolved": true}))
    );
    let (status, body) = server
        .post(&reply, json!({"reply": "reject", "feedback": "no"}))
        .await;
    assert_eq!((status, body), (409, json!({"error": "already resolved"})));
    let resolved_a = a.until("permission_resolved").await.pop().unwrap();
    let resolved_b = b.until("permission_resolved").await.pop().unwrap();
    assert_eq!(resolved_a.data["request_id"], request_id.as_str());
    assert_eq!(resolved_a.data["reply"], json!({"reply": "once"}));
    assert_eq!(resolved_b.id, resolved_a.id);
    a.until("turn_finished").await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v1\n");
    let (_, asks) = server.get(&format!("/api/sessions/{id}/asks")).await;
    assert_eq!(asks, json!([]));

    // The Changes panel: grouped by prompt, then call.
    let (status, changes) = server.get(&format!("/api/sessions/{id}/changes")).await;
    assert_eq!(status, 200);
    let prompt = &changes["prompts"][0];
    assert_eq!(prompt["text"], "write v1");
    let call = &prompt["calls"][0];
    assert!(
        call["call_id"].as_str().unwrap().starts_with("call_"),
        "{call}"
    );
    assert!(
        call["label"].as_str().unwrap().starts_with("write"),
        "{call}"
    );
    let change = &call["changes"][0];
    assert_eq!(change["display"], "notes.txt");
    assert_eq!(change["op"], "modify");
    assert_eq!(
        (change["additions"].clone(), change["deletions"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(change["reverted"], false);
    let change_id = change["id"].as_str().unwrap().to_string();

    let (status, one) = server
        .get(&format!("/api/sessions/{id}/changes/{change_id}"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(one["old_content"], "v0\n");
    assert_eq!(one["new_content"], "v1\n");
    let diff = one["diff"].as_str().unwrap();
    assert!(diff.contains("-v0") && diff.contains("+v1"), "{diff}");
    assert_eq!(
        server
            .get(&format!("/api/sessions/{id}/changes/chg_nope"))
            .await
            .0,
        404
    );

    let revert = format!("/api/sessions/{id}/revert");
    let (status, body) = server
        .post(
            &revert,
            json!({"target": {"kind": "change", "id": "chg_nope"}}),
        )
        .await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = server
        .post(
            &revert,
            json!({"target": {"kind": "everything", "id": "x"}}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, report) = server
        .post(
            &revert,
            json!({"target": {"kind": "change", "id": change_id}}),
        )
        .await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["reverted"][0]["reverts"], change_id.as_str());
    assert!(report.get("conflict").is_none());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "v0\n",
        "restored on disk"
    );
    let reverted = a.until("reverted").await.pop().unwrap();
    assert_eq!(
        reverted.data["report"]["reverted"][0]["reverts"],
        change_id.as_str()
    );
    let (_, changes) = server.get(&format!("/api/sessions/{id}/changes")).await;
    assert_eq!(
        changes["prompts"][0]["calls"][0]["changes"][0]["reverted"],
        true
    );
    let (_, again) = server
        .post(
            &revert,
            json!({"target": {"kind": "change", "id": change_id}}),
        )
        .await;
    assert_eq!(again["skipped"], json!([change_id]));

    // The model learns of the revert with its next request.
    model.push(Reply::new().text("Noted."));
    server
        .post(
            &format!("/api/sessions/{id}/prompt"),
            json!({"text": "and now?"}),
        )
        .await;
    a.until("turn_finished").await;
    let last = model.requests().pop().unwrap()["messages"].to_string();
    let note =
        "The user reverted the change to notes.txt (the file is back to its previous content).";
    let (at_note, at_prompt) = (last.find(note), last.find("and now?"));
    assert!(at_note.is_some() && at_note < at_prompt, "{last}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revert_conflict_is_reported_as_data_and_force_overwrites() {
    let model = ScriptedModel::start(vec![]).await;
    let ws = Workspace::with_config(&model, ALLOW_EDITS);
    let file = ws.repo().join("a.txt");
    model.push(write_call("c1", &file, "mine\n"));
    model.push(Reply::new().text("Done."));
    let server = Running::start(&ws).await;
    let id = server.session().await;
    let mut sse = Sse::connect(&server, &format!("/api/sessions/{id}/events"), None).await;
    server
        .post(
            &format!("/api/sessions/{id}/prompt"),
            json!({"text": "create a.txt"}),
        )
        .await;
    let turn = sse.until("turn_finished").await;
    assert!(!turn.iter().any(|m| m.event == "permission_asked"));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine\n");

    // The user edits the file after the agent did.
    std::fs::write(&file, "theirs\n").unwrap();
    let revert = format!("/api/sessions/{id}/revert");
    let (status, report) = server
        .post(&revert, json!({"target": {"kind": "session", "id": id}}))
        .await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["reverted"], json!([]));
    let conflict = &report["conflict"];
    assert_eq!(
        conflict["file"],
        file.canonicalize().unwrap().display().to_string()
    );
    assert!(
        conflict["diff"].as_str().unwrap().contains("theirs"),
        "{conflict}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "theirs\n",
        "nothing written"
    );

    let (_, changes) = server.get(&format!("/api/sessions/{id}/changes")).await;
    let call_id = changes["prompts"][0]["calls"][0]["call_id"].clone();
    let (status, report) = server
        .post(
            &revert,
            json!({"target": {"kind": "call", "id": call_id}, "force": true}),
        )
        .await;
    assert_eq!(status, 200, "{report}");
    assert!(report.get("conflict").is_none(), "{report}");
    assert!(!file.exists(), "the created file is removed again");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_dropped_mid_turn_resumes_from_last_event_id_without_loss_or_duplicates() {
    let words: Vec<String> = (0..40).map(|i| format!("w{i} ")).collect();
    let mut reply = Reply::new().pace(Duration::from_millis(25));
    for w in &words {
        reply = reply.text(w.clone());
    }
    let model = ScriptedModel::start(vec![reply]).await;
    let ws = Workspace::new(&model);
    let server = Running::start(&ws).await;
    let id = server.session().await;
    let path = format!("/api/sessions/{id}/events");
    let mut first = Sse::connect(&server, &path, None).await;
    server
        .post(
            &format!("/api/sessions/{id}/prompt"),
            json!({"text": "count"}),
        )
        .await;
    let mut before: Vec<Msg> = Vec::new();
    while before.iter().filter(|m| m.event == "text_delta").count() < 5 {
        before.push(first.next().await);
    }
    drop(first);
    // The turn goes on while nobody listens.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let last = before.last().unwrap().id;
    let mut second = Sse::connect(&server, &path, Some(last)).await;
    let after = second.until("turn_finished").await;

    let all: Vec<&Msg> = before.iter().chain(after.iter()).collect();
    assert!(
        all.windows(2).all(|w| w[0].id < w[1].id),
        "no duplicate, in order"
    );
    assert_eq!(
        text_of(&before) + &text_of(&after),
        words.concat(),
        "no text lost"
    );
    let kinds: Vec<&str> = all
        .iter()
        .map(|m| m.event.as_str())
        .filter(|k| *k != "text_delta")
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message",
            "turn_started",
            "step_started",
            "step_finished",
            "turn_finished"
        ]
    );

    // The same through `?last_event_id=` (a page reconnecting by hand), all sessions' stream,
    // from the start of the log.
    let r = server
        .client
        .get(server.at("/api/events?last_event_id=0"))
        .bearer_auth(common::TOKEN)
        .send()
        .await
        .unwrap();
    let mut replay = Sse::from_response(r);
    let whole = replay.until("turn_finished").await;
    assert_eq!(text_of(&whole), words.concat());
    assert_eq!(whole.last().unwrap().id, after.last().unwrap().id);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_s_change_is_listed_shown_and_reverted_under_its_parent() {
    let model = ScriptedModel::start(vec![]).await;
    let ws = Workspace::with_config(&model, ALLOW_EDITS);
    let file = ws.repo().join("child.txt");
    model.push(Reply::new().tool_call(
        "t1",
        "task",
        json!({"description": "Write a file", "prompt": "Write child.txt.", "subagent_type": "general"})
            .to_string(),
    ));
    model.push(write_call("w1", &file, "from the child\n"));
    model.push(Reply::new().text("wrote it"));
    model.push(Reply::new().text("The child wrote child.txt."));
    let server = Running::start(&ws).await;
    let id = server.session().await;
    let mut sse = Sse::connect(&server, &format!("/api/sessions/{id}/events"), None).await;
    server
        .post(
            &format!("/api/sessions/{id}/prompt"),
            json!({"text": "delegate"}),
        )
        .await;
    sse.until("turn_finished").await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "from the child\n");

    let (status, changes) = server.get(&format!("/api/sessions/{id}/changes")).await;
    assert_eq!(status, 200, "{changes}");
    let call = &changes["prompts"][0]["calls"][0];
    assert!(
        call["label"]
            .as_str()
            .unwrap()
            .starts_with("sub-agent general · write"),
        "{changes}"
    );
    let change_id = call["changes"][0]["id"].as_str().unwrap().to_string();
    let (status, detail) = server
        .get(&format!("/api/sessions/{id}/changes/{change_id}"))
        .await;
    assert_eq!(status, 200, "{detail}");
    assert_ne!(detail["session_id"], json!(id), "the change is the child's");
    assert!(detail["diff"].as_str().unwrap().contains("+from the child"));

    let (status, report) = server
        .post(
            &format!("/api/sessions/{id}/revert"),
            json!({"target": {"kind": "change", "id": change_id}}),
        )
        .await;
    assert_eq!(status, 200, "{report}");
    assert!(!file.exists(), "the child's new file is removed again");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_while_an_ask_is_open_closes_it_and_a_late_answer_is_refused() {
    let model = ScriptedModel::start(vec![]).await;
    let ws = Workspace::new(&model);
    let file = ws.repo().join("notes.txt");
    std::fs::write(&file, "v0\n").unwrap();
    model.push(write_call("c1", &file, "v1\n"));
    model.push(Reply::new().text("Written."));
    let server = Running::start(&ws).await;
    let id = server.session().await;
    let mut events = Sse::connect(&server, &format!("/api/sessions/{id}/events"), None).await;
    server
        .post(
            &format!("/api/sessions/{id}/prompt"),
            json!({"text": "write v1"}),
        )
        .await;
    let ask = events.until("permission_asked").await.pop().unwrap();
    let request_id = ask.data["request_id"].as_str().unwrap().to_string();

    let (status, _) = server
        .post(&format!("/api/sessions/{id}/abort"), json!({}))
        .await;
    assert_eq!(status, 202);
    // The stop closed the ask: an "Allow" clicked after it is refused, not taken.
    let (status, body) = server
        .post(
            &format!("/api/sessions/{id}/asks/{request_id}"),
            json!({"reply": "once"}),
        )
        .await;
    assert_eq!(
        (status, body),
        (409, json!({"error": podcode_server::RESOLVED_TEXT}))
    );
    let (_, asks) = server.get(&format!("/api/sessions/{id}/asks")).await;
    assert_eq!(asks, json!([]));
    let turn = events.until("turn_finished").await;
    let resolved: Vec<&Msg> = turn
        .iter()
        .filter(|m| m.event == "permission_resolved")
        .collect();
    assert_eq!(resolved.len(), 1, "{turn:?}");
    assert_eq!(resolved[0].data["reply"], json!(null));
    let end = turn.last().unwrap();
    assert_eq!(end.data["summary"]["end"], "aborted", "{end:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v0\n");
    assert_eq!(
        model.request_count(),
        1,
        "nothing more was asked of the model"
    );
}
