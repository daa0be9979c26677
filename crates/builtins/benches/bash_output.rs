//! Benchmark: a bash command printing 1 GiB must finish with bounded memory and the tail
//! of its output intact.
//!
//! The parent process re-executes this binary with `PODCODE_BASH_BENCH_CHILD=1`. The child
//! runs the command once through the real pipeline (registry from `register_all`, default
//! truncation limits, spill to a temporary data dir), then prints its wall time, its peak
//! RSS (`VmHWM` from /proc/self/status), the spill file's size and whether the last line
//! the model reads equals the last line of the spill file; it deletes the spill file. The
//! child is a fresh process so its peak RSS measures this one call only. The parent also
//! times the same command with `sh -c '… > /dev/null'` as a baseline (and `> file`, which
//! includes the disk writes the spill file costs), and prints:
//!
//! `bash 1 GiB: peak RSS X MiB (target < 64 MiB), Y s`
//!
//! `PODCODE_BASH_BENCH_BYTES` overrides the size (a multiple of 128) for quick runs.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{Read, Seek, SeekFrom};
use std::process::Command;
use std::time::Instant;

use podcode_tools::testing::child_report::{peak_rss_kib, run_self};
use serde_json::json;

const CHILD_ENV: &str = "PODCODE_BASH_BENCH_CHILD";
const BYTES_ENV: &str = "PODCODE_BASH_BENCH_BYTES";
const DEFAULT_BYTES: u64 = 1 << 30;
const TARGET_MIB: f64 = 64.0;

/// 128-byte lines of `x`, then one distinct 128-byte last line: exactly `bytes` bytes.
fn command(bytes: u64) -> String {
    let body = bytes - 128;
    format!(
        "yes \"$(printf 'x%.0s' $(seq 127))\" | head -c {body}; printf 'END-OF-OUTPUT-%0113d\\n' {bytes}"
    )
}

fn size() -> u64 {
    std::env::var(BYTES_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|b: &u64| *b >= 256 && b.is_multiple_of(128))
        .unwrap_or(DEFAULT_BYTES)
}

fn main() {
    if std::env::var_os(CHILD_ENV).is_some() {
        child();
    } else {
        parent();
    }
}

fn parent() {
    let bytes = size();
    let report = run_self(&[(CHILD_ENV, "1")]);
    let field = |name: &str| report.text(name);
    let rss_mib = report.peak_rss_mib();
    let secs = report.number("secs");
    let cpu = report.number("cpu_secs");
    let spill_bytes = report.number("spill_bytes") as u64;
    let last_line = field("last_line");
    assert_eq!(
        field("tail_intact"),
        "true",
        "the last line the model reads differs from the spill file's"
    );
    assert_eq!(
        spill_bytes, bytes,
        "the spill file does not hold the whole output"
    );

    let start = Instant::now();
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{{ {}; }} > /dev/null", command(bytes)))
        .status()
        .expect("bench: run sh");
    assert!(status.success());
    let baseline = start.elapsed().as_secs_f64();
    let file = std::env::temp_dir().join(format!("podcode-bash-bench-{}.txt", std::process::id()));
    let start = Instant::now();
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{{ {}; }} > '{}'", command(bytes), file.display()))
        .status()
        .expect("bench: run sh");
    let to_file = start.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&file);
    assert!(status.success());

    let gib = bytes as f64 / (1u64 << 30) as f64;
    let label = if bytes == DEFAULT_BYTES {
        "1 GiB".to_string()
    } else {
        format!("{gib:.3} GiB")
    };
    println!("tail intact: last line {last_line:?} matches the spill file ({spill_bytes} bytes)");
    println!(
        "bash {label}: peak RSS {rss_mib:.1} MiB (target < {TARGET_MIB:.0} MiB), {secs:.2} s [{}]",
        if rss_mib < TARGET_MIB {
            "ok"
        } else {
            "OVER TARGET"
        }
    );
    println!("  CPU time of the agent process during the call: {cpu:.2} s");
    println!(
        "baseline sh -c '… > /dev/null': {baseline:.2} s (bash tool / baseline = {:.2}x)",
        secs / baseline
    );
    println!(
        "baseline sh -c '… > file' (what the spill costs): {to_file:.2} s (bash tool / baseline = {:.2}x)",
        secs / to_file
    );
}

#[tokio::main]
async fn child() {
    let bytes = size();
    let h = common::builtins(&[("bash", "*")]);

    let start = Instant::now();
    let out = h
        .call_json(
            "bash",
            json!({"command": command(bytes), "timeout": 600_000}),
        )
        .await;
    let secs = start.elapsed().as_secs_f64();
    let peak_rss_kib = peak_rss_kib();
    let cpu_secs = cpu_secs();

    let truncated = out
        .truncated
        .clone()
        .unwrap_or_else(|| panic!("output was not truncated: {:?}", out.status));
    let spill_bytes = std::fs::metadata(&truncated.spill_path)
        .map(|m| m.len())
        .unwrap_or(0);
    let spill_last = last_line_of_file(&truncated.spill_path);
    let model_last = out
        .model_text
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    let _ = std::fs::remove_file(&truncated.spill_path);

    println!("status={:?}", out.status);
    println!("secs={secs:.3}");
    println!("peak_rss_kib={peak_rss_kib}");
    println!("cpu_secs={cpu_secs:.3}");
    println!("spill_bytes={spill_bytes}");
    println!("last_line={model_last}");
    println!(
        "tail_intact={}",
        model_last.starts_with("END-OF-OUTPUT-") && model_last == spill_last
    );
}

/// User + system CPU time this process used (the command's own processes excluded).
fn cpu_secs() -> f64 {
    // SAFETY: getrusage only writes the struct we hand it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

fn last_line_of_file(path: &std::path::Path) -> String {
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(4096)));
    let mut end = String::new();
    let _ = file.read_to_string(&mut end);
    end.lines().last().unwrap_or_default().to_string()
}
