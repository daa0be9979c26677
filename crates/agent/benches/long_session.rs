//! Long-session numbers, printed (never asserted), each beside a baseline from the same run:
//! - the per-step context budget check on a 1,000-message history, beside cloning that
//!   history (which the loop does for every request anyway);
//! - the peak memory (VmHWM of this process) of a 1,000-step session in a 32k window that
//!   compacts as it goes — real HTTP + SSE to the scripted server, real SQLite store, real
//!   pipeline — beside the peak after a 10-step session.
//!
//! Run: `cargo bench -p podcode-agent --bench long_session` (optimised), or
//! `cargo test --workspace --bench long_session` (the dev profile, no release build).
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use podcode_agent::{Agent, AgentOptions, AgentProfile, Budget};
use podcode_config::CompactionConfig;
use podcode_protocol::{ToolResult, ToolSpec, TurnEnd};
use podcode_providers::testing::{Reply, ScriptedModel};
use podcode_providers::{
    Endpoint, Message, ModelClient, ModelInfo, ModelRef, OpenAiClient, Part, Role,
};
use podcode_tools::testing::{FnTool, Setup, harness, registry};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn history(n: usize) -> Vec<Message> {
    let mut m = vec![Message {
        role: Role::User,
        parts: vec![Part::Text {
            text: "Refactor the parser and keep the tests green.".into(),
        }],
    }];
    for i in 0..n / 2 {
        m.push(Message {
            role: Role::Assistant,
            parts: vec![
                Part::Text {
                    text: format!("Reading part {i}."),
                },
                Part::ToolCall {
                    id: format!("call_{i}"),
                    name: "read".into(),
                    arguments: format!("{{\"filePath\":\"src/part_{i}.rs\"}}"),
                },
            ],
        });
        m.push(Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: format!("call_{i}"),
                output: "fn f() {}\n".repeat(100),
                is_error: false,
                attachments: vec![],
            }],
        });
    }
    m.truncate(n);
    m
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn budget_check() {
    let messages = history(1_000);
    assert_eq!(messages.len(), 1_000);
    let info = ModelInfo {
        context: 200_000,
        output: 32_000,
        ..ModelInfo::fallback()
    };
    let budget = Budget::new(&info, &CompactionConfig::default());
    let rounds = 2_000;
    let mut check = Vec::with_capacity(rounds);
    let mut clone = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        black_box(budget.over(black_box(3_000), black_box(&messages)));
        check.push(t.elapsed());
        let t = Instant::now();
        black_box(black_box(&messages).clone());
        clone.push(t.elapsed());
    }
    let (c, b) = (median(check), median(clone));
    println!(
        "budget check on a {}-message history: median {:.1} µs (target < 50 µs); cloning the history for the request: {:.1} µs (check/clone {:.3}×)",
        messages.len(),
        c.as_secs_f64() * 1e6,
        b.as_secs_f64() * 1e6,
        c.as_secs_f64() / b.as_secs_f64()
    );
}

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// `look {n}`: about 2 KB of output.
fn look() -> Arc<dyn podcode_tools::Tool> {
    let params = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    FnTool::new(
        ToolSpec::new("look", "Looks at part n.", params).idempotent(true),
        |args, _| async move {
            let n = args["n"].as_u64().unwrap_or(0);
            Ok(ToolResult::text(
                format!("line of part {n} with some content\n").repeat(55),
            ))
        },
    )
    .self_gated()
    .arc()
}

/// A session of `steps` tool steps in a 32k window; returns (requests, summaries).
async fn session(steps: usize) -> (usize, usize) {
    let count = Arc::new(AtomicUsize::new(0));
    let summaries = Arc::new(AtomicUsize::new(0));
    let (c, s) = (count.clone(), summaries.clone());
    let server = ScriptedModel::responding(
        vec![],
        Arc::new(move |body: &Value| {
            let tokens = body.to_string().len() as u64 / 4;
            let system = body["messages"][0]["content"].as_str().unwrap_or("");
            if system.starts_with("You are compacting") {
                s.fetch_add(1, Ordering::SeqCst);
                return Reply::new()
                    .text("The task: look at every part. Parts so far were fine.")
                    .usage(tokens, 30);
            }
            let step = c.fetch_add(1, Ordering::SeqCst) + 1;
            if step <= steps {
                Reply::new()
                    .tool_call(format!("call_{step}"), "look", format!("{{\"n\":{step}}}"))
                    .usage(tokens, 20)
            } else {
                Reply::new().text("done").usage(tokens, 5)
            }
        }),
    );
    server.forget_bodies();
    let h = harness(registry(vec![look()]), Setup::default());
    let model: Arc<dyn ModelClient> = Arc::new(
        OpenAiClient::new(
            ModelRef::parse("scripted/bench").expect("model ref"),
            Endpoint::new(server.base_url()),
        )
        .expect("client"),
    );
    let mut opts = AgentOptions::new(h.work(), h.work());
    opts.max_steps = steps as u32 + 10;
    opts.model_info = ModelInfo {
        context: 32_768,
        output: 4_096,
        known: true,
        ..ModelInfo::fallback()
    };
    let agent = Agent::new(
        Arc::new(h.runtime),
        model,
        h.store.clone(),
        AgentProfile::build(),
        opts,
    );
    let summary = agent
        .run_turn(&h.session, "Look at every part.", CancellationToken::new())
        .await
        .expect("turn");
    assert_eq!(summary.end, TurnEnd::Answered, "{:?}", summary.error);
    (server.request_count(), summaries.load(Ordering::SeqCst))
}

fn main() {
    budget_check();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let start = Instant::now();
    rt.block_on(session(10));
    let base = vm_hwm_kib();
    let t = Instant::now();
    let (requests, summaries) = rt.block_on(session(1_000));
    let peak = vm_hwm_kib();
    println!(
        "peak memory of a 1,000-step session (32k window, {requests} requests, {summaries} summaries, {:.1} s): {:.1} MiB (target < 100 MiB); after a 10-step session: {:.1} MiB ({:.2}×); whole bench {:.1} s",
        t.elapsed().as_secs_f64(),
        peak as f64 / 1024.0,
        base as f64 / 1024.0,
        peak as f64 / base.max(1) as f64,
        start.elapsed().as_secs_f64()
    );
}
