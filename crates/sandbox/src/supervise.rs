//! The helper's supervisor: the first process of the sandbox (PID 1 of its PID namespace,
//! or a child subreaper without one). It starts the command, answers the seccomp
//! notifications of every process in the sandbox (`notify`), appends what the sandbox
//! refused to the denial log, tells the helper the command's exit status as soon as the
//! command ends (through `status`), and keeps serving and reaping until the command's
//! background jobs have ended too. Signals the helper gets (SIGTERM, SIGINT, SIGHUP,
//! SIGQUIT) are forwarded to the command, and a helper killed outright takes the command
//! with it (`PARENT_GONE`).

use std::ffi::OsString;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::denial::Denial;
use crate::policy::{Mode, Policy, canonical_prefix, normalize};

/// Sent to the supervisor when the helper dies (`PR_SET_PDEATHSIG`): the command is
/// killed if it still runs (its background jobs are left alone).
pub const PARENT_GONE: libc::c_int = libc::SIGUSR2;

/// At most this many denials are logged per sandboxed process (a loop of refused writes
/// must not fill the disk); enough for a long-lived one (the plugin host, an MCP server)
/// whose calls each read what was logged since they began.
const MAX_LOGGED: usize = 256;

pub struct Supervisor {
    pub policy: Policy,
    pub listener: Option<OwnedFd>,
    pub log: Option<std::fs::File>,
    /// Where the command's raw wait status goes (4 bytes), then closed.
    pub status: Option<OwnedFd>,
    pub cmd_pid: libc::pid_t,
    /// A signalfd for SIGCHLD (blocked in this process).
    pub sigchld: OwnedFd,
    /// Lines written so far, and the last denial (a repeat of it is not written again; an
    /// earlier one is, since a long-lived process's next call reads only newer lines).
    logged: usize,
    last: Option<Denial>,
}

impl Supervisor {
    pub fn new(
        policy: Policy,
        listener: Option<OwnedFd>,
        log: Option<std::fs::File>,
        status: OwnedFd,
        cmd_pid: libc::pid_t,
        sigchld: OwnedFd,
    ) -> Self {
        Self {
            policy,
            listener,
            log,
            status: Some(status),
            cmd_pid,
            sigchld,
            logged: 0,
            last: None,
        }
    }

    /// Serves until no process is left in the sandbox, then exits.
    pub fn run(mut self) -> ! {
        loop {
            let mut fds = vec![libc::pollfd {
                fd: self.sigchld.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            }];
            if let Some(l) = &self.listener {
                fds.push(libc::pollfd {
                    fd: l.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                });
            }
            // SAFETY: `fds` is a valid array of its length.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
            if n < 0 {
                continue;
            }
            if fds.get(1).is_some_and(|f| f.revents & libc::POLLIN != 0) {
                self.answer_one();
            }
            if fds[0].revents & libc::POLLIN != 0 {
                let mut info = [0u8; 128];
                // SAFETY: reads into a buffer of its size (a signalfd_siginfo is 128 bytes).
                let n = unsafe {
                    libc::read(
                        self.sigchld.as_raw_fd(),
                        info.as_mut_ptr().cast(),
                        info.len(),
                    )
                };
                // `ssi_signo` is the first field.
                let signo = if n == 128 {
                    i32::from_ne_bytes([info[0], info[1], info[2], info[3]])
                } else {
                    libc::SIGCHLD
                };
                self.on_signal(signo);
            }
        }
    }

    fn on_signal(&mut self, signo: i32) {
        if signo == libc::SIGCHLD {
            return self.reap();
        }
        // Only while the command runs (its pid is not reused before we reap it).
        if self.status.is_some() {
            let sig = if signo == PARENT_GONE {
                libc::SIGKILL
            } else {
                signo
            };
            // SAFETY: signals our own, not yet reaped, child.
            unsafe { libc::kill(self.cmd_pid, sig) };
        }
    }

    fn reap(&mut self) {
        loop {
            let mut st: libc::c_int = 0;
            // SAFETY: waits for any child without blocking.
            let pid = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
            if pid == 0 {
                return;
            }
            if pid < 0 {
                // No child left: every process of the sandbox has ended.
                std::process::exit(0);
            }
            if pid == self.cmd_pid
                && let Some(fd) = self.status.take()
            {
                let bytes = st.to_ne_bytes();
                // SAFETY: writes 4 bytes from a live buffer; the fd is closed on drop.
                unsafe { libc::write(fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
            }
        }
    }

    fn answer_one(&mut self) {
        let Some(listener) = &self.listener else {
            return;
        };
        let fd = listener.as_raw_fd();
        // SAFETY: the kernel fills the zeroed request.
        let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        if unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut req) } < 0 {
            return; // the caller died meanwhile
        }
        let (denial, errno) = decide(&self.policy, &req);
        // The pid may have been reused while its memory was read: only trust what was read
        // if the request is still pending.
        let valid = unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id) } == 0;
        let resp = libc::seccomp_notif_resp {
            id: req.id,
            val: 0,
            error: -errno,
            flags: if errno == 0 {
                libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32
            } else {
                0
            },
        };
        // Logged before the answer: the refused call returns only after its line is in the
        // log, so whoever reads the log once the process reports the failure finds it.
        if valid && let Some(d) = denial {
            self.record(d);
        }
        // SAFETY: answers the request just received.
        unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_SEND, &resp) };
    }

    fn record(&mut self, denial: Denial) {
        if self.logged >= MAX_LOGGED || self.last.as_ref() == Some(&denial) {
            return;
        }
        if let Some(log) = &mut self.log
            && let Ok(mut line) = serde_json::to_string(&denial)
        {
            line.push('\n');
            let _ = log.write_all(line.as_bytes());
        }
        self.logged += 1;
        self.last = Some(denial);
    }
}

/// What to log for one notification and the errno to answer (0: let it continue).
fn decide(policy: &Policy, req: &libc::seccomp_notif) -> (Option<Denial>, i32) {
    let nr = i64::from(req.data.nr);
    let pid = req.pid as libc::pid_t;
    let a = req.data.args;
    if nr == libc::SYS_socket || nr == libc::SYS_io_uring_setup {
        let what = if nr == libc::SYS_io_uring_setup {
            "io_uring".to_string()
        } else if a[0] == libc::AF_INET6 as u64 {
            "an IPv6 socket".to_string()
        } else {
            "an IPv4 socket".to_string()
        };
        let program = std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "a program".into());
        return (
            Some(Denial::Network(format!("{program} opened {what}"))),
            libc::EACCES,
        );
    }
    let cwd = libc::AT_FDCWD as u64;
    // (directory fd, path address) of each path the syscall changes.
    let targets: Vec<(u64, u64)> = match nr {
        n if n == libc::SYS_openat => vec![(a[0], a[1])],
        n if n == libc::SYS_openat2 => {
            // `struct open_how` starts with the flags.
            let flags = read_u64(pid, a[2]).unwrap_or(u64::MAX);
            if WRITE_BITS & flags == 0 {
                return (None, 0);
            }
            vec![(a[0], a[1])]
        }
        n if n == libc::SYS_mkdirat || n == libc::SYS_unlinkat || n == libc::SYS_mknodat => {
            vec![(a[0], a[1])]
        }
        n if n == libc::SYS_renameat2 => vec![(a[0], a[1]), (a[2], a[3])],
        n if n == libc::SYS_linkat => vec![(a[2], a[3])],
        n if n == libc::SYS_symlinkat => vec![(a[1], a[2])],
        n if n == libc::SYS_truncate => vec![(cwd, a[0])],
        #[cfg(target_arch = "x86_64")]
        n if n == libc::SYS_rename || n == libc::SYS_link || n == libc::SYS_symlink => {
            if n == libc::SYS_rename {
                vec![(cwd, a[0]), (cwd, a[1])]
            } else {
                vec![(cwd, a[1])]
            }
        }
        #[cfg(target_arch = "x86_64")]
        n if n == libc::SYS_renameat => vec![(a[0], a[1]), (a[2], a[3])],
        _ => vec![(cwd, a[0])],
    };
    for (dirfd, addr) in targets {
        let Some(raw) = read_path(pid, addr) else {
            continue;
        };
        let Some(path) = resolve(pid, dirfd as i32, &raw) else {
            continue;
        };
        if let Some(d) = classify(policy, &path) {
            return (Some(d), 0);
        }
    }
    (None, 0)
}

const WRITE_BITS: u64 = (libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC) as u64;

/// Whether writing `path` is refused by `policy`: protected paths always, others when
/// outside the writable roots and writable by the user (a write the system's own
/// permissions refuse is no sandbox denial). Devices and `/proc` are not reported.
pub(crate) fn classify(policy: &Policy, path: &Path) -> Option<Denial> {
    if ["/proc", "/dev", "/sys"]
        .iter()
        .any(|p| path.starts_with(p))
    {
        return None;
    }
    if policy.mode == Mode::Full {
        return None;
    }
    if policy.is_protected(path) {
        return Some(Denial::Protected(canonical_prefix(path)));
    }
    if !policy.allows_write(path) && crate::denial::user_could_write(path) {
        return Some(Denial::Write(path.to_path_buf()));
    }
    None
}

fn open_mem(pid: libc::pid_t) -> Option<std::fs::File> {
    std::fs::File::open(format!("/proc/{pid}/mem")).ok()
}

fn read_u64(pid: libc::pid_t, addr: u64) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    let mut buf = [0u8; 8];
    open_mem(pid)?.read_exact_at(&mut buf, addr).ok()?;
    Some(u64::from_ne_bytes(buf))
}

/// The NUL-terminated string at `addr` in `pid`'s memory (at most PATH_MAX bytes).
fn read_path(pid: libc::pid_t, addr: u64) -> Option<OsString> {
    use std::os::unix::ffi::OsStringExt;
    use std::os::unix::fs::FileExt;
    let mem = open_mem(pid)?;
    let mut out = Vec::new();
    let mut chunk = [0u8; 256];
    let mut at = addr;
    while out.len() < libc::PATH_MAX as usize {
        // A read may stop at a page end; read what is there.
        let n = mem.read_at(&mut chunk, at).ok()?;
        if n == 0 {
            return None;
        }
        if let Some(end) = chunk[..n].iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..end]);
            return Some(OsString::from_vec(out));
        }
        out.extend_from_slice(&chunk[..n]);
        at += n as u64;
    }
    None
}

/// `raw` made absolute against `dirfd` (or the process's working directory).
fn resolve(pid: libc::pid_t, dirfd: i32, raw: &OsString) -> Option<PathBuf> {
    let raw = Path::new(raw);
    if raw.is_absolute() {
        return Some(normalize(raw));
    }
    let base = if dirfd == libc::AT_FDCWD {
        std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?
    } else {
        std::fs::read_link(format!("/proc/{pid}/fd/{dirfd}")).ok()?
    };
    Some(normalize(&base.join(raw)))
}
