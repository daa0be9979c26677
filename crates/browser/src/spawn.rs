//! Starting the Chromium process itself, so that it can never outlive Podcode, and finding
//! its DevTools address as soon as it has one.
//!
//! `chromiumoxide` can launch Chromium, but offers no hook into the spawn, so a `podcode`
//! killed with SIGKILL would leave its browser running. Here the process is started by one
//! long-lived thread of ours with `PR_SET_PDEATHSIG = SIGKILL` (Linux): the kernel kills
//! Chromium when the thread that forked it ends, and that thread ends only with the
//! process (a death signal tied to a short-lived thread, e.g. a tokio blocking thread,
//! would kill the browser early). Chromium's helpers (zygote, renderers, GPU) exit when
//! their browser process goes.
//!
//! Chromium prints `DevTools listening on ws://…` on stderr once its DevTools socket is up
//! (`--remote-debugging-port=0`: a free port, no polling); a reader thread hands that URL
//! over and then keeps draining stderr so Chromium never blocks on a full pipe. When
//! Chromium exits first, the end of its stderr is the error.
//!
//! Debian's `/usr/bin/chromium` is a shell script (CPU checks, `findmnt`, extension flags we
//! override) that costs a few hundred milliseconds under load before it `exec`s
//! `/usr/lib/chromium/chromium`; a wrapper script found on `PATH` is skipped for the binary
//! it starts when that binary is where the distribution puts it.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

/// Bytes of Chromium's stderr kept for an error message.
const STDERR_TAIL: usize = 2048;

type Reply = tokio::sync::oneshot::Sender<io::Result<Child>>;

/// The thread every browser is forked from (see the module doc for why it lives on).
fn spawner() -> &'static Mutex<mpsc::Sender<(Command, Reply)>> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<(Command, Reply)>>> = OnceLock::new();
    SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<(Command, Reply)>();
        // If the thread cannot start, `rx` goes with its closure and every spawn reports
        // that (the send fails).
        let _ = std::thread::Builder::new()
            .name("podcode-browser-spawn".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            });
        Mutex::new(tx)
    })
}

/// Starts `exe args…` with stderr piped; the process is killed when Podcode exits.
pub(crate) async fn spawn(exe: &Path, args: &[OsString]) -> io::Result<Child> {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    die_with_parent(&mut cmd);
    let (tx, rx) = tokio::sync::oneshot::channel();
    let sent = spawner()
        .lock()
        .map_err(|_| io::Error::other("the browser spawn thread failed"))?
        .send((cmd, tx));
    if sent.is_err() {
        return Err(io::Error::other("could not start the browser spawn thread"));
    }
    rx.await
        .map_err(|_| io::Error::other("the browser spawn thread failed"))?
}

#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe
    // system calls (prctl, getppid); it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            // Podcode died between fork and prctl: the signal will never come.
            if libc::getppid() != parent {
                return Err(io::Error::other(
                    "podcode exited while starting the browser",
                ));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

/// Reads Chromium's stderr on a thread of its own: the DevTools URL is sent as soon as it
/// is printed; stderr is drained to the end afterwards. An `Err` holds the end of stderr
/// when Chromium closed it (exited) without printing the URL.
pub(crate) fn devtools_url(
    stderr: impl Read + Send + 'static,
) -> tokio::sync::oneshot::Receiver<Result<String, String>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let reader = move || {
        let mut tx = Some(tx);
        let mut tail: VecDeque<u8> = VecDeque::new();
        let mut lines = BufReader::new(stderr);
        let mut line = Vec::new();
        loop {
            line.clear();
            match lines.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if tx.is_none() {
                continue;
            }
            let text = String::from_utf8_lossy(&line);
            if let Some(url) = ws_url(&text) {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(Ok(url));
                }
                continue;
            }
            tail.extend(line.iter());
            let excess = tail.len().saturating_sub(STDERR_TAIL);
            tail.drain(..excess);
        }
        if let Some(tx) = tx.take() {
            let bytes: Vec<u8> = tail.into_iter().collect();
            let _ = tx.send(Err(String::from_utf8_lossy(&bytes).trim().to_string()));
        }
    };
    // If the thread cannot start, the sender goes with its closure and the caller sees
    // the channel closed.
    let _ = std::thread::Builder::new()
        .name("podcode-browser-stderr".into())
        .spawn(reader);
    rx
}

/// `ws://…/devtools/browser/…` from Chromium's `DevTools listening on ws://…` line.
fn ws_url(line: &str) -> Option<String> {
    let (_, url) = line.rsplit_once("listening on ")?;
    let url = url.trim();
    (url.starts_with("ws") && url.contains("/devtools/browser/")).then(|| url.to_string())
}

/// The binary a distribution's wrapper script starts (`/usr/bin/chromium` →
/// `/usr/lib/chromium/chromium`), or `found` itself when it is not such a script.
pub(crate) fn skip_wrapper(found: &Path) -> PathBuf {
    let is_script = std::fs::File::open(found)
        .and_then(|mut f| {
            let mut magic = [0u8; 2];
            f.read_exact(&mut magic).map(|_| magic == *b"#!")
        })
        .unwrap_or(false);
    if !is_script {
        return found.to_path_buf();
    }
    let (Some(name), Some(bin)) = (found.file_name(), found.parent()) else {
        return found.to_path_buf();
    };
    let Some(prefix) = bin.parent() else {
        return found.to_path_buf();
    };
    let direct = prefix.join("lib").join(name).join(name);
    if crate::launch::is_executable(&direct) {
        direct
    } else {
        found.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_devtools_url_is_read_from_chromiums_line() {
        assert_eq!(
            ws_url("\nDevTools listening on ws://127.0.0.1:4123/devtools/browser/ab-cd\n"),
            Some("ws://127.0.0.1:4123/devtools/browser/ab-cd".to_string())
        );
        assert_eq!(ws_url("[0101/WARNING:x.cc(1)] listening on nothing"), None);
    }

    #[test]
    fn a_wrapper_script_is_skipped_only_for_the_binary_beside_it() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("bin");
        let lib = root.path().join("lib/chromium");
        std::fs::create_dir_all(&bin).unwrap();
        let script = bin.join("chromium");
        std::fs::write(&script, "#!/bin/sh\nexec x \"$@\"\n").unwrap();
        // No binary under lib/: the script is what runs.
        assert_eq!(skip_wrapper(&script), script);
        std::fs::create_dir_all(&lib).unwrap();
        let real = lib.join("chromium");
        std::fs::write(&real, b"\x7fELF").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(skip_wrapper(&script), real);
        // A binary on PATH is run as it is.
        assert_eq!(skip_wrapper(&real), real);
    }
}
