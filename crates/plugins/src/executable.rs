//! Executable tools: any program with the run bit in a tools folder. Podcode runs
//! `<file> describe` once (cached) and reads a JSON manifest from stdout — one tool
//! `{description, parameters, id?, truncation?, idempotent?, timeout?}` (id defaults to the
//! file name) or an array of them. A call runs `<file> run <id>` in the session directory
//! with the validated arguments as JSON on stdin and `PODCODE_*` context variables; stdout,
//! streamed into the call's truncating sink, is the output. A call runs in the runtime's
//! sandbox (`Confinement`), and a failure the sandbox caused says which setting allows it.
//! `describe` runs in the same sandbox with the workspace writable (`DescribeSandbox`).
//! Exit status 0 is success;
//! anything else fails the call with the tail of stderr. Abort and timeout kill the
//! program's whole process group.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use async_trait::async_trait;
use podcode_protocol::{ToolResult, ToolSpec, Truncation};
use podcode_tools::{Tool, ToolContext, ToolError};
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

const DESCRIBE_TIMEOUT: Duration = Duration::from_secs(10);
const STDERR_TAIL: usize = 4096;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    #[serde(default)]
    id: Option<String>,
    description: String,
    #[serde(default = "empty_object_schema")]
    parameters: Value,
    #[serde(default)]
    truncation: Truncation,
    #[serde(default)]
    idempotent: bool,
    /// Seconds.
    #[serde(default)]
    timeout: Option<u64>,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ManifestDoc {
    One(Manifest),
    Many(Vec<Manifest>),
}

/// Where `describe` runs: the sandbox of executable tools and the directories it may write
/// (the workspace), so describing a tool is confined as calling it is.
#[derive(Clone)]
pub struct DescribeSandbox {
    /// The executable tools' sandbox.
    pub sandbox: std::sync::Arc<podcode_sandbox::Sandbox>,
    /// Directories `describe` may write (the workspace).
    pub writable: Vec<PathBuf>,
}

/// A spawn's denial log, removed when the spawn is done with.
struct DenialLog(Option<PathBuf>);

impl Drop for DenialLog {
    fn drop(&mut self) {
        if let Some(log) = &self.0 {
            let _ = std::fs::remove_file(log);
        }
    }
}

/// Runs `<file> describe` and turns its manifest into tool specs.
pub async fn describe_executable(file: &Path) -> Result<Vec<ToolSpec>, String> {
    describe_executable_in(file, None).await
}

/// `describe_executable` in `sandbox` (`None`: unconfined).
pub async fn describe_executable_in(
    file: &Path,
    sandbox: Option<&DescribeSandbox>,
) -> Result<Vec<ToolSpec>, String> {
    let describe: Vec<std::ffi::OsString> = vec!["describe".into()];
    let active = sandbox.filter(|s| s.sandbox.is_active());
    let temp = match active {
        Some(s) => s
            .sandbox
            .session_temp("describe")
            .map_err(|e| format!("could not create the sandbox's temp directory: {e}"))?,
        None => None,
    };
    let policy = active.map(|s| {
        let mut p = s.sandbox.policy(
            s.writable
                .iter()
                .map(PathBuf::as_path)
                .chain(temp.as_deref()),
        );
        // What the sandbox refused, from the sandbox itself (see `DenialLog`).
        p.denial_log = s.sandbox.denial_log("describe");
        p
    });
    let _log = DenialLog(policy.as_ref().and_then(|p| p.denial_log.clone()));
    let (program, argv) = match (active, &policy) {
        (Some(s), Some(p)) => s.sandbox.wrap(p, file.as_os_str(), &describe),
        _ => (file.as_os_str().to_os_string(), describe),
    };
    let mut cmd = Command::new(&program);
    if let Some(s) = sandbox {
        for name in s.sandbox.hidden_env() {
            cmd.env_remove(name);
        }
    }
    if let Some(temp) = &temp {
        cmd.env("TMPDIR", temp);
    }
    cmd.args(&argv)
        .env("PODCODE_TOOL_ACTION", "describe")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(dir) = file.parent() {
        cmd.current_dir(dir);
    }
    let child = podcode_sandbox::retry_while_busy(|| cmd.spawn())
        .map_err(|e| format!("could not run `{} describe`: {e}", file.display()))?;
    let out = tokio::time::timeout(DESCRIBE_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| {
            format!(
                "`{} describe` did not finish within 10 seconds",
                file.display()
            )
        })?
        .map_err(|e| format!("`{} describe` failed: {e}", file.display()))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let mut message = format!(
            "`{} describe` exited with {}: {}",
            file.display(),
            out.status,
            stderr.trim()
        );
        let dir = file.parent().unwrap_or(Path::new("/"));
        if let (Some(s), Some(p)) = (active, &policy)
            && let Some(denial) = podcode_sandbox::denial_for(p, &stderr, dir, 0)
        {
            message.push('\n');
            message.push_str(&podcode_sandbox::denied_note(
                s.sandbox.mode(),
                &denial,
                false,
            ));
        }
        return Err(message);
    }
    let doc: ManifestDoc = serde_json::from_slice(&out.stdout).map_err(|e| {
        format!(
            "`{} describe` printed an invalid manifest ({e}); expected {{\"description\": ..., \"parameters\": <JSON Schema>}} or an array of them",
            file.display()
        )
    })?;
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (manifests, single) = match doc {
        ManifestDoc::One(m) => (vec![m], true),
        ManifestDoc::Many(v) => (v, false),
    };
    manifests
        .into_iter()
        .map(|m| {
            let id = match (m.id, single) {
                (Some(id), _) => id,
                (None, true) => stem.clone(),
                (None, false) => {
                    return Err(format!(
                        "`{} describe`: every tool in an array needs an \"id\"",
                        file.display()
                    ));
                }
            };
            let mut spec = ToolSpec::new(id, m.description, m.parameters)
                .with_truncation(m.truncation)
                .idempotent(m.idempotent);
            spec.timeout_ms = m.timeout.map(|s| s * 1000);
            Ok(spec)
        })
        .collect()
}

/// One tool of an executable: a call runs `<file> run <id>` with the arguments on stdin.
pub struct ExecutableTool {
    spec: ToolSpec,
    file: PathBuf,
}

impl ExecutableTool {
    /// The tool described by `spec`, run from `file`.
    pub fn new(spec: ToolSpec, file: PathBuf) -> Self {
        Self { spec, file }
    }
}

#[async_trait]
impl Tool for ExecutableTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let id = ctx.identity();
        let args_run: Vec<std::ffi::OsString> = vec!["run".into(), self.spec.id.clone().into()];
        let confinement = podcode_tools::Confinement::for_call(&ctx)?;
        let (program, argv) = confinement
            .as_ref()
            .and_then(|c| c.wrap(self.file.as_os_str(), &args_run))
            .unwrap_or_else(|| (self.file.clone().into_os_string(), args_run));
        let mut cmd = Command::new(&program);
        cmd.args(&argv)
            .current_dir(ctx.directory())
            .env("PODCODE_TOOL_ACTION", "run")
            .env("PODCODE_TOOL_ID", &self.spec.id)
            .env("PODCODE_SESSION_ID", &id.session_id)
            .env("PODCODE_MESSAGE_ID", &id.message_id)
            .env("PODCODE_CALL_ID", &id.call_id)
            .env("PODCODE_AGENT", &id.agent)
            .env("PODCODE_DIRECTORY", &id.directory)
            .env("PODCODE_WORKTREE", &id.worktree)
            .env("PODCODE_MAIN_CWD", &id.main_cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(c) = &confinement {
            for name in c.sandbox.hidden_env() {
                cmd.env_remove(name);
            }
            if let Some(temp) = &c.temp {
                cmd.env("TMPDIR", temp);
            }
        }
        let mut child = podcode_sandbox::retry_while_busy(|| cmd.spawn()).map_err(|e| {
            ToolError::failed(format!("could not start {}: {e}", self.file.display()))
        })?;
        let pgid = child.id();
        let (Some(mut stdin), Some(mut stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(ToolError::failed("could not open the tool's pipes"));
        };
        let input = serde_json::to_vec(&args).unwrap_or_default();
        // A tool that never reads stdin must not block us: write in the background.
        tokio::spawn(async move {
            let _ = stdin.write_all(&input).await;
        });
        let err_task = tokio::spawn(async move {
            let mut tail: VecDeque<u8> = VecDeque::new();
            let mut buf = [0u8; 8192];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                tail.extend(&buf[..n]);
                let excess = tail.len().saturating_sub(STDERR_TAIL);
                tail.drain(..excess);
            }
            String::from_utf8_lossy(&tail.into_iter().collect::<Vec<_>>())
                .trim()
                .to_string()
        });
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            tokio::select! {
                read = stdout.read(&mut buf) => match read {
                    Ok(0) | Err(_) => break,
                    Ok(n) => ctx.write_output(&buf[..n]),
                },
                _ = ctx.abort().cancelled() => {
                    kill_group(pgid);
                    let _ = child.wait().await;
                    return Err(ToolError::Aborted);
                }
            }
        }
        let status = tokio::select! {
            s = child.wait() => s.map_err(|e| ToolError::failed(e.to_string()))?,
            _ = ctx.abort().cancelled() => {
                kill_group(pgid);
                return Err(ToolError::Aborted);
            }
        };
        let stderr = err_task.await.unwrap_or_default();
        if status.success() {
            return Ok(ToolResult::default());
        }
        let why = match status.code() {
            Some(code) => format!("exited with status {code}"),
            None => "was killed by a signal".to_string(),
        };
        let mut message = if stderr.is_empty() {
            why
        } else {
            format!("{stderr} ({why})")
        };
        if let Some(c) = &confinement
            && let Some(denial) = c.denial(&stderr, ctx.directory())
        {
            message.push('\n');
            message.push_str(&podcode_sandbox::denied_note(c.policy.mode, &denial, false));
        }
        Err(ToolError::failed(message))
    }
}

fn kill_group(pgid: Option<u32>) {
    if let Some(pid) = pgid {
        // SAFETY: killpg only sends a signal; a stale pgid at worst fails with ESRCH.
        unsafe {
            libc::killpg(pid as libc::pid_t, libc::SIGKILL);
        }
    }
}
