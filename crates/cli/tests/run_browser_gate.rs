//! `podcode run` driving `browser_navigate` on a real headless Chromium against servers this
//! test runs on loopback addresses: a navigation that starts a download answers at once that
//! the download was blocked and leaves the browser usable, and the requests a page makes
//! itself (`fetch()`, an image, a frame) to a private address nobody allowed (127.0.0.2,
//! where Chromium's own rules let a 127.0.0.1 page through) are stopped by Podcode's gate
//! before they leave the browser, while the page's requests to its allowed host still go.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use podcode_providers::testing::Reply;

mod common;
use common::*;

/// Serves on `ip`, recording every request's path (and query); `answer` gives (headers, body) per path.
fn serve(ip: &str, answer: fn(&str, u16) -> (String, String)) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind((ip, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            // A connection closed without a request line (a speculative preconnect) sent
            // nothing: only requests are recorded.
            let Some(path) = first.split_whitespace().nth(1).map(str::to_string) else {
                continue;
            };
            let mut line = String::new();
            while reader.read_line(&mut line).map(|n| n > 2).unwrap_or(false) {
                line.clear();
            }
            log.lock().unwrap().push(path.clone());
            let (headers, body) = answer(&path, port);
            let mut s = &stream;
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, seen)
}

/// The private server (127.0.0.2): anything it is asked is a leak.
fn private(path: &str, _: u16) -> (String, String) {
    (
        "Content-Type: text/html\r\nAccess-Control-Allow-Origin: *\r\n".into(),
        format!("<title>Private</title>PRIVATE-DATA for {path}"),
    )
}

fn page(private_port: u16) -> String {
    let p = format!("http://127.0.0.2:{private_port}");
    format!(
        r#"<!DOCTYPE html><title>Shop</title><h1>Shop</h1><p id="s">waiting</p>
<img src="/own.png" alt="own"><img src="{p}/pixel.png" alt="pixel"><iframe src="{p}/frame"></iframe>
<script>fetch('{p}/data.json').then(r => r.text()).then(t => s.textContent = 'got ' + t,
  () => s.textContent = 'fetch failed');</script>"#
    )
}

fn config(env: &Env) {
    env.write_global(&format!(
        "[provider.scripted]\nbase_url = \"{}\"\n\
         [[permission]]\npermission = \"browser_private\"\npattern = \"127.0.0.1\"\naction = \"allow\"\n\
         [[permission]]\npermission = \"browser\"\npattern = \"127.0.0.1\"\naction = \"allow\"\n",
        env.server.base_url()
    ));
}

#[test]
fn a_download_is_refused_at_once_and_a_pages_own_requests_to_private_addresses_are_gated() {
    let (private_port, leaked) = serve("127.0.0.2", private);
    let (port, seen) = serve("127.0.0.1", |path, _| {
        match path {
        "/report" => (
            "Content-Type: text/csv\r\nContent-Disposition: attachment; filename=\"report.csv\"\r\n"
                .into(),
            "a,b\n1,2\n".into(),
        ),
        "/archive" => (
            "Content-Type: application/octet-stream\r\n".into(),
            "PK\u{3}\u{4}binary".into(),
        ),
        "/own.png" => ("Content-Type: image/png\r\n".into(), String::new()),
        // `/shop?p=PORT`: the page, pointing at the private server on PORT.
        shop => (
            "Content-Type: text/html\r\n".into(),
            page(
                shop.rsplit_once("?p=")
                    .and_then(|(_, p)| p.parse().ok())
                    .unwrap_or(9),
            ),
        ),
    }
    });
    let shop = format!("http://127.0.0.1:{port}/shop");
    let nav = |id: &str, url: &str| {
        Reply::new().tool_call(id, "browser_navigate", format!(r#"{{"url": "{url}"}}"#))
    };
    let env = Env::new(vec![
        nav("c1", &format!("http://127.0.0.1:{port}/report")),
        nav("c2", &format!("{shop}?p={private_port}")),
        nav("c3", &format!("http://127.0.0.1:{port}/archive")),
        Reply::new().text("done"),
    ]);
    config(&env);
    let tmp = env.root.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = env
        .cmd(&["run", "get the report, then open the shop"])
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = env.requests();
    assert_eq!(requests.len(), 4);
    let results = tool_messages(&requests[3]);
    // Each download is answered at once, and the browser goes on working after it.
    for (i, path) in [(0, "report"), (2, "archive")] {
        assert_eq!(
            results[i].1,
            format!(
                "The browser_navigate tool failed: The download of http://127.0.0.1:{port}/{path} was blocked: the browser does not save files. To read the file, fetch it with webfetch (if it is allowed) or ask the user to download it."
            )
        );
    }
    let shop_result = &results[1].1;
    assert!(shop_result.contains("Title: Shop"), "{shop_result}");
    let p = format!("http://127.0.0.2:{private_port}");
    for path in ["data.json", "pixel.png", "frame"] {
        let note = format!(
            "[a request of the page was blocked: Refused to open {p}/{path}: 127.0.0.2 is a private or loopback address (127.0.0.2)."
        );
        assert!(
            shop_result.contains(&note),
            "{note:?} missing:\n{shop_result}"
        );
    }
    assert!(shop_result.contains("fetch failed"), "{shop_result}");
    assert!(!shop_result.contains("PRIVATE-DATA"), "{shop_result}");
    assert_eq!(*leaked.lock().unwrap(), Vec::<String>::new());
    let seen = seen.lock().unwrap().clone();
    assert!(seen.contains(&"/own.png".to_string()), "{seen:?}");
}
