//! The slow suite: the eleven `browser_*` tools through the real pipeline, on a real headless
//! Chromium, against pages this test serves on 127.0.0.1 (allowed by explicit
//! `browser_private` and `browser` rules, as a user would allow a dev server). Forms, a
//! select, scroll-to-load, a measured box, a diff after a click, a screenshot of the asked
//! size, the permission gate (asks, rejections, redirects, schemes), a killed browser, and
//! no Chromium process left once the session closes.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use base64::Engine as _;
use podcode_protocol::{PermissionAction, PermissionReply, PermissionRule};
use podcode_tools::testing::{Harness, Setup, harness};
use podcode_tools::{CallStatus, ToolRegistry};
use serde_json::{Value, json};

const FORM: &str = r#"<!DOCTYPE html><html><head><title>Sign up</title></head><body>
<h1>Sign up</h1>
<form action="/done" method="get">
  <label for="name">Name</label> <input id="name" name="name" value="old">
  <label for="colour">Colour</label>
  <select id="colour" name="colour"><option value="r">Red</option><option value="g">Green</option><option value="b">Blue</option></select>
  <button type="submit">Send</button>
</form>
<p id="picked">none</p>
<script>document.getElementById('colour').addEventListener('change', e => {
  document.getElementById('picked').textContent = 'picked ' + e.target.value; });</script>
</body></html>"#;

const LIST: &str = r#"<!DOCTYPE html><html><head><title>Feed</title>
<style>li { height: 120px; }</style></head><body><ul id="list"></ul>
<script>
let n = 0;
function more() { for (let i = 0; i < 10; i++) { n++; const li = document.createElement('li'); li.textContent = 'Item ' + n; list.appendChild(li); } }
more();
addEventListener('scroll', () => {
  if (innerHeight + scrollY >= document.body.scrollHeight - 200 && n < 50)
    fetch('/slow-json').then(r => r.json()).then(() => more());
});
</script></body></html>"#;

const BOX: &str = r#"<!DOCTYPE html><html><head><title>Box</title><style>
body { margin: 0; }
#card { box-sizing: border-box; width: 240px; height: 120px; margin: 30px 0 0 40px; padding: 8px;
  border: 2px solid rgb(0, 0, 255); display: flex; color: rgb(255, 0, 0); font-size: 18px; }
</style></head><body><section id="card" aria-label="Card">Hi</section>
<button id="add" style="height: 50px">Add</button>
<div id="log"></div>
<script>add.addEventListener('click', () => {
  const p = document.createElement('p'); p.textContent = 'Clicked once'; log.appendChild(p);
  document.body.style.background = 'rgb(0, 128, 0)'; });</script>
</body></html>"#;

async fn serve() -> SocketAddr {
    let app = Router::new()
        .route("/form", get(|| async { Html(FORM) }))
        .route(
            "/done",
            get(|uri: axum::http::Uri| async move {
                let q = uri.query().unwrap_or_default().to_string();
                let v = |k: &str| {
                    q.split('&')
                        .filter_map(|p| p.split_once('='))
                        .find(|(n, _)| *n == k)
                        .map(|(_, v)| v.to_string())
                        .unwrap_or_default()
                };
                Html(format!(
                    "<title>Done</title><h1>Hello {}, colour {}</h1>",
                    v("name"),
                    v("colour")
                ))
            }),
        )
        .route("/list", get(|| async { Html(LIST) }))
        .route(
            "/slow-json",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(200)).await;
                ([(header::CONTENT_TYPE, "application/json")], "{}")
            }),
        )
        .route("/box", get(|| async { Html(BOX) }))
        .route(
            "/away",
            get(|headers: HeaderMap| async move {
                redirect(format!("http://localhost:{}/form", port_of(&headers)))
            }),
        )
        .route(
            "/link-away",
            get(|headers: HeaderMap| async move {
                Html(format!(
                    "<title>Links</title><a href=\"http://localhost:{}/form\">Elsewhere</a>",
                    port_of(&headers)
                ))
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    addr
}

/// The port the request came to (from its Host header).
fn port_of(headers: &HeaderMap) -> String {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.rsplit(':').next())
        .unwrap_or("9")
        .to_string()
}

fn redirect(to: String) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, to)]).into_response()
}

fn registry(settings: podcode_browser::BrowserSettings) -> ToolRegistry {
    let mut r = ToolRegistry::new();
    podcode_browser::Browsers::new(settings).register(&mut r);
    r
}

fn rule(permission: &str, pattern: &str, action: PermissionAction) -> PermissionRule {
    PermissionRule::new(permission, pattern, action)
}

/// 127.0.0.1 allowed as a private host and as a browser target; `localhost` is private
/// and not allowed (asks `browser_private` for its origin).
fn setup(extra: Vec<PermissionRule>, replies: Vec<PermissionReply>) -> Harness {
    setup_with(Default::default(), extra, replies)
}

fn setup_with(
    settings: podcode_browser::BrowserSettings,
    extra: Vec<PermissionRule>,
    replies: Vec<PermissionReply>,
) -> Harness {
    let mut rules = podcode_builtins::default_rules();
    rules.push(rule(
        "browser_private",
        "127.0.0.1",
        PermissionAction::Allow,
    ));
    rules.push(rule("browser", "127.0.0.1", PermissionAction::Allow));
    rules.extend(extra);
    harness(
        registry(settings),
        Setup {
            rules,
            replies,
            ..Default::default()
        },
    )
}

async fn call(h: &Harness, tool: &str, args: Value) -> (CallStatus, String) {
    let out = h.call_json(tool, args).await;
    (out.status, out.model_text)
}

async fn ok(h: &Harness, tool: &str, args: Value) -> String {
    let (status, text) = call(h, tool, args).await;
    assert_eq!(status, CallStatus::Completed, "{tool}: {text}");
    text
}

/// The ref on the first snapshot line holding `needle`.
fn ref_of(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle} in:\n{snapshot}"));
    let start = line.find("[ref=").expect("a ref") + 5;
    let end = start + line[start..].find(']').expect("ref end");
    line[start..end].to_string()
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

/// Closes the session's browser and checks its whole process tree is gone.
async fn close_and_check(h: &Harness, tree: Vec<u32>) {
    podcode_browser::close_session(&h.session).await;
    // Bounded far above how long a busy machine takes to end Chromium.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
        if tree.iter().all(|p| !alive(*p)) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let left: Vec<u32> = tree.into_iter().filter(|p| alive(*p)).collect();
    panic!("Chromium processes left after the session closed: {left:?}");
}

fn browser_pid(h: &Harness, out: &podcode_tools::CallOutcome) -> u32 {
    let _ = h;
    out.result.metadata["browserPid"]
        .as_u64()
        .expect("browserPid") as u32
}

#[test]
fn the_eleven_tools_are_protected_built_ins_with_pinned_texts() {
    let r = registry(Default::default());
    let mut pinned = String::new();
    for id in podcode_browser::TOOL_IDS {
        let tool = &r.get(id).expect(id).tool;
        assert!(tool.gates_itself(), "{id}");
        let spec = tool.spec();
        pinned.push_str(&format!(
            "## {id}\n{}\n{}\n\n",
            spec.description,
            serde_json::to_string_pretty(&spec.parameters).unwrap()
        ));
    }
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser_tools.txt");
    if std::env::var_os("PODCODE_UPDATE_PINS").is_some() {
        std::fs::write(&file, &pinned).unwrap();
    }
    let expected = std::fs::read_to_string(&file).unwrap_or_default();
    assert_eq!(
        pinned, expected,
        "tool texts changed; rerun with PODCODE_UPDATE_PINS=1 if that is intended"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_form_is_filled_a_select_chosen_and_submitted() {
    let addr = serve().await;
    let h = setup(vec![], vec![]);
    let nav = h
        .call_json(
            "browser_navigate",
            json!({ "url": format!("http://{addr}/form") }),
        )
        .await;
    assert_eq!(nav.status, CallStatus::Completed, "{}", nav.model_text);
    let page = nav.model_text.clone();
    assert!(page.contains(&format!("URL: http://{addr}/form")), "{page}");
    assert!(page.contains("Status: 200"), "{page}");
    assert!(page.contains("Title: Sign up"), "{page}");
    assert!(page.contains("heading \"Sign up\" level=1"), "{page}");
    let pid = browser_pid(&h, &nav);
    let tree = podcode_browser::process_tree(pid);
    assert!(tree.len() > 1, "a browser has helper processes: {tree:?}");

    let colour = ref_of(&page, "combobox \"Colour\"");
    let picked = ok(
        &h,
        "browser_select",
        json!({ "ref": colour, "values": ["Blue"] }),
    )
    .await;
    assert!(picked.contains("Selected \"Blue\""), "{picked}");
    assert!(
        picked.contains("+ ") && picked.contains("picked b"),
        "{picked}"
    );
    let (status, text) = call(
        &h,
        "browser_select",
        json!({ "ref": colour, "values": ["Pink"] }),
    )
    .await;
    assert_eq!(status, CallStatus::Failed);
    assert!(
        text.contains(
            "has no option \"Pink\". Its options: \"Red (r)\", \"Green (g)\", \"Blue (b)\""
        ),
        "{text}"
    );

    let name = ref_of(&page, "textbox \"Name\"");
    let typed = ok(&h, "browser_type", json!({ "ref": name, "text": "Ada" })).await;
    assert!(typed.contains("Typed 3 characters"), "{typed}");
    assert!(typed.contains("value=\"Ada\""), "{typed}");
    let sent = ok(
        &h,
        "browser_type",
        json!({ "ref": name, "text": "Grace", "submit": true }),
    )
    .await;
    assert!(sent.contains("The page navigated to http://"), "{sent}");
    assert!(sent.contains("Hello Grace, colour b"), "{sent}");

    let (status, text) = call(&h, "browser_click", json!({ "ref": name })).await;
    assert_eq!(status, CallStatus::Failed);
    assert!(
        text.contains(&format!("There is no element [ref={name}] on the page now")),
        "{text}"
    );
    close_and_check(&h, tree).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn scrolling_loads_more_a_box_is_measured_and_a_click_is_diffed() {
    let addr = serve().await;
    let h = setup(vec![], vec![]);
    let page = ok(
        &h,
        "browser_navigate",
        json!({ "url": format!("http://{addr}/list") }),
    )
    .await;
    assert!(
        page.contains("Item 10") && !page.contains("Item 11"),
        "{page}"
    );
    let mut scrolled = String::new();
    for _ in 0..3 {
        scrolled = ok(&h, "browser_scroll", json!({ "dy": 2000 })).await;
        if scrolled.contains("Item 11") {
            break;
        }
    }
    assert!(
        scrolled.contains("+ ") && scrolled.contains("Item 11"),
        "{scrolled}"
    );

    let page = ok(
        &h,
        "browser_navigate",
        json!({ "url": format!("http://{addr}/box") }),
    )
    .await;
    let card = ref_of(&page, "region \"Card\"");
    let m = ok(&h, "browser_measure", json!({ "ref": card })).await;
    assert!(m.contains("box: x=40 y=30 width=240 height=120"), "{m}");
    assert!(m.contains("visible: yes; in the viewport: yes"), "{m}");
    assert!(m.contains("padding: 8px 8px 8px 8px"), "{m}");
    assert!(m.contains("border: 2px 2px 2px 2px"), "{m}");
    assert!(
        m.contains("display: flex") && m.contains("color: rgb(255, 0, 0)"),
        "{m}"
    );
    assert!(m.contains("font-size: 18px"), "{m}");

    let add = ref_of(&page, "button \"Add\"");
    let clicked = ok(&h, "browser_click", json!({ "ref": add })).await;
    assert!(clicked.contains("Clicked [ref="), "{clicked}");
    assert!(
        clicked.contains("+ ") && clicked.contains("Clicked once"),
        "{clicked}"
    );
    let diff = ok(&h, "browser_diff", json!({})).await;
    assert!(diff.contains("Clicked once"), "{diff}");
    let share: f64 = diff
        .split("Pixels changed since the previous screenshot: ")
        .nth(1)
        .and_then(|s| s.trim_end_matches('%').trim().parse().ok())
        .unwrap_or_else(|| panic!("{diff}"));
    assert!(share > 50.0, "the background turned green: {diff}");

    let resized = ok(&h, "browser_resize", json!({ "width": 800, "height": 600 })).await;
    assert!(resized.contains("800×600"), "{resized}");
    let out = h.call_json("browser_screenshot", json!({})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(out.result.attachments.len(), 1);
    let a = &out.result.attachments[0];
    assert_eq!(a.mime, "image/png");
    let png = base64::engine::general_purpose::STANDARD
        .decode(a.url.trim_start_matches("data:image/png;base64,"))
        .unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert_eq!(
        &png[16..24],
        &[0, 0, 3, 32, 0, 0, 2, 88],
        "800×600 in the IHDR"
    );
    let el = h
        .call_json("browser_screenshot", json!({ "ref": card }))
        .await;
    assert!(el.model_text.contains("240×120 PNG"), "{}", el.model_text);
    let look = h
        .call_json("browser_look", json!({ "question": "Is the card red?" }))
        .await;
    assert_eq!(look.result.attachments.len(), 1);
    assert!(
        look.model_text.contains("Question: Is the card red?"),
        "{}",
        look.model_text
    );
    assert!(
        look.model_text.contains("Visible text:\nHi"),
        "{}",
        look.model_text
    );
    let pid = browser_pid(&h, &out);
    close_and_check(&h, podcode_browser::process_tree(pid)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn navigations_are_gated_by_host_scheme_and_redirect() {
    let addr = serve().await;
    let port = addr.port();
    // A local dev server is asked about like any other page (its origin); the user
    // rejects the first ask, allows the second, and then is not asked again.
    let h = setup(
        vec![],
        vec![
            PermissionReply::Reject { feedback: None },
            PermissionReply::Once,
        ],
    );
    let form = format!("http://localhost:{port}/form");
    let (status, text) = call(&h, "browser_navigate", json!({ "url": form })).await;
    assert_eq!(status, CallStatus::Denied, "{text}");
    let asks = h.user.asks();
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].request.permission, "browser_private");
    assert_eq!(
        asks[0].request.patterns,
        vec![format!("http://localhost:{port}")]
    );
    let opened = ok(&h, "browser_navigate", json!({ "url": form })).await;
    assert!(opened.contains("Title: Sign up"), "{opened}");
    ok(&h, "browser_navigate", json!({ "url": form })).await;
    assert_eq!(h.user.asks().len(), 2);

    let (status, text) = call(
        &h,
        "browser_navigate",
        json!({ "url": "file:///etc/hostname" }),
    )
    .await;
    assert_eq!(status, CallStatus::Failed);
    assert_eq!(
        text,
        "The browser_navigate tool failed: Refused to open file:///etc/hostname: file: URLs are only opened when the user allowed them with a `browser_private` rule for the URL. The user can add to their config.toml:\n\n[[permission]]\npermission = \"browser_private\"\npattern = \"file:///etc/hostname\"\naction = \"allow\"\n"
    );
    let out = h.call_json("browser_snapshot", json!({})).await;
    let pid = browser_pid(&h, &out);
    close_and_check(&h, podcode_browser::process_tree(pid)).await;
    // A deny rule still refuses a private address, naming the rule that would allow it.
    let h = setup(
        vec![rule(
            "browser_private",
            "10.255.255.1",
            PermissionAction::Deny,
        )],
        vec![],
    );
    let (status, text) = call(
        &h,
        "browser_navigate",
        json!({ "url": "http://10.255.255.1/" }),
    )
    .await;
    assert_eq!(status, CallStatus::Denied);
    assert_eq!(
        text,
        "Refused to open http://10.255.255.1/: 10.255.255.1 is a private or loopback address (10.255.255.1). A permission rule in the user's configuration denies it. To allow it, the user can add to their config.toml:\n\n[[permission]]\npermission = \"browser_private\"\npattern = \"http://10.255.255.1\"\naction = \"allow\"\n"
    );
    assert!(h.user.asks().is_empty());

    // localhost denied by a rule: a redirect there is refused before its content loads.
    let h = setup(
        vec![rule("browser", "localhost", PermissionAction::Deny)],
        vec![],
    );
    let (status, text) = call(
        &h,
        "browser_navigate",
        json!({ "url": format!("http://{addr}/away") }),
    )
    .await;
    assert_eq!(status, CallStatus::Denied, "{text}");
    assert!(!text.contains("Sign up"), "{text}");
    // And a click on a link there is refused too.
    let page = ok(
        &h,
        "browser_navigate",
        json!({ "url": format!("http://{addr}/link-away") }),
    )
    .await;
    let link = ref_of(&page, "link \"Elsewhere\"");
    let (status, text) = call(&h, "browser_click", json!({ "ref": link })).await;
    assert_eq!(status, CallStatus::Denied, "{text}");
    let snap = ok(&h, "browser_snapshot", json!({})).await;
    assert!(
        snap.contains(&format!("URL: http://{addr}/link-away")),
        "{snap}"
    );
    let out = h.call_json("browser_snapshot", json!({})).await;
    let pid = browser_pid(&h, &out);
    close_and_check(&h, podcode_browser::process_tree(pid)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_browser_is_replaced_at_the_next_call() {
    let addr = serve().await;
    let h = setup(vec![], vec![]);
    let out = h
        .call_json(
            "browser_navigate",
            json!({ "url": format!("http://{addr}/box") }),
        )
        .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    let first = browser_pid(&h, &out);
    let old_tree = podcode_browser::process_tree(first);
    // SAFETY: kill(2) of the browser this test started.
    unsafe {
        libc::kill(first as i32, libc::SIGKILL);
    }
    // The next call comes once the browser is dead (the event, not a guess at how long the
    // kill takes to land).
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while alive(first) {
        assert!(
            std::time::Instant::now() < deadline,
            "SIGKILL did not end {first}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let out = h
        .call_json(
            "browser_navigate",
            json!({ "url": format!("http://{addr}/form") }),
        )
        .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert!(out.model_text.starts_with("[the browser had stopped (crashed or was killed); a new one was started: the page, its state and earlier refs are gone]\n"), "{}", out.model_text);
    assert!(
        out.model_text.contains("Title: Sign up"),
        "{}",
        out.model_text
    );
    let second = browser_pid(&h, &out);
    assert_ne!(first, second);
    let mut tree = podcode_browser::process_tree(second);
    tree.extend(old_tree);
    close_and_check(&h, tree).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_missing_browser_says_how_to_install_one() {
    let missing = |path: &str| podcode_browser::BrowserSettings {
        executable: Some(path.into()),
        ..Default::default()
    };
    // Two engines' tools in one process, each with its own `[browser]` config: the one
    // registered later does not change how the first one starts browsers.
    let h = setup_with(missing("/nonexistent/chromium"), vec![], vec![]);
    let other = setup_with(missing("/nonexistent/other"), vec![], vec![]);
    let (status, text) = call(&h, "browser_snapshot", json!({})).await;
    assert_eq!(status, CallStatus::Failed);
    assert!(text.contains("no Chromium found ([browser] executable = \"/nonexistent/chromium\" does not exist). Install it (Debian/Ubuntu: `sudo apt-get install chromium`; macOS: install Google Chrome) or set its path in the config: [browser] executable = \"/path/to/chromium\"."), "{text}");
    let (_, text) = call(&other, "browser_snapshot", json!({})).await;
    assert!(
        text.contains("\"/nonexistent/other\" does not exist"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unused_browser_closes_after_the_idle_timeout() {
    let addr = serve().await;
    let h = setup_with(
        podcode_browser::BrowserSettings {
            idle_timeout: Duration::from_millis(400),
            ..Default::default()
        },
        vec![],
        vec![],
    );
    let out = h
        .call_json(
            "browser_navigate",
            json!({ "url": format!("http://{addr}/box") }),
        )
        .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    let tree = podcode_browser::process_tree(browser_pid(&h, &out));
    // Bounded far above the idle limit plus how long a busy machine takes to end Chromium.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while tree.iter().any(|p| alive(*p)) {
        assert!(
            std::time::Instant::now() < deadline,
            "the idle browser is still running: {tree:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let again = ok(&h, "browser_snapshot", json!({})).await;
    assert!(again.starts_with("[the browser had been closed after going unused; a new one was started: earlier pages and refs are gone]\n"), "{again}");
    let out = h.call_json("browser_snapshot", json!({})).await;
    close_and_check(&h, podcode_browser::process_tree(browser_pid(&h, &out))).await;
}
