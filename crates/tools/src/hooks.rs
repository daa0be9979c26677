//! The hook interface the pipeline calls around every tool call. Plugins fill it in
//! (`tool.execute.before`, `tool.execute.after`, `permission.ask`); here it is only the
//! contract. A hook that fails is reported to the user as a warning and otherwise ignored:
//! a broken hook must never break the call. A hook that wants to stop a call returns
//! `BeforeDecision::Block`, whose reason the model reads.

use async_trait::async_trait;
use podcode_protocol::{PermissionAction, PermissionRequest, ToolResult};
use serde_json::Value;

/// Which call a hook is looking at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCall {
    /// The tool's id.
    pub tool: String,
    /// The session the call belongs to.
    pub session_id: String,
    /// The call's id.
    pub call_id: String,
}

/// What a `tool.execute.before` hook decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BeforeDecision {
    /// Run the call (with the arguments as the hook left them).
    Continue,
    /// Do not run it; the text is the model-facing reason.
    Block(String),
}

/// Code run around every tool call (plugins' `tool.execute.before`/`after`).
#[async_trait]
pub trait ToolHook: Send + Sync {
    /// Names the hook in warnings, e.g. the plugin file it came from.
    fn name(&self) -> &str;

    /// May rewrite `args` in place or block the call.
    async fn before(&self, _call: &HookCall, _args: &mut Value) -> Result<BeforeDecision, String> {
        Ok(BeforeDecision::Continue)
    }

    /// Whether `after` looks at results at all. Only then does the pipeline close the
    /// call's output before the hooks run, so that they read what the model will read.
    fn sees_results(&self) -> bool {
        true
    }

    /// Sees the result of a completed call — `output` is the text the model will read (what
    /// the tool streamed and returned, cut to the limits with the note on the rest) — and
    /// may rewrite it. `args` are the arguments the call ran with.
    async fn after(
        &self,
        _call: &HookCall,
        _args: &Value,
        _result: &mut ToolResult,
    ) -> Result<(), String> {
        Ok(())
    }

    /// `shell.env`: may add or change environment variables for commands a tool runs.
    async fn shell_env(
        &self,
        _call: &HookCall,
        _env: &mut std::collections::BTreeMap<String, String>,
    ) -> Result<(), String> {
        Ok(())
    }

    /// Whether `chat` does anything for hook `name`, so a caller can skip building a costly
    /// `output` (the whole conversation, for `experimental.chat.messages.transform`).
    fn handles_chat(&self, _name: &str) -> bool {
        false
    }

    /// Conversation hooks around model requests (`chat.message` on a new user message,
    /// `chat.params` and `experimental.chat.system.transform` before every request): gets
    /// `output`, returns it, possibly changed.
    async fn chat(&self, _name: &str, _input: &Value, output: Value) -> Result<Value, String> {
        Ok(output)
    }

    /// `permission.ask`: may settle an ask before the user is prompted.
    async fn permission(
        &self,
        _call: &HookCall,
        _request: &PermissionRequest,
    ) -> Result<Option<PermissionAction>, String> {
        Ok(None)
    }
}

/// Runs after a completed call that changed files through the journal (`write`, `edit`,
/// `apply_patch`, a plugin's `recordChange`…): what it returns is appended to the text the
/// model reads — a formatter's note, a language server's diagnostics. It may change the
/// files again through `ctx` (journaled under the same call). It never fails a call.
#[async_trait]
pub trait AfterEdit: Send + Sync {
    /// `files`: absolute paths the call changed, each once (a deleted one too).
    async fn edited(
        &self,
        files: &[std::path::PathBuf],
        ctx: &crate::ToolContext,
    ) -> Option<String>;
}
