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

/// A local dev server (a loopback origin) is asked about like every other gate: without a
/// terminal the ask is rejected, and a deny rule refuses — both before any Chromium starts
/// (a stand-in that records its start proves none did), the refusal printed whole by `run`
/// with the rule that would allow the page, as TOML; pasted into the config, that rule
/// opens the page. On a terminal, "always" is remembered for the origin.
#[test]
fn a_local_dev_server_is_asked_about_and_a_refusal_starts_no_browser_and_names_the_rule() {
    let (port, _) = serve("127.0.0.1", |_, _| {
        (
            "Content-Type: text/html\r\n".into(),
            "<title>Dev</title><h1>Dev server</h1><p>Rows are added below</p>".into(),
        )
    });
    let url = format!("http://127.0.0.1:{port}/");
    let origin = format!("http://127.0.0.1:{port}");
    let nav = || Reply::new().tool_call("c1", "browser_navigate", format!(r#"{{"url": "{url}"}}"#));
    let mut script = Vec::new();
    for _ in 0..4 {
        script.extend([nav(), Reply::new().text("ok")]);
    }
    let env = Env::new(script);
    let tmp = run_tmp(&env);
    let started = env.root.path().join("chromium-started");
    let fake = env.root.path().join("fake-chromium");
    std::fs::write(
        &fake,
        format!("#!/bin/sh\ntouch '{}'\nexit 1\n", started.display()),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let fake_browser = format!("[browser]\nexecutable = \"{}\"\n", fake.display());
    let run = |args: &[&str]| env.cmd(args).env("TMPDIR", &tmp).output().unwrap();
    let result = |i: usize| tool_messages(&env.requests()[i])[0].1.clone();

    // Nobody can answer (no terminal, no --yes): the origin's ask is rejected.
    config(&env, &fake_browser);
    let out = run(&["run", "open the dev server"]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("\"{origin}\"")), "{stderr}");
    assert!(
        result(1).starts_with("The user rejected the browser_private permission for "),
        "{}",
        result(1)
    );
    assert!(!started.exists(), "Chromium was started only to be refused");

    // A deny rule refuses, even with --yes; the refusal says which rule would allow it.
    let deny = "[[permission]]\npermission = \"browser_private\"\npattern = \"127.0.0.1\"\naction = \"deny\"\n";
    config(&env, &format!("{fake_browser}{deny}"));
    let out = run(&["run", "--yes", "open the dev server"]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let rule = format!(
        "[[permission]]\npermission = \"browser_private\"\npattern = \"{origin}\"\naction = \"allow\"\n"
    );
    let refusal = format!(
        "Refused to open {url}: 127.0.0.1 is a private or loopback address (127.0.0.1). A permission rule in the user's configuration denies it. To allow it, the user can add to their config.toml:\n\n{rule}"
    );
    assert_eq!(result(3), refusal);
    let shown = as_printed(&refusal);
    assert!(
        stderr.contains(&shown),
        "the whole refusal, as printed:\n{stderr}"
    );
    assert!(!started.exists(), "Chromium was started only to be refused");

    // The rule, pasted as printed, opens the page in a real Chromium.
    let pasted: String = shown
        .split_once("  [[permission]]")
        .map(|(_, rest)| format!("[[permission]]{rest}"))
        .unwrap()
        .lines()
        .map(|l| format!("{}\n", l.trim_start()))
        .collect();
    config(&env, &format!("{deny}{pasted}"));
    let out = run(&["run", "open the dev server"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(result(5).contains("Title: Dev"), "{}", result(5));

    // On a terminal the user allows the origin always; a later run opens it unasked.
    config(&env, "");
    let shown = common::pty::answer_in_pty(
        env.cmd(&[]).env("TMPDIR", &tmp),
        &["run", "open the dev server"],
        &[("> ", "a")],
    );
    assert!(shown.contains(&origin), "{shown}");
    assert!(result(7).contains("Title: Dev"), "{}", result(7));
    assert_eq!(processes_under(&tmp), Vec::<String>::new());
}
