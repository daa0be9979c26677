//! The pipeline end to end: every stage, every failure text, against a real SQLite store.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_trait::async_trait;
use podcode_protocol::{
    Event, PermissionAction, PermissionReply, PermissionRule, ToolResult, Truncation,
};
use podcode_store::ToolCallState;
use podcode_tools::testing;
use podcode_tools::testing::*;
use podcode_tools::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn allow_all() -> Vec<PermissionRule> {
    vec![PermissionRule::new("*", "*", PermissionAction::Allow)]
}

fn allowing() -> Setup {
    Setup {
        rules: allow_all(),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_successful_call_is_validated_defaulted_recorded_and_evented() {
    let h = harness(registry(vec![testing::echo("echo")]), allowing());
    let mut events = h.runtime.subscribe();
    let out = h.call("echo", r#"{"text":"hi","times":2}"#).await;
    assert_eq!(out.status, CallStatus::Completed);
    assert_eq!(out.model_text, "hi\nhi");
    assert_eq!(out.result.title, "echo hi");
    let row = h.store.tool_call(&out.call_id).unwrap().unwrap();
    assert_eq!(row.state, ToolCallState::Completed);
    assert_eq!(row.args, json!({"text": "hi", "times": 2}));
    assert_eq!(row.output, "hi\nhi");
    assert!(matches!(
        events.recv().await.unwrap(),
        Event::ToolStarted { .. }
    ));
    assert!(matches!(
        events.recv().await.unwrap(),
        Event::ToolFinished { .. }
    ));
    let defaulted = h.call("echo", r#"{"text":"once"}"#).await;
    assert_eq!(defaulted.model_text, "once");
}

#[tokio::test]
async fn names_resolve_exactly_then_case_insensitively_else_the_closest_are_named() {
    let h = harness(
        registry(vec![
            testing::echo("echo"),
            testing::echo("echo_twice"),
            testing::noop("Noop"),
        ]),
        allowing(),
    );
    assert_eq!(h.call("ECHO", r#"{"text":"x"}"#).await.tool, "echo");
    assert_eq!(h.call("noop", "{}").await.status, CallStatus::Completed);
    let out = h.call("ehco", "{}").await;
    assert_eq!(out.status, CallStatus::Failed);
    assert_eq!(
        out.model_text,
        "Unknown tool \"ehco\". The closest available tools are: echo, Noop, echo_twice. Call one of them by its exact id."
    );
    let row = h.store.tool_call(&out.call_id).unwrap().unwrap();
    assert_eq!(row.state, ToolCallState::Failed);
}

#[tokio::test]
async fn malformed_json_and_invalid_arguments_never_reach_execute() {
    let (flaky, count) = testing::flaky("counted", 0, false);
    let h = harness(registry(vec![testing::echo("echo"), flaky]), allowing());
    let out = h.call("echo", "{text: hi").await;
    assert!(
        out.model_text.starts_with("The echo tool was called with arguments that are not valid JSON (key must be a string at line 1 column 2). Send the arguments as a single JSON object that matches the tool's schema."),
        "{}",
        out.model_text
    );
    let out = h.call("echo", r#"{"times": 0, "extra": true}"#).await;
    assert_eq!(
        out.model_text,
        "The echo tool was called with invalid arguments: `(root)`: Additional properties are not allowed ('extra' was unexpected); `(root)`: \"text\" is a required property; `times`: 0 is less than the minimum of 1. Please rewrite the input so it satisfies the expected schema."
    );
    let out = h.call("echo", "[1]").await;
    assert!(
        out.model_text
            .contains("`(root)`: [1] is not of type \"object\""),
        "{}",
        out.model_text
    );
    let out = h.call("counted", r#"{"nope": 1}"#).await;
    assert_eq!(out.status, CallStatus::Failed);
    assert_eq!(count.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn thrown_errors_panics_timeouts_and_aborts_each_have_their_own_text() {
    let h = harness(
        registry(vec![
            testing::thrower("boom", "disk on fire"),
            testing::panicker("crash"),
            testing::sleeper("polite", true),
        ]),
        Setup {
            rules: allow_all(),
            opts: Box::new(|o| {
                o.default_timeout = Duration::from_secs(300);
                o.abort_grace = Duration::from_secs(300);
            }),
            ..Default::default()
        },
    );
    assert_eq!(
        h.call("boom", "{}").await.model_text,
        "The boom tool failed: disk on fire"
    );
    let crashed = h.call("crash", "{}").await;
    assert_eq!(
        crashed.model_text,
        "The crash tool crashed (tool exploded). This is a bug in the tool, not in your call; try another approach."
    );
    // The runtime lives on after a panic.
    assert_eq!(h.call("boom", "{}").await.status, CallStatus::Failed);

    let abort = CancellationToken::new();
    let trigger = abort.clone();
    // The abort comes once the tool runs (the event, not a guess at how long that takes),
    // and under a limit it cannot reach first.
    let mut events = h.runtime.subscribe();
    tokio::spawn(async move {
        while let Ok(e) = events.recv().await {
            if matches!(e, Event::ToolStarted { .. }) {
                trigger.cancel();
                break;
            }
        }
    });
    let aborted = h
        .call_with("polite", RawArgs::Text(r#"{"ms": 600000}"#.into()), abort)
        .await;
    assert_eq!(aborted.status, CallStatus::Aborted);
    assert_eq!(
        aborted.model_text,
        "The polite tool call was aborted by the user before it finished. Do not run it again unless the user asks you to.\n\nOutput before it stopped:\nTask was cancelled"
    );

    // The short limit gets a runtime of its own: capturing a panic's backtrace on a busy
    // machine can take longer than the limit the timeout case needs. A sleep of ten minutes
    // cannot beat it.
    let h = harness(
        registry(vec![testing::sleeper("sleep", false)]),
        Setup {
            rules: allow_all(),
            opts: Box::new(|o| {
                o.default_timeout = Duration::from_millis(200);
                // The sleeper ignores the abort: the pipeline waits this long, then drops it.
                o.abort_grace = Duration::from_secs(5);
            }),
            ..Default::default()
        },
    );

    let timed = h.call("sleep", r#"{"ms": 600000}"#).await;
    assert_eq!(timed.status, CallStatus::TimedOut);
    assert_eq!(
        timed.model_text,
        "The sleep tool timed out: it did not finish within its limit of 0.2 seconds (set by `[tool] timeout` in the podcode config) and was stopped. If the work needs longer, split it into smaller steps or ask the user to raise the limit."
    );
    assert_eq!(
        h.store.tool_call(&timed.call_id).unwrap().unwrap().state,
        ToolCallState::TimedOut
    );
}

#[tokio::test]
async fn only_idempotent_tools_are_retried_and_at_most_twice() {
    let (ok_after_two, c1) = testing::flaky("flaky_read", 2, true);
    let (never_ok, c2) = testing::flaky("flaky_forever", 10, true);
    let (write_like, c3) = testing::flaky("flaky_write", 1, false);
    let h = harness(
        registry(vec![ok_after_two, never_ok, write_like]),
        Setup {
            opts: Box::new(|o| o.retry_backoff = Duration::from_millis(1)),
            ..allowing()
        },
    );
    let out = h.call("flaky_read", "{}").await;
    assert_eq!(
        (out.status, out.model_text.as_str(), out.attempts),
        (CallStatus::Completed, "ok after 3", 3)
    );
    assert_eq!(c1.load(Ordering::SeqCst), 3);
    let out = h.call("flaky_forever", "{}").await;
    assert_eq!(
        out.model_text,
        "The flaky_forever tool failed: flaky failure 3"
    );
    assert_eq!(c2.load(Ordering::SeqCst), 3);
    let out = h.call("flaky_write", "{}").await;
    assert_eq!(
        out.model_text,
        "The flaky_write tool failed: flaky failure 1"
    );
    assert_eq!(c3.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_spill_file_that_cannot_be_written_is_not_offered_as_the_full_output() {
    let blocked = tempfile::tempdir().unwrap();
    // The spill folder's place is taken by a file: the spill cannot be created at all.
    let spill_dir = blocked.path().join("tool-output");
    std::fs::write(&spill_dir, "").unwrap();
    let h = harness(
        registry(vec![
            testing::spew("head", Truncation::Head),
            testing::echo("read"),
        ]),
        Setup {
            opts: Box::new(move |o| {
                o.max_lines = 5;
                o.spill_dir = spill_dir;
            }),
            ..allowing()
        },
    );
    let out = h.call("head", r#"{"bytes": 700}"#).await;
    let t = out.truncated.clone().unwrap();
    let why = t.spill_error.clone().unwrap();
    assert_eq!(
        out.model_text,
        format!(
            "line 1\nline 2\nline 3\nline 4\nline 5\n\n[output truncated: {} more lines ({} bytes) were cut. The full output ({} lines, 700 bytes) could not be saved ({why}), so only the part shown here is available. If you need the rest, narrow the command's output.]",
            t.cut_lines, t.cut_bytes, t.total_lines
        )
    );
    let row = h.store.tool_call(&out.call_id).unwrap().unwrap();
    assert_eq!(row.spill_path, None);
}

#[tokio::test]
async fn oversized_output_keeps_the_tools_end_and_spills_the_rest() {
    let h = harness(
        registry(vec![
            testing::spew("head", Truncation::Head),
            testing::spew("tail", Truncation::Tail),
            testing::echo("read"),
        ]),
        Setup {
            opts: Box::new(|o| o.max_lines = 5),
            ..allowing()
        },
    );
    let out = h.call("head", r#"{"bytes": 700}"#).await;
    let t = out.truncated.clone().unwrap();
    let spill = t.spill_path.display().to_string();
    assert!(spill.starts_with(&h.dir.path().join("data/tool-output").display().to_string()));
    assert_eq!(std::fs::read_to_string(&t.spill_path).unwrap().len(), 700);
    assert_eq!(
        out.model_text,
        format!(
            "line 1\nline 2\nline 3\nline 4\nline 5\n\n[output truncated: {} more lines ({} bytes) were cut. The full output ({} lines, 700 bytes) is saved in {spill}. Read the rest with the read tool: {{\"filePath\": \"{spill}\", \"offset\": 6, \"limit\": 2000}}.]",
            t.cut_lines, t.cut_bytes, t.total_lines
        )
    );
    let out = h.call("tail", r#"{"bytes": 700}"#).await;
    let t = out.truncated.clone().unwrap();
    assert!(
        out.model_text.starts_with(&format!(
            "[output truncated: the first {} lines",
            t.cut_lines
        )),
        "{}",
        out.model_text
    );
    let full = std::fs::read_to_string(&t.spill_path).unwrap();
    assert!(
        out.model_text.ends_with(full.lines().last().unwrap()),
        "{}",
        out.model_text
    );
    assert!(
        out.model_text
            .contains(&format!("line {}\n", t.total_lines - 1)),
        "{}",
        out.model_text
    );
    let row = h.store.tool_call(&out.call_id).unwrap().unwrap();
    assert_eq!(
        row.spill_path.as_deref(),
        Some(t.spill_path.to_str().unwrap())
    );
}

#[tokio::test]
async fn metadata_updates_are_live_events_and_messages_load_only_when_touched() {
    let h = harness(registry(vec![testing::inspector("inspect")]), allowing());
    h.store
        .add_message(&h.session, "user", &json!({"text": "hello"}))
        .unwrap();
    let mut events = h.runtime.subscribe();
    let before = h.store.message_reads();
    let out = h.call("inspect", "{}").await;
    assert_eq!(
        h.store.message_reads(),
        before,
        "messages must not be read when untouched"
    );
    assert_eq!(out.result.metadata["messages"], -1);
    let mut titles = vec![];
    while let Ok(ev) = events.try_recv() {
        if let Event::ToolMetadata { title, .. } = ev {
            titles.push(title.unwrap());
        }
    }
    assert_eq!(titles, ["starting", "done"]);
    let out = h.call("inspect", r#"{"read_messages": true}"#).await;
    assert_eq!(out.result.metadata["messages"], 1);
    assert_eq!(
        h.store.message_reads(),
        before + 1,
        "touched twice, read once"
    );
    let m = &out.result.metadata;
    assert_eq!(m["sessionID"], h.session);
    assert_eq!(m["messageID"], "msg_1");
    assert_eq!(m["callID"], out.call_id);
    assert_eq!(m["agent"], "build");
    assert_eq!(m["directory"], h.work().to_string_lossy().as_ref());
    assert_eq!(m["parentID"], Value::Null);
}

struct Rewriter;
#[async_trait]
impl ToolHook for Rewriter {
    fn name(&self) -> &str {
        "rewriter"
    }
    async fn before(&self, call: &HookCall, args: &mut Value) -> Result<BeforeDecision, String> {
        if args["text"] == "secret" {
            return Ok(BeforeDecision::Block(
                "reading secrets is not allowed".into(),
            ));
        }
        if call.tool == "echo" {
            args["text"] = json!("rewritten");
        }
        Ok(BeforeDecision::Continue)
    }
    async fn after(
        &self,
        _call: &HookCall,
        _args: &Value,
        result: &mut ToolResult,
    ) -> Result<(), String> {
        result.output.push_str(" (seen)");
        Ok(())
    }
}

struct Broken;
#[async_trait]
impl ToolHook for Broken {
    fn name(&self) -> &str {
        "broken.mjs"
    }
    async fn before(&self, _call: &HookCall, _args: &mut Value) -> Result<BeforeDecision, String> {
        Err("TypeError: x is undefined".into())
    }
}

#[tokio::test]
async fn hooks_rewrite_or_block_and_their_errors_reach_the_user_not_the_model() {
    let hooks: Vec<Arc<dyn ToolHook>> = vec![Arc::new(Broken), Arc::new(Rewriter)];
    let h = harness(
        registry(vec![testing::echo("echo")]),
        Setup {
            hooks,
            ..allowing()
        },
    );
    let mut events = h.runtime.subscribe();
    let out = h.call("echo", r#"{"text":"original"}"#).await;
    assert_eq!(out.model_text, "rewritten (seen)");
    let warned = std::iter::from_fn(|| events.try_recv().ok()).any(|e| {
        e == Event::Warning {
            message: "tool.execute.before hook broken.mjs failed: TypeError: x is undefined".into(),
        }
    });
    assert!(warned);
    let out = h.call("echo", r#"{"text":"secret"}"#).await;
    assert_eq!(
        out.model_text,
        "The echo tool call was blocked before it ran: reading secrets is not allowed"
    );
}

#[tokio::test]
async fn changes_recorded_by_a_tool_are_journaled_under_its_call() {
    let h = harness(
        registry(vec![testing::write_file("write_file")]),
        allowing(),
    );
    let out = h
        .call("write_file", r#"{"path":"a.txt","content":"one"}"#)
        .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    let changes = h
        .store
        .changes(Some(&h.session), Some(&out.call_id))
        .unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(out.changes, vec![changes[0].id.clone()]);
    assert_eq!(changes[0].file, h.work().join("a.txt").to_string_lossy());
    assert_eq!(changes[0].new_content.as_deref(), Some("one"));
}

#[tokio::test]
async fn titles_are_cut_to_sixty_characters() {
    let h = harness(registry(vec![testing::echo("echo")]), allowing());
    let out = h.call_json("echo", json!({"text": "x".repeat(100)})).await;
    assert_eq!(out.result.title.chars().count(), 60);
    assert!(out.result.title.ends_with('…'));
}

#[tokio::test]
async fn permission_outcomes_have_distinct_texts_and_always_is_remembered() {
    let h = harness(
        registry(vec![
            testing::echo("echo"),
            testing::write_file("write_file"),
        ]),
        Setup {
            rules: vec![PermissionRule::new(
                "edit",
                "*.lock",
                PermissionAction::Deny,
            )],
            replies: vec![
                PermissionReply::Reject { feedback: None },
                PermissionReply::Reject {
                    feedback: Some("use the staging file instead".into()),
                },
                PermissionReply::Always,
            ],
            ..Default::default()
        },
    );
    // Non-built-in tools are gated by their id with pattern `*`.
    let out = h.call("echo", r#"{"text":"x"}"#).await;
    assert_eq!(out.status, CallStatus::Denied);
    assert_eq!(
        out.model_text,
        "The user rejected the echo permission for \"*\". Do not retry this call; stop and ask the user how they would like to proceed."
    );
    let asks = h.user.asks();
    assert_eq!(
        (asks[0].tool.as_str(), asks[0].request.permission.as_str()),
        ("echo", "echo")
    );
    assert_eq!(asks[0].request.patterns, ["*"]);
    let out = h.call("echo", r#"{"text":"x"}"#).await;
    assert_eq!(
        out.model_text,
        "The user rejected the echo permission for \"*\" and said: use the staging file instead"
    );
    let out = h.call("echo", r#"{"text":"x"}"#).await;
    assert_eq!(out.status, CallStatus::Completed);
    let out = h.call("echo", r#"{"text":"y"}"#).await;
    assert_eq!(out.status, CallStatus::Completed);
    assert_eq!(h.user.asks().len(), 3, "always must not ask again");
    let approvals = h.store.approvals(None).unwrap();
    assert_eq!(
        (
            approvals[0].permission.as_str(),
            approvals[0].pattern.as_str()
        ),
        ("echo", "*")
    );
    // A deny rule holds whatever the user would answer; the tool never runs.
    let out = h
        .call("write_file", r#"{"path":"Cargo.lock","content":"x"}"#)
        .await;
    assert_eq!(
        out.model_text,
        "Permission denied: a rule in the user's configuration denies edit for \"Cargo.lock\". Do not retry this call; find another way or ask the user to change the rule."
    );
    assert!(!h.work().join("Cargo.lock").exists());
}

/// Keeps what `tool.execute.after` saw and masks the first line.
struct Seer(Arc<std::sync::Mutex<Vec<(Value, ToolResult)>>>);
#[async_trait]
impl ToolHook for Seer {
    fn name(&self) -> &str {
        "seer"
    }
    async fn after(
        &self,
        _call: &HookCall,
        args: &Value,
        result: &mut ToolResult,
    ) -> Result<(), String> {
        self.0.lock().unwrap().push((args.clone(), result.clone()));
        result.output = result.output.replacen("line 1\n", "[masked]\n", 1);
        Ok(())
    }
}

#[tokio::test]
async fn after_hooks_see_streamed_output_as_the_model_reads_it_and_their_rewrite_is_final() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let h = harness(
        registry(vec![testing::spew("head", Truncation::Head)]),
        Setup {
            hooks: vec![Arc::new(Seer(seen.clone()))],
            opts: Box::new(|o| o.max_lines = 5),
            ..allowing()
        },
    );
    // Within the limits: the streamed text whole, metadata an object saying nothing was cut.
    let out = h.call("head", r#"{"bytes": 14}"#).await;
    assert_eq!(out.model_text, "[masked]\nline 2\n");
    let (args, result) = seen.lock().unwrap()[0].clone();
    assert_eq!(args, json!({"bytes": 14}));
    assert_eq!(result.output, "line 1\nline 2\n");
    assert_eq!(result.metadata, json!({"truncated": false}));
    // Cut: the kept lines with the note, and where the whole output is.
    let out = h.call("head", r#"{"bytes": 700}"#).await;
    let t = out.truncated.clone().unwrap();
    let (_, result) = seen.lock().unwrap()[1].clone();
    assert!(
        result
            .output
            .starts_with("line 1\nline 2\nline 3\nline 4\nline 5\n\n[output truncated:"),
        "{}",
        result.output
    );
    assert_eq!(
        result.metadata,
        json!({"truncated": true, "outputPath": t.spill_path.to_string_lossy()})
    );
    assert!(
        out.model_text.starts_with("[masked]\nline 2\n"),
        "{}",
        out.model_text
    );
    assert!(out.model_text.contains("[output truncated:"));
}

#[tokio::test]
async fn a_self_gated_tool_the_rules_deny_outright_never_runs() {
    let ran = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = ran.clone();
    let fetch = FnTool::new(
        podcode_protocol::ToolSpec::new("fetchy", "Fetches.", json!({"type": "object"})),
        move |_, _| {
            // Work a denied tool must not do: its own ask would only come after it.
            counter.fetch_add(1, Ordering::SeqCst);
            async { Ok(ToolResult::text("fetched")) }
        },
    )
    .self_gated()
    .arc();
    let h = harness(
        registry(vec![fetch, testing::noop("noop")]),
        Setup {
            rules: vec![
                PermissionRule::new("*", "*", PermissionAction::Allow),
                PermissionRule::new("fetchy", "*", PermissionAction::Deny),
                // Denied for one pattern only: still runs and gates itself.
                PermissionRule::new("noop", "secret*", PermissionAction::Deny),
            ],
            ..Default::default()
        },
    );
    let out = h.call("fetchy", "{}").await;
    assert_eq!(out.status, CallStatus::Denied);
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the tool did not run");
    assert_eq!(
        out.model_text,
        PermissionError::Denied {
            permission: "fetchy".into(),
            patterns: vec!["*".into()],
        }
        .to_string()
    );
    assert!(out.model_text.contains("fetchy"), "{}", out.model_text);
    let out = h.call("noop", "{}").await;
    assert_eq!(out.status, CallStatus::Completed);
}

#[tokio::test]
async fn a_calls_duration_leaves_out_the_time_the_user_took_to_answer() {
    let h = harness(
        registry(vec![testing::echo("echo")]),
        Setup {
            replies: vec![PermissionReply::Once],
            ..Default::default()
        },
    );
    let thinking = Duration::from_millis(300);
    h.user.while_asked(move |_| std::thread::sleep(thinking));
    let around = std::time::Instant::now();
    let out = h.call("echo", r#"{"text":"x"}"#).await;
    let total = around.elapsed();
    assert_eq!(out.status, CallStatus::Completed);
    // The call's own time is at most what was left after the user's answer came.
    assert!(
        total - out.duration >= thinking,
        "duration {:?} of {total:?} includes the {thinking:?} the user took",
        out.duration
    );
}
