//! The engine driven through its API alone (no CLI, no TUI), against the scripted model
//! speaking the real wire protocol over HTTP and a real SQLite store: a prompt, a tool call
//! whose permission ask is answered with `Op::PermissionReply`, a revert by `Op::Revert`,
//! the event stream checked in order — and two sessions running at once in one engine.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use podcode_core::testing::{ScratchWorkspace, open_build_session};
use podcode_core::{Engine, Port, Session};
use podcode_protocol::{Event, Op, PermissionReply, RevertTarget, TurnEnd};
use podcode_providers::testing::{Reply, ScriptedModel};
use tokio::sync::broadcast;

fn write_call(id: &str, file: &Path, content: &str) -> Reply {
    Reply::new().tool_call(
        id,
        "write",
        serde_json::json!({"filePath": file, "content": content}).to_string(),
    )
}

fn workspace(server: &ScriptedModel) -> ScratchWorkspace {
    ScratchWorkspace::new(&server.base_url(), "").unwrap()
}

async fn open(engine: &Arc<Engine>) -> Session {
    open_build_session(engine, "").await.unwrap()
}

/// Events until (and with) the first one `stop` accepts.
async fn until(
    events: &mut broadcast::Receiver<Event>,
    stop: impl Fn(&Event) -> bool,
) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("an event within 30 s")
            .expect("the stream stays open");
        let done = stop(&e);
        seen.push(e);
        if done {
            return seen;
        }
    }
}

fn kinds(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| {
            let v = serde_json::to_value(e).unwrap();
            let kind = v["type"].as_str().unwrap().to_string();
            // Streaming details vary; the order of what happened does not.
            (!matches!(
                kind.as_str(),
                "text_delta" | "reasoning_delta" | "tool_metadata"
            ))
            .then_some(kind)
        })
        .collect()
}

fn prompt(port: &Port, session: &Session, text: &str) {
    port.send(Op::Prompt {
        session_id: session.id().to_string(),
        text: text.into(),
        files: Vec::new(),
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_driven_by_ops_and_answers_asks_through_events() {
    let server = ScriptedModel::start(vec![]).await;
    let ws = workspace(&server);
    let file = ws.repo().join("notes.txt");
    std::fs::write(&file, "v0\n").unwrap();
    server.push(write_call("c1", &file, "v1\n"));
    server.push(Reply::new().text("Written."));
    let engine = ws.engine().unwrap();
    let session = open(&engine).await;
    let port = session.port();
    let mut events = session.subscribe();

    prompt(&port, &session, "write v1 to notes.txt");
    let before_ask = until(&mut events, |e| matches!(e, Event::PermissionAsked { .. })).await;
    let Some(Event::PermissionAsked {
        request_id,
        session_id,
        tool,
        request,
        ..
    }) = before_ask.last().cloned()
    else {
        unreachable!()
    };
    assert_eq!(session_id, session.id());
    assert_eq!(tool, "write");
    assert_eq!(request.permission, "edit");
    assert_eq!(port.open_asks().len(), 1, "the ask is listed as open");
    // The file is untouched until the ask is answered.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v0\n");
    port.send(Op::PermissionReply {
        request_id: request_id.clone(),
        reply: PermissionReply::Once,
    });
    let rest = until(&mut events, |e| matches!(e, Event::TurnFinished { .. })).await;
    let all: Vec<Event> = before_ask.into_iter().chain(rest).collect();
    // The loop's events and the tool call's events each come in order; the two streams
    // interleave (the call may start before the step's stream has finished), except that
    // the call ends before the next step starts.
    let seen = kinds(&all);
    let mut sorted = seen.clone();
    sorted.sort();
    let mut expected = vec![
        "change_recorded",
        "permission_asked",
        "permission_resolved",
        "step_finished",
        "step_finished",
        "step_started",
        "step_started",
        "tool_finished",
        "tool_requested",
        "tool_started",
        "turn_finished",
        "turn_started",
        "user_message",
    ];
    expected.sort();
    assert_eq!(sorted, expected, "{seen:?}");
    let loop_events: Vec<&str> = seen
        .iter()
        .map(String::as_str)
        .filter(|k| {
            k.starts_with("turn_")
                || k.starts_with("step_")
                || *k == "tool_requested"
                || *k == "user_message"
        })
        .collect();
    assert_eq!(
        loop_events,
        [
            "user_message",
            "turn_started",
            "step_started",
            "tool_requested",
            "step_finished",
            "step_started",
            "step_finished",
            "turn_finished"
        ],
        "{seen:?}"
    );
    let call_events: Vec<&str> = seen
        .iter()
        .map(String::as_str)
        .filter(|k| !(k.starts_with("turn_") || k.starts_with("step_") || *k == "user_message"))
        .collect();
    assert_eq!(
        call_events,
        [
            "tool_requested",
            "tool_started",
            "permission_asked",
            "permission_resolved",
            "change_recorded",
            "tool_finished"
        ],
        "{seen:?}"
    );
    let last_step_start = seen.iter().rposition(|k| k == "step_started");
    let call_end = seen.iter().position(|k| k == "tool_finished");
    assert!(call_end < last_step_start, "{seen:?}");
    assert!(all.iter().any(|e| matches!(
        e,
        Event::PermissionResolved { request_id: r, reply: Some(PermissionReply::Once) } if *r == request_id
    )));
    assert!(port.open_asks().is_empty());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v1\n");
    let Some(Event::TurnFinished { summary, .. }) = all.last() else {
        unreachable!()
    };
    assert_eq!(summary.end, TurnEnd::Answered);
    assert_eq!(summary.tool_calls, 1);

    // A second reply to a settled ask changes nothing.
    assert!(!port.reply(&request_id, PermissionReply::Always));

    // Revert the session's changes with an op; the outcome comes back as an event.
    port.send(Op::Revert {
        session_id: session.id().to_string(),
        target: RevertTarget::Session(session.id().to_string()),
        force: false,
    });
    let reverted = until(&mut events, |e| matches!(e, Event::Reverted { .. })).await;
    let Some(Event::Reverted { report, .. }) = reverted.last() else {
        unreachable!()
    };
    assert_eq!(report.reverted.len(), 1, "{report:?}");
    assert!(report.conflict.is_none() && report.error.is_none());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v0\n");
    session.close().await;
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_run_at_once_in_one_engine() {
    let server = ScriptedModel::start(vec![]).await;
    let ws = workspace(&server);
    let (a_file, b_file) = (ws.repo().join("a.txt"), ws.repo().join("b.txt"));
    let engine = ws.engine().unwrap();
    let (a, b) = (open(&engine).await, open(&engine).await);
    assert_ne!(a.id(), b.id());
    let (mut a_events, mut b_events) = (a.subscribe(), b.subscribe());

    // Both turns start before either gets its answer: each waits on its own ask.
    server.push(write_call("ca", &a_file, "from a\n"));
    prompt(&a.port(), &a, "write a");
    let a_ask = until(&mut a_events, |e| {
        matches!(e, Event::PermissionAsked { .. })
    })
    .await;
    server.push(write_call("cb", &b_file, "from b\n"));
    prompt(&b.port(), &b, "write b");
    let b_ask = until(&mut b_events, |e| {
        matches!(e, Event::PermissionAsked { .. })
    })
    .await;
    let request_id = |events: &[Event]| match events.last() {
        Some(Event::PermissionAsked { request_id, .. }) => request_id.clone(),
        _ => unreachable!(),
    };
    // Each session sees only its own ask.
    assert_eq!(a.port().open_asks().len(), 1);
    assert_eq!(b.port().open_asks().len(), 1);
    assert!(!a.port().reply(&request_id(&b_ask), PermissionReply::Once));

    server.push(Reply::new().text("b done"));
    b.send(Op::PermissionReply {
        request_id: request_id(&b_ask),
        reply: PermissionReply::Once,
    });
    until(&mut b_events, |e| matches!(e, Event::TurnFinished { .. })).await;
    server.push(Reply::new().text("a done"));
    a.send(Op::PermissionReply {
        request_id: request_id(&a_ask),
        reply: PermissionReply::Reject { feedback: None },
    });
    let a_rest = until(&mut a_events, |e| matches!(e, Event::TurnFinished { .. })).await;

    assert_eq!(std::fs::read_to_string(&b_file).unwrap(), "from b\n");
    assert!(!a_file.exists(), "the rejected write did not happen");
    assert!(
        a_rest
            .iter()
            .all(|e| !matches!(e, Event::TextDelta { text, .. } if text.contains("b done"))),
        "no event of session b in session a's stream"
    );
    let stored = engine.sessions(false).unwrap();
    assert!(stored.iter().any(|s| s.id == a.id()) && stored.iter().any(|s| s.id == b.id()));
    a.close().await;
    b.close().await;
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_prices_reach_usage_events_and_compact_summarises_on_request() {
    let server = ScriptedModel::start(vec![
        Reply::new().text("One.").usage(1_000_000, 500_000),
        Reply::new().text("Two.").usage(10, 1),
        Reply::new().text("SUMMARY: two prompts answered."),
    ])
    .await;
    let ws = workspace(&server);
    // The last table of the config is `[provider.scripted.models."test"]`.
    let config = ws.root().join("config/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("cost = { input = 1.0, output = 2.0 }\n");
    std::fs::write(&config, text).unwrap();
    let engine = ws.engine().unwrap();
    let session = open(&engine).await;
    let port = session.port();
    let mut events = session.subscribe();
    prompt(&port, &session, "first");
    let first = until(&mut events, |e| matches!(e, Event::TurnFinished { .. })).await;
    let usage = first.iter().find_map(|e| match e {
        Event::Usage {
            total,
            context_window,
            ..
        } => Some((*total, *context_window)),
        _ => None,
    });
    let (total, window) = usage.expect("a usage event");
    assert_eq!(window, 128_000);
    assert_eq!(total.cost, Some(2.0), "1M in × $1 + 0.5M out × $2");
    prompt(&port, &session, "second");
    until(&mut events, |e| matches!(e, Event::TurnFinished { .. })).await;

    port.send(Op::Compact {
        session_id: session.id().to_string(),
    });
    let compacted = until(&mut events, |e| matches!(e, Event::Compacted { .. })).await;
    let Some(Event::Compacted {
        reason, summarized, ..
    }) = compacted.last()
    else {
        unreachable!()
    };
    assert_eq!((reason.as_str(), *summarized), ("manual", 3));
    assert_eq!(server.requests().len(), 3);
    assert_eq!(
        engine.session_usage(session.id()).unwrap().input_tokens,
        1_000_010
    );
}

/// The position of the first event `want` accepts.
fn at(events: &[Event], want: impl Fn(&Event) -> bool) -> usize {
    events
        .iter()
        .position(want)
        .unwrap_or_else(|| panic!("no such event in {events:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_sessions_events_carry_one_gapless_sequence_under_concurrent_calls_a_sub_agent_and_an_ask()
 {
    let server = ScriptedModel::start(vec![]).await;
    let ws = ScratchWorkspace::new(
        &server.base_url(),
        "[[permission]]\npermission = \"bash\"\npattern = \"*\"\naction = \"allow\"\n",
    )
    .unwrap();
    let file = ws.repo().join("notes.txt");
    std::fs::write(&file, "v0\n").unwrap();
    let bash = |id: &str, command: &str| {
        (
            id.to_string(),
            serde_json::json!({"command": command, "description": "step"}).to_string(),
        )
    };
    let (b1, b1_args) = bash("b1", "for i in 1 2 3; do echo parent-$i; done");
    let (b2, b2_args) = bash("b2", "echo from-child");
    // One step calls three tools at once: a write that asks, a bash run and a sub-agent
    // (which runs its own bash call).
    server.push(
        write_call("c1", &file, "v1\n")
            .tool_call(&b1, "bash", b1_args)
            .tool_call(
                "t1",
                "task",
                serde_json::json!({"description": "Echo", "prompt": "echo", "subagent_type": "general"})
                    .to_string(),
            ),
    );
    server.push(Reply::new().tool_call(&b2, "bash", b2_args));
    server.push(Reply::new().text("child done"));
    server.push(Reply::new().text("All done."));
    let engine = ws.engine().unwrap();
    let session = open(&engine).await;
    let port = session.port();
    let mut numbered = port.subscribe_numbered();
    let mut live = session.subscribe();

    prompt(&port, &session, "do three things");
    let mut seen = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(60), live.recv())
            .await
            .expect("an event within 60 s")
            .expect("the live stream keeps up");
        if let Event::PermissionAsked { request_id, .. } = &e {
            port.send(Op::PermissionReply {
                request_id: request_id.clone(),
                reply: PermissionReply::Once,
            });
        }
        let done =
            matches!(&e, Event::TurnFinished { session_id, .. } if session_id == session.id());
        seen.push(e);
        if done {
            break;
        }
    }

    // The numbered stream is the live stream, numbered 1, 2, 3, … with nothing missing.
    let mut numbers = Vec::new();
    while let Ok(n) = numbered.try_recv() {
        numbers.push(n);
    }
    assert_eq!(numbers.len(), seen.len(), "{seen:#?}");
    for (i, (n, e)) in numbers.iter().zip(&seen).enumerate() {
        assert_eq!(n.seq, i as u64 + 1);
        assert_eq!(&n.event, e, "event {} differs", n.seq);
    }

    // What happened in order is in order: the ask before its answer, the answer before the
    // write's change and end; every event of the sub-agent inside its `task` call.
    let call_of = |tool: &str| {
        seen.iter()
            .find_map(|e| match e {
                Event::ToolRequested {
                    call_id, tool: t, ..
                } if t == tool => Some(call_id.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no {tool} call in {seen:#?}"))
    };
    let (c1, t1) = (call_of("write"), call_of("task"));
    let asked = at(
        &seen,
        |e| matches!(e, Event::PermissionAsked { call_id, .. } if *call_id == c1),
    );
    let resolved = at(&seen, |e| matches!(e, Event::PermissionResolved { .. }));
    let changed = at(
        &seen,
        |e| matches!(e, Event::ChangeRecorded { call_id: Some(c), .. } if *c == c1),
    );
    let written = at(
        &seen,
        |e| matches!(e, Event::ToolFinished { call_id, .. } if *call_id == c1),
    );
    assert!(
        asked < resolved && resolved < changed && changed < written,
        "{seen:#?}"
    );
    let task_start = at(
        &seen,
        |e| matches!(e, Event::ToolStarted { call_id, .. } if *call_id == t1),
    );
    let task_end = at(
        &seen,
        |e| matches!(e, Event::ToolFinished { call_id, .. } if *call_id == t1),
    );
    let child: Vec<usize> = seen
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Event::Subagent { .. }))
        .map(|(i, _)| i)
        .collect();
    assert!(
        child.len() >= 4,
        "the sub-agent's turn, step, call and end: {seen:#?}"
    );
    assert!(
        child.iter().all(|i| task_start < *i && *i < task_end),
        "{seen:#?}"
    );
    let child_finished = seen.iter().rposition(|e| {
        matches!(e, Event::Subagent { event, .. } if matches!(**event, Event::TurnFinished { .. }))
    });
    assert!(
        child_finished.is_some(),
        "the sub-agent's end reached the parent before the task result"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "v1\n");
    session.close().await;
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_the_rules_deny_outright_are_not_offered_to_the_model() {
    let server = ScriptedModel::start(vec![Reply::new().text("ok")]).await;
    let rule = |permission: &str, pattern: &str, action: &str| {
        format!(
            "[[permission]]\npermission = \"{permission}\"\npattern = \"{pattern}\"\naction = \"{action}\"\n"
        )
    };
    let config = [
        rule("edit", "*", "deny"),
        rule("glob", "*", "deny"),
        // Denied, then allowed for some commands: still offered.
        rule("bash", "*", "deny"),
        rule("bash", "git *", "allow"),
        // Allowed again after a deny of everything: offered.
        rule("webfetch", "*", "deny"),
        rule("webfetch", "*", "ask"),
    ]
    .concat();
    let ws = ScratchWorkspace::new(&server.base_url(), &config).unwrap();
    let engine = ws.engine().unwrap();
    let session = open(&engine).await;
    let mut events = session.subscribe();
    prompt(&session.port(), &session, "hello");
    until(&mut events, |e| matches!(e, Event::TurnFinished { .. })).await;
    let request = &server.requests()[0];
    let offered: Vec<&str> = request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    for gone in ["write", "edit", "apply_patch", "glob"] {
        assert!(!offered.contains(&gone), "{gone} in {offered:?}");
    }
    for kept in ["read", "grep", "bash", "webfetch"] {
        assert!(offered.contains(&kept), "{kept} not in {offered:?}");
    }
    session.close().await;
    engine.shutdown().await;
}

#[tokio::test]
async fn the_model_choices_put_models_that_cannot_be_used_here_last_saying_why() {
    let server = ScriptedModel::start(vec![]).await;
    let ws = ScratchWorkspace::new(
        &server.base_url(),
        "[agent.aaa]\nmodel = \"nowhere/ghost-1\"\n[agent.zzz]\nmodel = \"scripted/other\"\n",
    )
    .unwrap();
    let engine = ws.engine().unwrap();
    let choices = engine.model_choices("scripted/test");
    let values: Vec<&str> = choices.iter().map(|c| c.value.as_str()).collect();
    assert_eq!(
        values,
        ["scripted/test", "scripted/other", "nowhere/ghost-1"],
        "{choices:?}"
    );
    assert!(
        choices[2].detail.starts_with("can't be used here: "),
        "{choices:?}"
    );
    assert!(choices[2].detail.contains("nowhere"), "{choices:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_unknown_model_warning_comes_once_per_engine_not_in_every_session() {
    let server =
        ScriptedModel::start(vec![Reply::new().text("one"), Reply::new().text("two")]).await;
    // A model of a configured provider that neither the catalog nor the config describes.
    let ws = ScratchWorkspace::new(
        &server.base_url(),
        "[agent.build]\nmodel = \"scripted/uncharted\"\n",
    )
    .unwrap();
    let engine = ws.engine().unwrap();
    let mut warnings = Vec::new();
    for text in ["first", "second"] {
        let session = open(&engine).await;
        let mut events = session.subscribe();
        prompt(&session.port(), &session, text);
        let seen = until(&mut events, |e| matches!(e, Event::TurnFinished { .. })).await;
        warnings.push(
            seen.iter()
                .filter(|e| matches!(e, Event::Warning { message } if message.contains("model catalog")))
                .count(),
        );
        session.close().await;
    }
    assert_eq!(warnings, [1, 0]);
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_reverted_then_redone_is_listed_as_in_effect() {
    let server = ScriptedModel::start(vec![]).await;
    let ws = ScratchWorkspace::new(
        &server.base_url(),
        "[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"allow\"\n",
    )
    .unwrap();
    let file = ws.repo().join("notes.txt");
    server.push(write_call("w1", &file, "new\n"));
    server.push(Reply::new().text("wrote it"));
    let engine = ws.engine().unwrap();
    let session = open(&engine).await;
    let mut events = session.subscribe();
    prompt(&session.port(), &session, "write the notes");
    until(&mut events, |e| matches!(e, Event::TurnFinished { .. })).await;
    let listed = |engine: &Engine| {
        let entries = engine.change_entries(session.id()).unwrap();
        assert_eq!(entries.len(), 1, "{entries:?}");
        (entries[0].change.id.clone(), entries[0].reverted)
    };
    let (id, reverted) = listed(&engine);
    assert!(!reverted);
    let undo = engine.revert(session.id(), &RevertTarget::Change(id.clone()), false);
    assert!(undo.error.is_none(), "{undo:?}");
    assert!(listed(&engine).1, "reverted");
    assert!(!file.exists());
    // Redo: the revert is reverted, and the change is in effect again.
    let revert_id = engine.reverted_by(&id).unwrap().unwrap();
    let redo = engine.revert(session.id(), &RevertTarget::Change(revert_id), false);
    assert!(redo.error.is_none(), "{redo:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "new\n");
    assert!(!listed(&engine).1, "redone: in effect again");
    session.close().await;
    engine.shutdown().await;
}
