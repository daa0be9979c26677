//! Stages 2 to 4, everything that may refuse a call before its tool runs: validate the
//! arguments (the tool's own validator, else its JSON Schema with defaults filled in),
//! let before-hooks rewrite them or block the call, refuse a tool the rules deny outright,
//! then ask permission for tools that do not gate themselves. Each stage takes the arguments by value and hands them on; a
//! refusal is a `Stop` with its own model-facing text.

use podcode_protocol::PermissionRequest;
use serde_json::{Value, json};

use super::state::{CallState, Stop};
use super::{CallStatus, ToolRuntime};
use crate::hooks::BeforeDecision;
use crate::texts;

impl ToolRuntime {
    /// Validate ▸ before-hooks ▸ permission; returns the arguments `execute` gets.
    pub(super) async fn admit(&self, s: &CallState, args: Value) -> Result<Value, Stop> {
        let args = validate(s, args).await?;
        let args = self.before_hooks(s, args).await?;
        self.refuse_denied_outright(s)?;
        permission(s, &args).await?;
        Ok(args)
    }

    /// A tool the rules deny for every pattern is refused before it runs, also one that
    /// gates itself: its own ask may come after work a denied tool must not do at all
    /// (`webfetch` resolves the host name first, and a DNS lookup can carry data out).
    fn refuse_denied_outright(&self, s: &CallState) -> Result<(), Stop> {
        if !self.denies_outright(s.id()) {
            return Ok(());
        }
        let denied = crate::permission::PermissionError::Denied {
            permission: crate::permission::tool_permission(s.id()).to_string(),
            patterns: vec!["*".into()],
        };
        Err(Stop::new(CallStatus::Denied, denied.to_string()))
    }

    /// Every hook sees the arguments the previous one left; a failing hook is a warning
    /// for the user, a blocking one ends the call with its reason for the model.
    async fn before_hooks(&self, s: &CallState, mut args: Value) -> Result<Value, Stop> {
        for hook in s.hooks.iter() {
            match hook.before(&s.hook_call, &mut args).await {
                Ok(BeforeDecision::Continue) => {}
                Ok(BeforeDecision::Block(reason)) => {
                    let text = texts::blocked_by_hook_text(s.id(), &reason);
                    return Err(Stop::new(CallStatus::Failed, text));
                }
                Err(e) => self.shared.warn(format!(
                    "tool.execute.before hook {} failed: {e}",
                    hook.name()
                )),
            }
        }
        Ok(args)
    }
}

/// A tool with its own validator (a plugin's Zod schema) uses it; any other tool is checked
/// against its compiled parameter schema, which fills in defaults first.
async fn validate(s: &CallState, args: Value) -> Result<Value, Stop> {
    let validated = match s.tool().validate(&args).await {
        Some(r) => r,
        None => s.entry().schema().validate(args),
    };
    validated.map_err(|issues| {
        Stop::new(
            CallStatus::Failed,
            texts::invalid_arguments_text(s.id(), &issues),
        )
    })
}

/// Built-ins carry their gate inside `execute`; every other tool is gated by its id with
/// the pattern `*`, and the ask shows the arguments it would run with.
async fn permission(s: &CallState, args: &Value) -> Result<(), Stop> {
    if s.tool().gates_itself() {
        return Ok(());
    }
    let request = PermissionRequest {
        permission: s.id().to_string(),
        patterns: vec!["*".into()],
        always: vec!["*".into()],
        metadata: json!({ "args": args }),
    };
    s.ctx
        .ask(request)
        .await
        .map_err(|e| Stop::new(CallStatus::Denied, e.to_string()))
}
