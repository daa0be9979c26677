//! Interrupted turns against a scripted model server (real HTTP + SSE), a real store and a
//! real tool runtime: cut streams are discarded and retried, aborts while streaming or
//! while tools run leave a history that is valid for the next request, and a session whose
//! process died mid-step still rebuilds into one.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use podcode_agent::{
    AgentProfile, StepStatus, StoredPart, load_history, not_run_text, stream_failed_text,
};
use podcode_protocol::{Event, PermissionReply, TurnEnd};
use podcode_providers::testing::Reply;
use podcode_providers::{Part, Role};
use podcode_store::ToolCallState;
use podcode_tools::aborted_text;
use podcode_tools::testing::{noop, sleeper};
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_cut_stream_is_discarded_and_retried_then_fails_the_turn_after_two_retries() {
    let w = world(
        vec![
            Reply::new()
                .text("partial ")
                .text("answer ")
                .text("more")
                .cut_after(2),
            Reply::new().text("Complete answer.").usage(10, 3),
        ],
        Opts::default(),
    );
    let agent = w.agent(AgentProfile::build(), |_| {});
    let s = agent
        .run_turn(&w.session, "hi", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(s.end, TurnEnd::Answered);
    assert_eq!(w.requests().len(), 2);
    // The cut step is on record as cut, never as complete, and left out of the history.
    let msgs = w.store.messages(&w.session).unwrap();
    let first_step: Vec<StoredPart> = w
        .store
        .parts(&msgs[1].id)
        .unwrap()
        .iter()
        .map(StoredPart::parse)
        .collect();
    assert!(matches!(first_step.last(), Some(StoredPart::Step(s)) if s.status == StepStatus::Cut));
    let history = load_history(&w.store, &w.session).unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(
        history[1].parts,
        vec![Part::Text {
            text: "Complete answer.".into()
        }]
    );
    assert_eq!(
        w.requests()[1]["messages"].as_array().unwrap().len(),
        2,
        "system + prompt only"
    );

    // Three cuts in a row end the turn with a clear error.
    let cut = || Reply::new().text("a").text("b").cut_after(2);
    let w = world(vec![cut(), cut(), cut(), cut()], Opts::default());
    let agent = w.agent(AgentProfile::build(), |_| {});
    let s = agent
        .run_turn(&w.session, "hi", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(s.end, TurnEnd::Error);
    assert_eq!(w.requests().len(), 3);
    let err = s.error.unwrap();
    assert!(err.starts_with(&stream_failed_text(3, "")[..50]), "{err}");
    assert_valid(&load_history(&w.store, &w.session).unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_interrupts_running_tools_and_every_call_still_gets_a_result() {
    let w = world(
        vec![
            Reply::new()
                .tool_call("s1", "sleep", r#"{"ms": 600000}"#)
                .tool_call("s2", "sleep", r#"{"ms": 10}"#),
            Reply::new().text("Resumed fine."),
        ],
        Opts {
            tools: vec![sleeper("sleep", true)],
            replies: vec![PermissionReply::Always],
            ..Default::default()
        },
    );
    let agent = w.agent(AgentProfile::build(), |_| {});
    let abort = CancellationToken::new();
    let trigger = abort.clone();
    let mut events = w.runtime.subscribe();
    tokio::spawn(async move {
        while let Ok(e) = events.recv().await {
            if matches!(e, Event::ToolStarted { .. }) {
                tokio::time::sleep(Duration::from_millis(100)).await;
                trigger.cancel();
                break;
            }
        }
    });
    let started = std::time::Instant::now();
    let s = agent.run_turn(&w.session, "sleep", abort).await.unwrap();
    // The sleep would take ten minutes: this bound only says the abort did not wait for it
    // (far above what a slow machine needs to wind down).
    assert!(started.elapsed() < Duration::from_secs(120));
    assert_eq!(s.end, TurnEnd::Aborted);
    let calls = w.store.tool_calls(&w.session).unwrap();
    assert_eq!(calls.len(), 2);
    assert!(
        calls.iter().all(|c| c.state == ToolCallState::Interrupted),
        "{calls:#?}"
    );
    assert_eq!(calls[1].output, not_run_text("sleep"));

    let history = load_history(&w.store, &w.session).unwrap();
    assert_valid(&history);
    let last = history.last().unwrap();
    assert_eq!(last.role, Role::User);
    match &last.parts[0] {
        Part::ToolResult {
            call_id,
            is_error,
            output,
            ..
        } => {
            assert_eq!(call_id, "s1");
            assert!(is_error);
            assert!(output.starts_with(&aborted_text("sleep")[..30]), "{output}");
        }
        other => panic!("{other:?}"),
    }
    // Resuming sends a valid history: results answer every call, then the new prompt.
    let s = agent
        .run_turn(&w.session, "carry on", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(s.end, TurnEnd::Answered);
    let req = &w.requests()[1];
    assert_valid_openai_request(req);
    assert_eq!(tool_messages(req).len(), 2);
    assert_eq!(
        req["messages"].as_array().unwrap().last().unwrap()["content"],
        "carry on"
    );
}

#[tokio::test]
async fn an_abort_while_streaming_keeps_the_partial_text_and_the_history_valid() {
    let w = world(
        vec![
            Reply::new()
                .text("Partial ")
                .text("thought")
                .tool_call("x", "noop", "{}")
                .pace(Duration::from_millis(250)),
            Reply::new().text("ok"),
        ],
        Opts {
            tools: vec![noop("noop")],
            ..Default::default()
        },
    );
    let agent = w.agent(AgentProfile::build(), |_| {});
    let abort = CancellationToken::new();
    let trigger = abort.clone();
    let mut events = w.runtime.subscribe();
    tokio::spawn(async move {
        while let Ok(e) = events.recv().await {
            if matches!(e, Event::TextDelta { .. }) {
                trigger.cancel();
                break;
            }
        }
    });
    let s = agent.run_turn(&w.session, "think", abort).await.unwrap();
    assert_eq!(s.end, TurnEnd::Aborted);
    assert!(w.store.tool_calls(&w.session).unwrap().is_empty());
    let history = load_history(&w.store, &w.session).unwrap();
    assert_valid(&history);
    assert_eq!(history.len(), 2);
    assert!(matches!(&history[1].parts[0], Part::Text { text } if text.starts_with("Partial")));
    agent
        .run_turn(&w.session, "again", CancellationToken::new())
        .await
        .unwrap();
    assert_valid_openai_request(&w.requests()[1]);
}

#[tokio::test]
async fn a_session_killed_mid_step_still_rebuilds_into_a_valid_history() {
    let w = world(vec![], Opts::default());
    let st = &w.store;
    let s = &w.session;
    let user = st.add_message(s, "user", &json!({})).unwrap();
    st.add_part(&user, s, "text", &json!({"text": "do it"}))
        .unwrap();
    // Step 1 completed, its call was running when the process died.
    let a1 = st.add_message(s, "assistant", &json!({})).unwrap();
    st.add_part(&a1, s, "text", &json!({"text": "Running it."}))
        .unwrap();
    st.add_part(
        &a1,
        s,
        "tool",
        &json!({"call_id": "call_x1", "provider_id": "p1", "name": "bash", "arguments": "{}"}),
    )
    .unwrap();
    st.add_part(&a1, s, "step", &json!({"step": 1, "status": "completed"}))
        .unwrap();
    st.start_tool_call(&podcode_store::NewToolCall {
        id: "call_x1",
        session_id: s,
        message_id: Some(&a1),
        tool: "bash",
        args: &json!({}),
    })
    .unwrap();
    // Step 2 was being streamed: only a finished text block made it.
    let a2 = st.add_message(s, "assistant", &json!({})).unwrap();
    st.add_part(&a2, s, "text", &json!({"text": "Half"}))
        .unwrap();
    let history = load_history(st, s).unwrap();
    assert_valid(&history);
    assert_eq!(history.len(), 4);
    match &history[2].parts[0] {
        Part::ToolResult {
            call_id,
            output,
            is_error,
            ..
        } => {
            assert_eq!(call_id, "p1");
            assert!(is_error);
            assert_eq!(output, &podcode_agent::lost_result_text("bash"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        history[3].parts,
        vec![Part::Text {
            text: "Half".into()
        }]
    );
}
