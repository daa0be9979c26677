//! Benchmark: what the sandbox adds to a bash call. 100 calls of `true` through the real
//! pipeline in Podcode's default sandbox (workspace-write, network off: the helper applies
//! Landlock + seccomp, then execs the shell) and 100 in `full` (the shell directly),
//! interleaved in one run; prints both medians, the difference and the ratio:
//!
//! `bash call: sandboxed median X ms, full median Y ms: +Z ms (R×) (target < +5 ms)`
//!
//! The helper is `podcode-sandbox-exec` (built by the harness; the same program as the
//! `podcode-sandbox-helper` that `podcode` starts when it is installed beside it) unless
//! `PODCODE_SANDBOX_HELPER` names another: `target/debug/podcode` times the fallback
//! (`podcode __sandbox-exec`), which pays for loading the whole binary at every call.
//!
//! On a busy machine the difference grows with the load (each call hands the CPU between
//! four processes); `chrt -f 10` on the bench binary approximates a calm one.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use podcode_sandbox::{Mode, Sandbox, Settings};
use podcode_tools::CallStatus;
use serde_json::json;

const CALLS: usize = 100;
const TARGET_MS: f64 = 5.0;

fn with_mode(mode: Mode) -> podcode_tools::testing::Harness {
    common::builtins_with(&[("bash", "*")], move |opts| {
        let data = opts
            .spill_dir
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_default();
        let helper = podcode_tools::testing::sandbox_helper();
        let sb = Sandbox::new(
            helper,
            Settings {
                mode,
                network: false,
            },
        )
        .with_writable([opts.spill_dir.clone()])
        .with_temp_root(data.join("tmp"));
        opts.sandbox = Some(Arc::new(sb));
    })
}

fn median(v: &mut [Duration]) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

fn main() {
    let rt = common::runtime();
    let sandboxed = with_mode(Mode::WorkspaceWrite);
    let full = with_mode(Mode::Full);
    let (mut a, mut b) = (Vec::with_capacity(CALLS), Vec::with_capacity(CALLS));
    rt.block_on(async {
        // Warm both (page cache, temp dir creation).
        for h in [&sandboxed, &full] {
            let out = h.call_json("bash", json!({"command": "true"})).await;
            assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
        }
        for _ in 0..CALLS {
            for (h, into) in [(&sandboxed, &mut a), (&full, &mut b)] {
                let start = Instant::now();
                let out = h.call_json("bash", json!({"command": "true"})).await;
                into.push(start.elapsed());
                assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
            }
        }
    });
    let (ms_a, ms_b) = (median(&mut a), median(&mut b));
    println!(
        "helper: {}",
        podcode_tools::testing::sandbox_helper().display()
    );
    println!(
        "bash call: sandboxed median {ms_a:.2} ms, full median {ms_b:.2} ms: {:+.2} ms ({:.2}×) (target < +{TARGET_MS} ms)",
        ms_a - ms_b,
        ms_a / ms_b
    );
}
