//! Benchmark: `read` of line 1,000,000 (and of a line near the end) of a 2 GiB text file
//! must stay under 64 MiB peak memory.
//!
//! The parent writes the file (a 1 MiB block of numbered 64-byte lines, repeated; fast to
//! write) under `target/bench-data/`, then re-executes this binary once per case with
//! `PODCODE_READ_BENCH_CHILD=<offset>`. Each child runs one `read {filePath, offset,
//! limit: 5}` through the real pipeline and prints its wall time, its peak RSS (`VmHWM`
//! from /proc/self/status) and the first line it got back; a fresh process per case means
//! the peak belongs to that one call. The parent checks the line numbers, prints
//!
//! `read line N of 2.00 GiB: peak RSS X MiB (target < 64 MiB), Y s`
//!
//! and deletes the file. `BENCH_READ_BYTES` overrides the size for quick runs.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use podcode_tools::CallStatus;
use podcode_tools::testing::child_report::{peak_rss_kib, run_self};
use serde_json::json;

const CHILD_ENV: &str = "PODCODE_READ_BENCH_CHILD";
const FILE_ENV: &str = "PODCODE_READ_BENCH_FILE";
const LINE_BYTES: u64 = 64;
const BLOCK_LINES: u64 = 16 * 1024; // 1 MiB of 64-byte lines
const TARGET_MIB: f64 = 64.0;

fn main() {
    match std::env::var(CHILD_ENV) {
        Ok(offset) => child(offset.parse().expect("bench: offset")),
        Err(_) => parent(),
    }
}

fn bench_file() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let target = target.canonicalize().unwrap_or(target);
    target.join("bench-data/read-memory.txt")
}

/// Writes `bytes` (rounded down to whole blocks) of 64-byte lines `line NNNNNNNNNN xxx…`
/// whose numbers repeat every block; the block is built once and written over and over.
fn write_file(path: &Path, bytes: u64) -> u64 {
    let blocks = (bytes / (BLOCK_LINES * LINE_BYTES)).max(1);
    let mut block = Vec::with_capacity((BLOCK_LINES * LINE_BYTES) as usize);
    for i in 0..BLOCK_LINES {
        let head = format!("line {:010} ", i + 1);
        block.extend_from_slice(head.as_bytes());
        block.extend(std::iter::repeat_n(
            b'x',
            LINE_BYTES as usize - head.len() - 1,
        ));
        block.push(b'\n');
    }
    fs::create_dir_all(path.parent().expect("bench: data folder"))
        .expect("bench: create data folder");
    let mut w =
        BufWriter::with_capacity(4 << 20, fs::File::create(path).expect("bench: create file"));
    for _ in 0..blocks {
        w.write_all(&block).expect("bench: write block");
    }
    w.flush().expect("bench: flush");
    blocks * BLOCK_LINES
}

fn parent() {
    let bytes = std::env::var("BENCH_READ_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2u64 << 30);
    let path = bench_file();
    let start = Instant::now();
    let total_lines = write_file(&path, bytes);
    let size = fs::metadata(&path).expect("bench: file size").len();
    let gib = size as f64 / (1u64 << 30) as f64;
    println!(
        "wrote {} ({gib:.2} GiB, {total_lines} lines) in {:.1} s",
        path.display(),
        start.elapsed().as_secs_f64()
    );
    let mut worst: f64 = 0.0;
    for offset in [1_000_000u64.min(total_lines), total_lines - 2] {
        let report = run_self(&[
            (CHILD_ENV, std::ffi::OsString::from(offset.to_string())),
            (FILE_ENV, path.clone().into_os_string()),
        ]);
        let rss_mib = report.peak_rss_mib();
        let secs = report.number("secs");
        let first = report.text("first_line");
        let expected_number = (offset - 1) % BLOCK_LINES + 1;
        assert!(
            first.starts_with(&format!("{offset:>6}\tline {expected_number:010} ")),
            "line {offset} came back as {first:?}"
        );
        worst = worst.max(rss_mib);
        println!(
            "read line {offset} of {gib:.2} GiB: peak RSS {rss_mib:.1} MiB (target < {TARGET_MIB} MiB), {secs:.2} s"
        );
    }
    fs::remove_file(&path).expect("bench: delete file");
    println!(
        "worst peak RSS {worst:.1} MiB: {}",
        if worst < TARGET_MIB {
            "within target"
        } else {
            "OVER TARGET"
        }
    );
}

fn child(offset: u64) {
    let path = PathBuf::from(std::env::var_os(FILE_ENV).expect("bench: file env"));
    let h = common::builtins(&[("external_directory", "*")]);
    let rt = common::runtime();
    let start = Instant::now();
    let out = rt.block_on(h.call_json(
        "read",
        json!({"filePath": path, "offset": offset, "limit": 5}),
    ));
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    let hwm = peak_rss_kib();
    println!("peak_rss_kib={hwm}");
    println!("secs={secs}");
    println!(
        "first_line={}",
        out.model_text.lines().next().unwrap_or_default()
    );
}
