//! `ToolRuntime::call`, the one path every tool call takes, in this order: resolve ▸ parse ▸
//! validate ▸ before-hooks ▸ permission ▸ execute (timeout, abort, retries for idempotent
//! tools) ▸ after-hooks ▸ truncate+spill ▸ record. Every failure is turned into a distinct
//! model-facing text here, so the model always gets an answer it can act on and the
//! process survives whatever a tool does (errors, panics, hangs).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use podcode_protocol::{Event, PermissionRequest, ToolResult, Truncation, clip_title, new_id};
use podcode_store::Store;
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::context::{CallIdentity, Shared, ToolContext};
use crate::hooks::{BeforeDecision, ToolHook};
use crate::permission::{AskRequest, PermissionEngine, PermissionError};
use crate::registry::ToolRegistry;
use crate::texts;
use crate::tool::ToolError;
use crate::truncate::{OutputSink, Truncated, clean_spill_dir};

mod record;

#[derive(Debug, Clone)]
pub struct RuntimeOptions {
    pub max_lines: usize,
    pub max_bytes: usize,
    pub default_timeout: Duration,
    pub spill_dir: PathBuf,
    /// How long a tool gets to wind down after its abort signal fires.
    pub abort_grace: Duration,
    /// First retry delay for idempotent tools; it quadruples per try.
    pub retry_backoff: Duration,
    pub max_retries: u32,
}

impl RuntimeOptions {
    pub fn new(spill_dir: PathBuf) -> Self {
        Self {
            max_lines: 2000,
            max_bytes: 50 * 1024,
            default_timeout: Duration::from_secs(300),
            spill_dir,
            abort_grace: Duration::from_secs(3),
            retry_backoff: Duration::from_millis(100),
            max_retries: 2,
        }
    }
}

/// Arguments as the model sent them: a JSON string (OpenAI) or an object (Anthropic).
#[derive(Debug, Clone)]
pub enum RawArgs {
    Text(String),
    Json(Value),
}

pub struct CallRequest {
    /// `identity.call_id` may be empty: the runtime then makes one.
    pub identity: CallIdentity,
    pub tool: String,
    pub args: RawArgs,
    pub abort: CancellationToken,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Completed,
    Failed,
    Denied,
    Aborted,
    TimedOut,
}

#[derive(Debug, Clone)]
pub struct CallOutcome {
    pub call_id: String,
    /// The resolved tool id (or the name the model used, when it resolved to nothing).
    pub tool: String,
    pub status: CallStatus,
    /// Exactly what the model reads for this call.
    pub model_text: String,
    /// Title, metadata and attachments for front ends (`output` is the untruncated kept text).
    pub result: ToolResult,
    pub truncated: Option<Truncated>,
    pub attempts: u32,
    pub duration: Duration,
    pub changes: Vec<String>,
}

pub struct ToolRuntime {
    registry: RwLock<Arc<ToolRegistry>>,
    shared: Arc<Shared>,
    opts: RuntimeOptions,
}

enum Exec {
    Done(Result<ToolResult, ToolError>),
    Panicked(String),
    Stopped {
        status: CallStatus,
        partial: Option<ToolResult>,
    },
}

impl ToolRuntime {
    pub fn new(
        registry: ToolRegistry,
        store: Arc<Store>,
        permissions: PermissionEngine,
        hooks: Vec<Arc<dyn ToolHook>>,
        opts: RuntimeOptions,
    ) -> Self {
        let (events, _) = broadcast::channel(1024);
        let spill_dir = opts.spill_dir.clone();
        std::thread::spawn(move || clean_spill_dir(&spill_dir, Duration::from_secs(7 * 24 * 3600)));
        Self {
            registry: RwLock::new(Arc::new(registry)),
            shared: Arc::new(Shared {
                store,
                events,
                permissions,
                hooks: std::sync::RwLock::new(Arc::new(hooks)),
                spill_dir: opts.spill_dir.clone(),
            }),
            opts,
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.shared.events.subscribe()
    }

    pub fn registry(&self) -> Arc<ToolRegistry> {
        match self.registry.read() {
            Ok(r) => r.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Swaps in a rebuilt registry (plugins reloaded); calls in flight keep the old one.
    pub fn set_registry(&self, registry: ToolRegistry) {
        match self.registry.write() {
            Ok(mut r) => *r = Arc::new(registry),
            Err(p) => *p.into_inner() = Arc::new(registry),
        }
    }

    /// Swaps in the hooks of reloaded plugins; calls in flight keep the old ones.
    pub fn set_hooks(&self, hooks: Vec<Arc<dyn ToolHook>>) {
        match self.shared.hooks.write() {
            Ok(mut h) => *h = Arc::new(hooks),
            Err(p) => *p.into_inner() = Arc::new(hooks),
        }
    }

    /// Runs a conversation hook (`chat.message`, `chat.params`) through every hook source in
    /// order; a failing hook is a warning and leaves the output as it was.
    pub async fn chat_hook(&self, name: &str, input: Value, mut output: Value) -> Value {
        for hook in self.shared.hooks().iter() {
            match hook.chat(name, &input, output.clone()).await {
                Ok(changed) => output = changed,
                Err(e) => self
                    .shared
                    .warn(format!("{name} hook {} failed: {e}", hook.name())),
            }
        }
        output
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.shared.store
    }

    /// Puts an event on the runtime's stream (the agent loop's own events share it, so
    /// front ends read one ordered stream).
    pub fn emit(&self, event: Event) {
        self.shared.emit(event);
    }

    /// A permission ask outside any tool call (the agent's `doom_loop` check): the same
    /// rules, remembered approvals and asker as a call's `ctx.ask`.
    pub async fn ask_permission(&self, ask: AskRequest) -> Result<(), PermissionError> {
        self.shared.permissions.check(ask, None).await
    }

    pub fn options(&self) -> &RuntimeOptions {
        &self.opts
    }

    pub async fn call(&self, req: CallRequest) -> CallOutcome {
        let start = Instant::now();
        let mut identity = req.identity;
        if identity.call_id.is_empty() {
            identity.call_id = new_id("call");
        }
        let registry = self.registry();
        let fail = |tool: &str, status, text: String| CallOutcome {
            call_id: identity.call_id.clone(),
            tool: tool.to_string(),
            status,
            model_text: text,
            result: ToolResult::default(),
            truncated: None,
            attempts: 0,
            duration: start.elapsed(),
            changes: Vec::new(),
        };

        // Resolve and parse come before the call is recorded as started: the row needs a
        // tool and arguments, and neither is known yet.
        let entry = match registry.resolve(&req.tool) {
            Ok(e) => e,
            Err(text) => {
                let out = fail(&req.tool, CallStatus::Failed, text);
                self.record_unstarted(&identity, &req.tool, &Value::Null, &out);
                return out;
            }
        };
        let tool = entry.tool.clone();
        let spec = tool.spec().clone();
        let args = match req.args {
            RawArgs::Json(v) => v,
            RawArgs::Text(t) if t.trim().is_empty() => json!({}),
            RawArgs::Text(t) => match serde_json::from_str::<Value>(&t) {
                Ok(v) => v,
                Err(e) => {
                    let out = fail(
                        &spec.id,
                        CallStatus::Failed,
                        texts::invalid_json_text(&spec.id, &e.to_string()),
                    );
                    self.record_unstarted(&identity, &spec.id, &Value::String(t), &out);
                    return out;
                }
            },
        };
        self.record_start(&identity, &spec.id, &args);

        let validated = match tool.validate(&args).await {
            Some(r) => r,
            None => entry.schema().validate(args.clone()),
        };
        let mut args = match validated {
            Ok(v) => v,
            Err(issues) => {
                let out = fail(
                    &spec.id,
                    CallStatus::Failed,
                    texts::invalid_arguments_text(&spec.id, &issues),
                );
                return self.finish(out, None);
            }
        };

        let abort = req.abort.child_token();
        let sink_path = self
            .opts
            .spill_dir
            .join(format!("{}.txt", identity.call_id));
        let new_sink = || {
            OutputSink::new(
                spec.truncation,
                self.opts.max_lines,
                self.opts.max_bytes,
                sink_path.clone(),
            )
        };
        let sink = Arc::new(Mutex::new(Some(new_sink())));
        let ctx = ToolContext::new(
            identity.clone(),
            spec.id.clone(),
            abort.clone(),
            self.shared.clone(),
            sink.clone(),
        );

        let call = ctx.hook_call();
        let hooks = self.shared.hooks();
        for hook in hooks.iter() {
            match hook.before(&call, &mut args).await {
                Ok(BeforeDecision::Continue) => {}
                Ok(BeforeDecision::Block(reason)) => {
                    let out = fail(
                        &spec.id,
                        CallStatus::Failed,
                        texts::blocked_by_hook_text(&spec.id, &reason),
                    );
                    return self.finish(out, None);
                }
                Err(e) => self.shared.warn(format!(
                    "tool.execute.before hook {} failed: {e}",
                    hook.name()
                )),
            }
        }

        if !tool.gates_itself() {
            let request = PermissionRequest {
                permission: spec.id.clone(),
                patterns: vec!["*".into()],
                always: vec!["*".into()],
                metadata: json!({ "args": args }),
            };
            if let Err(e) = ctx.ask(request).await {
                let out = fail(&spec.id, CallStatus::Denied, e.to_string());
                return self.finish(out, None);
            }
        }

        let timeout = spec
            .timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(self.opts.default_timeout);
        let mut attempts = 0;
        let exec = loop {
            attempts += 1;
            let exec = self
                .execute_once(&tool, args.clone(), &ctx, &abort, &req.abort, timeout)
                .await;
            let transient = matches!(
                &exec,
                Exec::Done(Err(ToolError::Failed {
                    transient: true,
                    ..
                }))
            );
            if !(transient
                && spec.idempotent
                && attempts <= self.opts.max_retries
                && !abort.is_cancelled())
            {
                break exec;
            }
            tokio::time::sleep(self.opts.retry_backoff * 4u32.pow(attempts - 1)).await;
            if let Ok(mut s) = sink.lock() {
                *s = Some(new_sink());
            }
        };

        let (status, result, error) = match exec {
            Exec::Done(Ok(r)) => (CallStatus::Completed, Some(r), None),
            Exec::Done(Err(e)) => match e {
                ToolError::Failed { message, .. } => (
                    CallStatus::Failed,
                    None,
                    Some(texts::failed_text(&spec.id, &message)),
                ),
                ToolError::Permission(text) => (CallStatus::Denied, None, Some(text)),
                ToolError::Aborted => (
                    CallStatus::Aborted,
                    None,
                    Some(texts::aborted_text(&spec.id)),
                ),
                ToolError::InvalidArguments(issues) => (
                    CallStatus::Failed,
                    None,
                    Some(texts::invalid_arguments_text(&spec.id, &issues)),
                ),
            },
            Exec::Panicked(msg) => (
                CallStatus::Failed,
                None,
                Some(texts::panicked_text(&spec.id, &msg)),
            ),
            Exec::Stopped { status, partial } => {
                let text = if status == CallStatus::TimedOut {
                    texts::timeout_text(&spec.id, timeout.as_secs_f64(), spec.timeout_ms.is_some())
                } else {
                    texts::aborted_text(&spec.id)
                };
                (status, partial, Some(text))
            }
        };

        let mut result = result.unwrap_or_default();
        if status == CallStatus::Completed {
            for hook in hooks.iter() {
                if let Err(e) = hook.after(&call, &mut result).await {
                    self.shared.warn(format!(
                        "tool.execute.after hook {} failed: {e}",
                        hook.name()
                    ));
                }
            }
        }
        result.title = clip_title(&result.title);

        let sink = sink.lock().ok().and_then(|mut s| s.take());
        let (kept, truncated) = match sink {
            Some(mut sink) => {
                if !result.output.is_empty() {
                    if !sink.is_empty() {
                        sink.write(b"\n");
                    }
                    sink.write(result.output.as_bytes());
                }
                let (kept, truncated) = sink.finish();
                if let Some(err) = truncated.as_ref().and_then(|t| t.spill_error.as_ref()) {
                    self.shared.warn(format!("{}: {err}", spec.id));
                }
                (kept, truncated)
            }
            None => (std::mem::take(&mut result.output), None),
        };
        let body = match &truncated {
            None => kept.clone(),
            Some(t) => {
                let note = texts::truncation_note(
                    t,
                    spec.truncation == Truncation::Head,
                    registry.contains("read"),
                    registry.contains("grep"),
                );
                if spec.truncation == Truncation::Head {
                    format!("{kept}\n\n{note}")
                } else {
                    format!("{note}\n\n{kept}")
                }
            }
        };
        let model_text = match error {
            None => body,
            Some(err) if body.trim().is_empty() => err,
            Some(err) => format!("{err}\n\nOutput before it stopped:\n{body}"),
        };
        result.output = kept;
        let out = CallOutcome {
            call_id: identity.call_id.clone(),
            tool: spec.id.clone(),
            status,
            model_text,
            result,
            truncated,
            attempts,
            duration: start.elapsed(),
            changes: ctx.recorded_changes(),
        };
        self.finish(out, Some(&spec.id))
    }

    async fn execute_once(
        &self,
        tool: &Arc<dyn crate::tool::Tool>,
        args: Value,
        ctx: &ToolContext,
        abort: &CancellationToken,
        user_abort: &CancellationToken,
        timeout: Duration,
    ) -> Exec {
        let (tool, task_ctx) = (tool.clone(), ctx.clone());
        let mut handle = tokio::spawn(async move { tool.execute(args, task_ctx).await });
        let status = tokio::select! {
            joined = &mut handle => {
                // A tool that honours its abort signal can finish in the same instant the
                // user aborts: that is still an aborted call, with what it returned.
                if user_abort.is_cancelled() {
                    let partial = match joined {
                        Ok(Ok(r)) => Some(r),
                        _ => None,
                    };
                    return Exec::Stopped { status: CallStatus::Aborted, partial };
                }
                return join_to_exec(joined);
            }
            _ = tokio::time::sleep(timeout) => CallStatus::TimedOut,
            _ = user_abort.cancelled() => CallStatus::Aborted,
        };
        // Let the tool wind down (bash kills its process group and returns what it had).
        abort.cancel();
        let partial = match tokio::time::timeout(self.opts.abort_grace, &mut handle).await {
            Ok(Ok(Ok(r))) => Some(r),
            Ok(_) => None,
            Err(_) => {
                handle.abort();
                None
            }
        };
        Exec::Stopped { status, partial }
    }
}

fn join_to_exec(joined: Result<Result<ToolResult, ToolError>, tokio::task::JoinError>) -> Exec {
    match joined {
        Ok(r) => Exec::Done(r),
        Err(e) if e.is_panic() => {
            let payload = e.into_panic();
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string());
            Exec::Panicked(msg)
        }
        Err(_) => Exec::Panicked("the task was cancelled".into()),
    }
}
