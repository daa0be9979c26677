//! The pipeline's stages each run once per call: a call is resolved and parsed once (a
//! prepared call runs the tool it resolved, whatever a reload swaps in meanwhile), and a
//! retried call does not repeat its before-hooks or permission ask. Calls settled without
//! running are recorded by the same writer, with the same policy, as calls that ran.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use podcode_protocol::{Event, PermissionReply, ToolResult, ToolSpec};
use podcode_store::ToolCallState;
use podcode_tools::testing::{self, FnTool, Setup, harness, registry};
use podcode_tools::*;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Appends `!` to `text` and counts how often it ran.
struct Exclaim(Arc<AtomicU32>);

#[async_trait]
impl ToolHook for Exclaim {
    fn name(&self) -> &str {
        "exclaim"
    }
    async fn before(&self, _call: &HookCall, args: &mut Value) -> Result<BeforeDecision, String> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let text = format!("{}!", args["text"].as_str().unwrap_or_default());
        args["text"] = json!(text);
        Ok(BeforeDecision::Continue)
    }
}

/// An idempotent tool, gated by the pipeline, that fails transiently twice and keeps the
/// arguments each try saw.
fn shaky(seen: Arc<Mutex<Vec<Value>>>) -> Arc<dyn Tool> {
    let params =
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
    FnTool::new(
        ToolSpec::new("shaky", "Fails twice, then works.", params).idempotent(true),
        move |args, _| {
            let seen = seen.clone();
            async move {
                let tries = {
                    let mut seen = seen.lock().unwrap();
                    seen.push(args.clone());
                    seen.len()
                };
                if tries <= 2 {
                    Err(ToolError::transient(format!("try {tries} failed")))
                } else {
                    Ok(ToolResult::text(args["text"].as_str().unwrap_or_default()))
                }
            }
        },
    )
    .arc()
}

#[tokio::test]
async fn a_retried_call_runs_its_hooks_and_permission_once_and_every_try_gets_the_rewritten_args() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let hook_runs = Arc::new(AtomicU32::new(0));
    let h = harness(
        registry(vec![shaky(seen.clone())]),
        Setup {
            replies: vec![PermissionReply::Once],
            hooks: vec![Arc::new(Exclaim(hook_runs.clone()))],
            opts: Box::new(|o| o.retry_backoff = Duration::from_millis(1)),
            ..Default::default()
        },
    );
    let out = h.call("shaky", r#"{"text": "hi"}"#).await;
    assert_eq!(
        (out.status, out.model_text.as_str(), out.attempts),
        (CallStatus::Completed, "hi!", 3)
    );
    assert_eq!(*seen.lock().unwrap(), vec![json!({"text": "hi!"}); 3]);
    assert_eq!(hook_runs.load(Ordering::SeqCst), 1);
    let asks = h.user.asks();
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].request.metadata, json!({"args": {"text": "hi!"}}));
    // The record keeps what the model sent.
    let row = h.store.tool_call(&out.call_id).unwrap().unwrap();
    assert_eq!(row.args, json!({"text": "hi"}));
}

#[tokio::test]
async fn a_prepared_call_runs_the_tool_it_resolved_even_after_a_reload() {
    let h = harness(
        registry(vec![testing::echo("echo"), testing::noop("noop")]),
        Setup {
            replies: vec![PermissionReply::Once],
            ..Default::default()
        },
    );
    let prepared = h
        .runtime
        .prepare("ECHO", RawArgs::Text(r#"{"text": "hi"}"#.into()));
    assert_eq!(
        (prepared.name(), prepared.tool_id(), prepared.args()),
        ("ECHO", "echo", &json!({"text": "hi"}))
    );
    assert!(!prepared.is_idempotent());
    h.runtime
        .set_registry(registry(vec![testing::noop("noop")]));
    let out = h
        .runtime
        .call_prepared(h.identity(), prepared, CancellationToken::new())
        .await;
    assert_eq!(
        (out.status, out.tool.as_str(), out.model_text.as_str()),
        (CallStatus::Completed, "echo", "hi")
    );
    // A call prepared now resolves in the new registry.
    let now = h.runtime.prepare("echo", RawArgs::Text("{}".into()));
    assert_eq!(now.tool_id(), "echo");
    let out = h
        .runtime
        .call_prepared(h.identity(), now, CancellationToken::new())
        .await;
    assert_eq!(out.status, CallStatus::Failed);
    assert!(
        out.model_text.starts_with("Unknown tool \"echo\"."),
        "{}",
        out.model_text
    );
}

#[tokio::test]
async fn arguments_are_parsed_once_and_text_that_is_not_json_is_kept_as_a_string() {
    let h = harness(registry(vec![testing::noop("noop")]), Setup::default());
    let empty = h.runtime.prepare("noop", RawArgs::Text("  ".into()));
    assert_eq!(empty.args(), &json!({}));
    let bad = h.runtime.prepare("noop", RawArgs::Text("{oops".into()));
    assert_eq!(bad.args(), &json!("{oops"));
    let out = h
        .runtime
        .call_prepared(h.identity(), bad, CancellationToken::new())
        .await;
    assert_eq!(out.status, CallStatus::Failed);
    assert_eq!(
        out.model_text,
        invalid_json_text("noop", "key must be a string at line 1 column 2")
    );
    let row = h.store.tool_call(&out.call_id).unwrap().unwrap();
    assert_eq!(
        (row.state, row.args),
        (ToolCallState::Failed, json!("{oops"))
    );
}

#[tokio::test]
async fn a_settled_call_is_recorded_like_a_run_one_and_a_store_failure_is_a_warning() {
    let h = harness(registry(vec![testing::noop("noop")]), Setup::default());
    let mut events = h.runtime.subscribe();
    let mut identity = h.identity();
    identity.call_id = "call_settled".into();
    let args = json!({"n": 1});
    h.runtime
        .record_settled(&identity, "noop", &args, CallStatus::Denied, "no loops");
    let row = h.store.tool_call("call_settled").unwrap().unwrap();
    assert_eq!(
        (
            row.state,
            row.tool.as_str(),
            &row.args,
            row.error.as_deref()
        ),
        (ToolCallState::Denied, "noop", &args, Some("no loops"))
    );
    assert_eq!(row.message_id.as_deref(), Some("msg_1"));
    let seen: Vec<Event> = std::iter::from_fn(|| events.try_recv().ok()).collect();
    assert_eq!(
        seen,
        vec![
            Event::ToolStarted {
                session_id: h.session.clone(),
                call_id: "call_settled".into(),
                tool: "noop".into(),
                args: args.clone(),
            },
            Event::ToolFailed {
                call_id: "call_settled".into(),
                tool: "noop".into(),
                error: "no loops".into(),
                duration_ms: 0,
                state: ToolCallState::Denied,
            },
        ]
    );
    // The same id again: the store refuses the row; the user is warned, the call still
    // gets its events and nothing fails.
    h.runtime
        .record_settled(&identity, "noop", &args, CallStatus::Aborted, "not run");
    let seen: Vec<Event> = std::iter::from_fn(|| events.try_recv().ok()).collect();
    assert!(
        matches!(&seen[0], Event::Warning { message } if message.starts_with("could not record tool call call_settled: ")),
        "{seen:?}"
    );
    assert!(matches!(&seen[1], Event::ToolStarted { .. }), "{seen:?}");
    assert!(matches!(seen.last(), Some(Event::ToolFailed { error, .. }) if error == "not run"));
}
