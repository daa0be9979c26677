//! Benchmarks that measure peak memory run the measured work in a child process of their own
//! executable, so the child's `VmHWM` counts only that work: the parent starts the child with
//! environment variables saying what to do, the child prints `name=value` lines on stdout,
//! and the parent reads them back as a [`ChildReport`].

use std::ffi::OsStr;
use std::process::Command;

/// What a benchmark's child process printed, as `name=value` lines.
pub struct ChildReport {
    stdout: String,
}

/// Runs this executable again with `env` set, waits for it and returns what it reported.
/// Panics (failing the benchmark) if the child fails.
pub fn run_self<K: AsRef<OsStr>, V: AsRef<OsStr>>(env: &[(K, V)]) -> ChildReport {
    let exe = std::env::current_exe().expect("bench: own executable");
    let mut cmd = Command::new(exe);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("bench: run child");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ChildReport { stdout }
}

impl ChildReport {
    /// The value the child printed as `name=…`.
    pub fn text(&self, name: &str) -> String {
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
            .unwrap_or_else(|| panic!("child did not report {name}: {}", self.stdout))
            .to_string()
    }

    /// The value the child printed as `name=…`, as a number.
    pub fn number(&self, name: &str) -> f64 {
        let text = self.text(name);
        text.parse()
            .unwrap_or_else(|_| panic!("child reported {name}={text}, not a number"))
    }

    /// The child's `peak_rss_kib` in MiB.
    pub fn peak_rss_mib(&self) -> f64 {
        self.number("peak_rss_kib") / 1024.0
    }
}

/// This process's peak resident memory so far (`VmHWM`), in KiB.
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .expect("bench: /proc/self/status")
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("bench: VmHWM")
}
