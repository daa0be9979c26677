//! `podcode serve` numbers, printed (never asserted on time):
//!
//! 1. engine event → SSE client latency: a session emits an event (a `warning`, from a
//!    model switch that fails at once); the time from the session's own stream seeing it to
//!    an `/api/events` client (reqwest, loopback) reading it — event log commit included.
//! 2. 100 SSE clients on one session through a 300-delta streamed answer: each must
//!    receive every event of the turn, in order, once.
//! 3. idle server peak RSS: `podcode serve` (the binary next to this bench's directory:
//!    build it first) after start and a few requests, read from /proc.
//!
//! Run: `cargo test -p podcode-server --bench sse` (test profile), or `cargo bench -p
//! podcode-server` after `cargo build --release -p podcode`.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use podcode_core::testing::{ScratchWorkspace, open_build_session};
use podcode_protocol::{Event, Op};
use podcode_providers::testing::{Reply, ScriptedModel};
use podcode_server::{ServeOptions, Server};
use serde_json::Value;

const TOKEN: &str = "bench-token";

fn workspace(model: &ScriptedModel) -> ScratchWorkspace {
    ScratchWorkspace::new(&model.base_url(), "").unwrap()
}

/// Serves `engine` on a random loopback port until the bench ends; returns its URL.
async fn serve(engine: std::sync::Arc<podcode_core::Engine>) -> String {
    let opts = ServeOptions {
        token: Some(TOKEN.into()),
        ..ServeOptions::default()
    };
    let server = Server::bind(engine, opts).await.unwrap();
    let url = server.url();
    tokio::spawn(server.run(std::future::pending()));
    url
}

/// Reads SSE messages (`id`, `event`, `data`) from a response body.
struct Reader {
    body: std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    buf: String,
}

impl Reader {
    async fn open(client: &reqwest::Client, url: String) -> Reader {
        let r = client.get(url).bearer_auth(TOKEN).send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
        Reader {
            body: Box::pin(r.bytes_stream()),
            buf: String::new(),
        }
    }
    async fn next(&mut self) -> (i64, String, Value) {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let (mut id, mut event, mut data) = (None, None, String::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        id = v.parse().ok();
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        event = Some(v.to_string());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data.push_str(v);
                    }
                }
                if let (Some(id), Some(event)) = (id, event) {
                    return (id, event, serde_json::from_str(&data).unwrap());
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(60), self.body.next())
                .await
                .expect("an event within 60 s")
                .expect("open")
                .unwrap();
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

/// A reqwest client (reqwest is built without a TLS provider of its own).
fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

async fn latency() {
    let model = ScriptedModel::start(vec![]).await;
    let ws = workspace(&model);
    let engine = ws.engine().unwrap();
    let url = serve(engine.clone()).await;
    // A session opened through the engine after the server started is logged too.
    let session = open_build_session(&engine, "bench").await.unwrap();
    let client = client();
    let mut sse = Reader::open(&client, format!("{url}/api/events")).await;
    let mut own = session.subscribe();
    let rounds = 300;
    let mut samples = Vec::with_capacity(rounds);
    for i in 0..rounds {
        session.send(Op::SetModel {
            session_id: session.id().to_string(),
            model: format!("nowhere/m{i}"),
        });
        let emitted = loop {
            if let Ok(Event::Warning { .. }) = own.recv().await {
                break Instant::now();
            }
        };
        loop {
            let (_, kind, _) = sse.next().await;
            if kind == "warning" {
                break;
            }
        }
        samples.push(emitted.elapsed());
    }
    samples.sort();
    println!(
        "engine event -> SSE client ({rounds} events, loopback): p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms (target p50 < 5 ms: {:.2}x of it)",
        percentile(&samples, 0.5).as_secs_f64() * 1e3,
        percentile(&samples, 0.9).as_secs_f64() * 1e3,
        percentile(&samples, 0.99).as_secs_f64() * 1e3,
        percentile(&samples, 0.5).as_secs_f64() * 1e3 / 5.0
    );
}

async fn fan_out() {
    let clients = 100;
    let deltas = 300;
    let mut reply = Reply::new().pace(Duration::from_millis(2));
    for i in 0..deltas {
        reply = reply.text(format!("t{i} "));
    }
    let model = ScriptedModel::start(vec![reply]).await;
    let ws = workspace(&model);
    let engine = ws.engine().unwrap();
    let url = serve(engine).await;
    let client = client();
    let created: Value = client
        .post(format!("{url}/api/sessions"))
        .bearer_auth(TOKEN)
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["id"].as_str().unwrap().to_string();
    let mut readers = Vec::new();
    for _ in 0..clients {
        readers.push(Reader::open(&client, format!("{url}/api/sessions/{id}/events")).await);
    }
    let started = Instant::now();
    client
        .post(format!("{url}/api/sessions/{id}/prompt"))
        .bearer_auth(TOKEN)
        .json(&serde_json::json!({"text": "stream"}))
        .send()
        .await
        .unwrap();
    let tasks: Vec<_> = readers
        .into_iter()
        .map(|mut r| {
            tokio::spawn(async move {
                let mut ids = Vec::new();
                let mut text = String::new();
                loop {
                    let (seq, kind, data) = r.next().await;
                    ids.push(seq);
                    if kind == "text_delta" {
                        text.push_str(data["text"].as_str().unwrap_or(""));
                    }
                    if kind == "turn_finished" {
                        return (ids, text);
                    }
                }
            })
        })
        .collect();
    let expected: String = (0..deltas).map(|i| format!("t{i} ")).collect();
    let mut complete = 0;
    let mut first: Option<Vec<i64>> = None;
    for t in tasks {
        let (ids, text) = t.await.unwrap();
        let in_order = ids.windows(2).all(|w| w[0] < w[1]);
        let same = first.get_or_insert_with(|| ids.clone()) == &ids;
        if in_order && same && text == expected {
            complete += 1;
        }
    }
    println!(
        "{clients} SSE clients on one session, a {deltas}-delta answer: {complete}/{clients} received every event ({} each), in order, once; turn + fan-out took {:.0} ms",
        first.map(|f| f.len()).unwrap_or(0),
        started.elapsed().as_secs_f64() * 1e3
    );
}

/// Peak RSS of `podcode serve` after start and a few requests (the binary must be built).
fn idle_rss() {
    let Some(bin) = std::env::current_exe()
        .ok()
        .and_then(|p| {
            p.parent()
                .and_then(|d| d.parent())
                .map(|d| d.join("podcode"))
        })
        .filter(|p| p.exists())
    else {
        println!(
            "idle server RSS: skipped (build the podcode binary first: cargo build -p podcode)"
        );
        return;
    };
    let model = ScriptedModel::start_blocking(vec![]);
    let ws = workspace(&model);
    let (root, repo) = (ws.root(), ws.repo());
    let mut child = std::process::Command::new(&bin)
        .arg("serve")
        .current_dir(&repo)
        .env("HOME", root.join("home"))
        .env("PODCODE_CONFIG_DIR", root.join("config"))
        .env("PODCODE_DATA_DIR", root.join("data"))
        .env("PODCODE_SERVER_TOKEN", TOKEN)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    let url = line
        .trim()
        .trim_start_matches("Podcode server on ")
        .to_string();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let client = client();
        for path in [
            "/",
            "/openapi.json",
            "/api/sessions",
            "/api/info",
            "/api/agents",
        ] {
            let _ = client
                .get(format!("{url}{path}"))
                .bearer_auth(TOKEN)
                .send()
                .await;
        }
    });
    std::thread::sleep(Duration::from_millis(500));
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
            .unwrap_or(0.0)
    };
    let peak = field("VmHWM:");
    println!(
        "idle server ({}): peak RSS {peak:.1} MiB, now {:.1} MiB = {:.1} MiB anonymous + {:.1} MiB file-backed (mostly the binary's own pages) (target < 30 MiB: {:.2}x of it)",
        bin.display(),
        field("VmRSS:"),
        field("RssAnon:"),
        field("RssFile:"),
        peak / 30.0
    );
    let _ = child.kill();
    let _ = child.wait();
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(latency());
    rt.block_on(fan_out());
    drop(rt);
    idle_rss();
}
