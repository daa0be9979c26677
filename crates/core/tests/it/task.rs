//! The `task` tool end to end, through the engine's API against the scripted model (real
//! HTTP and SSE), a real SQLite store and real `bash` processes: two sub-agents of one step
//! run at the same time, a sub-agent's permission ask is answered on the parent's stream,
//! the depth limit refuses deeper nesting, and aborting the parent stops the child and its
//! process.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use podcode_core::testing::{ScratchWorkspace, open_build_session};
use podcode_core::{Engine, Session, depth_limit_text};
use podcode_protocol::{Event, Op, PermissionReply, TurnEnd};
use podcode_providers::testing::{Reply, ScriptedModel};
use serde_json::json;
use tokio::sync::broadcast;

fn workspace(server: &ScriptedModel, extra_config: &str) -> ScratchWorkspace {
    ScratchWorkspace::new(&server.base_url(), extra_config).unwrap()
}

const ALLOW_BASH: &str =
    "[[permission]]\npermission = \"bash\"\npattern = \"*\"\naction = \"allow\"\n";

async fn open(engine: &Arc<Engine>) -> Session {
    open_build_session(engine, "").await.unwrap()
}

fn task_call(id: &str, description: &str, prompt: &str, agent: &str) -> Reply {
    Reply::new().tool_call(id, "task", task_args(description, prompt, agent))
}

fn task_args(description: &str, prompt: &str, agent: &str) -> String {
    json!({"description": description, "prompt": prompt, "subagent_type": agent}).to_string()
}

fn bash_call(id: &str, command: &str) -> Reply {
    Reply::new().tool_call(
        id,
        "bash",
        json!({"command": command, "description": "test step"}).to_string(),
    )
}

async fn until(
    events: &mut broadcast::Receiver<Event>,
    stop: impl Fn(&Event) -> bool,
) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("an event within 60 s")
            .expect("the stream stays open");
        let done = stop(&e);
        seen.push(e);
        if done {
            return seen;
        }
    }
}

fn turn_finished(e: &Event) -> bool {
    matches!(e, Event::TurnFinished { .. })
}

/// Tool-result texts of an OpenAI-style request, in order.
fn tool_results(request: &serde_json::Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn prompt(session: &Session, text: &str) {
    session.send(Op::Prompt {
        session_id: session.id().to_string(),
        text: text.into(),
        files: Vec::new(),
    });
}

/// The child session ids the parent's stream announced, in order of their first event.
fn children(events: &[Event]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for e in events {
        if let Event::Subagent { session_id, .. } = e
            && !ids.contains(session_id)
        {
            ids.push(session_id.clone());
        }
    }
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_sub_agents_in_one_step_run_at_the_same_time() {
    let server = ScriptedModel::start(vec![]).await;
    let ws = workspace(&server, ALLOW_BASH);
    // Each child's command waits until both children have started theirs: run one after
    // the other, the first would give up (exit 3) and never print "both".
    let barrier = ws.root().join("barrier");
    let wait_for_both = format!(
        "d='{}'; mkdir -p \"$d\"; mktemp \"$d/c.XXXXXX\" >/dev/null; i=0; while [ \"$(ls \"$d\" | wc -l)\" -lt 2 ]; do i=$((i+1)); [ $i -gt 2400 ] && exit 3; sleep 0.05; done; echo both",
        barrier.display()
    );
    server.push(
        task_call("t1", "Look left", "Check the left side.", "general").tool_call(
            "t2",
            "task",
            task_args("Look right", "Check the right side.", "general"),
        ),
    );
    server.push(bash_call("b1", &wait_for_both));
    server.push(bash_call("b2", &wait_for_both));
    server.push(Reply::new().text("child done"));
    server.push(Reply::new().text("child done"));
    server.push(Reply::new().text("Both sides checked."));
    let engine = ws.engine().unwrap();
    let session = open(&engine).await;
    let mut events = session.subscribe();
    prompt(&session, "check both sides");
    let seen = until(&mut events, turn_finished).await;
    let Some(Event::TurnFinished { summary, .. }) = seen.last() else {
        unreachable!()
    };
    assert_eq!(summary.end, TurnEnd::Answered, "{summary:?}");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 6);
    // The children's second requests carry their bash results: both saw the other running.
    for r in &reqs[3..5] {
        let results = tool_results(r);
        assert_eq!(results.len(), 1, "{r:#}");
        assert!(results[0].contains("both"), "{}", results[0]);
    }
    // Each child was told only its own prompt.
    let first_user = |r: &serde_json::Value| r["messages"][1]["content"].to_string();
    let mut prompts = vec![first_user(&reqs[1]), first_user(&reqs[2])];
    prompts.sort();
    assert!(prompts[0].contains("Check the left side."), "{prompts:?}");
    assert!(prompts[1].contains("Check the right side."), "{prompts:?}");
    // The parent got both results, each with the child's answer and its own task_id.
    let results = tool_results(&reqs[5]);
    assert_eq!(results.len(), 2);
    let kids = children(&seen);
    assert_eq!(kids.len(), 2, "{kids:?}");
    for r in &results {
        assert!(
            r.contains("<task_result>\nchild done\n</task_result>"),
            "{r}"
        );
        assert!(r.contains("The sub-agent changed no files."), "{r}");
    }
    assert_ne!(results[0], results[1]);
    for kid in &kids {
        assert!(
            results
                .iter()
                .any(|r| r.starts_with(&format!("task_id: {kid} ")))
        );
        let row = engine.session(kid).unwrap();
        assert_eq!(row.parent_id.as_deref(), Some(session.id()));
        assert_eq!(row.root_id.as_deref(), Some(session.id()));
        assert_eq!(row.agent, "general");
    }
    // The children's events reached the parent's stream tagged with their ids.
    let child_turns = seen
        .iter()
        .filter(|e| matches!(e, Event::Subagent { event, .. } if turn_finished(event)))
        .count();
    assert_eq!(child_turns, 2);
    // The parent's `task` call was offered with the sub-agents listed.
    let task_tool = reqs[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "task")
        .expect("task is offered");
    let description = task_tool["function"]["description"].as_str().unwrap();
    assert!(description.contains("- explore: ") && description.contains("- general: "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_s_ask_is_answered_on_the_parent_s_stream() {
    let server = ScriptedModel::start(vec![
        task_call("t1", "Say hi", "Run echo hi.", "general"),
        bash_call("b1", "echo hi-from-child"),
        Reply::new().text("said hi"),
        Reply::new().text("The child said hi."),
    ])
    .await;
    let ws = workspace(&server, "");
    let engine = ws.engine().unwrap();
    let session = open(&engine).await;
    let mut events = session.subscribe();
    prompt(&session, "delegate");
    let before = until(&mut events, |e| matches!(e, Event::PermissionAsked { .. })).await;
    let Some(Event::PermissionAsked {
        session_id,
        request_id,
        tool,
        request,
        ..
    }) = before.last().cloned()
    else {
        unreachable!()
    };
    // The ask names the child session (its events travel apart from asks, so the store,
    // not the order of arrival, says whose it is).
    let child = engine.session(&session_id).unwrap();
    assert_eq!(child.parent_id.as_deref(), Some(session.id()));
    assert_eq!(tool, "bash");
    assert_eq!(request.metadata["subagent"], "general · Say hi");
    let shown = podcode_protocol::prompt_text(&tool, &request);
    assert!(
        shown.title.starts_with("sub-agent general · Say hi: "),
        "{}",
        shown.title
    );
    session.send(Op::PermissionReply {
        request_id,
        reply: PermissionReply::Once,
    });
    let rest = until(&mut events, turn_finished).await;
    let Some(Event::TurnFinished { summary, .. }) = rest.last() else {
        unreachable!()
    };
    assert_eq!(summary.end, TurnEnd::Answered);
    let reqs = server.requests();
    assert!(tool_results(&reqs[2])[0].contains("hi-from-child"));
    assert!(tool_results(&reqs[3])[0].contains("said hi"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nesting_past_the_depth_limit_is_refused_with_a_clear_error() {
    let server = ScriptedModel::start(vec![
        task_call("t1", "Outer", "Delegate again.", "general"),
        task_call("t2", "Inner", "Too deep.", "general"),
        Reply::new().text("could not nest"),
        Reply::new().text("done"),
    ])
    .await;
    let ws = workspace(&server, "[task]\nmax_depth = 1\n");
    let engine = ws.engine().unwrap();
    let session = open(&engine).await;
    let mut events = session.subscribe();
    prompt(&session, "nest");
    until(&mut events, turn_finished).await;
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    let refused = &tool_results(&reqs[2])[0];
    assert!(refused.contains(&depth_limit_text(1)), "{refused}");
    let sessions = engine.sessions(true).unwrap();
    assert_eq!(sessions.len(), 2, "only the parent and one child exist");
}

/// Whether a process runs with exactly these arguments. The sandbox runs commands in their
/// own PID namespace, so a pid they print (`$!`) means nothing here: the child is found by
/// its unique arguments instead.
fn running(args: &[u8]) -> bool {
    std::fs::read_dir("/proc").is_ok_and(|d| {
        d.flatten()
            .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == args))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aborting_the_parent_stops_the_child_and_its_process() {
    let server = ScriptedModel::start(vec![]).await;
    let ws = workspace(&server, ALLOW_BASH);
    let pid_file = ws.root().join("pid");
    server.push(task_call("t1", "Wait long", "Wait.", "general"));
    server.push(bash_call(
        "b1",
        &format!("sleep 600.4 & echo $! > '{}'; wait", pid_file.display()),
    ));
    let engine = ws.engine().unwrap();
    let session = open(&engine).await;
    let mut events = session.subscribe();
    prompt(&session, "start a long child");
    let mut pid = String::new();
    // Bounds here are far above what a busy machine needs.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
        if let Ok(text) = std::fs::read_to_string(&pid_file)
            && !text.trim().is_empty()
        {
            pid = text.trim().to_string();
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    const SLEEP: &[u8] = b"sleep\x00600.4\x00";
    assert!(
        !pid.is_empty() && running(SLEEP),
        "the child's command started"
    );
    session.send(Op::Abort {
        session_id: session.id().to_string(),
    });
    let seen = until(&mut events, turn_finished).await;
    let Some(Event::TurnFinished { summary, .. }) = seen.last() else {
        unreachable!()
    };
    assert_eq!(summary.end, TurnEnd::Aborted);
    // Every call is answered: the parent's task call and the child's bash call are both
    // recorded as interrupted.
    let failed: Vec<(String, String)> = seen
        .iter()
        .filter_map(|e| match e {
            Event::ToolFailed { call_id, tool, .. } => Some((tool.clone(), call_id.clone())),
            Event::Subagent { event, .. } => match event.as_ref() {
                Event::ToolFailed { call_id, tool, .. } => Some((tool.clone(), call_id.clone())),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let mut tools: Vec<&str> = failed.iter().map(|(t, _)| t.as_str()).collect();
    tools.sort();
    assert_eq!(tools, ["bash", "task"], "{failed:?}");
    for (_, call_id) in &failed {
        assert_eq!(engine.call_state(call_id).as_deref(), Some("interrupted"));
    }
    let mut gone = false;
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
        if !running(SLEEP) {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(gone, "the child's process (sleep 600.4) was killed");
    assert_eq!(server.requests().len(), 2, "nothing ran after the abort");
}

const WHOAMI: &str = r#"import { tool } from "@opencode-ai/plugin"
export default tool({
  description: "Says which session calls it",
  args: {},
  async execute(_args, ctx) {
    return JSON.stringify({ session: ctx.sessionID, parent: ctx.parentID ?? null, root: ctx.rootID ?? null })
  },
})
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_tool_in_a_sub_agent_sees_parent_and_root_ids() {
    let server = ScriptedModel::start(vec![
        Reply::new().tool_call("w0", "whoami", "{}"),
        task_call("t1", "Report identity", "Call whoami.", "general"),
        Reply::new().tool_call("w1", "whoami", "{}"),
        Reply::new().text("reported"),
        Reply::new().text("done"),
    ])
    .await;
    let allow = "[[permission]]\npermission = \"whoami\"\npattern = \"*\"\naction = \"allow\"\n";
    let ws = workspace(&server, allow);
    let tools = ws.repo().join(".opencode/tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(tools.join("whoami.ts"), WHOAMI).unwrap();
    let engine = ws.engine().unwrap();
    engine.set_trusted(true).unwrap();
    let session = open(&engine).await;
    let mut events = session.subscribe();
    prompt(&session, "who");
    let seen = until(&mut events, turn_finished).await;
    let kids = children(&seen);
    assert_eq!(kids.len(), 1);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5, "{:#}", reqs.last().unwrap());
    let parse = |r: &serde_json::Value| -> serde_json::Value {
        serde_json::from_str(&tool_results(r)[0]).unwrap()
    };
    assert_eq!(
        parse(&reqs[1]),
        json!({"session": session.id(), "parent": null, "root": null})
    );
    assert_eq!(
        parse(&reqs[3]),
        json!({"session": kids[0], "parent": session.id(), "root": session.id()})
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_s_edits_are_the_parent_s_changes_and_revert_with_it() {
    let server = ScriptedModel::start(vec![
        task_call("t1", "Write notes", "Write notes.txt.", "general"),
        Reply::new().tool_call(
            "w1",
            "write",
            json!({"filePath": "notes.txt", "content": "from the child\n"}).to_string(),
        ),
        Reply::new().text("wrote it"),
        Reply::new().text("The child wrote notes.txt."),
    ])
    .await;
    let ws = workspace(
        &server,
        "[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"allow\"\n",
    );
    let engine = ws.engine().unwrap();
    let session = open(&engine).await;
    let mut events = session.subscribe();
    prompt(&session, "delegate the notes");
    let seen = until(&mut events, turn_finished).await;
    let file = ws.repo().join("notes.txt");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "from the child\n");
    // The parent's turn says it changed the file its sub-agent wrote.
    let Some(Event::TurnFinished { summary, .. }) = seen.last() else {
        panic!("{seen:?}");
    };
    assert_eq!(summary.files, [file.to_string_lossy().to_string()]);

    // The parent's Changes view lists the child's edit under the parent's prompt, labelled.
    let entries = engine.change_entries(session.id()).unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_ne!(entries[0].change.session_id, session.id());
    assert!(
        entries[0]
            .call_label
            .starts_with("sub-agent general · write"),
        "{}",
        entries[0].call_label
    );
    assert_eq!(
        entries[0].turn.as_ref().map(|(_, text)| text.as_str()),
        Some("delegate the notes")
    );

    // Undoing the parent's session undoes what its sub-agent wrote.
    let report = engine.revert(
        session.id(),
        &podcode_protocol::RevertTarget::Session(session.id().to_string()),
        false,
    );
    assert!(
        report.error.is_none() && report.conflict.is_none(),
        "{report:?}"
    );
    assert_eq!(report.reverted.len(), 1);
    assert!(!file.exists(), "the new file is removed again");
}
