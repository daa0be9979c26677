//! Agent loop numbers, printed (never asserted):
//! - overhead per tool call: from the model's response being received to the next request
//!   being handed to the client, over 100 sequential steps that each call a built-in-style
//!   no-op tool, against a scripted server answering instantly (real HTTP + SSE, real
//!   SQLite store, real pipeline); median and p90 printed beside the turn's total;
//! - `podcode run` to first request on the wire, no plugins: the release binary is spawned
//!   and the scripted server is polled until the request arrives (baseline: `podcode
//!   --version` spawned and waited for);
//! - peak memory (the child's VmHWM, polled from /proc) of a 200-step `podcode run`
//!   session, beside the peak of `podcode tools --json`.
//!
//! Run: `cargo build --release -p podcode && cargo bench -p podcode-agent --bench loop_overhead`
//! (`PODCODE_BIN` overrides the binary; the process benches are skipped without one).
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use podcode_agent::{Agent, AgentOptions, AgentProfile};
use podcode_protocol::TurnEnd;
use podcode_providers::testing::{Reply, ScriptedModel};
use podcode_providers::{
    ChatRequest, Endpoint, EventStream, ModelClient, ModelRef, OpenAiClient, ProviderError,
    StreamEvent,
};
use podcode_tools::testing::{Setup, harness, noop, registry};
use tokio_util::sync::CancellationToken;

/// Records when each request is handed to the client and when each response finished.
struct Timed {
    inner: OpenAiClient,
    sent: Arc<Mutex<Vec<Instant>>>,
    received: Arc<Mutex<Vec<Instant>>>,
}

#[async_trait]
impl ModelClient for Timed {
    fn model(&self) -> &ModelRef {
        self.inner.model()
    }
    async fn stream(
        &self,
        request: &ChatRequest,
        abort: CancellationToken,
    ) -> Result<EventStream, ProviderError> {
        if let Ok(mut s) = self.sent.lock() {
            s.push(Instant::now());
        }
        let mut rx = self.inner.stream(request, abort).await?;
        let (tx, out) = tokio::sync::mpsc::channel(64);
        let received = self.received.clone();
        tokio::spawn(async move {
            while let Some(ev) = rx.recv().await {
                if matches!(ev, Ok(StreamEvent::Finish { .. }))
                    && let Ok(mut r) = received.lock()
                {
                    r.push(Instant::now());
                }
                if tx.send(ev).await.is_err() {
                    break;
                }
            }
        });
        Ok(out)
    }
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p) as usize]
}

async fn overhead_per_call() {
    let n = 100;
    let mut script: Vec<Reply> = (0..n)
        .map(|i| Reply::new().tool_call(format!("c{i}"), "noop", format!(r#"{{"i": {i}}}"#)))
        .collect();
    script.push(Reply::new().text("done"));
    let h = harness(registry(vec![noop("noop")]), Setup::default());
    let server = ScriptedModel::start(script).await;
    let model = Arc::new(Timed {
        inner: OpenAiClient::new(
            ModelRef::parse("scripted/bench").expect("model ref"),
            Endpoint::new(server.base_url()),
        )
        .expect("client"),
        sent: Arc::default(),
        received: Arc::default(),
    });
    let mut opts = AgentOptions::new(h.work(), h.work());
    opts.max_steps = n + 10;
    let runtime = Arc::new(h.runtime);
    let agent = Agent::new(
        runtime,
        model.clone(),
        h.store.clone(),
        AgentProfile::build(),
        opts,
    );
    let start = Instant::now();
    let summary = agent
        .run_turn(&h.session, "bench", CancellationToken::new())
        .await
        .expect("turn");
    let total = start.elapsed();
    assert_eq!(summary.end, TurnEnd::Answered);
    let sent = model.sent.lock().expect("sent").clone();
    let received = model.received.lock().expect("received").clone();
    let mut gaps: Vec<Duration> = received
        .iter()
        .zip(sent.iter().skip(1))
        .take(n as usize)
        .map(|(r, s)| s.duration_since(*r))
        .collect();
    let count = gaps.len();
    let median = pct(&mut gaps, 0.5);
    let p90 = pct(&mut gaps, 0.9);
    println!(
        "overhead per tool call (response received → next request sent), {count} sequential calls: \
         median {:.3} ms, p90 {:.3} ms (target < 2 ms); whole turn {:.1} ms ({:.2} ms per step incl. HTTP)",
        median.as_secs_f64() * 1e3,
        p90.as_secs_f64() * 1e3,
        total.as_secs_f64() * 1e3,
        total.as_secs_f64() * 1e3 / (n + 1) as f64
    );
}

fn binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PODCODE_BIN") {
        return Some(PathBuf::from(p));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let p = target.join("release/podcode");
    p.exists().then_some(p)
}

/// A repository with its own HOME, config and data folders; the user's config points the
/// model at `server` (a project's own config may not set a provider's address until the
/// workspace is trusted).
fn sandbox(server: &ScriptedModel) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).expect("repo");
    std::fs::create_dir_all(dir.path().join("config")).expect("config dir");
    std::fs::write(
        dir.path().join("config/config.toml"),
        format!(
            "model = \"scripted/bench\"\n[provider.scripted]\nbase_url = \"{}\"\n",
            server.base_url()
        ),
    )
    .expect("config");
    std::fs::write(repo.join("a.txt"), "alpha\nbeta\ngamma\n".repeat(50)).expect("file");
    dir
}

fn cmd(bin: &Path, dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin);
    c.args(args)
        .current_dir(dir.join("repo"))
        .env("HOME", dir.join("home"))
        .env("PODCODE_CONFIG_DIR", dir.join("config"))
        .env("PODCODE_DATA_DIR", dir.join("data"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

fn startup_to_first_request(bin: &Path) {
    let runs = 20;
    let mut first = Vec::new();
    let mut baseline = Vec::new();
    for _ in 0..runs {
        let server = ScriptedModel::start_blocking(vec![Reply::new().text("hi")]);
        let dir = sandbox(&server);
        let t = Instant::now();
        let _ = cmd(bin, dir.path(), &["--version"]).status();
        baseline.push(t.elapsed());
        let t = Instant::now();
        let mut child = cmd(bin, dir.path(), &["run", "hello"])
            .spawn()
            .expect("spawn");
        while server.request_count() == 0 && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_micros(100));
        }
        first.push(t.elapsed());
        let _ = child.wait();
    }
    let (m, b) = (pct(&mut first, 0.5), pct(&mut baseline, 0.5));
    println!(
        "`podcode run` to first request on the wire (no plugins), median of {runs}: {:.1} ms \
         (target < 50 ms); baseline `podcode --version` to exit: {:.1} ms",
        m.as_secs_f64() * 1e3,
        b.as_secs_f64() * 1e3
    );
}

/// Runs `cmd` to completion; its exit code and its own peak RSS (VmHWM) in KiB, read from
/// `/proc/<pid>/status` every millisecond while it runs (VmHWM starts afresh at exec, unlike
/// `ru_maxrss`, which also counts the forked parent's pages).
fn run_peak(mut cmd: Command) -> (i32, u64) {
    let Ok(mut child) = cmd.spawn() else {
        return (-1, 0);
    };
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Some(kib) = std::fs::read_to_string(&status_file).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        }) {
            peak = peak.max(kib);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return (status.code().unwrap_or(-1), peak);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn peak_memory(bin: &Path) {
    let server = ScriptedModel::start_blocking(vec![]);
    let dir = sandbox(&server);
    let (_, baseline) = run_peak(cmd(bin, dir.path(), &["tools", "--json"]));

    let steps = 200;
    let mut script: Vec<Reply> = (0..steps)
        .map(|i| {
            Reply::new()
                .text(format!("Step {i}: reading a slice of the file to check it. ").repeat(4))
                .tool_call(
                    format!("c{i}"),
                    "read",
                    format!(
                        r#"{{"filePath": "a.txt", "offset": 1, "limit": {}}}"#,
                        i + 1
                    ),
                )
                .usage(1000 + i * 50, 40)
        })
        .collect();
    script.push(Reply::new().text("All steps done."));
    let server = ScriptedModel::start_blocking(script);
    let dir = sandbox(&server);
    let t = Instant::now();
    let (code, peak) = run_peak(cmd(
        bin,
        dir.path(),
        &["run", "do 200 steps", "--max-steps", "250"],
    ));
    println!(
        "peak memory (VmHWM) of a {steps}-step `podcode run` session: {:.1} MiB (target < 100 MiB; \
         {} requests, {:.2} s, exit {code}); baseline `podcode tools --json`: {:.1} MiB",
        peak as f64 / 1024.0,
        server.request_count(),
        t.elapsed().as_secs_f64(),
        baseline as f64 / 1024.0
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(overhead_per_call());
    match binary() {
        Some(bin) => {
            startup_to_first_request(&bin);
            peak_memory(&bin);
        }
        None => println!(
            "skipped the process benches: build the release binary first (cargo build --release -p podcode) or set PODCODE_BIN"
        ),
    }
}
