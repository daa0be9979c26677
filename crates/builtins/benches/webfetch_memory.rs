//! Benchmark: `webfetch` of a 5 MiB HTML page from a local server must stay under 64 MiB
//! peak memory.
//!
//! The parent builds a realistic page just under the 5 MiB limit (an article of headings,
//! paragraphs with links and inline code, lists, code blocks and tables, wrapped in
//! navigation, scripts and styles) and serves it from 127.0.0.1. It then re-executes this
//! binary once per format with `PODCODE_WEBFETCH_BENCH_CHILD=<format>`; each child runs one
//! `webfetch` through the real pipeline (with an explicit `webfetch_private` allow rule for
//! 127.0.0.1) and prints its wall time, its peak RSS (`VmHWM` from /proc/self/status) and
//! the size of what it got back. A fresh process per format means the peak belongs to that
//! one call. The parent prints
//!
//! `webfetch of a 5.00 MiB page as markdown: peak RSS X MiB (target < 64 MiB), Y s, Z KiB of output`
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fmt::Write as _;
use std::time::Instant;

use axum::Router;
use axum::http::header;
use axum::routing::get;
use podcode_tools::CallStatus;
use podcode_tools::testing::child_report::{peak_rss_kib, run_self};
use serde_json::json;

const CHILD_ENV: &str = "PODCODE_WEBFETCH_BENCH_CHILD";
const URL_ENV: &str = "PODCODE_WEBFETCH_BENCH_URL";
const LIMIT: usize = 5 * 1024 * 1024;
const TARGET_MIB: f64 = 64.0;

fn main() {
    match std::env::var(CHILD_ENV) {
        Ok(format) => child(&format),
        Err(_) => parent(),
    }
}

/// An HTML page of just under `LIMIT` bytes.
fn page() -> String {
    let mut html = String::from(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>The big guide</title>\
         <style>body{font-family:sans-serif}.x{color:red}</style>\
         <script>window.analytics=function(){return 1}</script></head><body>\
         <header><nav><ul><li><a href=\"/\">Home</a></li><li><a href=\"/docs\">Docs</a></li></ul></nav></header>\
         <main><article><h1>The big guide</h1>",
    );
    let tail = "</article></main><footer>Copyright</footer></body></html>";
    let mut section = 0;
    loop {
        section += 1;
        let mut s = String::new();
        let _ = write!(
            s,
            "<section><h2 id=\"s{section}\">Section {section}</h2>\
             <p>This section explains <a href=\"https://example.com/topic/{section}\">topic {section}</a> in some detail, \
             with <code>inline_code({section})</code>, <em>emphasis</em> and <strong>strong words</strong> so the \
             converter has real work to do. Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\
             <ul><li>First point about {section}</li><li>Second point with <a href=\"/p/{section}\">a link</a></li><li>Third point</li></ul>\
             <pre><code class=\"language-rust\">fn section_{section}(x: u32) -&gt; u32 {{\n    x * {section}\n}}\n</code></pre>\
             <table><thead><tr><th>Key</th><th>Value</th></tr></thead><tbody>\
             <tr><td>id</td><td>{section}</td></tr><tr><td>name</td><td>section {section}</td></tr></tbody></table>\
             <script>track({section})</script></section>"
        );
        if html.len() + s.len() + tail.len() > LIMIT - 1024 {
            break;
        }
        html.push_str(&s);
    }
    html.push_str(tail);
    html
}

fn parent() {
    let page = page();
    let size_mib = page.len() as f64 / (1 << 20) as f64;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("bench: runtime");
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bench: bind");
    let addr = listener.local_addr().expect("bench: address");
    let app = Router::new().route(
        "/page",
        get(move || {
            let page = page.clone();
            async move { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page) }
        }),
    );
    rt.spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let mut worst: f64 = 0.0;
    for format in ["markdown", "text", "html"] {
        let report = run_self(&[
            (CHILD_ENV, format.to_string()),
            (URL_ENV, format!("http://{addr}/page")),
        ]);
        let field = |name: &str| report.number(name);
        let rss = report.peak_rss_mib();
        let before = field("start_rss_kib") / 1024.0;
        worst = worst.max(rss);
        println!(
            "webfetch of a {size_mib:.2} MiB page as {format}: peak RSS {rss:.1} MiB (target < {TARGET_MIB} MiB; {before:.1} MiB before the call), {:.2} s, {:.0} KiB of output",
            field("secs"),
            field("output_bytes") / 1024.0
        );
    }
    println!(
        "worst peak RSS {worst:.1} MiB: {}",
        if worst < TARGET_MIB {
            "within target"
        } else {
            "OVER TARGET"
        }
    );
}

fn child(format: &str) {
    let url = std::env::var(URL_ENV).expect("bench: url env");
    let h = common::builtins(&[("webfetch", "127.0.0.1"), ("webfetch_private", "127.0.0.1")]);
    let rt = common::runtime();
    let start_rss = peak_rss_kib();
    let start = Instant::now();
    let out = rt.block_on(h.call_json("webfetch", json!({"url": url, "format": format})));
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    println!("peak_rss_kib={}", peak_rss_kib());
    println!("start_rss_kib={start_rss}");
    println!("secs={secs}");
    println!("output_bytes={}", out.result.output.len());
}
