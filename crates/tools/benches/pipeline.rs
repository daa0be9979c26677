//! Pipeline benchmarks, printed as ratios against a baseline measured in the same run:
//! - overhead of one call of a no-op built-in through the whole pipeline (resolve through
//!   record, real SQLite store) against calling its `execute` directly;
//! - peak memory of truncating and spilling 1 GiB of streamed tool output, measured in a
//!   child process (VmHWM) against the same child doing nothing.
//!
//! Run: `cargo bench -p podcode-tools --bench pipeline` (BENCH_SPILL_MIB scales the spill test).
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use podcode_protocol::Truncation;
use podcode_tools::testing::{self, Setup, harness, registry};
use podcode_tools::{CallStatus, ToolContext};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.to_string())
        })
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

async fn overhead() {
    let h = harness(
        registry(vec![testing::noop("noop")]),
        Setup {
            rules: vec![],
            ..Default::default()
        },
    );
    let tool = testing::noop("noop");
    for _ in 0..500 {
        h.call("noop", "{}").await;
    }
    let n = 5000;
    let mut piped = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let out = h.call("noop", "{}").await;
        piped.push(t.elapsed());
        assert_eq!(out.status, CallStatus::Completed);
    }
    // Baseline: the same tool's execute alone, with a context from a real call.
    let ctx: ToolContext = capture_ctx(&h).await;
    let mut direct = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let _ = tool.execute(serde_json::json!({}), ctx.clone()).await;
        direct.push(t.elapsed());
    }
    let (p, d) = (median(piped.clone()), median(direct));
    let mut sorted = piped;
    sorted.sort();
    let p90 = sorted[n * 9 / 10];
    println!(
        "pipeline overhead (no-op built-in, real SQLite store, {n} calls): median {:.1} µs, p90 {:.1} µs; execute alone {:.2} µs; ratio {:.0}x; target median < 100 µs",
        p.as_secs_f64() * 1e6,
        p90.as_secs_f64() * 1e6,
        d.as_secs_f64() * 1e6,
        p.as_secs_f64() / d.as_secs_f64().max(1e-9)
    );
}

async fn capture_ctx(h: &testing::Harness) -> ToolContext {
    use std::sync::{Arc, Mutex};
    let slot: Arc<Mutex<Option<ToolContext>>> = Arc::default();
    let keep = slot.clone();
    let grab = testing::FnTool::new(
        podcode_protocol::ToolSpec::new("grab", "grab", serde_json::json!({"type": "object"})),
        move |_, ctx| {
            let keep = keep.clone();
            async move {
                *keep.lock().expect("lock") = Some(ctx);
                Ok(podcode_protocol::ToolResult::default())
            }
        },
    )
    .self_gated()
    .arc();
    h.runtime.set_registry(registry(vec![grab]));
    h.call("grab", "{}").await;
    slot.lock().expect("lock").take().expect("context captured")
}

async fn spill_child(mib: u64) {
    let h = harness(
        registry(vec![testing::spew("spew", Truncation::Tail)]),
        Setup {
            rules: vec![],
            ..Default::default()
        },
    );
    let baseline = peak_rss_kib();
    let t = Instant::now();
    let out = h
        .call("spew", &format!("{{\"bytes\": {}}}", mib << 20))
        .await;
    let elapsed = t.elapsed();
    let tr = out.truncated.expect("truncated");
    let spilled = std::fs::metadata(&tr.spill_path)
        .map(|m| m.len())
        .unwrap_or(0);
    let _ = std::fs::remove_file(&tr.spill_path);
    println!(
        "spill {mib} MiB through the pipeline: peak RSS {:.1} MiB (before the call {:.1} MiB; target < 64 MiB), spill file {} bytes, kept {} lines, {:.2} s ({:.0} MiB/s)",
        peak_rss_kib() as f64 / 1024.0,
        baseline as f64 / 1024.0,
        spilled,
        tr.total_lines - tr.cut_lines,
        elapsed.as_secs_f64(),
        mib as f64 / elapsed.as_secs_f64()
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    if let Ok(mib) = std::env::var("PODCODE_BENCH_SPILL_CHILD") {
        rt.block_on(spill_child(mib.parse().unwrap_or(1024)));
        return;
    }
    rt.block_on(overhead());
    let mib = std::env::var("BENCH_SPILL_MIB").unwrap_or_else(|_| "1024".into());
    let status = std::process::Command::new(std::env::current_exe().expect("exe"))
        .env("PODCODE_BENCH_SPILL_CHILD", &mib)
        .status()
        .expect("child");
    assert!(status.success());
}
