//! The page's routes over real HTTP: `/` with its content type and Content-Security-Policy,
//! every asset with its type and an ETag that turns a repeat request into a bodiless 304,
//! and a 404 for a path that is not embedded. No token is needed for any of them.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpStream;

use podcode_server::assets;

/// Serves the page's routes on a random loopback port; returns the port.
async fn start() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, assets::routes::<()>()).await;
    });
    port
}

/// One HTTP/1.1 GET: (status, lowercased headers, body).
fn get(port: u16, path: &str, extra: &str) -> (u16, String, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{extra}\r\n"
    )
    .expect("send");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("header end");
    let head = String::from_utf8_lossy(&raw[..split]).to_lowercase();
    let status = head[9..12].parse().expect("status");
    (status, head, raw[split + 4..].to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_and_its_assets_are_served_with_types_policy_and_revalidation() {
    let port = start().await;
    let (index, files) = tokio::task::spawn_blocking(move || {
        let index = get(port, "/", "");
        let files: Vec<_> = assets::ASSETS
            .iter()
            .filter_map(|(p, b)| {
                p.strip_prefix("assets/")
                    .map(|rel| (rel, *b, get(port, &format!("/assets/{rel}"), "")))
            })
            .collect();
        (index, files)
    })
    .await
    .expect("client");

    let (status, head, body) = index;
    assert_eq!(status, 200);
    assert!(
        head.contains("content-type: text/html; charset=utf-8"),
        "{head}"
    );
    assert!(
        head.contains("content-security-policy: default-src 'none'; script-src 'self';"),
        "{head}"
    );
    assert!(head.contains("x-content-type-options: nosniff"), "{head}");
    assert!(
        String::from_utf8_lossy(&body).contains("<script type=\"module\" src=\"/assets/app.mjs\">")
    );

    assert!(files.len() >= 8, "{} files under web/assets", files.len());
    for (path, bytes, (status, head, body)) in &files {
        assert_eq!(*status, 200, "{path}");
        let ty = format!("content-type: {}", assets::content_type(path));
        assert!(head.contains(&ty), "{head}");
        assert!(head.contains("cache-control: no-cache"), "{head}");
        assert!(head.contains("etag: \""), "{head}");
        assert_eq!(body.as_slice(), *bytes, "{path}");
    }
    assert_eq!(
        assets::content_type("app.mjs"),
        "text/javascript; charset=utf-8"
    );
    // Every module a script imports is embedded.
    for (path, _, (_, _, body)) in files.iter().filter(|(p, _, _)| p.ends_with(".mjs")) {
        let text = String::from_utf8_lossy(body);
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        for import in text.split("from \"./").skip(1) {
            let name = import.split('"').next().unwrap_or_default();
            let full = if dir.is_empty() {
                format!("assets/{name}")
            } else {
                format!("assets/{dir}/{name}")
            };
            assert!(
                assets::file(&full).is_some(),
                "{path} imports {name}: not embedded"
            );
        }
    }

    let (status, head, _) = files[0].2.clone();
    assert_eq!(status, 200);
    let tag = head
        .lines()
        .find_map(|l| l.strip_prefix("etag: "))
        .expect("etag")
        .to_string();
    let path = format!("/assets/{}", files[0].0);
    let (again, none) = tokio::task::spawn_blocking(move || {
        (
            get(port, &path, &format!("If-None-Match: {tag}\r\n")),
            get(port, "/assets/nope.js", ""),
        )
    })
    .await
    .expect("client");
    assert_eq!(again.0, 304);
    assert!(again.2.is_empty());
    assert_eq!(none.0, 404);
}
