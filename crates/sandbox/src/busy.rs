//! Running a program file that was written a moment ago. While any process holds a file open
//! for writing, the kernel refuses to execute it (`ETXTBSY`, "Text file busy"). The holder is
//! rarely the writer, who has closed it: it is a child that another thread forked in that
//! instant, which keeps a copy of the writer's descriptor until its own `exec` closes it — a
//! window of microseconds, or of a scheduling slice on a busy machine. A user who saves a tool
//! while Podcode runs a command hits exactly that. Spawners of user-written programs
//! (executable tools, MCP servers, the sandbox helper's `exec`) therefore try again for a
//! moment instead of reporting a tool that is fine as broken; any other error returns at once.

use std::io;
use std::time::Duration;

/// How long a busy program file is waited for before its error is reported.
pub const BUSY_PATIENCE: Duration = Duration::from_secs(2);

/// Runs `attempt` (a spawn or exec) again while it fails with "Text file busy", for up to
/// [`BUSY_PATIENCE`]; returns the first success or the last error.
pub fn retry_while_busy<T>(mut attempt: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    let mut wait = Duration::from_millis(1);
    let mut waited = Duration::ZERO;
    loop {
        match attempt() {
            Err(e) if e.kind() == io::ErrorKind::ExecutableFileBusy && waited < BUSY_PATIENCE => {
                std::thread::sleep(wait);
                waited += wait;
                wait = (wait * 2).min(Duration::from_millis(100));
            }
            result => return result,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    use std::process::Command;

    fn script(dir: &std::path::Path) -> (std::path::PathBuf, std::fs::File) {
        let path = dir.join("tool.sh");
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(b"#!/bin/sh\necho ran\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        (path, f)
    }

    #[test]
    fn a_file_held_open_for_writing_runs_once_it_is_closed() {
        let dir = tempfile::tempdir().unwrap();
        let (path, held) = script(dir.path());
        // The kernel refuses it while the descriptor is open (the test can fail)…
        let err = Command::new(&path).output().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ExecutableFileBusy);
        // …and runs it once the holder lets go: here after the first refused attempt, so
        // the outcome does not depend on timing.
        let mut held = Some(held);
        let mut attempts = 0;
        let out = retry_while_busy(|| {
            attempts += 1;
            let r = Command::new(&path).output();
            if r.is_err() {
                held.take();
            }
            r
        })
        .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
        // Refused at least once, then ran. Not exactly once: a command another test thread
        // starts meanwhile may still hold a copy of the descriptor — the very race retried.
        assert!(attempts >= 2, "{attempts}");
    }

    #[test]
    fn other_errors_and_a_file_busy_for_good_return_the_error() {
        let mut attempts = 0;
        let err = retry_while_busy(|| {
            attempts += 1;
            Command::new("/no/such/program").output()
        })
        .unwrap_err();
        assert_eq!((err.kind(), attempts), (io::ErrorKind::NotFound, 1));
        let dir = tempfile::tempdir().unwrap();
        let (path, _held) = script(dir.path());
        let err = retry_while_busy(|| Command::new(&path).output()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ExecutableFileBusy);
    }
}
