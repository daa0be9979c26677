//! Stage 5, execute: the tool runs in its own task under a timeout and the user's abort,
//! so an error, a panic or a hang ends only the call. On timeout or abort the tool gets its
//! abort signal and `abort_grace` to wind down and return what it has. Idempotent tools
//! are retried after transient failures (at most `max_retries` times, the delay
//! quadrupling), each try with a fresh output sink; hooks and permission are not repeated.
//! `Ran` is the settled result: a status, the tool's result if any, and the error text.

use std::time::Duration;

use podcode_protocol::ToolResult;
use serde_json::Value;
use tokio::task::JoinError;

use super::state::CallState;
use super::{CallStatus, ToolRuntime};
use crate::texts;
use crate::tool::ToolError;
use crate::truncate::Truncated;

/// How one try ended.
enum Exec {
    Done(Result<ToolResult, ToolError>),
    Panicked(String),
    Stopped {
        status: CallStatus,
        partial: Option<ToolResult>,
    },
}

/// A call after execute: its status, what the tool returned (or had when it was stopped),
/// and the model-facing error text when it did not complete.
pub(super) struct Ran {
    pub status: CallStatus,
    pub result: ToolResult,
    pub error: Option<String>,
    pub attempts: u32,
    /// Set once after-hooks closed the output sink: `result.output` is then the text the
    /// model reads, and this says what truncation did.
    pub shaped: Option<Option<Truncated>>,
}

impl ToolRuntime {
    pub(super) async fn execute(&self, s: &CallState, mut args: Value) -> Ran {
        let spec = s.spec();
        let timeout = spec
            .timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(self.opts.default_timeout);
        // Only a call that may be retried needs its arguments again; any other call moves
        // them into its one try.
        let may_retry = spec.idempotent && self.opts.max_retries > 0;
        let mut attempts = 0;
        let exec = loop {
            attempts += 1;
            let this_try = if may_retry {
                args.clone()
            } else {
                std::mem::take(&mut args)
            };
            let exec = self.execute_once(s, this_try, timeout).await;
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
                && !s.abort.is_cancelled())
            {
                break exec;
            }
            tokio::time::sleep(self.opts.retry_backoff * 4u32.pow(attempts - 1)).await;
            s.reset_sink(self);
        };
        settle(exec, s.id(), timeout, spec.timeout_ms.is_some(), attempts)
    }

    async fn execute_once(&self, s: &CallState, args: Value, timeout: Duration) -> Exec {
        let (tool, task_ctx) = (s.tool().clone(), s.ctx.clone());
        let mut handle = tokio::spawn(async move { tool.execute(args, task_ctx).await });
        let status = tokio::select! {
            joined = &mut handle => {
                // A tool that honours its abort signal can finish in the same instant the
                // user aborts: that is still an aborted call, with what it returned.
                if s.user_abort.is_cancelled() {
                    let partial = match joined {
                        Ok(Ok(r)) => Some(r),
                        _ => None,
                    };
                    return Exec::Stopped { status: CallStatus::Aborted, partial };
                }
                return join_to_exec(joined);
            }
            _ = tokio::time::sleep(timeout) => CallStatus::TimedOut,
            _ = s.user_abort.cancelled() => CallStatus::Aborted,
        };
        // Let the tool wind down (bash kills its process group and returns what it had).
        s.abort.cancel();
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

/// Turns how the last try ended into a status and, unless it completed, the text the
/// model reads for it.
/// `own_timeout`: the limit came from the tool's own `timeout`, not `[tool] timeout`.
fn settle(exec: Exec, id: &str, timeout: Duration, own_timeout: bool, attempts: u32) -> Ran {
    let (status, result, error) = match exec {
        Exec::Done(Ok(r)) => (CallStatus::Completed, Some(r), None),
        Exec::Done(Err(e)) => {
            let (status, text) = match e {
                ToolError::Failed { message, .. } => {
                    (CallStatus::Failed, texts::failed_text(id, &message))
                }
                ToolError::Permission(text) => (CallStatus::Denied, text),
                ToolError::Aborted => (CallStatus::Aborted, texts::aborted_text(id)),
                ToolError::InvalidArguments(issues) => (
                    CallStatus::Failed,
                    texts::invalid_arguments_text(id, &issues),
                ),
            };
            (status, None, Some(text))
        }
        Exec::Panicked(msg) => (
            CallStatus::Failed,
            None,
            Some(texts::panicked_text(id, &msg)),
        ),
        Exec::Stopped { status, partial } => {
            let text = if status == CallStatus::TimedOut {
                texts::timeout_text(id, timeout.as_secs_f64(), own_timeout)
            } else {
                texts::aborted_text(id)
            };
            (status, partial, Some(text))
        }
    };
    Ran {
        status,
        result: result.unwrap_or_default(),
        error,
        attempts,
        shaped: None,
    }
}

fn join_to_exec(joined: Result<Result<ToolResult, ToolError>, JoinError>) -> Exec {
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
