//! The conversation item model's proof: a session's live events, folded by
//! `podcode_protocol::ItemFold`, give exactly the items `Engine::transcript` reads from the
//! store afterwards — the same prompts, text and reasoning blocks, tool calls (arguments,
//! state, title, output, diff, the sub-agent's session), revert note and compaction. Driven
//! through the engine's API against the scripted model over real HTTP, a real SQLite store
//! and real tools (read, bash, edit with a permission ask, a `task` sub-agent).
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use podcode_core::testing::{ScratchWorkspace, open_build_session};
use podcode_protocol::{
    Event, Item, ItemFold, Op, PermissionReply, RevertTarget, ToolCallState, ToolItem,
};
use podcode_providers::testing::{Reply, ScriptedModel};
use serde_json::json;
use tokio::sync::broadcast;

/// Every event until (and with) the first one `stop` accepts, answering asks "once".
async fn until(
    events: &mut broadcast::Receiver<Event>,
    port: &podcode_core::Port,
    stop: impl Fn(&Event) -> bool,
) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("an event within 60 s")
            .expect("the live stream keeps up");
        if let Event::PermissionAsked { request_id, .. } = &e {
            port.send(Op::PermissionReply {
                request_id: request_id.clone(),
                reply: PermissionReply::Once,
            });
        }
        let done = stop(&e);
        seen.push(e);
        if done {
            return seen;
        }
    }
}

/// Fields that only one side knows, made equal on purpose.
fn normalise(items: &mut [Item]) {
    for item in items {
        if let Item::Tool(call) = item {
            // The store measures a call from its row's start and end timestamps, the live
            // stream from a clock read in the pipeline: both are wall-clock durations of
            // the same call, never equal to the millisecond.
            call.elapsed_ms = 0;
        }
    }
}

fn tool<'a>(items: &'a [Item], name: &str) -> Vec<&'a ToolItem> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::Tool(t) if t.tool == name => Some(t),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_live_fold_equals_the_stored_transcript() {
    let server = ScriptedModel::start(vec![]).await;
    let ws = ScratchWorkspace::new(
        &server.base_url(),
        "[[permission]]\npermission = \"bash\"\npattern = \"*\"\naction = \"allow\"\n",
    )
    .unwrap();
    let notes = ws.repo().join("notes.txt");
    std::fs::write(&notes, "alpha\nbeta\n").unwrap();
    let missing = ws.repo().join("missing.txt");
    let read_notes = json!({"filePath": notes}).to_string();
    let read_missing = json!({"filePath": missing}).to_string();
    let echo = json!({"command": "echo hello", "description": "say hello"}).to_string();
    let edit = json!({"filePath": notes, "oldString": "beta", "newString": "gamma"}).to_string();
    let task = json!({"description": "Check notes", "prompt": "look", "subagent_type": "general"})
        .to_string();
    // Step 1: reasoning, text and three calls, one of which fails (no such file).
    server.push(
        Reply::new()
            .reasoning("The user wants a look.", None)
            .text("Reading first.")
            .tool_call("r1", "read", read_notes)
            .tool_call("r2", "read", read_missing)
            .tool_call("b1", "bash", echo),
    );
    // Step 2: an edit (asks `edit`, answered once) and a sub-agent.
    server.push(
        Reply::new()
            .text("Now editing.")
            .tool_call("e1", "edit", edit)
            .tool_call("t1", "task", task),
    );
    // The sub-agent's one step, then the parent's answer.
    server.push(Reply::new().text("child saw notes"));
    server.push(Reply::new().text("All done."));
    // The summary `/compact` asks for.
    server.push(Reply::new().text("SUMMARY: notes edited then reverted."));

    let engine = ws.engine().unwrap();
    let session = open_build_session(&engine, "").await.unwrap();
    let port = session.port();
    let mut live = session.subscribe();
    let id = session.id().to_string();

    port.send(Op::Prompt {
        session_id: id.clone(),
        text: "look at notes and fix them".into(),
        files: Vec::new(),
    });
    let mut events = until(
        &mut live,
        &port,
        |e| matches!(e, Event::TurnFinished { session_id, .. } if *session_id == id),
    )
    .await;
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "alpha\ngamma\n");
    port.send(Op::Revert {
        session_id: id.clone(),
        target: RevertTarget::Session(id.clone()),
        force: false,
    });
    events.extend(until(&mut live, &port, |e| matches!(e, Event::Reverted { .. })).await);
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "alpha\nbeta\n");
    port.send(Op::Compact {
        session_id: id.clone(),
    });
    events.extend(until(&mut live, &port, |e| matches!(e, Event::Compacted { .. })).await);

    let mut fold = ItemFold::new(&id);
    for e in &events {
        fold.apply(e);
    }
    let mut folded = fold.into_items();
    let (mut stored, _) = engine.transcript(&id).unwrap();
    normalise(&mut folded);
    normalise(&mut stored);

    // What the items are, so an empty or partial conversation on both sides fails too.
    let kinds: Vec<String> = stored
        .iter()
        .map(|i| match i {
            Item::Tool(t) => format!("tool {} {}", t.tool, t.state),
            other => serde_json::to_value(other).unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_string(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "user",
            "reasoning",
            "assistant",
            "tool read completed",
            "tool read failed",
            "tool bash completed",
            "assistant",
            "tool edit completed",
            "tool task completed",
            "assistant",
            "revert_note",
            "compaction",
        ],
        "{stored:#?}"
    );
    let reads = tool(&stored, "read");
    assert_eq!(reads[0].args, json!({"filePath": notes}));
    assert!(reads[1].output.contains("missing.txt"), "{:?}", reads[1]);
    let edits = tool(&stored, "edit");
    assert!(
        edits[0].diff.as_deref().unwrap_or("").contains("+gamma"),
        "{:?}",
        edits[0]
    );
    let tasks = tool(&stored, "task");
    let child = tasks[0]
        .child_session_id
        .clone()
        .expect("the child session");
    assert_eq!(
        engine.session(&child).unwrap().parent_id.as_deref(),
        Some(id.as_str())
    );
    assert!(matches!(
        stored.iter().find(|i| matches!(i, Item::RevertNote { .. })),
        Some(Item::RevertNote { text }) if text == "The user reverted the change to notes.txt (the file is back to its previous content)."
    ));
    assert!(
        tool(&stored, "bash")[0].state == ToolCallState::Completed
            && tool(&stored, "bash")[0].output.contains("hello")
    );

    // The proof: the live stream and the store tell the same conversation.
    assert_eq!(folded.len(), stored.len(), "{folded:#?}\n---\n{stored:#?}");
    for (i, (live_item, stored_item)) in folded.iter().zip(&stored).enumerate() {
        assert_eq!(live_item, stored_item, "item {i} differs");
    }
    session.close().await;
    engine.shutdown().await;
}
