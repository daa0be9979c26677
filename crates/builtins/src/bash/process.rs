//! Running one command: which shell, spawning it in its own process group with stdin
//! closed and stderr joined to stdout (one pipe, so the two interleave exactly in the
//! order the command wrote them), reading that pipe into `LiveOutput` until the shell
//! exits, and stopping the whole group on timeout or abort: SIGTERM, then SIGKILL for
//! whatever is still alive after a grace period. If the call itself is dropped (the
//! pipeline gave up on it) a guard SIGKILLs the group.
//!
//! After a normal exit, background jobs the command started (`cmd &`) are left running;
//! their output is read only while it keeps coming right after the exit (`DRAIN_IDLE`,
//! at most `DRAIN_MAX`), so a job that holds the pipe open never blocks the call.

use std::ffi::OsStr;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use podcode_tools::ToolError;
use tokio::io::AsyncReadExt;
use tokio::process::{ChildStdout, Command};
use tokio::time::{Instant, MissedTickBehavior};

use super::live::{LIVE_INTERVAL, LiveOutput};

/// After SIGTERM on timeout, how long the group gets before SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_secs(2);
/// The same after an abort: shorter, because the pipeline waits only ~3 s for the tool.
pub const ABORT_TERM_GRACE: Duration = Duration::from_secs(1);
/// After the shell exits, stop reading once no output came for this long…
const DRAIN_IDLE: Duration = Duration::from_millis(100);
/// …or after this long in total.
const DRAIN_MAX: Duration = Duration::from_secs(1);
const READ_BUF: usize = 64 * 1024;

/// Shells whose syntax is not POSIX `sh`: commands written for bash would break there.
const NON_POSIX_SHELLS: &[&str] = &[
    "fish",
    "nu",
    "nushell",
    "xonsh",
    "elvish",
    "pwsh",
    "powershell",
    "csh",
    "tcsh",
];

/// The shell commands run in: `$SHELL` when it is an absolute path to an executable
/// POSIX-style shell (bash, zsh, dash, ksh, sh…), else `/bin/bash`, else `/bin/sh`.
/// It is started as `<shell> -c <command>`: neither a login nor an interactive shell, so
/// no profile or rc file is read (beyond what the shell always reads, such as zsh's
/// `.zshenv` or `$BASH_ENV`).
pub fn pick_shell(env_shell: Option<&OsStr>, usable: impl Fn(&Path) -> bool) -> PathBuf {
    if let Some(shell) = env_shell.map(Path::new)
        && shell.is_absolute()
        && !shell
            .file_name()
            .and_then(OsStr::to_str)
            .is_some_and(|n| NON_POSIX_SHELLS.contains(&n))
        && usable(shell)
    {
        return shell.to_path_buf();
    }
    ["/bin/bash", "/bin/sh"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| usable(p))
        .unwrap_or_else(|| PathBuf::from("/bin/sh"))
}

/// An existing regular file with an execute bit.
pub fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

pub struct RunSpec {
    pub shell: PathBuf,
    pub command: String,
    pub dir: PathBuf,
    /// Variables to set (added or changed by `shell.env` hooks, or all of them).
    pub env_set: Vec<(String, String)>,
    /// Variables a hook removed from the inherited environment.
    pub env_remove: Vec<String>,
    pub timeout: Duration,
    /// The program and arguments that run `shell -c command` inside the sandbox; `None`
    /// runs the shell directly.
    pub sandboxed: Option<(std::ffi::OsString, Vec<std::ffi::OsString>)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Exited(ExitStatus),
    TimedOut,
    Aborted,
}

/// Kills the process group when dropped while armed.
struct GroupGuard {
    pgid: libc::pid_t,
    armed: bool,
}

impl GroupGuard {
    fn signal(&self, signal: libc::c_int) {
        // SAFETY: killpg has no memory-safety preconditions; a stale group id only yields ESRCH.
        unsafe {
            libc::killpg(self.pgid, signal);
        }
    }

    /// True while any process (possibly a zombie) is still in the group.
    fn alive(&self) -> bool {
        // SAFETY: as above; signal 0 only checks for existence.
        unsafe { libc::killpg(self.pgid, 0) == 0 }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            self.signal(libc::SIGKILL);
        }
    }
}

/// Runs the command to its end, streaming its output into `live`.
pub async fn run(
    spec: &RunSpec,
    live: &mut LiveOutput,
    abort: &tokio_util::sync::CancellationToken,
) -> Result<End, ToolError> {
    let mut cmd = match &spec.sandboxed {
        Some((program, args)) => {
            let mut cmd = Command::new(program);
            cmd.args(args);
            cmd
        }
        None => {
            let mut cmd = Command::new(&spec.shell);
            cmd.arg("-c").arg(&spec.command);
            cmd
        }
    };
    cmd.current_dir(&spec.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    for key in &spec.env_remove {
        cmd.env_remove(key);
    }
    cmd.envs(spec.env_set.iter().map(|(k, v)| (k, v)));
    // SAFETY: runs in the forked child before exec and only calls dup2, which is
    // async-signal-safe; it makes stderr the same pipe as stdout.
    unsafe {
        cmd.pre_exec(|| {
            if libc::dup2(1, 2) < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            }
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| ToolError::failed(spawn_error_text(&spec.shell, &spec.dir, &e)))?;
    let pgid = child.id().and_then(|id| libc::pid_t::try_from(id).ok());
    let Some(pgid) = pgid else {
        return Err(ToolError::failed(format!(
            "the shell {} exited before it could be watched",
            spec.shell.display()
        )));
    };
    let mut guard = GroupGuard { pgid, armed: true };
    let mut out = child.stdout.take();
    let mut buf = vec![0u8; READ_BUF];
    let mut status: Option<ExitStatus> = None;
    let deadline = tokio::time::sleep(spec.timeout);
    tokio::pin!(deadline);
    let mut tick = tokio::time::interval(LIVE_INTERVAL);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);

    let stop = loop {
        if status.is_some() {
            if out.is_some() {
                drain(&mut out, &mut buf, live, DRAIN_IDLE, DRAIN_MAX).await;
            }
            break None;
        }
        tokio::select! {
            read = read_some(&mut out, &mut buf) => match read {
                Some(n) => live.push(&buf[..n]),
                None => out = None,
            },
            exited = child.wait() => status = Some(exited.map_err(|e| ToolError::failed(format!("could not wait for the shell: {e}")))?),
            _ = &mut deadline => break Some(End::TimedOut),
            _ = abort.cancelled() => break Some(End::Aborted),
            _ = tick.tick() => live.send_if_due(),
        }
    };

    let Some(stop) = stop else {
        // Normal exit: background jobs it started may keep running.
        guard.armed = false;
        return Ok(End::Exited(status.unwrap_or_default()));
    };

    guard.signal(libc::SIGTERM);
    let grace = if stop == End::TimedOut {
        TERM_GRACE
    } else {
        ABORT_TERM_GRACE
    };
    let until = Instant::now() + grace;
    // Keep reading (the command may print on SIGTERM) until the shell is gone and either
    // the pipe closed or the group is empty, or the grace period is over.
    while Instant::now() < until && !(status.is_some() && (out.is_none() || !guard.alive())) {
        tokio::select! {
            read = read_some(&mut out, &mut buf) => match read {
                Some(n) => live.push(&buf[..n]),
                None => out = None,
            },
            exited = child.wait(), if status.is_none() => status = exited.ok(),
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
    }
    if guard.alive() {
        guard.signal(libc::SIGKILL);
    }
    if status.is_none() {
        let _ = tokio::time::timeout(Duration::from_secs(1), child.wait()).await;
    }
    drain(
        &mut out,
        &mut buf,
        live,
        Duration::from_millis(50),
        Duration::from_millis(300),
    )
    .await;
    guard.armed = false;
    Ok(stop)
}

/// Reads one chunk; `None` at end of output (or a read error). Never resolves once the
/// pipe is closed, so it can sit in a `select!` unconditionally.
async fn read_some(out: &mut Option<ChildStdout>, buf: &mut [u8]) -> Option<usize> {
    match out {
        Some(pipe) => match pipe.read(buf).await {
            Ok(0) | Err(_) => None,
            Ok(n) => Some(n),
        },
        None => std::future::pending().await,
    }
}

/// Reads what is left in the pipe after the shell is gone.
async fn drain(
    out: &mut Option<ChildStdout>,
    buf: &mut [u8],
    live: &mut LiveOutput,
    idle: Duration,
    max: Duration,
) {
    let end = Instant::now() + max;
    while let Some(pipe) = out.as_mut() {
        let wait_until = (Instant::now() + idle).min(end);
        match tokio::time::timeout_at(wait_until, pipe.read(buf)).await {
            Ok(Ok(n)) if n > 0 => live.push(&buf[..n]),
            Ok(_) => *out = None,
            Err(_) => break,
        }
    }
}

pub fn spawn_error_text(shell: &Path, dir: &Path, e: &io::Error) -> String {
    format!(
        "could not start the shell {} in {}: {e}",
        shell.display(),
        dir.display()
    )
}

/// `(exit code N)` / `(terminated by signal N)` for a failed command; `None` for success.
pub fn exit_note(status: ExitStatus) -> Option<String> {
    match (status.code(), status.signal()) {
        (Some(0), _) => None,
        (Some(code), _) => Some(format!("(exit code {code})")),
        (None, Some(signal)) => Some(format!("(terminated by signal {signal})")),
        (None, None) => Some("(exit status unknown)".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_choice_prefers_a_posix_shell_from_the_environment() {
        let all = |_: &Path| true;
        assert_eq!(
            pick_shell(Some(OsStr::new("/usr/bin/zsh")), all),
            PathBuf::from("/usr/bin/zsh")
        );
        assert_eq!(
            pick_shell(Some(OsStr::new("/usr/bin/fish")), all),
            PathBuf::from("/bin/bash")
        );
        assert_eq!(
            pick_shell(Some(OsStr::new("zsh")), all),
            PathBuf::from("/bin/bash")
        );
        assert_eq!(pick_shell(None, all), PathBuf::from("/bin/bash"));
        let no_bash = |p: &Path| p != Path::new("/bin/bash") && p != Path::new("/opt/missing/zsh");
        assert_eq!(
            pick_shell(Some(OsStr::new("/opt/missing/zsh")), no_bash),
            PathBuf::from("/bin/sh")
        );
        assert_eq!(pick_shell(None, |_| false), PathBuf::from("/bin/sh"));
    }

    #[test]
    fn spawn_errors_name_the_shell_and_the_directory() {
        let e = io::Error::from(io::ErrorKind::PermissionDenied);
        assert_eq!(
            spawn_error_text(Path::new("/bin/bash"), Path::new("/w"), &e),
            "could not start the shell /bin/bash in /w: permission denied"
        );
    }

    #[test]
    fn exit_notes() {
        assert_eq!(exit_note(ExitStatus::from_raw(0)), None);
        assert_eq!(
            exit_note(ExitStatus::from_raw(2 << 8)).as_deref(),
            Some("(exit code 2)")
        );
        assert_eq!(
            exit_note(ExitStatus::from_raw(9)).as_deref(),
            Some("(terminated by signal 9)")
        );
    }
}
