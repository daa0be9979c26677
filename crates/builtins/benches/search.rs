//! Benchmark: `grep` and `glob` over a large tree, against ripgrep on the same tree with
//! the same ignore rules, as ratios measured in one run.
//!
//! The tree (default 100k files, ~1 GiB; `BENCH_FILES` / `BENCH_BYTES` scale it) is
//! generated once under `target/bench-data/` and reused while its marker file says it is
//! complete. It has a `.git` folder, a `.gitignore` that drops a tenth of the folders (`/d*7/`) and
//! all `*.log` files, several extensions, and a rare `needle_<n>` token. Each tool call goes
//! through the real pipeline (registry from `register_all`, default rules plus
//! `external_directory` allowed, since the tree is outside the harness workspace). ripgrep
//! runs as `rg --hidden -g '!.git' …` (our walkers include hidden files and skip `.git`),
//! and its output is read through a pipe, as ours is. One warm-up run each, then five runs
//! interleaved (ours, rg, ours, rg, … so background load hits both alike), medians; prints
//!
//! `grep: podcode X ms, rg Y ms, ratio Z` (and `grep common`, a pattern with many matches)
//! and `glob: podcode X ms, rg Y ms, ratio Z`
//!
//! plus the match counts of both, which must agree. Without `rg` (install it with
//! `apt-get install ripgrep`) only our times are printed.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use podcode_tools::CallStatus;
use podcode_tools::testing::Harness;
use serde_json::json;

const RUNS: usize = 5;
/// A rare pattern (about one file in a hundred) and a common one (hundreds of thousands of lines).
const GREP_PATTERNS: [(&str, &str); 2] =
    [("grep", r"needle_[0-9]+"), ("grep common", r"foxtrot golf")];
const GLOB_PATTERN: &str = "*.rs";
const EXTS: [&str; 6] = ["rs", "ts", "py", "md", "txt", "log"];
const WORDS: [&str; 16] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima", "mike", "november", "oscar", "papa",
];

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|v| *v > 0)
        .unwrap_or(default)
}

fn data_root() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let target = target.canonicalize().unwrap_or(target);
    target.join("bench-data")
}

/// A small deterministic generator, so the tree is the same every time.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// About 4 MiB of text lines to slice file contents from.
fn text_pool() -> Vec<u8> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut pool = Vec::with_capacity(4 << 20);
    while pool.len() < 4 << 20 {
        let words = 4 + rng.next() % 12;
        for i in 0..words {
            if i > 0 {
                pool.push(b' ');
            }
            pool.extend_from_slice(WORDS[(rng.next() % 16) as usize].as_bytes());
        }
        pool.push(b'\n');
    }
    pool
}

fn generate(root: &Path, files: u64, bytes: u64) {
    let marker = root.join(".complete");
    if marker.exists() {
        println!("using the cached tree in {}", root.display());
        return;
    }
    let start = Instant::now();
    let _ = fs::remove_dir_all(root);
    fs::create_dir_all(root.join(".git")).expect("bench: create tree");
    fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").expect("bench: write .git/HEAD");
    fs::write(root.join(".gitignore"), "*.log\n/d*7/\n").expect("bench: write .gitignore");
    let pool = text_pool();
    let mut rng = Rng(42);
    let avg = (bytes / files).max(64);
    let dirs = (files / 100).max(1);
    for i in 0..files {
        let d = i % dirs;
        let dir = root.join(format!("d{d:04}/s{}", d % 7));
        if i < dirs {
            fs::create_dir_all(&dir).expect("bench: create folder");
        }
        let ext = EXTS[(rng.next() % EXTS.len() as u64) as usize];
        let size = (avg / 2 + rng.next() % avg) as usize;
        let span = pool.len().saturating_sub(size).max(1);
        let mut start_at = (rng.next() as usize) % span;
        while start_at > 0 && pool[start_at - 1] != b'\n' {
            start_at -= 1;
        }
        let end = (start_at + size).min(pool.len());
        let file =
            fs::File::create(dir.join(format!("f{i:06}.{ext}"))).expect("bench: create file");
        let mut w = BufWriter::new(file);
        w.write_all(&pool[start_at..end])
            .expect("bench: write file");
        if i % 97 == 0 {
            writeln!(w, "fn needle_{i}() {{}}").expect("bench: write needle");
        }
        w.flush().expect("bench: flush file");
    }
    fs::write(&marker, format!("{files} {bytes}\n")).expect("bench: write marker");
    println!(
        "generated {} in {:.1} s",
        root.display(),
        start.elapsed().as_secs_f64()
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One call of the tool through the pipeline: milliseconds and the result count.
fn run_tool(
    rt: &tokio::runtime::Runtime,
    h: &Harness,
    tool: &str,
    args: &serde_json::Value,
) -> (f64, u64) {
    let start = Instant::now();
    let out = rt.block_on(h.call_json(tool, args.clone()));
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    let key = if tool == "grep" { "matches" } else { "count" };
    (ms, out.result.metadata[key].as_u64().unwrap_or(0))
}

/// One `rg` run with its output read through a pipe: milliseconds and output lines.
fn run_rg(root: &Path, args: &[&str]) -> Option<(f64, u64)> {
    let start = Instant::now();
    let mut child = Command::new("rg")
        .args(["--hidden", "-g", "!.git"])
        .args(args)
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut out = Vec::new();
    child.stdout.take()?.read_to_end(&mut out).ok()?;
    child.wait().ok()?;
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    Some((ms, out.iter().filter(|b| **b == b'\n').count() as u64))
}

/// A warm-up run of each, then `RUNS` interleaved runs (so background load hits both
/// alike); the medians and the last counts.
fn compare(
    rt: &tokio::runtime::Runtime,
    h: &Harness,
    tool: &str,
    args: serde_json::Value,
    root: &Path,
    rg_args: Option<&[&str]>,
) -> ((f64, u64), Option<(f64, u64)>) {
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let (mut our_count, mut rg_count) = (0, None);
    for run in 0..=RUNS {
        let (ms, n) = run_tool(rt, h, tool, &args);
        our_count = n;
        let rg = rg_args.and_then(|a| run_rg(root, a));
        if run > 0 {
            ours.push(ms);
            if let Some((ms, _)) = rg {
                theirs.push(ms);
            }
        }
        rg_count = rg.map(|(_, n)| n);
    }
    let rg = match (rg_count, theirs.is_empty()) {
        (Some(n), false) => Some((median(theirs), n)),
        _ => None,
    };
    ((median(ours), our_count), rg)
}

fn report(what: &str, ours: (f64, u64), rg: Option<(f64, u64)>) {
    match rg {
        Some((rg_ms, rg_count)) => {
            println!(
                "{what}: podcode {:.1} ms, rg {rg_ms:.1} ms, ratio {:.2}",
                ours.0,
                ours.0 / rg_ms
            );
            println!(
                "  {what} results: podcode {}, rg {rg_count}{}",
                ours.1,
                if ours.1 == rg_count {
                    ""
                } else {
                    "  (MISMATCH)"
                }
            );
        }
        None => println!(
            "{what}: podcode {:.1} ms ({} results); rg not available, no ratio",
            ours.0, ours.1
        ),
    }
}

fn main() {
    let files = env_u64("BENCH_FILES", 100_000);
    let bytes = env_u64("BENCH_BYTES", 1 << 30);
    let root = data_root().join(format!("search-{files}-{bytes}"));
    println!(
        "search bench: {files} files, {:.2} GiB total",
        bytes as f64 / (1u64 << 30) as f64
    );
    generate(&root, files, bytes);
    let root = root.canonicalize().expect("bench: canonical tree path");

    let h = common::builtins(&[("external_directory", "*")]);
    let rt = common::runtime();

    let has_rg = Command::new("rg")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_rg {
        println!("rg is not installed (apt-get install ripgrep); printing podcode times only");
    }
    for (label, pattern) in GREP_PATTERNS {
        let grep_rg: &[&str] = &["-n", pattern];
        let (grep, rg) = compare(
            &rt,
            &h,
            "grep",
            json!({"pattern": pattern, "path": root}),
            &root,
            has_rg.then_some(grep_rg),
        );
        report(label, grep, rg);
    }
    let glob_rg: &[&str] = &["--files", "-g", GLOB_PATTERN];
    let (glob, rg) = compare(
        &rt,
        &h,
        "glob",
        json!({"pattern": GLOB_PATTERN, "path": root}),
        &root,
        has_rg.then_some(glob_rg),
    );
    report("glob", glob, rg);
}
