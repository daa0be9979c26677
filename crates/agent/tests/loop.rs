//! The agent loop end to end against a scripted model server (real HTTP + SSE), a real
//! store and a real tool runtime: parallel idempotent calls and result order, the doom-loop
//! ask, the step limit summary, profiles, and what the store rebuilds (see `interrupts.rs`
//! for cut streams and aborts).
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use podcode_agent::{AgentProfile, BASE_PROMPT, load_history, max_steps_text};
use podcode_protocol::{Event, PermissionReply, ToolResult, ToolSpec, TurnEnd};
use podcode_providers::Part;
use podcode_providers::testing::Reply;
use podcode_store::ToolCallState;
use podcode_tools::testing::{FnTool, noop};
use podcode_tools::{Tool, rejected_with_feedback_text};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// A tool that sleeps `ms` and tracks how many of its kind run at once.
fn tracked(
    id: &str,
    idempotent: bool,
    live: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
) -> Arc<dyn Tool> {
    let params = json!({"type": "object", "properties": {"ms": {"type": "integer"}, "tag": {"type": "string"}, "meet": {"type": "integer"}}});
    FnTool::new(
        ToolSpec::new(id, "Sleeps and reports its tag.", params).idempotent(idempotent),
        move |args, _| {
            let (live, peak) = (live.clone(), peak.clone());
            async move {
                let now = live.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                // `meet`: wait (bounded) until that many calls of this tool run at once, so
                // overlap is shown by the calls themselves, not by sleeps outlasting how
                // long the others take to start on a busy machine.
                let meet = args["meet"].as_u64().unwrap_or(0) as usize;
                let until = Instant::now() + Duration::from_secs(60);
                while peak.load(Ordering::SeqCst) < meet && Instant::now() < until {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                tokio::time::sleep(Duration::from_millis(args["ms"].as_u64().unwrap_or(0))).await;
                live.fetch_sub(1, Ordering::SeqCst);
                Ok(ToolResult::text(format!(
                    "tag {}",
                    args["tag"].as_str().unwrap_or("")
                )))
            }
        },
    )
    .self_gated()
    .arc()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn idempotent_calls_run_in_parallel_others_in_order_and_results_keep_call_order() {
    let live = Arc::new(AtomicUsize::new(0));
    let peak_read = Arc::new(AtomicUsize::new(0));
    let live_w = Arc::new(AtomicUsize::new(0));
    let peak_write = Arc::new(AtomicUsize::new(0));
    let w = world(
        vec![
            Reply::new()
                .text("Looking.")
                .tool_call("c1", "look", r#"{"ms": 300, "tag": "a", "meet": 3}"#)
                .tool_call("c2", "look", r#"{"ms": 100, "tag": "b", "meet": 3}"#)
                .tool_call("c3", "look", r#"{"ms": 150, "tag": "c", "meet": 3}"#)
                .tool_call("c4", "change", r#"{"ms": 50, "tag": "d"}"#)
                .tool_call("c5", "change", r#"{"ms": 10, "tag": "e"}"#)
                .split_args(3)
                .usage(100, 10),
            Reply::new().text("All done.").usage(150, 5),
        ],
        Opts {
            tools: vec![
                tracked("look", true, live.clone(), peak_read.clone()),
                tracked("change", false, live_w.clone(), peak_write.clone()),
            ],
            ..Default::default()
        },
    );
    let agent = w.agent(AgentProfile::build(), |_| {});
    let mut events = w.runtime.subscribe();
    let summary = agent
        .run_turn(&w.session, "look at things", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(summary.end, TurnEnd::Answered);
    assert_eq!((summary.steps, summary.tool_calls), (2, 5));
    assert_eq!(
        (summary.usage.input_tokens, summary.usage.output_tokens),
        (250, 15)
    );
    assert_eq!(
        peak_read.load(Ordering::SeqCst),
        3,
        "the three reads overlap"
    );
    assert_eq!(
        peak_write.load(Ordering::SeqCst),
        1,
        "writes run one at a time"
    );

    let reqs = w.requests();
    assert_eq!(reqs.len(), 2);
    let results = tool_messages(&reqs[1]);
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4", "c5"]);
    assert_eq!(results[0].1, "tag a");
    assert_eq!(results[4].1, "tag e");
    assert_valid_openai_request(&reqs[1]);
    // The system prompt and the offered tools went out with every request.
    assert!(
        reqs[0]["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with(BASE_PROMPT)
    );
    assert_eq!(offered(&reqs[0]), ["look", "change"]);

    // The event stream tells the whole story in order, ending with the summary.
    let mut kinds = Vec::new();
    while let Ok(e) = events.try_recv() {
        kinds.push(match e {
            Event::UserMessage { .. } => "user",
            Event::TurnStarted { .. } => "turn",
            Event::StepStarted { .. } => "step",
            Event::TextDelta { .. } => "text",
            Event::ToolRequested { .. } => "requested",
            Event::StepFinished { .. } => "step_end",
            Event::ToolStarted { .. } => "started",
            Event::ToolFinished { .. } => "finished",
            Event::TurnFinished { .. } => "turn_end",
            _ => "other",
        });
    }
    assert_eq!(
        kinds[..2],
        ["user", "turn"],
        "the prompt, then the turn: {kinds:?}"
    );
    assert_eq!(kinds.last(), Some(&"turn_end"));
    assert_eq!(kinds.iter().filter(|k| **k == "finished").count(), 5);
    assert_eq!(kinds.iter().filter(|k| **k == "step").count(), 2);

    // What was stored rebuilds into exactly what the model saw, plus its final answer.
    let history = load_history(&w.store, &w.session).unwrap();
    assert_valid(&history);
    assert_eq!(history.len(), 4);
    assert_eq!(
        history[3].parts,
        vec![Part::Text {
            text: "All done.".into()
        }]
    );
}

#[tokio::test]
async fn a_third_identical_call_asks_doom_loop_and_a_rejection_fails_it() {
    let call = || Reply::new().tool_call("same", "noop", r#"{}"#);
    let w = world(
        vec![call(), call(), call(), Reply::new().text("Stopping.")],
        Opts {
            tools: vec![noop("noop")],
            replies: vec![PermissionReply::Reject {
                feedback: Some("you are looping; try something else".into()),
            }],
            ..Default::default()
        },
    );
    let agent = w.agent(AgentProfile::build(), |_| {});
    let summary = agent
        .run_turn(&w.session, "go", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(summary.end, TurnEnd::Answered);
    let asks = w.user.asks();
    assert_eq!(asks.len(), 1, "only the third call asks");
    assert_eq!(asks[0].request.permission, "doom_loop");
    assert_eq!(asks[0].request.patterns, vec!["noop".to_string()]);
    let reqs = w.requests();
    let text = rejected_with_feedback_text(
        "doom_loop",
        &["noop".to_string()],
        "you are looping; try something else",
    );
    assert_eq!(tool_messages(&reqs[3]).last().unwrap().1, text);
    assert_eq!(tool_messages(&reqs[2]).last().unwrap().1, "ok");
    let calls = w.store.tool_calls(&w.session).unwrap();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[2].state, ToolCallState::Denied);
}

#[tokio::test]
async fn at_max_steps_the_model_is_asked_for_a_summary_without_tools() {
    let call = |n: u32| Reply::new().tool_call(format!("c{n}"), "noop", format!(r#"{{"n": {n}}}"#));
    let w = world(
        vec![
            call(1),
            call(2),
            Reply::new().text("Did two steps; the rest remains."),
        ],
        Opts {
            tools: vec![
                FnTool::new(
                    ToolSpec::new("noop", "no-op", json!({"type": "object"})),
                    |_, _| async { Ok(ToolResult::text("ok")) },
                )
                .self_gated()
                .arc(),
            ],
            ..Default::default()
        },
    );
    let agent = w.agent(AgentProfile::build(), |o| o.max_steps = 2);
    let summary = agent
        .run_turn(&w.session, "work", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(summary.end, TurnEnd::MaxSteps);
    assert_eq!(summary.steps, 3);
    let reqs = w.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[1]["tools"].as_array().is_some_and(|t| !t.is_empty()));
    assert!(
        reqs[2]["tools"].as_array().is_none_or(|t| t.is_empty()),
        "{:#}",
        reqs[2]
    );
    let msgs = reqs[2]["messages"].as_array().unwrap();
    let last = msgs.last().unwrap();
    assert_eq!(last["role"], "user");
    assert!(
        last.to_string()
            .contains(&serde_json::to_string(&max_steps_text(2)).unwrap()[1..20])
    );
    assert_valid_openai_request(&reqs[2]);
    assert_valid(&load_history(&w.store, &w.session).unwrap());
}

#[tokio::test]
async fn the_plan_profile_offers_read_only_built_ins_and_other_tools_fail_as_unknown() {
    let w = world(
        vec![
            Reply::new().tool_call("w1", "write", r#"{"filePath": "x.txt", "content": "hi"}"#),
            Reply::new().text("I cannot write in plan mode."),
        ],
        Opts {
            builtins: true,
            ..Default::default()
        },
    );
    let agent = w.agent(AgentProfile::plan(), |_| {});
    agent
        .run_turn(&w.session, "write x", CancellationToken::new())
        .await
        .unwrap();
    let reqs = w.requests();
    let tools = offered(&reqs[0]);
    // read list glob grep bash (each command asks), plus symbols and webfetch in builds
    // that have them.
    let mut core: Vec<&str> = tools
        .iter()
        .map(String::as_str)
        .filter(|t| !["symbols", "webfetch"].contains(t))
        .collect();
    core.sort();
    assert_eq!(core, ["bash", "glob", "grep", "list", "read"], "{tools:?}");
    let (_, text) = &tool_messages(&reqs[1])[0];
    assert!(text.starts_with("Unknown tool \"write\""), "{text}");
    assert!(!w.work.join("x.txt").exists());
    let prompt = reqs[0]["messages"][0]["content"].as_str().unwrap();
    assert!(prompt.contains("You are in plan mode"), "{prompt}");
}

#[tokio::test]
async fn anthropic_runs_keep_thinking_blocks_and_pair_tool_results() {
    let w = world(
        vec![
            Reply::new()
                .reasoning("Let me look.", Some("sig-1"))
                .tool_call("toolu_1", "noop", "{}")
                .tool_call("toolu_2", "noop", "{}"),
            Reply::new().text("Done."),
        ],
        Opts {
            tools: vec![noop("noop")],
            anthropic: true,
            ..Default::default()
        },
    );
    let agent = w.agent(AgentProfile::build(), |_| {});
    let s = agent
        .run_turn(&w.session, "go", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(s.end, TurnEnd::Answered);
    let req = &w.requests()[1];
    let msgs = req["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 3, "{req:#}");
    let assistant = msgs[1]["content"].as_array().unwrap();
    assert_eq!(assistant[0]["type"], "thinking");
    assert_eq!(assistant[0]["signature"], "sig-1");
    let results: Vec<&str> = msgs[2]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(results, ["toolu_1", "toolu_2"]);
    let history = load_history(&w.store, &w.session).unwrap();
    assert!(
        matches!(&history[1].parts[0], Part::Reasoning { signature: Some(s), .. } if s == "sig-1")
    );
}

/// The names of the tools a request offered.
fn offered(req: &serde_json::Value) -> Vec<String> {
    req["tools"].as_array().map_or(Vec::new(), |tools| {
        tools
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_offered_tools_change_when_a_call_opens_one_and_stay_while_nothing_changes() {
    let page = FnTool::new(
        ToolSpec::new("page", "Reads the open page.", json!({"type": "object"}))
            .offered_after("open"),
        |_, _| async { Ok(ToolResult::text("the page")) },
    )
    .self_gated()
    .arc();
    let w = world(
        vec![
            Reply::new().tool_call("c1", "noop", "{}"),
            Reply::new().tool_call("c2", "open", "{}"),
            Reply::new().tool_call("c3", "page", "{}"),
            Reply::new().tool_call("c4", "noop", "{}"),
            Reply::new().text("Done."),
        ],
        Opts {
            tools: vec![noop("noop"), noop("open"), page],
            ..Default::default()
        },
    );
    let agent = w.agent(AgentProfile::build(), |_| {});
    let summary = agent
        .run_turn(&w.session, "browse", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(summary.end, TurnEnd::Answered);
    let reqs = w.requests();
    let lists: Vec<Vec<String>> = reqs.iter().map(offered).collect();
    assert_eq!(lists[0], ["noop", "open"]);
    assert_eq!(lists[1], ["noop", "open"]);
    // Once `open` was called, `page` is offered in every later request.
    for list in &lists[2..] {
        assert_eq!(list, &["noop", "open", "page"]);
    }
    // The same definitions each time, written the same way.
    assert_eq!(reqs[2]["tools"], reqs[4]["tools"]);
    assert_eq!(tool_messages(&reqs[4]).len(), 4);
}
