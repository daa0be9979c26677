//! The helper: the small program a sandboxed command is started through. `podcode
//! __sandbox-exec --policy <json> -- CMD ARGS…` (or the `podcode-sandbox-exec` binary with
//! the same arguments) parses the policy and runs CMD (its argv exactly as given) so that
//! it and everything it starts are confined and cannot lift any of it:
//!
//! 1. namespaces (`namespaces`): a mount namespace where `.git`, `.podcode`, `.opencode`
//!    (and a worktree's git dirs) are read-only, and a PID namespace with its own `/proc`,
//!    so no process outside the sandbox (Podcode's, holding the API keys) can be seen;
//! 2. Landlock: read and execute everywhere; write (create, delete, rename, truncate) only
//!    beneath the policy's writable roots and a few device files; with the network off,
//!    TCP bind and connect are refused too (Landlock ABI 4 and later);
//! 3. seccomp (`notify`): with the network off, `socket()` for IPv4 and IPv6 and
//!    `io_uring` fail with EACCES (Unix sockets keep working); with a denial log, every
//!    refused write and socket is recorded by the supervisor;
//! 4. no_new_privs: setuid programs cannot regain rights.
//!
//! Process shape: the helper forks the supervisor (`supervise`, PID 1 of the new PID
//! namespace), which restricts itself, forks CMD (inheriting every restriction) and
//! answers the seccomp notifications. The helper waits only for CMD's exit status and
//! exits with it; the supervisor stays until CMD's background jobs are gone too. On
//! failure the helper exits with 126 (sandbox could not be set up) or 127 (CMD not
//! found), printing why on stderr, which the caller shows as the command's output.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};

use crate::policy::{Mode, Policy, WRITABLE_DEVICES};

/// The hidden subcommand of the `podcode` binary that runs the helper.
pub const HELPER_SUBCOMMAND: &str = "__sandbox-exec";

/// The small helper program installed beside `podcode` (same arguments as
/// `podcode __sandbox-exec`). Starting it costs a fraction of starting the whole `podcode`
/// binary, whose loader has to relocate every page of a large program before `main`
/// (measured: +5 ms per call with a debug `podcode` as helper, +0.7 ms with this one).
pub const HELPER_BINARY: &str = "podcode-sandbox-helper";

/// The helper to start for the `podcode` binary at `exe`: the small `HELPER_BINARY`
/// beside it when it is there, else `exe` itself (run as `exe __sandbox-exec …`).
pub fn helper_beside(exe: &std::path::Path) -> std::path::PathBuf {
    let small = exe.with_file_name(HELPER_BINARY);
    if small.is_file() {
        small
    } else {
        exe.to_path_buf()
    }
}

/// `main` of a helper binary: its arguments, with or without the `__sandbox-exec`
/// subcommand first (`Sandbox::wrap` passes it, so any helper takes the same command
/// line), go to `run_helper`.
pub fn helper_main() -> ! {
    let mut args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if args.first().is_some_and(|a| a == HELPER_SUBCOMMAND) {
        args.remove(0);
    }
    run_helper(&args)
}

/// The Landlock ABI whose rights Podcode asks for; older kernels get what they support
/// (best effort), newer rights are not needed.
const TARGET_ABI: ABI = ABI::V4;

/// Exit status when the sandbox could not be set up (like a shell's "cannot execute").
pub const EXIT_SETUP_FAILED: i32 = 126;
/// `__sandbox-exec --probe`: exits 0 when this system gives the namespaces the sandbox
/// uses (see `KernelSupport::probe_namespaces`), `PROBE_NO_NAMESPACES` when it gives
/// none, `PROBE_NO_PROC` when a fresh `/proc` cannot be mounted.
pub const PROBE_FLAG: &str = "--probe";
/// `--probe` exit status: this system gives neither mount nor PID namespaces.
pub const PROBE_NO_NAMESPACES: i32 = 2;
/// `--probe` exit status: the namespaces work but a fresh `/proc` cannot be mounted.
pub const PROBE_NO_PROC: i32 = 3;

fn probe() -> ! {
    match crate::namespaces::enter(&[], &[], None) {
        Ok(i) if i.pid => {}
        Ok(_) => std::process::exit(PROBE_NO_NAMESPACES),
        Err(_) => std::process::exit(PROBE_NO_NAMESPACES),
    }
    // SAFETY: single-threaded; the child only mounts and exits.
    match unsafe { libc::fork() } {
        -1 => std::process::exit(PROBE_NO_NAMESPACES),
        0 => std::process::exit(if crate::namespaces::mount_proc().is_ok() {
            0
        } else {
            PROBE_NO_PROC
        }),
        pid => {
            let mut st = 0;
            // SAFETY: waits for our own child.
            unsafe { libc::waitpid(pid, &mut st, 0) };
            std::process::exit(if libc::WIFEXITED(st) {
                libc::WEXITSTATUS(st)
            } else {
                PROBE_NO_PROC
            })
        }
    }
}

/// Exit status when the command does not exist.
pub const EXIT_NOT_FOUND: i32 = 127;

/// Why the helper could not set up the sandbox; it prints this and exits with `EXIT_SETUP_FAILED`.
#[derive(Debug, thiserror::Error)]
pub enum HelperError {
    /// The helper's command line is malformed.
    #[error("usage: {HELPER_SUBCOMMAND} --policy <json> -- <command> [args…]")]
    Usage,
    /// `--policy` is not a policy the engine would write.
    #[error("the sandbox policy is not valid JSON: {0}")]
    Policy(#[from] serde_json::Error),
    /// The kernel refused the Landlock rules.
    #[error("could not apply the Landlock file rules: {0}")]
    Landlock(#[from] landlock::RulesetError),
    /// The seccomp filter could not be compiled for this architecture.
    #[error("could not build the seccomp network filter: {0}")]
    SeccompBuild(#[from] seccompiler::BackendError),
    /// The kernel refused the seccomp filter.
    #[error("could not install the seccomp network filter: {0}")]
    Seccomp(#[from] seccompiler::Error),
}

/// Parses `--policy <json> -- CMD ARGS…` (the arguments after the subcommand name).
pub fn parse_args(args: &[OsString]) -> Result<(Policy, Vec<OsString>), HelperError> {
    let mut it = args.iter();
    let (Some(flag), Some(json), Some(dashes)) = (it.next(), it.next(), it.next()) else {
        return Err(HelperError::Usage);
    };
    if flag != "--policy" || dashes != "--" {
        return Err(HelperError::Usage);
    }
    let policy: Policy = serde_json::from_str(&json.to_string_lossy())?;
    let cmd: Vec<OsString> = it.cloned().collect();
    if cmd.is_empty() {
        return Err(HelperError::Usage);
    }
    Ok((policy, cmd))
}

fn landlock_rules(policy: &Policy) -> Result<RulesetStatus, HelperError> {
    let read = AccessFs::from_read(TARGET_ABI);
    let all = AccessFs::from_all(TARGET_ABI);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)?;
    if !policy.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(TARGET_ABI))?;
    }
    let mut created = ruleset
        .create()?
        .add_rules(path_beneath_rules(["/"], read))?
        .add_rules(path_beneath_rules(WRITABLE_DEVICES, all))?;
    if policy.mode == Mode::WorkspaceWrite {
        created = created.add_rules(path_beneath_rules(&policy.writable, all))?;
    }
    Ok(created.restrict_self()?.ruleset)
}

fn seccomp_available() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|s| s.lines().any(|l| l.starts_with("Seccomp:")))
}

/// The helper's whole life: parse, isolate, fork the supervisor, wait for CMD's status
/// and exit with it. `args` are the arguments after the subcommand name. Never returns.
pub fn run_helper(args: &[OsString]) -> ! {
    if args.first().is_some_and(|a| a == PROBE_FLAG) {
        probe();
    }
    let (policy, cmd) = match parse_args(args) {
        Ok(parsed) => parsed,
        Err(e) => fail(EXIT_SETUP_FAILED, &e.to_string()),
    };
    if policy.mode == Mode::Full {
        exec(&cmd);
    }
    let log = match &policy.denial_log {
        Some(path) => match std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
        {
            Ok(f) => Some(f),
            Err(e) => fail(
                EXIT_SETUP_FAILED,
                &format!("cannot open the denial log {}: {e}", path.display()),
            ),
        },
        None => None,
    };
    let layer = policy
        .home_layer
        .as_ref()
        .map(|l| (l, policy.writable.as_slice()));
    let isolation = match crate::namespaces::enter(&policy.protect, &policy.hide, layer) {
        Ok(i) => i,
        Err(e) => fail(
            EXIT_SETUP_FAILED,
            &format!("could not set up the sandbox's namespaces: {e}"),
        ),
    };
    let (status_r, status_w) = pipe().unwrap_or_else(|e| fail(EXIT_SETUP_FAILED, &e));
    // SAFETY: the helper is single-threaded; the child only continues this program.
    match unsafe { libc::fork() } {
        -1 => fail(EXIT_SETUP_FAILED, "could not fork the sandbox supervisor"),
        0 => {
            drop(status_r);
            // When the helper is killed outright (SIGKILL), the command goes too.
            // SAFETY: prctl with plain integer arguments.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, crate::supervise::PARENT_GONE) };
            supervisor(policy, isolation, log, status_w, &cmd)
        }
        pid => {
            drop(status_w);
            drop(log);
            SUPERVISOR.store(pid, std::sync::atomic::Ordering::Relaxed);
            for sig in FORWARDED {
                // SAFETY: installs a handler that only calls kill.
                unsafe { libc::signal(sig, forward as *const () as libc::sighandler_t) };
            }
            wait_for_status(status_r, pid)
        }
    }
}

/// The supervisor's start: mount `/proc`, restrict itself, start CMD, serve.
fn supervisor(
    mut policy: Policy,
    isolation: crate::namespaces::Isolation,
    log: Option<std::fs::File>,
    status: OwnedFd,
    cmd: &[OsString],
) -> ! {
    if isolation.pid {
        if let Err(e) = crate::namespaces::mount_proc() {
            fail(
                EXIT_SETUP_FAILED,
                &format!("could not mount /proc for the sandbox: {e}"),
            );
        }
    } else {
        // Without a PID namespace, orphaned background jobs still come back to us.
        // SAFETY: prctl with plain integer arguments.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    }
    // Opened before the filter: from then on this process must not open anything for
    // writing, or it would wait for its own answer.
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null");
    // The home is the layer now: writes there land in it, never in the real home.
    if isolation.home_layer
        && let Some(layer) = &policy.home_layer
    {
        policy.writable.push(layer.home.clone());
    }
    if let Err(e) = landlock_rules(&policy) {
        fail(EXIT_SETUP_FAILED, &e.to_string());
    }
    let listener = if seccomp_available() {
        crate::notify::install(policy.network, log.is_some())
            .unwrap_or_else(|e| fail(EXIT_SETUP_FAILED, &e.to_string()))
    } else {
        None
    };
    let sigchld = sigchld_fd().unwrap_or_else(|e| fail(EXIT_SETUP_FAILED, &e));
    // SAFETY: single-threaded; the child execs at once.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        fail(EXIT_SETUP_FAILED, "could not fork the command");
    }
    if pid == 0 {
        drop(listener);
        drop(sigchld);
        drop(status);
        drop(log);
        drop(null);
        // std resets the signal mask before it execs.
        exec(cmd);
    }
    // The command has the terminal and the output pipe; the supervisor needs neither,
    // and must not keep the caller's pipe open after the command's jobs end.
    if let Ok(null) = null {
        for fd in 0..3 {
            // SAFETY: dup2 onto the standard descriptors.
            unsafe { libc::dup2(null.as_raw_fd(), fd) };
        }
    }
    crate::supervise::Supervisor::new(policy, listener, log, status, pid, sigchld).run()
}

fn exec(cmd: &[OsString]) -> ! {
    // `exec` returns only on failure; a program file being written a moment ago is retried.
    let Err(err) = crate::busy::retry_while_busy(|| {
        Err::<std::convert::Infallible, _>(
            std::process::Command::new(&cmd[0]).args(&cmd[1..]).exec(),
        )
    });
    let code = if err.kind() == std::io::ErrorKind::NotFound {
        EXIT_NOT_FOUND
    } else {
        EXIT_SETUP_FAILED
    };
    fail(
        code,
        &format!("{}: {err}", std::path::Path::new(&cmd[0]).display()),
    )
}

/// Waits for the supervisor to report CMD's wait status and ends the same way.
fn wait_for_status(status: OwnedFd, supervisor: libc::pid_t) -> ! {
    let mut buf = [0u8; 4];
    let n = loop {
        // SAFETY: reads at most 4 bytes into a live buffer.
        let n = unsafe { libc::read(status.as_raw_fd(), buf.as_mut_ptr().cast(), 4) };
        // A forwarded signal interrupts the read: keep waiting for the command's end.
        if n >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break n;
        }
    };
    let st = if n == 4 {
        libc::c_int::from_ne_bytes(buf)
    } else {
        // The supervisor ended without a status: it failed (and said why) or was killed.
        let mut st = 0;
        // SAFETY: waits for our own child.
        unsafe { libc::waitpid(supervisor, &mut st, 0) };
        st
    };
    if libc::WIFSIGNALED(st) {
        let sig = libc::WTERMSIG(st);
        // SAFETY: restore the default action and die of the same signal.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::kill(libc::getpid(), sig);
        }
        std::process::exit(128 + sig);
    }
    std::process::exit(libc::WEXITSTATUS(st))
}

fn pipe() -> Result<(OwnedFd, OwnedFd), String> {
    let mut fds = [0; 2];
    // SAFETY: fills two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just created and are owned here only.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Signals the helper passes on to the command (through the supervisor): a caller that
/// stops "the process it started" stops the command.
const FORWARDED: [libc::c_int; 4] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT];

/// The supervisor's pid, for the helper's signal handler.
static SUPERVISOR: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

extern "C" fn forward(sig: libc::c_int) {
    let pid = SUPERVISOR.load(std::sync::atomic::Ordering::Relaxed);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(pid, sig) };
    }
}

/// Blocks SIGCHLD, the forwarded signals and `PARENT_GONE` and returns a signalfd that
/// becomes readable when one arrives.
fn sigchld_fd() -> Result<OwnedFd, String> {
    // SAFETY: plain signal-set manipulation on a zeroed set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::sigaddset(&mut set, crate::supervise::PARENT_GONE);
        for sig in FORWARDED {
            libc::sigaddset(&mut set, sig);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC);
        if fd < 0 {
            return Err(format!("signalfd: {}", std::io::Error::last_os_error()));
        }
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

fn fail(code: i32, message: &str) -> ! {
    eprintln!("podcode sandbox: {message}");
    std::process::exit(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn arguments_parse_or_say_how_to_call() {
        let json = r#"{"mode":"read-only","network":false,"writable":[]}"#;
        // Policies written before `protect` and `denial_log` existed still parse.
        let (p, cmd) = parse_args(&os(&["--policy", json, "--", "echo", "hi"])).unwrap();
        assert_eq!(p.mode, Mode::ReadOnly);
        assert_eq!(cmd, os(&["echo", "hi"]));
        for bad in [
            os(&[]),
            os(&["--policy", json, "--"]),
            os(&["--policy", json, "echo"]),
        ] {
            assert!(matches!(parse_args(&bad), Err(HelperError::Usage)));
        }
        assert_eq!(
            HelperError::Usage.to_string(),
            "usage: __sandbox-exec --policy <json> -- <command> [args…]"
        );
        assert!(matches!(
            parse_args(&os(&["--policy", "{", "--", "x"])),
            Err(HelperError::Policy(_))
        ));
    }
}
