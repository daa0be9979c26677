//! `webfetch` through the real pipeline against a local HTTP server on 127.0.0.1 (allowed by
//! a `webfetch_private` rule for the bare host, as a user would allow a dev server): HTML to
//! Markdown without page chrome, text, raw HTML, plain text, images, redirects (relative,
//! the limit), the size limit, the timeout, and every failure text. Which targets may be
//! fetched at all is `webfetch_gate`'s, on the same server.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use podcode_protocol::{PermissionAction, PermissionReply, PermissionRule};
use podcode_tools::testing::{Harness, Setup, harness};
use podcode_tools::{CallStatus, ToolRegistry};
use serde_json::json;

const PAGE: &str = r#"<!DOCTYPE html>
<html><head><title>Guide</title><style>body { color: red }</style><script>alert("hi")</script></head>
<body>
<header><a href="/">Home</a> | <a href="/blog">Blog</a></header>
<nav><ul><li><a href="/a">Menu A</a></li></ul></nav>
<main><article>
<header><h1>Getting started</h1></header>
<p>Install with <code>cargo add podcode</code> and read the <a href="https://example.com/docs">docs</a>.</p>
<h2>Steps</h2>
<ul><li>Install</li><li>Run</li></ul>
<pre><code class="language-rust">fn main() {}
</code></pre>
<table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody><tr><td>a</td><td>1</td></tr></tbody></table>
</article></main>
<aside>Related posts</aside>
<footer>Copyright Example</footer>
<noscript>Enable JavaScript</noscript>
<svg><text>logo</text></svg>
<iframe src="/ad"></iframe>
</body></html>"#;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDRfake";
const GIF: &[u8] = b"GIF89a\x01\0\x01\0fake";

fn typed(content_type: &'static str, body: impl Into<Body>) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body.into()).into_response()
}

fn redirect(status: StatusCode, to: String) -> Response {
    (status, [(header::LOCATION, to)]).into_response()
}

async fn hops(Path(n): Path<u32>) -> Response {
    if n == 0 {
        redirect(StatusCode::MOVED_PERMANENTLY, "../plain".into())
    } else {
        redirect(StatusCode::FOUND, format!("/hops/{}", n - 1))
    }
}

/// A body of `bytes` streamed in 64 KiB chunks, without a Content-Length.
fn streamed(bytes: usize) -> Response {
    let chunks = (0..bytes.div_ceil(65536)).map(move |i| {
        let len = 65536.min(bytes - i * 65536);
        Ok::<_, std::io::Error>(vec![b'a'; len])
    });
    typed(
        "text/plain",
        Body::from_stream(futures_util::stream::iter(chunks)),
    )
}

pub(crate) async fn serve() -> SocketAddr {
    serve_on("127.0.0.1:0").await
}

/// [`serve`] on the address `bind` (`[::1]:0` for IPv6 loopback).
pub(crate) async fn serve_on(bind: &str) -> SocketAddr {
    let app = Router::new()
        .route(
            "/page",
            get(|| async { typed("text/html; charset=utf-8", PAGE) }),
        )
        .route(
            "/plain",
            get(|| async { typed("text/plain", "hello\nworld\n") }),
        )
        .route(
            "/json",
            get(|| async { typed("application/json", r#"{"ok":true}"#) }),
        )
        .route(
            "/empty",
            get(|| async {
                typed(
                    "text/html",
                    "<html><body><script>x()</script></body></html>",
                )
            }),
        )
        .route("/logo.png", get(|| async { typed("image/png", PNG) }))
        .route(
            "/sniffed",
            get(|| async { typed("application/octet-stream", GIF) }),
        )
        .route(
            "/doc.pdf",
            get(|| async { typed("application/pdf", "%PDF-1.4 binary") }),
        )
        .route("/missing", get(|| async { (StatusCode::NOT_FOUND, "no") }))
        .route(
            "/broken",
            get(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "boom") }),
        )
        .route(
            "/slow",
            get(|| async {
                // Far longer than any limit a test sets or waits for.
                tokio::time::sleep(Duration::from_secs(3600)).await;
                "late"
            }),
        )
        .route("/big", get(|| async { streamed(6 * 1024 * 1024) }))
        .route(
            "/big-declared",
            get(|| async { typed("text/plain", vec![b'a'; 6 * 1024 * 1024]) }),
        )
        .route("/limit", get(|| async { streamed(5 * 1024 * 1024) }))
        .route("/hops/{n}", get(hops))
        .route(
            "/to-loopback6",
            get(|| async { redirect(StatusCode::FOUND, "http://[::1]:9/plain".into()) }),
        )
        .route(
            "/to-file",
            get(|| async { redirect(StatusCode::FOUND, "file:///etc/hostname".into()) }),
        )
        .route(
            "/to/{port}",
            get(|Path(port): Path<u16>| async move {
                redirect(StatusCode::FOUND, format!("http://127.0.0.1:{port}/plain"))
            }),
        )
        .route("/no-location", get(|| async { StatusCode::FOUND }))
        .route(
            "/headers",
            get(|headers: HeaderMap| async move {
                let h = |n: header::HeaderName| {
                    headers
                        .get(n)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("")
                        .to_string()
                };
                format!("ua={}\naccept={}", h(header::USER_AGENT), h(header::ACCEPT))
            }),
        );
    let listener = tokio::net::TcpListener::bind(bind).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    addr
}

fn registry() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    podcode_builtins::register_all(&mut r);
    r
}

pub(crate) fn allow(permission: &str, pattern: &str) -> PermissionRule {
    PermissionRule::new(permission, pattern, PermissionAction::Allow)
}

/// Defaults plus the given rules; the user answers `replies`.
pub(crate) fn setup(extra: Vec<PermissionRule>, replies: Vec<PermissionReply>) -> Harness {
    let mut rules = podcode_builtins::default_rules();
    rules.extend(extra);
    harness(
        registry(),
        Setup {
            rules,
            replies,
            ..Default::default()
        },
    )
}

/// 127.0.0.1 allowed as a private host, every port: that rule alone settles a fetch from it
/// (no `webfetch` question follows), so the user is never asked.
fn local() -> Harness {
    setup(vec![allow("webfetch_private", "127.0.0.1")], vec![])
}

pub(crate) async fn fetch(h: &Harness, args: serde_json::Value) -> (CallStatus, String) {
    let out = h.call_json("webfetch", args).await;
    (out.status, out.model_text)
}

#[test]
fn description_and_schema_are_pinned() {
    let r = registry();
    let tool = &r.get("webfetch").unwrap().tool;
    assert!(tool.gates_itself());
    let spec = tool.spec();
    assert!(spec.idempotent);
    assert_eq!(
        spec.description,
        "Fetches a URL over HTTP(S): a web page comes back as Markdown (or text, or raw HTML), a text or JSON file as it is, a png, jpeg, gif or webp image as an attachment.
Use it to read documentation or any page the user points to. It does not run JavaScript: pages that render only in a browser come back (nearly) empty.
- Follows up to 5 redirects; responses over 5 MiB are refused.
- The user may be asked to allow each new host and each localhost or private-address origin, redirects included. file:// URLs are refused unless allowed in the configuration; other non-HTTP URLs always.
- Long pages are truncated; the rest is saved to a file you can read.
Example: {\"url\": \"https://docs.rs/serde/latest/serde/\"}"
    );
    let p = &spec.parameters;
    assert_eq!(p["required"], json!(["url"]));
    assert_eq!(p["properties"]["timeout"]["maximum"], json!(120));
    assert_eq!(p["properties"]["timeout"]["default"], json!(30));
    assert_eq!(
        p["properties"]["url"]["description"],
        "The URL to fetch, starting with http:// or https://, e.g. `https://docs.rs/serde`."
    );
    let text = p.to_string();
    for format in ["\"markdown\"", "\"text\"", "\"html\""] {
        assert!(text.contains(format), "{text}");
    }
}

#[tokio::test]
async fn html_becomes_markdown_without_chrome() {
    let addr = serve().await;
    let h = local();
    let out = h
        .call_json("webfetch", json!({"url": format!("http://{addr}/page")}))
        .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        "Guide\n\n# Getting started\n\nInstall with `cargo add podcode` and read the [docs](https://example.com/docs).\n\n## Steps\n\n*   Install\n*   Run\n\n```rust\nfn main() {}\n```\n\n| Name | Value |\n| ---- | ----- |\n| a    | 1     |"
    );
    assert_eq!(out.result.title, format!("http://{addr}/page"));
    assert_eq!(
        out.result.metadata["contentType"],
        "text/html; charset=utf-8"
    );
    assert!(h.user.asks().is_empty());
}

#[tokio::test]
async fn text_strips_all_markup_and_html_is_raw() {
    let addr = serve().await;
    let h = local();
    let url = format!("http://{addr}/page");
    let (status, text) = fetch(&h, json!({"url": url, "format": "text"})).await;
    assert_eq!(status, CallStatus::Completed, "{text}");
    assert_eq!(
        text,
        "Guide\n\nGetting started\n\nInstall with cargo add podcode and read the docs.\n\nSteps\n\nInstall\nRun\n\nfn main() {}\n\nName\tValue\na\t1"
    );
    let (_, html) = fetch(&h, json!({"url": url, "format": "html"})).await;
    assert_eq!(html, PAGE);
}

#[tokio::test]
async fn text_json_and_empty_pages() {
    let addr = serve().await;
    let h = local();
    let (status, text) = fetch(&h, json!({"url": format!("http://{addr}/plain")})).await;
    assert_eq!(status, CallStatus::Completed);
    assert_eq!(text, "hello\nworld\n");
    let (_, json_text) = fetch(
        &h,
        json!({"url": format!("http://{addr}/json"), "format": "html"}),
    )
    .await;
    assert_eq!(json_text, r#"{"ok":true}"#);
    let (_, empty) = fetch(&h, json!({"url": format!("http://{addr}/empty")})).await;
    assert_eq!(
        empty,
        format!("(The page at http://{addr}/empty has no text content.)")
    );
}

#[tokio::test]
async fn sends_a_podcode_user_agent_and_accept_header() {
    let addr = serve().await;
    let h = local();
    let (_, text) = fetch(&h, json!({"url": format!("http://{addr}/headers")})).await;
    assert_eq!(
        text,
        format!(
            "ua=Podcode/{} (+webfetch)\naccept=text/markdown;q=1.0, text/x-markdown;q=0.9, text/plain;q=0.8, text/html;q=0.7, */*;q=0.1",
            env!("CARGO_PKG_VERSION")
        )
    );
}

#[tokio::test]
async fn images_come_back_as_attachments() {
    let addr = serve().await;
    let h = local();
    let url = format!("http://{addr}/logo.png");
    let out = h.call_json("webfetch", json!({"url": url})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        format!(
            "{url} is an image (image/png, {} bytes); it is attached to this result.",
            PNG.len()
        )
    );
    let a = &out.result.attachments[0];
    assert_eq!(a.mime, "image/png");
    assert_eq!(a.filename.as_deref(), Some("logo.png"));
    assert!(a.url.starts_with("data:image/png;base64,iVBORw0KGgo"));
    // No image content type, but GIF magic bytes.
    let out = h
        .call_json("webfetch", json!({"url": format!("http://{addr}/sniffed")}))
        .await;
    assert_eq!(out.result.attachments[0].mime, "image/gif");
}

#[tokio::test]
async fn redirects_are_followed_up_to_five() {
    let addr = serve().await;
    let h = local();
    let (status, text) = fetch(&h, json!({"url": format!("http://{addr}/hops/4")})).await;
    assert_eq!(status, CallStatus::Completed, "{text}");
    assert_eq!(
        text,
        format!("(Redirected to http://{addr}/plain)\n\nhello\nworld\n")
    );
    let (status, text) = fetch(&h, json!({"url": format!("http://{addr}/hops/5")})).await;
    assert_eq!(status, CallStatus::Failed);
    assert_eq!(
        text,
        format!(
            "The webfetch tool failed: gave up on http://{addr}/hops/5 after 5 redirects, the most webfetch follows. The site redirects in a loop or through too many hops; fetch the final address directly if you know it."
        )
    );
    let (_, text) = fetch(&h, json!({"url": format!("http://{addr}/no-location")})).await;
    assert_eq!(
        text,
        format!(
            "The webfetch tool failed: http://{addr}/no-location answered with a redirect (HTTP 302) without a usable Location header, so there was nothing to follow."
        )
    );
}

#[tokio::test]
async fn http_errors_name_the_status() {
    let addr = serve().await;
    let h = local();
    let (status, text) = fetch(&h, json!({"url": format!("http://{addr}/missing")})).await;
    assert_eq!(status, CallStatus::Failed);
    assert_eq!(
        text,
        format!(
            "The webfetch tool failed: http://{addr}/missing answered HTTP 404 Not Found: the page does not exist or may not be fetched. Check the URL, or use another source."
        )
    );
    let (_, text) = fetch(&h, json!({"url": format!("http://{addr}/broken")})).await;
    assert_eq!(
        text,
        format!(
            "The webfetch tool failed: http://{addr}/broken answered HTTP 500 Internal Server Error: the server failed. This may be temporary; try again later or use another source."
        )
    );
}

#[tokio::test]
async fn unsupported_content_is_refused() {
    let addr = serve().await;
    let h = local();
    let (status, text) = fetch(&h, json!({"url": format!("http://{addr}/doc.pdf")})).await;
    assert_eq!(status, CallStatus::Failed);
    assert_eq!(
        text,
        format!(
            "The webfetch tool failed: http://{addr}/doc.pdf has content type application/pdf, which is not HTML, text or a png, jpeg, gif or webp image, so it cannot be shown. webfetch returns web pages, text files and images only."
        )
    );
}

#[tokio::test]
async fn bodies_over_5_mib_are_refused() {
    let addr = serve().await;
    let h = local();
    for path in ["big", "big-declared"] {
        let (status, text) = fetch(&h, json!({"url": format!("http://{addr}/{path}")})).await;
        assert_eq!(status, CallStatus::Failed, "{path}");
        assert_eq!(
            text,
            format!(
                "The webfetch tool failed: stopped reading http://{addr}/{path}: the response is larger than 5 MiB, the most webfetch downloads. Fetch a more specific page, or a raw file URL, instead."
            )
        );
    }
    let out = h
        .call_json("webfetch", json!({"url": format!("http://{addr}/limit")}))
        .await;
    assert_eq!(out.status, CallStatus::Completed);
    assert_eq!(out.result.metadata["bytes"], 5 * 1024 * 1024);
}

#[tokio::test]
async fn slow_servers_time_out() {
    let addr = serve().await;
    let h = local();
    let started = std::time::Instant::now();
    let (status, text) = fetch(
        &h,
        json!({"url": format!("http://{addr}/slow"), "timeout": 1}),
    )
    .await;
    assert_eq!(status, CallStatus::Failed);
    assert_eq!(
        text,
        format!(
            "The webfetch tool failed: timed out after 1 s fetching http://{addr}/slow. The server is slow or unreachable; retry with a larger timeout (at most 120 seconds) or use another source."
        )
    );
    // The server answers after an hour: this says only that the limit, not the server, ended
    // the fetch (the bound is far above what a busy machine needs).
    assert!(started.elapsed() < Duration::from_secs(120));
    let (status, text) = fetch(
        &h,
        json!({"url": format!("http://{addr}/plain"), "timeout": 121}),
    )
    .await;
    assert_eq!(status, CallStatus::Failed);
    assert!(text.contains("timeout"), "{text}");
}

#[tokio::test]
async fn dns_tls_and_connection_failures_differ() {
    let addr = serve().await;
    let h = local();
    let (status, text) = fetch(&h, json!({"url": "http://no-such-host.invalid/page"})).await;
    assert_eq!(status, CallStatus::Failed);
    assert_eq!(
        text,
        "The webfetch tool failed: the host name no-such-host.invalid could not be resolved (DNS lookup failed) for http://no-such-host.invalid/page. Check the spelling of the domain; the site may not exist."
    );
    // https:// to a server that only speaks plain HTTP: the TLS handshake fails.
    let (_, text) = fetch(&h, json!({"url": format!("https://{addr}/plain")})).await;
    assert_eq!(
        text,
        format!(
            "The webfetch tool failed: no secure (TLS) connection could be opened to 127.0.0.1 for https://{addr}/plain: the certificate is invalid, expired or for another name, or the server does not speak HTTPS on that port. Do not retry the same URL; try http:// only if the site is meant to be served without TLS."
        )
    );
    // A port nobody listens on.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let (_, text) = fetch(&h, json!({"url": format!("http://{closed}/")})).await;
    let prefix =
        format!("The webfetch tool failed: could not connect to 127.0.0.1 for http://{closed}/ (");
    assert!(text.starts_with(&prefix), "{text}");
    assert!(
        text.ends_with("). The server is down or not reachable from here."),
        "{text}"
    );
}
