//! `ToolRuntime`: the one path every tool call takes, as named stages, each in its own
//! module and each short enough to read on one screen:
//!
//! 1. **resolve + parse** (`resolve`): the called name becomes one registered tool and the
//!    raw arguments one JSON value, each exactly once per call (`PreparedCall`).
//! 2. **validate** (`admit`): the tool's own validator or its JSON Schema, defaults filled.
//! 3. **before-hooks** (`admit`): may rewrite the arguments or block the call.
//! 4. **permission** (`admit`): tools that do not gate themselves are asked for by id.
//! 5. **execute** (`execute`): timeout, the user's abort, retries for idempotent tools;
//!    errors and panics become texts.
//! 6. **after-edit** (`output`): a completed call that changed files gets what `AfterEdit`
//!    says about them (diagnostics) appended to its output.
//!    **after-hooks** (`output`): see the result of a completed call as the model will read
//!    it (when a hook looks at results, stage 7 runs first and the hooks get its text).
//! 7. **truncate + spill** (`output`): keep the tool's end, spill the rest, tell the model.
//! 8. **record** (`record`): the call log's record (`CallLog`) and the `ToolStarted` / `ToolFinished` /
//!    `ToolFailed` events. This crate is the only writer of that row: calls the agent settles
//!    without running go through `ToolRuntime::record_settled`.
//!
//! A call that fails resolve or parse is recorded as started and ended at once; from
//! validate on, the call travels as a `CallState` (`state`) and any stage may stop it with
//! a status and model text, which goes straight to record. Every failure has its own
//! model-facing text (`texts`), so the model always gets an answer it can act on and the
//! process survives whatever a tool does (errors, panics, hangs).

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use podcode_protocol::{Event, new_id};
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::context::{CallIdentity, Shared};
use crate::hooks::ToolHook;
use crate::permission::{AskRequest, PermissionEngine, PermissionError};
use crate::records::Records;
use crate::registry::ToolRegistry;
use crate::truncate::clean_spill_dir;

mod admit;
mod execute;
mod output;
mod record;
mod request;
mod resolve;
mod state;

pub use request::{CallOutcome, CallRequest, CallStatus, EventSink, RawArgs, RuntimeOptions};
pub use resolve::PreparedCall;

use state::CallState;

/// Runs tool calls through the pipeline: resolve, validate, hooks, permission, execute (timeout,
/// abort, retries), truncate, record, events. One per session.
pub struct ToolRuntime {
    registry: RwLock<Arc<ToolRegistry>>,
    shared: Arc<Shared>,
    opts: RuntimeOptions,
}

impl ToolRuntime {
    /// A runtime over `registry`; starts a background sweep of spill files older than a week.
    pub fn new(
        registry: ToolRegistry,
        records: Records,
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
                records,
                events,
                sink: opts.events.clone(),
                permissions,
                hooks: std::sync::RwLock::new(Arc::new(hooks)),
                spill_dir: opts.spill_dir.clone(),
                sandbox: opts.sandbox.clone(),
            }),
            opts,
        }
    }

    /// Runs one call through every stage and returns what the model reads.
    pub async fn call(&self, req: CallRequest) -> CallOutcome {
        let start = Instant::now();
        let prepared = self.prepare(&req.tool, req.args);
        self.run(req.identity, prepared, req.abort, start).await
    }

    /// Runs a call its caller prepared (and looked at) with `prepare`: every stage after
    /// resolve and parse, which are not repeated.
    pub async fn call_prepared(
        &self,
        identity: CallIdentity,
        call: PreparedCall,
        abort: CancellationToken,
    ) -> CallOutcome {
        self.run(identity, call, abort, Instant::now()).await
    }

    async fn run(
        &self,
        mut identity: CallIdentity,
        call: PreparedCall,
        abort: CancellationToken,
        start: Instant,
    ) -> CallOutcome {
        if identity.call_id.is_empty() {
            identity.call_id = new_id("call");
        }
        // Resolve and parse failures come before the call is recorded as started: the row
        // needs a tool and arguments, and neither is known.
        let (tool, args) = match call.into_resolved() {
            Ok(resolved) => resolved,
            Err(unstarted) => {
                let out = CallOutcome::stopped(
                    &identity.call_id,
                    &unstarted.tool,
                    CallStatus::Failed,
                    unstarted.text,
                    start.elapsed(),
                );
                return self.record_unstarted(&identity, &unstarted.args, out);
            }
        };
        let state = CallState::new(self, identity, tool, &abort, start);
        self.record_start(state.ctx.identity(), state.id(), &args);
        let args = match self.admit(&state, args).await {
            Ok(args) => args,
            Err(stop) => return self.finish(state.stopped(stop)),
        };
        // After-hooks see the arguments the call ran with (opencode's `input.args`).
        let ran = self.execute(&state, args.clone()).await;
        let ran = self.after_edit(&state, ran).await;
        let ran = self.after_hooks(&state, &args, ran).await;
        let out = self.shape_output(state, ran);
        self.finish(out)
    }

    /// A receiver of the runtime's events (calls and the agent loop's own), when they are
    /// not sent to a sink (`RuntimeOptions::events`): a sink gets every event instead.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.shared.events.subscribe()
    }

    /// Whether the rules deny the tool `tool_id` outright (`PermissionEngine::denies_outright`
    /// of its `tool_permission`), so it is not offered to the model.
    pub fn denies_outright(&self, tool_id: &str) -> bool {
        self.shared
            .permissions
            .denies_outright(crate::permission::tool_permission(tool_id))
    }

    /// The current tool set.
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

    /// Whether some hook handles conversation hook `name` (see `ToolHook::handles_chat`).
    pub fn has_chat_hook(&self, name: &str) -> bool {
        self.shared.hooks().iter().any(|h| h.handles_chat(name))
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

    /// The limits and settings calls run with.
    pub fn options(&self) -> &RuntimeOptions {
        &self.opts
    }
}
