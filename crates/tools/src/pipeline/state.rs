//! `CallState`: one call in flight once it is resolved and parsed, carried from stage to
//! stage. It holds the resolved tool, the context the tool runs with, the output sink the
//! context streams into, the two abort signals and the hooks the call started with (a
//! reload mid-call does not change them). `Stop` is how a stage ends a call early.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use podcode_protocol::ToolSpec;
use tokio_util::sync::CancellationToken;

use super::resolve::ResolvedTool;
use super::{CallOutcome, CallStatus, ToolRuntime};
use crate::context::{CallIdentity, ToolContext};
use crate::hooks::{HookCall, ToolHook};
use crate::registry::RegisteredTool;
use crate::tool::Tool;
use crate::truncate::OutputSink;

/// A stage's early end: the call's status and what the model reads.
pub(super) struct Stop {
    pub status: CallStatus,
    pub text: String,
}

impl Stop {
    pub fn new(status: CallStatus, text: String) -> Self {
        Self { status, text }
    }
}

pub(super) struct CallState {
    pub start: Instant,
    pub tool: ResolvedTool,
    pub ctx: ToolContext,
    /// Shared with `ctx`; replaced by a fresh sink before a retry, taken at the end.
    pub sink: Arc<Mutex<Option<OutputSink>>>,
    /// Fires on the user's abort or a timeout; the tool sees it as `ctx.abort()`.
    pub abort: CancellationToken,
    /// The caller's abort alone: it tells an abort from a timeout.
    pub user_abort: CancellationToken,
    pub hooks: Arc<Vec<Arc<dyn ToolHook>>>,
    pub hook_call: HookCall,
}

impl CallState {
    pub fn new(
        rt: &ToolRuntime,
        identity: CallIdentity,
        tool: ResolvedTool,
        user_abort: &CancellationToken,
        start: Instant,
    ) -> Self {
        let abort = user_abort.child_token();
        let id = tool.entry().id().to_string();
        let sink = Arc::new(Mutex::new(Some(new_sink(rt, &tool, &identity.call_id))));
        let ctx = ToolContext::new(identity, id, abort.clone(), rt.shared.clone(), sink.clone());
        let hook_call = ctx.hook_call();
        Self {
            start,
            tool,
            ctx,
            sink,
            abort,
            user_abort: user_abort.clone(),
            hooks: rt.shared.hooks(),
            hook_call,
        }
    }

    pub fn entry(&self) -> &RegisteredTool {
        self.tool.entry()
    }

    pub fn tool(&self) -> &Arc<dyn Tool> {
        &self.entry().tool
    }

    pub fn spec(&self) -> &ToolSpec {
        self.entry().tool.spec()
    }

    pub fn id(&self) -> &str {
        &self.spec().id
    }

    /// Puts a fresh, empty sink in place, so a retried attempt starts its output anew.
    pub fn reset_sink(&self, rt: &ToolRuntime) {
        if let Ok(mut s) = self.sink.lock() {
            *s = Some(new_sink(rt, &self.tool, self.ctx.call_id()));
        }
    }

    /// The outcome of a call a stage stopped before its tool ran.
    pub fn stopped(&self, stop: Stop) -> CallOutcome {
        CallOutcome::stopped(
            self.ctx.call_id(),
            self.id(),
            stop.status,
            stop.text,
            self.run_time(),
        )
    }

    /// Wall time since the call started, less the time it waited for permission answers.
    pub fn run_time(&self) -> std::time::Duration {
        self.start.elapsed().saturating_sub(self.ctx.waited())
    }
}

fn new_sink(rt: &ToolRuntime, tool: &ResolvedTool, call_id: &str) -> OutputSink {
    OutputSink::new(
        tool.entry().tool.spec().truncation,
        rt.opts.max_lines,
        rt.opts.max_bytes,
        rt.opts.spill_dir.join(format!("{call_id}.txt")),
    )
}
