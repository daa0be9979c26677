//! The `bash` tool: runs one shell command for the model. This file owns the model-facing
//! contract (arguments, description, result texts) and the order of a call:
//!
//! 1. check the arguments (empty command, timeout clamped to 10 minutes);
//! 2. resolve `workdir` against the session directory, asking `external_directory` when it
//!    lies outside the workspace;
//! 3. ask `sensitive` when the command names files that may hold secrets (see
//!    `secrets`), then the `bash` permission: patterns and "always" families come from
//!    `permission::permission_patterns` (a prefix family like `git status *` for a simple
//!    command, exact texts for compound ones);
//! 4. build the environment (the process environment, adjusted by `shell.env` hooks, then
//!    by the sandbox: API keys removed, `TMPDIR` set to the session's temp dir);
//! 5. `process::run` spawns the shell in its own process group — through the sandbox
//!    helper unless the mode is `full` (`sandboxed`) — and streams the output
//!    through `live::LiveOutput` into the pipeline's truncating sink (which keeps the tail
//!    and spills the rest) and into throttled live metadata;
//! 6. when the sandbox refused a write (and the command failed) or a connection (whatever
//!    the exit status), as its supervisor logged it, the user is asked (permission
//!    `sandbox`) whether to run the command again outside it: also the way to allow a
//!    write into `.git`, `.podcode` or `.opencode`;
//! 7. the result's `output` is only a trailer (exit code, or the timeout/abort note): the
//!    pipeline puts it after the streamed output, so it survives tail truncation.

mod live;
mod permission;
mod process;
mod sandboxed;

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use podcode_protocol::{PermissionRequest, ToolResult, ToolSpec, Truncation};
use podcode_tools::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::workspace::Workspace;
use permission::{path_words, permission_patterns};

/// Timeout when the model gives none.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The longest a command may run; larger `timeout`s are clamped to this.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// The pipeline's own timeout for bash, above `MAX_TIMEOUT_MS` plus the kill grace, so the
/// tool always stops the command itself and returns its output.
const PIPELINE_TIMEOUT_MS: u64 = 11 * 60 * 1000;

pub const DESCRIPTION: &str = r#"Runs a shell command and returns its combined stdout and stderr, followed by "(exit code N)" when the command fails.
Use it for builds, tests, git, package managers and running programs, not for file work a dedicated tool does: read (not cat/head/tail), glob (not find/ls -R), grep (not grep/rg), edit, write or apply_patch (not sed/awk/echo >).
- Runs with `$SHELL -c` (non-interactive; /bin/bash or /bin/sh if $SHELL is not POSIX-style) in the session directory; set `workdir` rather than `cd dir && ...`. Quote paths with spaces.
- stdin is closed: pass flags such as --yes or -y.
- On timeout the command and every process it started are killed; you get the output so far.
- Long output is cut from the start: you see the last lines and the path of a file with all of it.
- Background jobs (`cmd &`) are not waited for and their later output is lost: redirect it, `cmd > log.txt 2>&1 &`.
- Commands usually run in a sandbox: writing outside the workspace and $TMPDIR (this session's temp dir, for scratch files), and network access, may fail with "Permission denied". The user is then asked whether to run the command outside the sandbox; do not work around a refusal another way.
- Give a short `description` (5-10 words) of what the command does; the user sees it.
Example: {"command": "cargo test -p core", "description": "Run the core crate's tests"}"#;

/// The arguments, as the model sends them.
#[derive(Debug, Deserialize, JsonSchema)]
struct Args {
    /// The shell command to run.
    command: String,
    /// Milliseconds; default 120000 (2 minutes), at most 600000 (10 minutes).
    #[serde(default)]
    timeout: Option<u64>,
    /// Where to run it, absolute or relative to the session directory (the default).
    #[serde(default)]
    workdir: Option<String>,
    /// What the command does in 5-10 words, shown to the user, e.g. "Run the unit tests".
    #[serde(default)]
    description: Option<String>,
}

pub struct BashTool {
    spec: ToolSpec,
}

impl BashTool {
    pub fn new() -> Self {
        let mut spec = ToolSpec::new("bash", DESCRIPTION, crate::params_schema::<Args>())
            .with_truncation(Truncation::Tail)
            .idempotent(false);
        spec.timeout_ms = Some(PIPELINE_TIMEOUT_MS);
        Self { spec }
    }
}

impl Default for BashTool {
    fn default() -> Self {
        Self::new()
    }
}

pub fn empty_command_text() -> String {
    r#"The command is empty. Pass the shell command to run in `command`, e.g. {"command": "ls -la"}."#.to_string()
}

pub fn missing_workdir_text(path: &std::path::Path) -> String {
    format!(
        "workdir {} does not exist or is not a directory. Use an existing directory, or leave workdir out to run in the session directory.",
        path.display()
    )
}

pub fn timeout_note(ms: u64) -> String {
    if ms < MAX_TIMEOUT_MS {
        format!(
            "Command timed out after {ms} ms and was terminated. If it needs more time, run it again with a larger timeout (at most {MAX_TIMEOUT_MS} ms)."
        )
    } else {
        format!(
            "Command timed out after {ms} ms and was terminated. Commands cannot run longer than that here; split the work into smaller steps, or ask the user to run it themselves."
        )
    }
}

pub fn abort_note() -> String {
    "Command was aborted by the user and terminated.".to_string()
}

pub const NO_OUTPUT: &str = "(no output)";

/// The timeout a call runs with: the default for none (or 0), clamped to the maximum.
pub fn effective_timeout_ms(requested: Option<u64>) -> u64 {
    match requested {
        None | Some(0) => DEFAULT_TIMEOUT_MS,
        Some(ms) => ms.min(MAX_TIMEOUT_MS),
    }
}

#[async_trait]
impl Tool for BashTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let args: Args = serde_json::from_value(args)
            .map_err(|e| ToolError::failed(format!("invalid arguments: {e}")))?;
        let command = args.command.trim();
        if command.is_empty() {
            return Err(ToolError::failed(empty_command_text()));
        }
        let description = args
            .description
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_string);
        let timeout_ms = effective_timeout_ms(args.timeout);

        let dir = match args
            .workdir
            .as_deref()
            .map(str::trim)
            .filter(|w| !w.is_empty())
        {
            None => ctx.directory().to_path_buf(),
            Some(raw) => {
                let resolved = Workspace::resolve(&ctx, raw);
                Workspace::ensure_access(&ctx, &resolved, false).await?;
                resolved.abs
            }
        };
        if !dir.is_dir() {
            return Err(ToolError::failed(missing_workdir_text(&dir)));
        }

        let secrets = secret_paths(command, &dir);
        if !secrets.is_empty() {
            ctx.ask(crate::secrets::request(
                &secrets,
                "the command names files that may hold keys, credentials or tokens",
            ))
            .await?;
        }
        let (patterns, always) = permission_patterns(command);
        ctx.ask(PermissionRequest {
            permission: "bash".into(),
            patterns,
            always,
            metadata: json!({ "command": command, "description": description, "workdir": dir }),
        })
        .await?;

        let (mut env_set, mut env_remove) = hooked_env(&ctx).await;
        let confinement = podcode_tools::Confinement::for_call(&ctx)?;
        if let Some(c) = &confinement {
            c.apply_env(&mut env_set, &mut env_remove);
        }
        let shell =
            process::pick_shell(std::env::var_os("SHELL").as_deref(), process::is_executable);
        let mut spec = process::RunSpec {
            sandboxed: confinement
                .as_ref()
                .and_then(|c| c.wrap(shell.as_os_str(), &["-c".into(), command.into()])),
            shell,
            command: command.to_string(),
            dir,
            env_set,
            env_remove,
            timeout: Duration::from_millis(timeout_ms),
        };
        let title = description
            .clone()
            .unwrap_or_else(|| command.lines().next().unwrap_or_default().to_string());
        if ctx.is_aborted() {
            return Err(ToolError::Aborted);
        }
        let mut live = live::LiveOutput::new(ctx.clone(), title.clone(), description.clone());
        live.send();
        let mut end = process::run(&spec, &mut live, ctx.abort()).await?;
        // The sandbox's own log says what it refused. A refused connection is asked
        // about even when the command exited 0 (`curl … | head`: the pipe's last command
        // decides the status); a refused write only when the command failed, since
        // programs probe for writable places and carry on.
        if let (process::End::Exited(status), Some(c)) = (end, &confinement)
            && let Some(denial) = c
                .denial(&live.tail_text(), &spec.dir)
                .filter(|d| !status.success() || matches!(d, podcode_sandbox::Denial::Network(_)))
        {
            match sandboxed::ask_escalation(&ctx, command, &denial).await {
                Ok(()) => {
                    live.push(sandboxed::rerun_banner(&denial).as_bytes());
                    spec.sandboxed = None;
                    end = process::run(&spec, &mut live, ctx.abort()).await?;
                }
                // The call ends as a rejection (the output so far stays visible).
                Err(ToolError::Permission(why)) => {
                    return Err(ToolError::Permission(sandboxed::kept_note(&denial, &why)));
                }
                Err(e) => return Err(e),
            }
        }
        live.send();

        let (note, exit_code) = match end {
            process::End::Exited(status) => (process::exit_note(status), status.code()),
            process::End::TimedOut => (Some(timeout_note(timeout_ms)), None),
            process::End::Aborted => (Some(abort_note()), None),
        };
        let output = match note {
            Some(note) => note,
            None if live.total() == 0 => NO_OUTPUT.to_string(),
            None => String::new(),
        };
        // `exit` and `output` (the last lines) are the keys opencode's bash gives hooks.
        Ok(ToolResult::text(output)
            .with_title(title)
            .with_metadata(json!({
                "exit_code": exit_code,
                "description": description,
                "exit": exit_code,
                "output": live.preview(),
            })))
    }
}

/// The files a command names that may hold secrets, as absolute paths: each word that may
/// be a path (`~` and `$HOME` expanded, relative ones taken from `dir`) is classified.
/// A command can always hide a path from this (a variable, a `$(…)`); it catches the
/// plain `cat ~/.ssh/id_rsa`, not a determined script.
fn secret_paths(command: &str, dir: &std::path::Path) -> Vec<String> {
    let home = std::env::var("HOME").unwrap_or_default();
    let mut out: Vec<String> = Vec::new();
    for word in path_words(command) {
        let mut expanded = word.clone();
        for prefix in ["~/", "$HOME/", "${HOME}/"] {
            if let Some(rest) = word.strip_prefix(prefix)
                && !home.is_empty()
            {
                expanded = format!("{}/{rest}", home.trim_end_matches('/'));
            }
        }
        let path = dir.join(&expanded);
        if crate::secrets::classify(&path).is_some() {
            let abs = path.to_string_lossy().into_owned();
            if !out.contains(&abs) {
                out.push(abs);
            }
        }
    }
    out
}

/// The command's environment: this process's, adjusted by `shell.env` hooks. Returned as
/// the variables to set and those to remove, so variables that are not UTF-8 (which the
/// hooks cannot see) are still inherited untouched.
async fn hooked_env(ctx: &ToolContext) -> (Vec<(String, String)>, Vec<String>) {
    let original: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let mut env = original.clone();
    ctx.shell_env(&mut env).await;
    let remove = original
        .keys()
        .filter(|k| !env.contains_key(*k))
        .cloned()
        .collect();
    let set = env
        .into_iter()
        .filter(|(k, v)| original.get(k) != Some(v))
        .collect();
    (set, remove)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_default_and_clamp() {
        assert_eq!(effective_timeout_ms(None), 120_000);
        assert_eq!(effective_timeout_ms(Some(0)), 120_000);
        assert_eq!(effective_timeout_ms(Some(5_000)), 5_000);
        assert_eq!(effective_timeout_ms(Some(3_600_000)), 600_000);
    }

    #[test]
    fn notes_are_pinned() {
        assert_eq!(
            timeout_note(5000),
            "Command timed out after 5000 ms and was terminated. If it needs more time, run it again with a larger timeout (at most 600000 ms)."
        );
        assert_eq!(
            timeout_note(600_000),
            "Command timed out after 600000 ms and was terminated. Commands cannot run longer than that here; split the work into smaller steps, or ask the user to run it themselves."
        );
        assert_eq!(
            abort_note(),
            "Command was aborted by the user and terminated."
        );
        assert_eq!(
            empty_command_text(),
            r#"The command is empty. Pass the shell command to run in `command`, e.g. {"command": "ls -la"}."#
        );
    }

    #[test]
    fn spec_is_tail_truncated_self_gated_and_outlives_its_own_timeout() {
        let tool = BashTool::new();
        let spec = tool.spec();
        assert_eq!(spec.id, "bash");
        assert_eq!(spec.truncation, Truncation::Tail);
        assert!(!spec.idempotent);
        assert!(tool.gates_itself());
        assert!(spec.timeout_ms.is_some_and(|t| t > MAX_TIMEOUT_MS + 5_000));
        let props = &spec.parameters["properties"];
        for key in ["command", "timeout", "workdir", "description"] {
            assert!(props[key]["description"].is_string(), "{key}");
        }
        assert_eq!(spec.parameters["required"], json!(["command"]));
    }
}
