//! Worktree creation on a generated 10k-file repository (target: < 1 s): `fork_worktree`
//! (snapshot of the user's changes through a temporary index, fork commit, `git worktree
//! add`) beside a bare `git worktree add` of HEAD measured in the same run. The repository
//! has 10 modified and 10 untracked files, like a checkout mid-work.
//!
//! `cargo bench -p podcode-core --bench worktree` (also prints the CPU time git used, which
//! load on the machine does not inflate)
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const FILES: usize = 10_000;
const RUNS: usize = 7;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=B", "-c", "user.email=b@b"])
        .args(args)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "git {args:?}");
}

/// CPU time (user + system) of the finished child processes so far: on a loaded machine
/// the wall time mostly measures waiting, this measures the work (git's, both ways).
fn children_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit(')').next().unwrap_or_default();
    // Fields 16 and 17 (cutime, cstime), counted after the command name, in clock ticks
    // (USER_HZ: 100 on Linux).
    let ticks: u64 = rest
        .split_whitespace()
        .skip(13)
        .take(2)
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let repo = tmp.path().join("repo");
    for i in 0..FILES {
        let dir = repo.join(format!("src/m{:03}", i / 100));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let body = format!("// file {i}\npub fn f{i}() -> usize {{\n    {i}\n}}\n").repeat(8);
        std::fs::write(dir.join(format!("f{i}.rs")), body).expect("write");
    }
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "10k files"]);
    for i in 0..10 {
        std::fs::write(repo.join(format!("src/m000/f{i}.rs")), "// changed\n").expect("write");
        std::fs::write(repo.join(format!("untracked{i}.txt")), "new\n").expect("write");
    }
    // One status so the index's stat data is fresh, as in a checkout someone works in.
    git(&repo, &["update-index", "-q", "--refresh"]);

    let data = tmp.path().join("data");
    let mut plain = Vec::new();
    let mut fork = Vec::new();
    let (mut plain_cpu, mut fork_cpu) = (Duration::ZERO, Duration::ZERO);
    for run in 0..RUNS {
        let path = tmp.path().join(format!("plain{run}"));
        let cpu = children_cpu();
        let t = Instant::now();
        git(
            &repo,
            &[
                "worktree",
                "add",
                "-q",
                "--detach",
                path.to_str().expect("utf-8"),
                "HEAD",
            ],
        );
        plain.push(t.elapsed());
        plain_cpu += children_cpu() - cpu;

        let cpu = children_cpu();
        let t = Instant::now();
        let row = podcode_core::fork_worktree(&repo, &data, &format!("ses_bench{run}"))
            .expect("worktree");
        fork.push(t.elapsed());
        fork_cpu += children_cpu() - cpu;
        assert!(Path::new(&row.path).join("untracked0.txt").exists());
    }
    let (p, f) = (median(plain), median(fork));
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "worktree creation, {FILES} files + 10 modified + 10 untracked, median of {RUNS} (load {}):",
        load.split(' ').take(3).collect::<Vec<_>>().join(" ")
    );
    println!(
        "  git worktree add (HEAD only)        {:>8.1} ms",
        p.as_secs_f64() * 1e3
    );
    println!(
        "  fork_worktree (HEAD + your changes)  {:>8.1} ms  ({:.2}x; target < 1000 ms)",
        f.as_secs_f64() * 1e3,
        f.as_secs_f64() / p.as_secs_f64()
    );
    println!(
        "  CPU time of git, mean per run: plain {:.0} ms, fork {:.0} ms ({:.2}x)",
        plain_cpu.as_secs_f64() * 1e3 / RUNS as f64,
        fork_cpu.as_secs_f64() * 1e3 / RUNS as f64,
        fork_cpu.as_secs_f64() / plain_cpu.as_secs_f64().max(1e-9)
    );
}
