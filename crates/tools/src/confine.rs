//! `Confinement`: how one call's spawned process runs in the runtime's sandbox (the bash
//! tool and executable tools share it). The policy's writable roots are the call's
//! workspace, session directory and git root, the session's temp dir, and the sandbox's
//! own roots (the spill directory, configured ones); in a worktree session the user's
//! checkout is not among them (changes reach it only through `sync_to_main`). The
//! roots' `.git`, `.podcode` and `.opencode` stay read-only. The environment loses the
//! hidden variables (API keys, the server token) and gets `TMPDIR` pointed at the
//! session's temp dir. Each call gets its own denial log, which the helper's supervisor
//! fills with what the sandbox refused (`denials`).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use podcode_sandbox::{Policy, Sandbox};

use crate::context::ToolContext;
use crate::tool::ToolError;

/// How one call's spawned process is confined.
pub struct Confinement {
    /// The engine's sandbox (helper, mode, hidden variables).
    pub sandbox: Arc<Sandbox>,
    /// This call's rules: what it may write, whether it may use the network.
    pub policy: Policy,
    /// The session's own temp dir, writable by the process.
    pub temp: Option<PathBuf>,
}

impl Drop for Confinement {
    fn drop(&mut self) {
        if let Some(log) = &self.policy.denial_log {
            let _ = std::fs::remove_file(log);
        }
    }
}

impl Confinement {
    /// The call's confinement, or `None` when the runtime has no sandbox. A `full`
    /// sandbox still hides API keys, so it is returned too.
    pub fn for_call(ctx: &ToolContext) -> Result<Option<Self>, ToolError> {
        let Some(sandbox) = ctx.sandbox() else {
            return Ok(None);
        };
        let temp = if sandbox.is_active() {
            sandbox.session_temp(ctx.session_id()).map_err(|e| {
                ToolError::failed(format!(
                    "could not create the session's temp directory for the sandbox: {e}"
                ))
            })?
        } else {
            None
        };
        let id = ctx.identity();
        // A worktree session (its directory outside the user's checkout) writes its
        // worktree only: the checkout changes through `sync_to_main`, with its checks.
        let in_worktree = !id.directory.starts_with(&id.main_cwd);
        let roots = [
            (!in_worktree).then_some(id.main_cwd.as_path()),
            Some(id.directory.as_path()),
            Some(id.worktree.as_path()),
        ];
        let mut policy = sandbox.policy(roots.into_iter().flatten().chain(temp.as_deref()));
        if sandbox.is_active() {
            policy.denial_log = sandbox.denial_log(ctx.session_id());
            if let Some(log) = &policy.denial_log {
                let _ = std::fs::remove_file(log);
            }
        }
        Ok(Some(Confinement {
            sandbox: sandbox.clone(),
            policy,
            temp,
        }))
    }

    /// Adjusts the command's environment: hidden variables removed, `TMPDIR` set.
    pub fn apply_env(&self, set: &mut Vec<(String, String)>, remove: &mut Vec<String>) {
        let hidden = self.sandbox.hidden_env();
        set.retain(|(k, _)| !hidden.contains(k));
        for name in hidden {
            if !remove.contains(name) {
                remove.push(name.clone());
            }
        }
        if let Some(temp) = &self.temp {
            set.retain(|(k, _)| k != "TMPDIR");
            set.push(("TMPDIR".into(), temp.to_string_lossy().into_owned()));
        }
    }

    /// The program and arguments that run `program args…` in the sandbox; `None` in
    /// `full` mode (run it as it is).
    pub fn wrap(&self, program: &OsStr, args: &[OsString]) -> Option<(OsString, Vec<OsString>)> {
        if !self.sandbox.is_active() {
            return None;
        }
        Some(self.sandbox.wrap(&self.policy, program, args))
    }

    /// What the sandbox denied: what its supervisor logged, or (without a log) what a
    /// failed command's output says.
    pub fn denial(&self, output: &str, dir: &Path) -> Option<podcode_sandbox::Denial> {
        if !self.sandbox.is_active() {
            return None;
        }
        podcode_sandbox::denial_for(&self.policy, output, dir, 0)
    }

    /// Everything the sandbox's supervisor logged for this call, in order.
    pub fn denials(&self) -> Vec<podcode_sandbox::Denial> {
        match &self.policy.denial_log {
            Some(log) if self.sandbox.is_active() => podcode_sandbox::read_log(log),
            _ => Vec::new(),
        }
    }
}
