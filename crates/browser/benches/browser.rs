//! Browser figures (README's performance table): the first `browser_*` call of a session
//! (cold Chromium: launch, tab, navigation, snapshot), a warm click + snapshot (median of
//! 50), and the peak resident memory of the browser's process tree while it works.
//! Run: `cargo bench -p podcode-browser --bench browser`.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use axum::Router;
use axum::response::Html;
use axum::routing::get;
use podcode_protocol::{PermissionAction, PermissionRule};
use podcode_tools::CallStatus;
use podcode_tools::testing::{Setup, harness};
use serde_json::json;

const PAGE: &str = r#"<!DOCTYPE html><title>Counter</title><h1>Counter</h1>
<button id="b">Add</button><ul id="l"></ul>
<script>let n = 0; b.onclick = () => { n++; const li = document.createElement('li');
li.textContent = 'Row ' + n; l.appendChild(li); };</script>"#;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 4)]
async fn main() {
    let app = Router::new().route("/", get(|| async { Html(PAGE) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let mut registry = podcode_tools::ToolRegistry::new();
    podcode_browser::register(&mut registry);
    let mut rules = podcode_builtins::default_rules();
    rules.push(PermissionRule::new(
        "browser_private",
        "127.0.0.1",
        PermissionAction::Allow,
    ));
    rules.push(PermissionRule::new(
        "browser",
        "127.0.0.1",
        PermissionAction::Allow,
    ));
    let h = harness(
        registry,
        Setup {
            rules,
            ..Default::default()
        },
    );

    let t = Instant::now();
    let nav = h
        .call_json(
            "browser_navigate",
            json!({ "url": format!("http://{addr}/") }),
        )
        .await;
    let cold = t.elapsed();
    assert_eq!(nav.status, CallStatus::Completed, "{}", nav.model_text);
    let pid = nav.result.metadata["browserPid"].as_u64().unwrap() as u32;
    let button = nav
        .model_text
        .lines()
        .find(|l| l.contains("button \"Add\""))
        .and_then(|l| l.split("[ref=").nth(1))
        .and_then(|l| l.split(']').next())
        .unwrap()
        .to_string();

    let mut peak = podcode_browser::tree_memory(&[pid]);
    let mut clicks = Vec::new();
    for _ in 0..50 {
        let t = Instant::now();
        let c = h.call_json("browser_click", json!({ "ref": button })).await;
        let s = h.call_json("browser_snapshot", json!({})).await;
        clicks.push(t.elapsed());
        assert_eq!(c.status, CallStatus::Completed, "{}", c.model_text);
        assert_eq!(s.status, CallStatus::Completed, "{}", s.model_text);
        peak = peak.max(podcode_browser::tree_memory(&[pid]));
    }
    let processes = podcode_browser::process_tree(pid).len();
    podcode_browser::close_session(&h.session).await;
    println!(
        "first browser_* call (cold Chromium + navigate + snapshot): {:.0} ms",
        cold.as_secs_f64() * 1000.0
    );
    println!(
        "warm browser_click + browser_snapshot: median {:.1} ms (min {:.1}, max {:.1})",
        median(clicks.clone()).as_secs_f64() * 1000.0,
        clicks.iter().min().unwrap().as_secs_f64() * 1000.0,
        clicks.iter().max().unwrap().as_secs_f64() * 1000.0
    );
    println!(
        "browser process tree: {processes} processes, peak {:.0} MiB (PSS summed over the tree)",
        peak as f64 / 1024.0 / 1024.0
    );
}
