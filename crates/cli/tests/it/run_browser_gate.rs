//! `podcode run` driving `browser_navigate` on a real headless Chromium against servers this
//! test runs on loopback addresses: a navigation that starts a download answers at once that
//! the download was blocked and leaves the browser usable, and the requests a page makes
//! itself (`fetch()`, an image, a frame) to a private address nobody allowed (127.0.0.2,
//! where Chromium's own rules let a 127.0.0.1 page through) are stopped by Podcode's gate
//! before they leave the browser, while the page's requests to its allowed host still go.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use podcode_providers::testing::Reply;

use crate::common;
use common::web::*;
use common::*;

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
    config(&env, &format!("{LOCAL_PRIVATE}{LOCAL_BROWSER}"));
    let tmp = run_tmp(&env);
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
