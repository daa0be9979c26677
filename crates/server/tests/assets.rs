//! The page's routes over real HTTP: `/` with its content type and Content-Security-Policy,
//! every asset with its type and an ETag that turns a repeat request into a bodiless 304,
//! and a 404 for a path that is not embedded. No token is needed for any of them.

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
            .map(|a| (a, get(port, &format!("/assets/{}", a.path), "")))
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

    for (asset, (status, head, body)) in &files {
        assert_eq!(*status, 200, "{}", asset.path);
        assert!(
            head.contains(&format!("content-type: {}", asset.content_type)),
            "{head}"
        );
        assert!(head.contains("cache-control: no-cache"), "{head}");
        assert_eq!(body.as_slice(), asset.body, "{}", asset.path);
    }
    // Each script the page imports is embedded.
    let app = files
        .iter()
        .find(|(a, _)| a.path == "app.mjs")
        .expect("app.mjs");
    let app = String::from_utf8_lossy(&app.1.2).into_owned();
    for import in app.split("from \"./").skip(1) {
        let name = import.split('"').next().unwrap_or_default();
        assert!(
            assets::find(name).is_some(),
            "app.mjs imports {name}, which is not embedded"
        );
    }

    let (status, head, _) = files[0].1.clone();
    assert_eq!(status, 200);
    let tag = head
        .lines()
        .find_map(|l| l.strip_prefix("etag: "))
        .expect("etag")
        .to_string();
    let path = format!("/assets/{}", files[0].0.path);
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
