//! Forking a session at a user message (`Engine::fork_session`): the fork holds exactly the
//! messages up to that one, tool calls copied as history under new ids, the original is
//! untouched, and the model reads the copied conversation in the fork's next request.

use std::sync::Arc;
use std::time::Duration;

use podcode_core::testing::{ScratchWorkspace, open_build_session};
use podcode_core::{Engine, EngineError, Session, SessionOptions, SessionPick};
use podcode_protocol::{Event, Op};
use podcode_providers::testing::{Reply, ScriptedModel};

async fn turn(session: &Session, text: &str) {
    let mut events = session.subscribe();
    session.port().send(Op::Prompt {
        session_id: session.id().to_string(),
        text: text.into(),
        files: Vec::new(),
    });
    loop {
        let e = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("an event within 30 s")
            .expect("the stream stays open");
        if matches!(e, Event::TurnFinished { .. }) {
            return;
        }
    }
}

/// A session's messages as (role, text of its text parts).
fn conversation(engine: &Engine, id: &str) -> Vec<(String, String)> {
    let store = engine.store().unwrap();
    store
        .messages(id)
        .unwrap()
        .into_iter()
        .map(|m| {
            let text = store
                .parts(&m.id)
                .unwrap()
                .iter()
                .filter(|p| p.kind == "text")
                .filter_map(|p| p.data["text"].as_str().map(str::to_string))
                .collect();
            (m.role, text)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_holds_the_conversation_up_to_the_message_and_the_model_reads_it() {
    let server = ScriptedModel::start(vec![]).await;
    let ws = ScratchWorkspace::new(&server.base_url(), "").unwrap();
    let notes = ws.repo().join("notes.txt");
    std::fs::write(&notes, "the notes say hello\n").unwrap();
    server.push(Reply::new().tool_call(
        "r1",
        "read",
        serde_json::json!({ "filePath": notes }).to_string(),
    ));
    server.push(Reply::new().text("answer one"));
    server.push(Reply::new().text("answer two"));
    server.push(Reply::new().text("answer three"));
    let engine: Arc<Engine> = ws.engine().unwrap();
    let session = open_build_session(&engine, "planning").await.unwrap();
    for text in ["first question", "second question", "third question"] {
        turn(&session, text).await;
    }
    let store = engine.store().unwrap();
    let messages = store.messages(session.id()).unwrap();
    let prompts: Vec<_> = messages.iter().filter(|m| m.role == "user").collect();
    assert_eq!(prompts.len(), 3);
    let at = prompts[1].id.clone();
    let cut = messages.iter().position(|m| m.id == at).unwrap() + 1;
    let before = conversation(&engine, session.id());

    let fork = engine.fork_session(session.id(), &at).unwrap();
    assert_eq!(fork.title, "planning (fork)");
    assert_eq!(fork.cwd, ws.repo().to_string_lossy());
    assert_eq!(fork.agent, "build");
    assert_eq!(conversation(&engine, &fork.id), before[..cut].to_vec());
    assert_eq!(
        conversation(&engine, session.id()),
        before,
        "the original is untouched"
    );
    let copied = store.messages(&fork.id).unwrap();
    assert!(
        copied.iter().all(|m| messages.iter().all(|o| o.id != m.id)),
        "new ids"
    );
    let calls = store.tool_calls(&fork.id).unwrap();
    let original = store.tool_calls(session.id()).unwrap();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_ne!(calls[0].id, original[0].id);
    assert_eq!(calls[0].output, original[0].output);
    assert!(calls[0].output.contains("the notes say hello"));
    assert!(store.changes(Some(&fork.id), None).unwrap().is_empty());

    // Refusals: an unknown message, another session's, one that is not a prompt.
    let refused = |s: &str, m: &str| engine.fork_session(s, m).unwrap_err();
    assert!(matches!(
        refused(session.id(), "msg_nope"),
        EngineError::UnknownMessage(_)
    ));
    assert!(matches!(
        refused("ses_nope", &at),
        EngineError::UnknownSession(_)
    ));
    assert!(matches!(
        refused(&fork.id, &at),
        EngineError::NotForkable(_)
    ));
    let answer = messages.iter().find(|m| m.role == "assistant").unwrap();
    assert!(matches!(
        refused(session.id(), &answer.id),
        EngineError::NotForkable(_)
    ));
    session.close().await;

    server.push(Reply::new().text("forked answer"));
    let forked = engine
        .open_session(SessionOptions {
            pick: SessionPick::Id(fork.id.clone()),
            agent: "build".into(),
            model: None,
            max_steps: None,
            worktree: false,
        })
        .await
        .unwrap();
    turn(&forked, "after the fork").await;
    let request = server.requests().last().cloned().unwrap();
    let sent = request["messages"].to_string();
    for want in [
        "first question",
        "the notes say hello",
        "answer one",
        "second question",
        "after the fork",
    ] {
        assert!(sent.contains(want), "{want} in {sent}");
    }
    for gone in ["answer two", "third question", "answer three"] {
        assert!(!sent.contains(gone), "{gone} not in {sent}");
    }
    forked.close().await;
    engine.shutdown().await;
}
