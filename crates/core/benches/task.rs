//! Benchmark: the cost of the `task` tool, through the engine against the scripted model
//! (real HTTP + SSE, real SQLite).
//!
//! 1. Latency: the parent's `task` call starting (`ToolStarted`) → the child's first model
//!    request starting (its `StepStarted`, emitted right before the request is sent), over
//!    40 sequential `task` calls. Target < 20 ms.
//! 2. Memory: a fresh process (this binary re-executed with `PODCODE_TASK_BENCH_CHILD=1`)
//!    runs one turn without sub-agents, reads its peak RSS (`VmHWM`), then one turn whose
//!    step starts 8 sub-agents at once (each child's reply is held back 300 ms, so all 8 are
//!    alive together), and prints the growth of the peak. Target < 50 MiB.
//!
//! `cargo bench -p podcode-core --bench task`
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use podcode_core::Session;
use podcode_core::testing::{ScratchWorkspace, open_build_session};
use podcode_protocol::{Event, Op};
use podcode_providers::testing::{Reply, ScriptedModel};
use serde_json::json;
use tokio::sync::broadcast;

const CHILD_ENV: &str = "PODCODE_TASK_BENCH_CHILD";
const ROUNDS: usize = 40;
const CHILDREN: usize = 8;

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    if std::env::var(CHILD_ENV).is_ok() {
        rt.block_on(memory());
        return;
    }
    rt.block_on(latency());
    let exe = std::env::current_exe().expect("bench binary");
    let out = std::process::Command::new(exe)
        .env(CHILD_ENV, "1")
        .output()
        .expect("re-run the bench");
    print!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
}

/// Each call's arguments differ: three identical calls in a row would ask `doom_loop`.
fn task(i: usize) -> String {
    json!({"description": format!("Bench child {i}"), "prompt": "Answer ok.", "subagent_type": "general"})
        .to_string()
}

fn prompt(s: &Session) {
    s.send(Op::Prompt {
        session_id: s.id().to_string(),
        text: "go".into(),
        files: Vec::new(),
    });
}

async fn next(events: &mut broadcast::Receiver<Event>) -> Event {
    tokio::time::timeout(Duration::from_secs(60), events.recv())
        .await
        .expect("an event within 60 s")
        .expect("stream open")
}

async fn latency() {
    let server = ScriptedModel::start(vec![]).await;
    let ws = ScratchWorkspace::new(&server.base_url(), "").unwrap();
    let engine = ws.engine().unwrap();
    let s = open_build_session(&engine, "bench").await.unwrap();
    let mut events = s.subscribe();
    let mut samples = Vec::new();
    for i in 0..ROUNDS {
        server.push(Reply::new().tool_call(format!("t{i}"), "task", task(i)));
        server.push(Reply::new().text("ok"));
        server.push(Reply::new().text("done"));
        prompt(&s);
        let mut started = None;
        loop {
            match next(&mut events).await {
                Event::ToolStarted { tool, .. } if tool == "task" => started = Some(Instant::now()),
                Event::Subagent { event, .. } if matches!(*event, Event::StepStarted { .. }) => {
                    if let Some(t) = started.take() {
                        samples.push(t.elapsed());
                    }
                }
                Event::TurnFinished { .. } => break,
                _ => {}
            }
        }
    }
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "task call → child's first request: median {:.2} ms, p90 {:.2} ms, max {:.2} ms over {} calls (target < 20 ms)",
        ms(samples[samples.len() / 2]),
        ms(samples[samples.len() * 9 / 10]),
        ms(samples[samples.len() - 1]),
        samples.len()
    );
    s.close().await;
    engine.shutdown().await;
}

fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

async fn run_turn(s: &Session, events: &mut broadcast::Receiver<Event>) -> usize {
    prompt(s);
    let mut children = std::collections::HashSet::new();
    loop {
        match next(events).await {
            Event::Subagent { session_id, .. } => {
                children.insert(session_id);
            }
            Event::TurnFinished { .. } => return children.len(),
            _ => {}
        }
    }
}

async fn memory() {
    let server = ScriptedModel::start(vec![]).await;
    let ws = ScratchWorkspace::new(&server.base_url(), "").unwrap();
    let engine = ws.engine().unwrap();
    let s = open_build_session(&engine, "bench").await.unwrap();
    let mut events = s.subscribe();
    // A turn with one tool call loads everything a session needs before the baseline.
    server.push(Reply::new().tool_call("w", "list", "{}"));
    server.push(Reply::new().text("warm"));
    run_turn(&s, &mut events).await;
    let before = peak_mib();
    let mut calls = Reply::new();
    for i in 0..CHILDREN {
        calls = calls.tool_call(format!("t{i}"), "task", task(i));
    }
    server.push(calls);
    for _ in 0..CHILDREN {
        server.push(Reply::new().stall(Duration::from_millis(300)).text("ok"));
    }
    server.push(Reply::new().text("all done"));
    let started = Instant::now();
    let children = run_turn(&s, &mut events).await;
    let after = peak_mib();
    println!(
        "{children} concurrent sub-agents: peak RSS {before:.1} → {after:.1} MiB (+{:.1} MiB, target < 50 MiB), turn {:.0} ms",
        after - before,
        started.elapsed().as_secs_f64() * 1000.0
    );
    s.close().await;
    engine.shutdown().await;
}
