//! `podcode run` driving the `browser_*` tools on a real headless Chromium: the scripted
//! model navigates to a page this test serves on 127.0.0.1, clicks, and reads the result;
//! without a terminal a page nobody allowed is refused; no Chromium process outlives the
//! run (the profile lives under the run's own TMPDIR, which is how its processes are found).
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use podcode_providers::testing::Reply;

use crate::common;
use common::web::*;
use common::*;

const PAGE: &str = r#"<!DOCTYPE html><title>Counter</title><h1>Counter</h1>
<button id="b">Add</button><ul id="l"></ul>
<script>let n = 0; b.onclick = () => { n++; const li = document.createElement('li');
li.textContent = 'Row ' + n; l.appendChild(li); };</script>"#;

/// Serves `PAGE` for every request, on a thread, until the test process ends.
fn serve_page() -> u16 {
    serve("127.0.0.1", |_, _| {
        ("Content-Type: text/html\r\n".into(), PAGE.into())
    })
    .0
}

#[test]
fn an_agent_opens_a_page_clicks_and_reads_the_result() {
    let port = serve_page();
    let env = Env::new(vec![
        Reply::new().tool_call(
            "c1",
            "browser_navigate",
            format!(r#"{{"url": "http://127.0.0.1:{port}/"}}"#),
        ),
        Reply::new().tool_call("c2", "browser_click", r#"{"ref": "e3"}"#),
        Reply::new().tool_call("c3", "browser_snapshot", "{}"),
        Reply::new().text("The list shows Row 1."),
    ]);
    config(&env, &format!("{LOCAL_PRIVATE}{LOCAL_BROWSER}"));
    let tmp = run_tmp(&env);
    let out = env
        .cmd(&["run", "check the counter page"])
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(text(&out.stdout), "The list shows Row 1.\n");
    let requests = env.requests();
    // Before a page is open only browser_navigate is offered; after it, the page tools.
    let offered = |r: &serde_json::Value| -> Vec<String> {
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["function"]["name"].as_str())
            .filter(|n| n.starts_with("browser_"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(offered(&requests[0]), ["browser_navigate"]);
    assert_eq!(
        offered(&requests[1]).len(),
        11,
        "{:?}",
        offered(&requests[1])
    );
    let (_, opened) = &tool_messages(&requests[1])[0];
    assert!(opened.contains("Title: Counter"), "{opened}");
    assert!(opened.contains("[ref=e3] button \"Add\""), "{opened}");
    // Each text once: as its text line, not again as the line boxes Chromium laid out.
    assert!(!opened.contains("InlineTextBox"), "{opened}");
    assert_eq!(opened.matches("\"Counter\"").count(), 2, "{opened}");
    let (_, clicked) = &tool_messages(&requests[2])[1];
    assert!(clicked.starts_with("Clicked [ref=e3]."), "{clicked}");
    assert!(
        clicked.contains("+ ") && clicked.contains("Row 1"),
        "{clicked}"
    );
    let (_, read) = &tool_messages(&requests[3])[2];
    assert!(
        read.contains("listitem") && read.contains("Row 1"),
        "{read}"
    );
    assert_eq!(processes_under(&tmp), Vec::<String>::new());
}

#[test]
fn without_a_terminal_a_host_nobody_allowed_is_refused() {
    let port = serve_page();
    let env = Env::new(vec![
        Reply::new().tool_call(
            "c1",
            "browser_navigate",
            format!(r#"{{"url": "http://127.0.0.1:{port}/"}}"#),
        ),
        Reply::new().text("ok"),
    ]);
    config(&env, "");
    let tmp = run_tmp(&env);
    let out = env
        .cmd(&["run", "open the page"])
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (_, result) = &tool_messages(&env.requests()[1])[0];
    assert!(
        result.starts_with("The user rejected the browser_private permission for ")
            && result.ends_with(
                "nobody could answer the permission prompt (non-interactive run without --yes)"
            ),
        "{result}"
    );
    assert!(!result.contains("Counter"), "{result}");
    assert_eq!(processes_under(&tmp), Vec::<String>::new());
}

/// `podcode` killed with SIGKILL while its browser is open (the model is thinking): no
/// destructor or shutdown of ours runs, and still no Chromium process survives it.
#[test]
fn a_killed_podcode_leaves_no_chromium_behind() {
    let port = serve_page();
    let env = Env::new(vec![
        Reply::new().tool_call(
            "c1",
            "browser_navigate",
            format!(r#"{{"url": "http://127.0.0.1:{port}/"}}"#),
        ),
        // Long enough to be killed while waiting for it.
        Reply::new()
            .text("never read")
            .stall(std::time::Duration::from_secs(120)),
    ]);
    config(&env, &format!("{LOCAL_PRIVATE}{LOCAL_BROWSER}"));
    let tmp = run_tmp(&env);
    let mut podcode = env
        .cmd(&["run", "open the page"])
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The second request is out: the navigation finished, the browser is open.
    let mut waited = 0;
    while env.server.request_count() < 2 {
        assert!(waited < 1200, "podcode never sent its second request");
        assert!(
            podcode.try_wait().unwrap().is_none(),
            "podcode exited early"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
        waited += 1;
    }
    let running = processes_under(&tmp);
    assert!(running.len() >= 2, "{running:?}");
    podcode.kill().unwrap();
    podcode.wait().unwrap();
    // Bounded far above how long a busy machine takes to end Chromium.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
        if processes_under(&tmp).is_empty() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!(
        "Chromium outlived the killed podcode: {:?}",
        processes_under(&tmp)
    );
}
