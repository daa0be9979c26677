//! The session registry, driven through the engine's API against the scripted model (real
//! HTTP, real SQLite): one live session per id with one busy state whoever prompts it, turns
//! queued by `send` never overlapping, and a stored session opened in the workspace of the
//! directory it was started in — refused by another project's engine, refused when its
//! directory is gone.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use podcode_core::testing::ScratchWorkspace;
use podcode_core::{
    BUSY_TEXT, Engine, EngineError, EngineFactory, Resume, SessionOptions, SessionPick,
    SessionRegistry,
};
use podcode_protocol::{Event, Op};
use podcode_providers::testing::{Gate, Reply, ScriptedModel};
use tokio::sync::broadcast;

fn registry(ws: &ScratchWorkspace) -> SessionRegistry {
    let dirs = ws.dirs();
    let factory: EngineFactory =
        Arc::new(move |dir: &Path| Engine::load_in(Some(dir.to_path_buf()), dirs.clone()));
    SessionRegistry::new(ws.engine().unwrap(), factory)
}

fn new_session() -> SessionOptions {
    SessionOptions {
        pick: SessionPick::New {
            title: String::new(),
        },
        agent: "build".into(),
        model: None,
        max_steps: None,
        worktree: false,
    }
}

async fn finished(events: &mut broadcast::Receiver<Event>, id: &str) {
    loop {
        let e = tokio::time::timeout(Duration::from_secs(120), events.recv())
            .await
            .expect("the turn finishes")
            .expect("the stream stays open");
        if matches!(&e, Event::TurnFinished { session_id, .. } if session_id == id) {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_session_has_one_busy_state_whoever_prompts_it() {
    let gate = Gate::new();
    let server = ScriptedModel::start(vec![
        Reply::new().text("first answer").hold_after(1, &gate),
        Reply::new().text("second answer"),
        Reply::new().text("queued answer"),
    ])
    .await;
    let ws = ScratchWorkspace::new(&server.base_url(), "").unwrap();
    let sessions = registry(&ws);
    let created = sessions.create(None, &[], new_session()).await.unwrap();
    let id = created.session.id().to_string();

    // A second front end opening the same id gets the same live session, not a second driver.
    let other = sessions.open(&id, Resume::default()).await.unwrap();
    assert!(Arc::ptr_eq(&created, &other));

    let mut events = created.port().subscribe();
    created.port().prompt("one".into(), Vec::new()).unwrap();
    assert!(other.busy());
    match other.port().prompt("two".into(), Vec::new()) {
        Err(EngineError::Busy(text)) => assert_eq!(text, BUSY_TEXT),
        other => panic!("a second prompt is refused as busy, got {other:?}"),
    }
    gate.open();
    finished(&mut events, &id).await;
    // Settled before `TurnFinished` was heard: a prompt right away is taken.
    assert!(!other.busy());
    other.port().prompt("two".into(), Vec::new()).unwrap();
    // A prompt sent as an op while that turn runs waits for it instead of overlapping.
    other.port().send(Op::Prompt {
        session_id: id.clone(),
        text: "three".into(),
        files: Vec::new(),
    });
    finished(&mut events, &id).await;
    finished(&mut events, &id).await;
    assert!(!other.busy());

    let requests = server.requests();
    assert_eq!(
        requests.len(),
        3,
        "one model request per prompt, the refused one none"
    );
    // The queued turn started after the second had finished: its request holds that answer.
    let last = requests[2].to_string();
    assert!(last.contains("second answer") && last.contains("three"));
    sessions.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_session_runs_in_the_workspace_it_was_started_in() {
    let server = ScriptedModel::start(vec![]).await;
    let ws = ScratchWorkspace::new(&server.base_url(), "").unwrap();
    // Project B beside the home project, with the same config and data directories.
    let b = ws.root().join("other");
    std::fs::create_dir_all(b.join(".git")).unwrap();
    let b = b.canonicalize().unwrap();
    let b_engine = Arc::new(Engine::load_in(Some(b.clone()), ws.dirs()).unwrap());
    let in_b = b_engine.open_session(new_session()).await.unwrap();
    let id = in_b.id().to_string();
    in_b.close().await;

    // The home project's engine refuses to drive it: it would run in the wrong checkout.
    let home = ws.engine().unwrap();
    let mut resume = new_session();
    resume.pick = SessionPick::Id(id.clone());
    match home.open_session(resume).await {
        Err(e @ EngineError::OtherProject { .. }) => assert_eq!(
            e.to_string(),
            format!(
                "session {id} belongs to {}, not to {}: run podcode in {} to continue it",
                b.display(),
                home.project().display(),
                b.display()
            )
        ),
        Err(e) => panic!("refused as another project's, got {e}"),
        Ok(_) => panic!("another project's session was opened here"),
    }

    // The registry opens it in B's own engine.
    let sessions = registry(&ws);
    let live = sessions.open(&id, Resume::default()).await.unwrap();
    assert_eq!(live.engine.project(), b.as_path());
    assert_eq!(live.session.directory(), b.as_path());
    sessions.shutdown().await;

    // Gone directory: said so, nothing runs.
    std::fs::remove_dir_all(&b).unwrap();
    let sessions = registry(&ws);
    match sessions.open(&id, Resume::default()).await {
        Err(e @ EngineError::DirectoryGone { .. }) => assert_eq!(
            e.to_string(),
            format!(
                "session {id} works in {}, which no longer exists: it cannot run",
                b.display()
            )
        ),
        Err(e) => panic!("refused as gone, got {e}"),
        Ok(_) => panic!("a session whose directory is gone was opened"),
    }
    sessions.shutdown().await;
}

/// The first sub-agent session the parent's stream names.
async fn first_child(events: &mut broadcast::Receiver<Event>) -> String {
    loop {
        let e = tokio::time::timeout(Duration::from_secs(120), events.recv())
            .await
            .expect("the sub-agent starts")
            .expect("the stream stays open");
        if let Event::Subagent { session_id, .. } = e {
            return session_id;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_s_session_has_one_running_turn_whether_its_parent_or_a_client_drives_it() {
    let child_held = Gate::new();
    let direct_held = Gate::new();
    let task = |task_id: Option<&str>| {
        let mut args = serde_json::json!({"description": "Look", "prompt": "look around", "subagent_type": "general"});
        if let Some(id) = task_id {
            args["task_id"] = id.into();
        }
        Reply::new().tool_call("t1", "task", args.to_string())
    };
    let server = ScriptedModel::start(vec![
        task(None),
        Reply::new().text("child done").hold_after(1, &child_held),
        Reply::new().text("parent done"),
        Reply::new()
            .text("direct answer")
            .hold_after(1, &direct_held),
    ])
    .await;
    let ws = ScratchWorkspace::new(&server.base_url(), "").unwrap();
    let sessions = registry(&ws);
    let parent = sessions.create(None, &[], new_session()).await.unwrap();
    let parent_id = parent.session.id().to_string();
    let mut events = parent.port().subscribe();
    parent.port().prompt("delegate".into(), Vec::new()).unwrap();

    // While the parent's `task` call runs the child, a client opening the child's session
    // finds it busy, and its prompt is refused, not run as a second turn.
    let child_id = first_child(&mut events).await;
    let child = sessions.open(&child_id, Resume::default()).await.unwrap();
    assert!(child.busy());
    match child.port().prompt("me too".into(), Vec::new()) {
        Err(EngineError::Busy(text)) => assert_eq!(text, BUSY_TEXT),
        other => panic!("the child's session is busy, got {other:?}"),
    }
    child_held.open();
    finished(&mut events, &parent_id).await;
    assert!(!child.busy());

    // Now a client drives the child; a `task` call resuming it meanwhile is refused.
    let mut child_events = child.port().subscribe();
    child.port().prompt("go on".into(), Vec::new()).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while server.requests().len() < 4 {
        assert!(
            std::time::Instant::now() < deadline,
            "the child's direct request"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.push(task(Some(&child_id)));
    server.push(Reply::new().text("noted"));
    parent.port().prompt("again".into(), Vec::new()).unwrap();
    finished(&mut events, &parent_id).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 6, "no request of a second child turn");
    assert!(
        requests[5]
            .to_string()
            .contains(&podcode_core::busy_child_text(&child_id)),
        "{}",
        requests[5]
    );
    direct_held.open();
    finished(&mut child_events, &child_id).await;
    sessions.shutdown().await;
}
