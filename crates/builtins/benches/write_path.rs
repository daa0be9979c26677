//! Benchmark: what journal-first, atomic writes cost per small write.
//!
//! Three ways of writing a 1 KiB file 200 times over (each write a different text), on the
//! same disk and the same real SQLite store, in one run:
//!
//! - `old path`: what `write` did before issue 12: `std::fs::write` in place, then the
//!   journal row (SQLite, synchronous=NORMAL). The baseline.
//! - `journal-first`: `apply_journaled`: re-read without following links, the intent row
//!   synced (synchronous=FULL), a temp file written and fsynced, renamed over the target,
//!   the folder fsynced, the row marked done.
//! - `write tool`: the whole `write` call through the real pipeline (resolve, permission,
//!   diff, journal-first commit, tool-call record), for scale.
//!
//! It prints the median and p90 of each and the ratio of the new path to the old one.
//! `BENCH_WRITES` overrides the count.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use podcode_protocol::{ChangeOp, ChangeRecord};
use podcode_tools::{CallStatus, FileWrite, apply_journaled};
use serde_json::json;

fn text(i: usize) -> String {
    let line = format!("write {i:06} of the benchmark, padded to a kilobyte\n");
    line.repeat(1024 / line.len() + 1)
}

fn stats(mut d: Vec<Duration>) -> (Duration, Duration) {
    d.sort();
    (d[d.len() / 2], d[d.len() * 9 / 10])
}

fn show(what: &str, d: Vec<Duration>, base: Option<Duration>) -> Duration {
    let (median, p90) = stats(d);
    let ratio = base
        .map(|b| {
            format!(
                "  ({:.1}× the old path)",
                median.as_secs_f64() / b.as_secs_f64()
            )
        })
        .unwrap_or_default();
    println!(
        "{what:<14} median {:>8.1} µs   p90 {:>8.1} µs{ratio}",
        median.as_secs_f64() * 1e6,
        p90.as_secs_f64() * 1e6
    );
    median
}

fn main() {
    let n: usize = std::env::var("BENCH_WRITES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let h = common::builtins(&[("edit", "*")]);
    let store = h.store.clone();
    let old_file = h.work().join("old.txt");
    let new_file = h
        .work()
        .canonicalize()
        .expect("bench: workspace")
        .join("new.txt");
    std::fs::write(&old_file, text(0)).expect("bench: seed");
    std::fs::write(&new_file, text(0)).expect("bench: seed");

    let mut old_path = Vec::with_capacity(n);
    let mut journal_first = Vec::with_capacity(n);
    // Interleaved, so both see the same disk and cache conditions.
    for i in 1..=n {
        let (before, after) = (text(i - 1), text(i));
        let start = Instant::now();
        std::fs::write(&old_file, &after).expect("bench: old write");
        let record = ChangeRecord {
            file: old_file.to_string_lossy().into_owned(),
            op: ChangeOp::Modify,
            old_content: Some(before.clone()),
            new_content: Some(after.clone()),
        };
        store
            .record_change(&h.session, Some("call_old"), &record, None)
            .expect("bench: old journal");
        old_path.push(start.elapsed());

        let write = FileWrite {
            file: new_file.clone(),
            old: Some(before),
            new: Some(after),
            reverts: None,
        };
        let start = Instant::now();
        apply_journaled(&store, &h.session, Some("call_new"), &[write]).expect("bench: new write");
        journal_first.push(start.elapsed());
    }

    let rt = common::runtime();
    let mut tool = Vec::with_capacity(n);
    for i in 1..=n {
        let args = json!({"filePath": "tool.txt", "content": text(i)});
        let start = Instant::now();
        let out = rt.block_on(h.call_json("write", args));
        tool.push(start.elapsed());
        assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    }

    println!(
        "{n} writes of 1 KiB each, real SQLite store and files under {}",
        h.work().display()
    );
    let base = show("old path", old_path, None);
    show("journal-first", journal_first, Some(base));
    show("write tool", tool, Some(base));
}
