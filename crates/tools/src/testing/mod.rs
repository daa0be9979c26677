//! A small tool source for tests and benchmarks, so the registry and pipeline can be
//! exercised end to end before (and independently of) real built-ins and plugins.
//! `FnTool` wraps a closure as a `Tool`; the constructors below are the common cases.
//! Nothing here is registered by the `podcode` binary; the module only exists with the
//! `test-support` feature. `harness` runs calls through a real runtime and store.

// Test support only (feature `test-support`): a failed setup panics so the test that uses it
// fails at that line, as `#[test]` code does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod child_report;
mod harness;
mod sandbox;
pub use harness::{Harness, ScriptedUser, Setup, harness, registry};
pub use sandbox::{default_sandbox, sandbox_helper};

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use podcode_protocol::{
    ChangeOp, ChangeRecord, PermissionRequest, ToolResult, ToolSpec, Truncation,
};
use serde_json::{Value, json};

use crate::context::ToolContext;
use crate::tool::{Tool, ToolError};

type Exec = dyn Fn(Value, ToolContext) -> Pin<Box<dyn Future<Output = Result<ToolResult, ToolError>> + Send>>
    + Send
    + Sync;

/// A tool whose `execute` is a closure.
pub struct FnTool {
    spec: ToolSpec,
    gates_itself: bool,
    exec: Box<Exec>,
}

impl FnTool {
    /// A tool with `spec` whose calls run `f`.
    pub fn new<F, Fut>(spec: ToolSpec, f: F) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, ToolError>> + Send + 'static,
    {
        Self {
            spec,
            gates_itself: false,
            exec: Box::new(move |a, c| Box::pin(f(a, c))),
        }
    }

    /// Marks the tool as carrying its own permission gate, like a built-in.
    pub fn self_gated(mut self) -> Self {
        self.gates_itself = true;
        self
    }

    /// The tool as a registry entry.
    pub fn arc(self) -> Arc<dyn Tool> {
        Arc::new(self)
    }
}

#[async_trait]
impl Tool for FnTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn gates_itself(&self) -> bool {
        self.gates_itself
    }
    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        (self.exec)(args, ctx).await
    }
}

fn object(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

/// `noop {}` → `ok`; self-gated like a built-in (the benchmark's tool).
pub fn noop(id: &str) -> Arc<dyn Tool> {
    FnTool::new(
        ToolSpec::new(id, "Does nothing and returns ok.", object(json!({}), &[])),
        |_, _| async { Ok(ToolResult::text("ok")) },
    )
    .self_gated()
    .arc()
}

/// `echo {text, times=1}` → the text repeated, one per line.
pub fn echo(id: &str) -> Arc<dyn Tool> {
    let params = object(
        json!({"text": {"type": "string"}, "times": {"type": "integer", "minimum": 1, "default": 1}}),
        &["text"],
    );
    FnTool::new(
        ToolSpec::new(id, "Echoes text back.", params),
        |args, _| async move {
            let text = args["text"].as_str().unwrap_or_default().to_string();
            let times = args["times"].as_u64().unwrap_or(1) as usize;
            Ok(ToolResult::text(vec![text.clone(); times].join("\n"))
                .with_title(format!("echo {text}")))
        },
    )
    .arc()
}

/// Streams `bytes` bytes of numbered lines through `ctx.write_output`.
pub fn spew(id: &str, truncation: Truncation) -> Arc<dyn Tool> {
    let params = object(
        json!({"bytes": {"type": "integer", "minimum": 0}}),
        &["bytes"],
    );
    FnTool::new(
        ToolSpec::new(id, "Prints many lines.", params).with_truncation(truncation),
        |args, ctx| async move {
            let total = args["bytes"].as_u64().unwrap_or(0);
            let mut written = 0u64;
            let mut line_no = 0u64;
            let mut chunk = Vec::with_capacity(64 * 1024);
            while written < total {
                chunk.clear();
                while chunk.len() < 60 * 1024 && written + (chunk.len() as u64) < total {
                    line_no += 1;
                    chunk.extend_from_slice(format!("line {line_no}\n").as_bytes());
                }
                let take = chunk.len().min((total - written) as usize);
                ctx.write_output(&chunk[..take]);
                written += take as u64;
            }
            Ok(ToolResult::default())
        },
    )
    .self_gated()
    .arc()
}

/// Fails with a transient error `failures` times, then succeeds. Returns the attempt counter.
pub fn flaky(id: &str, failures: u32, idempotent: bool) -> (Arc<dyn Tool>, Arc<AtomicU32>) {
    let count = Arc::new(AtomicU32::new(0));
    let seen = count.clone();
    let tool = FnTool::new(
        ToolSpec::new(id, "Sometimes fails.", object(json!({}), &[])).idempotent(idempotent),
        move |_, _| {
            let n = seen.fetch_add(1, Ordering::SeqCst) + 1;
            async move {
                if n <= failures {
                    Err(ToolError::transient(format!("flaky failure {n}")))
                } else {
                    Ok(ToolResult::text(format!("ok after {n}")))
                }
            }
        },
    )
    .self_gated()
    .arc();
    (tool, count)
}

/// Sleeps `ms`; when `honour_abort`, returns `Task was cancelled` as soon as aborted.
pub fn sleeper(id: &str, honour_abort: bool) -> Arc<dyn Tool> {
    let params = object(json!({"ms": {"type": "integer", "minimum": 0}}), &["ms"]);
    FnTool::new(
        ToolSpec::new(id, "Sleeps.", params),
        move |args, ctx| async move {
            let ms = args["ms"].as_u64().unwrap_or(0);
            let sleep = tokio::time::sleep(Duration::from_millis(ms));
            if honour_abort {
                tokio::select! {
                    _ = sleep => Ok(ToolResult::text("slept")),
                    _ = ctx.abort().cancelled() => Ok(ToolResult::text("Task was cancelled")),
                }
            } else {
                sleep.await;
                Ok(ToolResult::text("slept"))
            }
        },
    )
    .self_gated()
    .arc()
}

/// A tool whose call panics, to check the pipeline reports panics as failures.
pub fn panicker(id: &str) -> Arc<dyn Tool> {
    FnTool::new(
        ToolSpec::new(id, "Panics.", object(json!({}), &[])),
        |_, _| async {
            if std::env::var_os("PODCODE_NEVER_SET_THIS").is_none() {
                panic!("tool exploded");
            }
            Ok(ToolResult::default())
        },
    )
    .self_gated()
    .arc()
}

/// Throws `message` (not transient).
pub fn thrower(id: &str, message: &'static str) -> Arc<dyn Tool> {
    FnTool::new(
        ToolSpec::new(id, "Throws.", object(json!({}), &[])),
        move |_, _| async move { Err(ToolError::failed(message)) },
    )
    .self_gated()
    .arc()
}

/// `write_file {path, content}`: asks `edit` for the path, writes it, journals the change.
pub fn write_file(id: &str) -> Arc<dyn Tool> {
    let params = object(
        json!({"path": {"type": "string"}, "content": {"type": "string"}}),
        &["path", "content"],
    );
    FnTool::new(
        ToolSpec::new(id, "Writes a file.", params),
        |args, ctx| async move {
            let rel = args["path"].as_str().unwrap_or_default().to_string();
            let content = args["content"].as_str().unwrap_or_default().to_string();
            ctx.ask(PermissionRequest {
                permission: "edit".into(),
                patterns: vec![rel.clone()],
                ..Default::default()
            })
            .await?;
            let path = ctx.directory().join(&rel);
            let old = std::fs::read_to_string(&path).ok();
            std::fs::write(&path, &content).map_err(|e| ToolError::failed(e.to_string()))?;
            ctx.record_change(ChangeRecord {
                file: path.to_string_lossy().into_owned(),
                op: if old.is_some() {
                    ChangeOp::Modify
                } else {
                    ChangeOp::Create
                },
                old_content: old,
                new_content: Some(content.clone()),
            })?;
            Ok(
                ToolResult::text(format!("Wrote {} bytes to {rel}.", content.len()))
                    .with_title(format!("wrote {rel}")),
            )
        },
    )
    .self_gated()
    .arc()
}

/// Reports live metadata twice, then returns how many messages the session has (touching
/// `ctx.messages()` only when `read_messages` is true).
pub fn inspector(id: &str) -> Arc<dyn Tool> {
    let params = object(
        json!({"read_messages": {"type": "boolean", "default": false}}),
        &[],
    );
    FnTool::new(ToolSpec::new(id, "Inspects its context.", params), |args, ctx| async move {
        ctx.metadata(Some("starting".into()), Some(json!({"step": 1})));
        ctx.metadata(Some("done".into()), Some(json!({"step": 2})));
        let count = if args["read_messages"].as_bool().unwrap_or(false) {
            let first = ctx.messages().await?.len();
            let again = ctx.messages().await?.len();
            assert_eq!(first, again);
            first as i64
        } else {
            -1
        };
        let id = ctx.identity();
        Ok(ToolResult::text("inspected").with_metadata(json!({
            "messages": count, "sessionID": id.session_id, "messageID": id.message_id, "callID": id.call_id,
            "parentID": id.parent_id, "rootID": id.root_id, "agent": id.agent,
            "mainCwd": id.main_cwd, "directory": id.directory, "worktree": id.worktree,
        })))
    })
    .self_gated()
    .arc()
}
