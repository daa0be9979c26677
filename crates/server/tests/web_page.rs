//! The web page of `podcode serve`, driven in a real headless Chromium (chromiumoxide, as the
//! browser tools do) against the real server (in process, with a real engine, SQLite store
//! and the scripted model speaking SSE over HTTP): the page trades the one-time code in its
//! URL for an HttpOnly, SameSite=Strict cookie and keeps no secret anywhere a script or the
//! address bar could show it (a spent link leads to the sign-in form, which takes the
//! token), a prompt streams its answer in, a permission prompt for an `edit` is approved, the Changes
//! panel reverts the edit (through a conflict and "Revert anyway") and the file is restored
//! on disk. Model text that carries HTML runs nothing. A phone-sized viewport keeps the
//! prompt box and the Changes toggle on screen. A dropped event stream resumes without loss,
//! Esc stops a turn, a sub-agent shows as a compact card with its own permission ask, and two
//! tabs follow one session: each sees the other's prompt, one answer closes both asks.

use std::path::PathBuf;
use std::time::Duration;

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use chromiumoxide::element::Element;
use chromiumoxide::page::Page;
use futures_util::StreamExt;
use podcode_core::testing::ScratchWorkspace;
use podcode_providers::testing::{Reply, ScriptedModel};
use podcode_server::{ServeOptions, Server};
use serde_json::Value;
use tokio::sync::oneshot;

/// A repository, its config and data folders, the scripted model, and a server over them.
struct Env {
    root: ScratchWorkspace,
    _model: ScriptedModel,
    open_url: String,
    token: String,
    stop: Option<oneshot::Sender<()>>,
    served: Option<tokio::task::JoinHandle<()>>,
}

impl Env {
    /// `extra` is added to the user's config (permission rules).
    async fn start(script: Vec<Reply>, extra: &str) -> Env {
        let model = ScriptedModel::start(script).await;
        let root = ScratchWorkspace::new(&model.base_url(), extra).expect("workspace");
        let engine = root.engine().expect("engine");
        let server = Server::bind(engine, ServeOptions::default())
            .await
            .expect("bind");
        let open_url = server.page_url().expect("page url");
        let token = server.token().to_string();
        let (stop, stopped) = oneshot::channel::<()>();
        let served = tokio::spawn(async move {
            let _ = server
                .run(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        Env {
            root,
            _model: model,
            open_url,
            token,
            stop: Some(stop),
            served: Some(served),
        }
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.root.repo().join(rel)
    }
    fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.path(rel), text).expect("write");
    }
    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).expect("read")
    }
    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(served) = self.served.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), served).await;
        }
    }
}

/// Debian's `chromium` (or another usual name) on PATH.
fn find_chromium() -> std::path::PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser", "google-chrome"].map(|n| d.join(n)))
        .find(|p| p.is_file())
        .expect("this test needs Chromium on PATH (Debian: apt-get install chromium)")
}

/// A test's Chromium profile, and a watchdog: a test still running after [`TEST_LIMIT`] (a
/// wait with no end, say for a page that never answers) ends the test binary with a message
/// instead of holding CI until its own limit.
struct Profile {
    _dir: tempfile::TempDir,
    _done: std::sync::mpsc::Sender<()>,
}

const TEST_LIMIT: Duration = Duration::from_secs(300);

fn watchdog() -> std::sync::mpsc::Sender<()> {
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let name = std::thread::current()
        .name()
        .unwrap_or("a web page test")
        .to_string();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(TEST_LIMIT) {
            eprintln!(
                "{name} ran over {} s: stopping the test binary",
                TEST_LIMIT.as_secs()
            );
            std::process::exit(101);
        }
    });
    done
}

/// Closes Chromium, killing it when it does not close in time, and stops the CDP pump.
async fn close(mut browser: Browser, pump: tokio::task::JoinHandle<()>) {
    let closed = tokio::time::timeout(Duration::from_secs(10), browser.close()).await;
    if !matches!(closed, Ok(Ok(_))) {
        let _ = browser.kill().await;
    }
    let _ = tokio::time::timeout(Duration::from_secs(10), browser.wait()).await;
    pump.abort();
}

async fn chromium() -> (Browser, tokio::task::JoinHandle<()>, Profile) {
    let done = watchdog();
    let profile = tempfile::tempdir().expect("profile dir");
    let config = BrowserConfig::builder()
        .chrome_executable(find_chromium())
        .user_data_dir(profile.path())
        .no_sandbox()
        .args([
            "disable-gpu",
            "disable-dev-shm-usage",
            "no-first-run",
            "disable-background-networking",
            "disable-component-update",
        ])
        .window_size(1280, 900)
        .build()
        .expect("browser config");
    let (browser, mut handler) = Browser::launch(config).await.expect("launch chromium");
    let pump = tokio::spawn(async move { while handler.next().await.is_some() {} });
    let profile = Profile {
        _dir: profile,
        _done: done,
    };
    (browser, pump, profile)
}

/// Opens `url` in a new tab and waits until the page has loaded (its model picker is filled).
async fn open_page(browser: &Browser, url: &str) -> Page {
    let page = browser.new_page(url).await.expect("open the page");
    wait_for(
        &page,
        "document.getElementById('model-picker').options.length",
        "the page",
    )
    .await;
    page
}

/// The page signed in with a cookie no script can read (HttpOnly), sent only to this site
/// (SameSite=Strict) and with an end; no secret is in the address, in storage, or in the
/// URL of anything the page fetched.
async fn assert_secretless(page: &Page, env: &Env) {
    const COOKIE_EMPTY: &str = "\"cookie\":\"\"";
    let code = env.open_url.split_once("#code=").expect("a code").1;
    let seen = eval(
        page,
        "JSON.stringify({href: location.href, cookie: document.cookie,          session: JSON.stringify(sessionStorage), local: JSON.stringify(localStorage),          urls: performance.getEntriesByType('resource').map(e => e.name)})",
    )
    .await;
    let seen = seen.as_str().unwrap_or_default().to_string();
    assert!(seen.contains("/api/"), "the page fetched: {seen}");
    for secret in [code, env.token.as_str(), "token="] {
        assert!(!seen.contains(secret), "{secret} in {seen}");
    }
    assert!(seen.contains(COOKIE_EMPTY), "{seen}");
    let cookies = page.get_cookies().await.expect("cookies");
    let ours: Vec<_> = cookies
        .iter()
        .filter(|c| c.name.starts_with("podcode_"))
        .collect();
    assert_eq!(ours.len(), 1, "{cookies:?}");
    let c = ours[0];
    assert!(c.http_only, "{c:?}");
    assert_eq!(
        c.same_site,
        Some(chromiumoxide::cdp::browser_protocol::network::CookieSameSite::Strict),
        "{c:?}"
    );
    assert_eq!(c.path, "/");
    assert!(
        !c.session && c.expires > 0.0,
        "the cookie has an end: {c:?}"
    );
    assert!(c.value != env.token && c.value != code);
}

/// Types `text` into the prompt box and sends it with Enter, as a user does.
async fn send_prompt(page: &Page, text: &str) -> Element {
    let prompt = page.find_element("#prompt").await.expect("prompt box");
    prompt.click().await.expect("focus the prompt");
    prompt.type_str(text).await.expect("type");
    prompt.press_key("Enter").await.expect("send");
    prompt
}

/// Evaluates `expr` (an expression) in the page.
async fn eval(page: &Page, expr: &str) -> Value {
    page.evaluate(expr)
        .await
        .unwrap_or_else(|e| panic!("evaluate {expr}: {e}"))
        .into_value::<Value>()
        .unwrap_or(Value::Null)
}

/// Polls `expr` until it is truthy (bounded, so a broken page fails instead of hanging).
async fn wait_for(page: &Page, expr: &str, what: &str) -> Value {
    for _ in 0..600 {
        let v = eval(page, expr).await;
        let truthy = match &v {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::String(s) => !s.is_empty(),
            Value::Number(n) => n.as_f64() != Some(0.0),
            _ => true,
        };
        if truthy {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let body = eval(page, "document.body.innerText").await;
    panic!("never saw {what} ({expr}); the page shows:\n{body}");
}

/// Clicks the element `selector` finds; again if the page redrew it in between.
async fn click(page: &Page, selector: &str) {
    let mut last = String::new();
    for _ in 0..20 {
        match page.find_element(selector).await {
            Ok(el) => match el.click().await {
                Ok(_) => return,
                Err(e) => last = e.to_string(),
            },
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("click {selector}: {last}");
}

const ANSWER_HTML: &str = "<img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script>";

fn script() -> Vec<Reply> {
    vec![
        Reply::new()
            .text("I'll change the ")
            .text("greeting.")
            .tool_call(
                "c1",
                "edit",
                r#"{"filePath": "notes.txt", "oldString": "world", "newString": "web"}"#,
            )
            .usage(1000, 20),
        Reply::new()
            .text("Done: it now says ")
            .text("*hello web*.\n\n")
            .text(ANSWER_HTML)
            .text("\n\n```rust\nfn main() {}\n```\n")
            .pace(Duration::from_millis(200))
            .usage(1200, 30),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_streams_asks_edits_and_the_changes_panel_reverts_it() {
    // Edits ask, so the page has a prompt to approve.
    let env = Env::start(
        script(),
        "[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"ask\"\n",
    )
    .await;
    env.write("notes.txt", "hello world\n");
    let (browser, pump, _profile) = chromium().await;

    let page = open_page(&browser, &env.open_url).await;
    // The code left the address bar, and the page holds no secret a script could read.
    assert_eq!(
        eval(&page, "location.hash").await,
        Value::String(String::new())
    );
    assert_secretless(&page, &env).await;
    assert_eq!(
        eval(&page, "document.getElementById('model-picker').value").await,
        "scripted/test"
    );

    // Send with Enter.
    send_prompt(&page, "say hello to the web").await;
    wait_for(
        &page,
        "document.querySelector('.msg.user')?.textContent",
        "the prompt in the transcript",
    )
    .await;

    // The first step's text, then the permission prompt for the edit.
    wait_for(
        &page,
        "document.querySelector('.msg.assistant')?.textContent.includes(\"I'll change the greeting.\")",
        "the first streamed text",
    )
    .await;
    let ask = wait_for(
        &page,
        "document.querySelector('.perm')?.innerText",
        "the permission prompt",
    )
    .await;
    let ask = ask.as_str().unwrap_or_default().to_string();
    assert!(ask.contains("edit asks for edit"), "{ask}");
    assert!(ask.contains("notes.txt"), "{ask}");
    assert_eq!(
        env.read("notes.txt"),
        "hello world\n",
        "nothing is written before the answer"
    );
    // Answered from the keyboard: y (allow once) once the prompt box is left.
    page.evaluate("document.activeElement.blur()")
        .await
        .expect("leave the prompt box");
    page.find_element("body")
        .await
        .expect("body")
        .press_key("y")
        .await
        .expect("key y");
    wait_for(
        &page,
        "!document.querySelector('.perm')",
        "the prompt closed",
    )
    .await;

    // The answer streams in: a part of it is seen before the whole.
    let mut partial = false;
    for _ in 0..600 {
        let text = eval(
            &page,
            "[...document.querySelectorAll('.msg.assistant')].map(m => m.textContent).join('\\n')",
        )
        .await;
        let text = text.as_str().unwrap_or_default().to_string();
        if text.contains("Done: it now says") && !text.contains("fn main") {
            partial = true;
        }
        if text.contains("fn main") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(partial, "the answer appeared at once, not streamed");
    wait_for(
        &page,
        "document.querySelector('.msg.assistant em')?.textContent === 'hello web'",
        "rendered Markdown",
    )
    .await;
    // Fenced code is highlighted; the model's HTML ran nothing and left no handler behind.
    wait_for(
        &page,
        "document.querySelector('pre code.hljs .hljs-keyword')?.textContent === 'fn'",
        "highlighted code",
    )
    .await;
    assert_eq!(eval(&page, "window.pwned ?? null").await, Value::Null);
    assert_eq!(
        eval(
            &page,
            "document.querySelectorAll('#transcript script, #transcript [onerror]').length"
        )
        .await,
        0
    );
    // The tool card shows the edit as done.
    wait_for(
        &page,
        "document.querySelector('.card.done .tool')?.textContent === 'edit'",
        "the edit's card",
    )
    .await;
    wait_for(
        &page,
        "document.getElementById('abort').hidden",
        "the turn's end",
    )
    .await;
    assert_eq!(env.read("notes.txt"), "hello web\n");

    // The Changes panel lists the edit; someone edits the file meanwhile, so the revert
    // reports a conflict with its diff, and "Revert anyway" restores the file.
    click(&page, "#toggle-changes").await;
    wait_for(
        &page,
        "document.querySelector('.change .file')?.textContent === 'notes.txt'",
        "the change",
    )
    .await;
    assert!(
        eval(
            &page,
            "document.querySelector('.group .prompt').textContent"
        )
        .await
        .as_str()
        .unwrap_or_default()
        .contains("say hello to the web")
    );
    click(&page, ".change > summary").await;
    wait_for(
        &page,
        "document.querySelector('.change .diff .add')?.textContent === '+hello web'",
        "the change's diff",
    )
    .await;
    env.write("notes.txt", "hello web, and more\n");
    click(&page, ".change summary button").await;
    let conflict = wait_for(
        &page,
        "document.querySelector('.revert-result.conflict')?.innerText",
        "the conflict",
    )
    .await;
    assert!(
        conflict
            .as_str()
            .unwrap_or_default()
            .contains("changed since Podcode wrote it"),
        "{conflict}"
    );
    assert_eq!(
        env.read("notes.txt"),
        "hello web, and more\n",
        "a conflict writes nothing"
    );
    click(&page, ".revert-result button.danger").await;
    wait_for(&page, "document.querySelector('.revert-result:not(.conflict)')?.textContent.includes('Reverted 1 change')", "the revert").await;
    assert_eq!(env.read("notes.txt"), "hello world\n");
    wait_for(
        &page,
        "document.querySelector('.change.reverted')",
        "the change marked reverted",
    )
    .await;

    // A reload keeps the token (in the tab) and draws the stored session: the prompt, the
    // answer as Markdown, the edit's card.
    page.reload().await.expect("reload");
    wait_for(
        &page,
        "document.querySelector('.msg.assistant em')?.textContent === 'hello web'",
        "the stored answer after a reload",
    )
    .await;
    let stored = eval(&page, "document.getElementById('transcript').innerText").await;
    let stored = stored.as_str().unwrap_or_default().to_string();
    assert!(stored.contains("say hello to the web"), "{stored}");
    assert!(stored.contains("I'll change the greeting."), "{stored}");
    assert!(stored.contains("edit"), "{stored}");
    if let Ok(dir) = std::env::var("PODCODE_WEB_SCREENSHOTS") {
        click(&page, "#toggle-changes").await;
        wait_for(
            &page,
            "document.querySelector('.change .file')",
            "the change",
        )
        .await;
        click(&page, ".card > summary").await;
        let params = chromiumoxide::page::ScreenshotParams::builder().build();
        let png = page.screenshot(params).await.expect("screenshot");
        std::fs::write(format!("{dir}/desktop.png"), png).expect("write screenshot");
    }

    // A tab without the token says how to get one (a browser that is not signed in).
    browser.clear_cookies().await.expect("clear cookies");
    let bare = env
        .open_url
        .split('#')
        .next()
        .unwrap_or_default()
        .to_string();
    let other = browser
        .new_page(bare.as_str())
        .await
        .expect("open without a token");
    let login = wait_for(
        &other,
        "!document.getElementById('login').hidden && document.getElementById('login').innerText",
        "the sign-in note",
    )
    .await;
    assert!(
        login.as_str().unwrap_or_default().contains("podcode serve"),
        "{login}"
    );

    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_phone_sized_screen_the_prompt_and_the_changes_toggle_are_on_screen() {
    let env = Env::start(vec![], "").await;
    let (browser, pump, _profile) = chromium().await;
    let page = browser.new_page("about:blank").await.expect("a tab");
    page.execute(SetDeviceMetricsOverrideParams::new(390, 844, 3.0, true))
        .await
        .expect("phone viewport");
    page.goto(env.open_url.as_str())
        .await
        .expect("open the page");
    wait_for(
        &page,
        "document.getElementById('model-picker').options.length",
        "the page",
    )
    .await;
    let visible = |sel: &str| {
        format!(
            "(() => {{ const r = document.querySelector('{sel}').getBoundingClientRect(); \
             return r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight; }})()"
        )
    };
    assert_eq!(eval(&page, "innerWidth").await, 390);
    assert_eq!(eval(&page, &visible("#prompt")).await, true);
    assert_eq!(eval(&page, &visible("#toggle-changes")).await, true);
    assert_eq!(eval(&page, &visible("#send")).await, true);
    // The sessions list starts closed; the Changes panel opens as a sheet over the page.
    assert_eq!(
        eval(&page, "document.getElementById('sessions').hidden").await,
        true
    );
    click(&page, "#toggle-changes").await;
    assert_eq!(eval(&page, &visible("#changes")).await, true);
    assert_eq!(
        eval(
            &page,
            "document.getElementById('changes').getBoundingClientRect().width"
        )
        .await,
        390
    );
    // c closes it again from the keyboard.
    page.find_element("body")
        .await
        .expect("body")
        .press_key("c")
        .await
        .expect("key c");
    wait_for(
        &page,
        "document.getElementById('changes').hidden",
        "the sheet closed",
    )
    .await;

    close(browser, pump).await;
    env.stop().await;
}

/// Cuts the tab off the network (open connections drop) or lets it back on.
// `Network.emulateNetworkConditions` is deprecated for a by-rule form that older Chromium
// builds do not know; the tab-wide switch is all this needs.
#[allow(deprecated)]
async fn offline(page: &Page, offline: bool) {
    use chromiumoxide::cdp::browser_protocol::network::EmulateNetworkConditionsParams;
    page.execute(EmulateNetworkConditionsParams::new(
        offline, 0.0, -1.0, -1.0,
    ))
    .await
    .expect("network conditions");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_event_stream_reconnects_and_loses_nothing() {
    let words: Vec<String> = (0..16).map(|i| format!("w{i} ")).collect();
    let mut reply = Reply::new();
    for w in &words {
        reply = reply.text(w.clone());
    }
    let env = Env::start(vec![reply.pace(Duration::from_millis(150))], "").await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    send_prompt(&page, "count").await;
    wait_for(
        &page,
        "document.querySelector('.msg.assistant')?.textContent.includes('w1')",
        "the first words",
    )
    .await;

    // The network goes away mid-answer: the page notices, then comes back and catches up.
    offline(&page, true).await;
    wait_for(
        &page,
        "document.getElementById('status').textContent === 'reconnecting…'",
        "the lost connection",
    )
    .await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    offline(&page, false).await;
    let text = wait_for(
        &page,
        "(() => { const t = document.querySelector('.msg.assistant')?.textContent || ''; return t.includes('w15') && t; })()",
        "the whole answer",
    )
    .await;
    assert_eq!(
        text.as_str().unwrap_or_default().trim(),
        words.concat().trim(),
        "every word once, in order"
    );
    wait_for(
        &page,
        "document.getElementById('status').textContent === ''",
        "the live stream again",
    )
    .await;

    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_stops_a_running_turn() {
    // The model never answers: only a stop ends this turn.
    let env = Env::start(
        vec![Reply::new().text("too late").stall(Duration::from_secs(60))],
        "",
    )
    .await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    let prompt = send_prompt(&page, "wait for me").await;
    wait_for(
        &page,
        "!document.getElementById('abort').hidden",
        "the Stop button",
    )
    .await;
    prompt.press_key("Escape").await.expect("Esc");
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('⏹ stopped')",
        "the stopped turn",
    )
    .await;
    wait_for(
        &page,
        "document.getElementById('abort').hidden",
        "the Stop button gone",
    )
    .await;
    let text = eval(&page, "document.getElementById('transcript').innerText").await;
    assert!(
        !text.as_str().unwrap_or_default().contains("too late"),
        "{text}"
    );

    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_shows_as_a_compact_card_on_its_task_call() {
    let env = Env::start(
        vec![
            Reply::new().tool_call(
                "t1",
                "task",
                r#"{"description": "Edit notes", "prompt": "Write new to notes.txt.", "subagent_type": "general"}"#,
            ),
            Reply::new().tool_call(
                "w1",
                "write",
                r#"{"filePath": "notes.txt", "content": "new\n"}"#,
            ),
            Reply::new().text("notes edited"),
            Reply::new().text("The sub-agent edited the notes."),
        ],
        "",
    )
    .await;
    env.write("notes.txt", "old\n");
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    send_prompt(&page, "delegate it").await;
    // The sub-agent's own ask reaches this page, saying which sub-agent asks.
    let ask = wait_for(
        &page,
        "document.querySelector('.perm h3')?.textContent",
        "the sub-agent's ask",
    )
    .await;
    assert_eq!(ask, "write asks for edit (sub-agent general · Edit notes)");
    click(&page, ".perm button.primary").await;
    wait_for(
        &page,
        "document.querySelector('.msg.assistant')?.textContent.includes('The sub-agent edited the notes.')",
        "the parent's answer",
    )
    .await;
    let card = wait_for(
        &page,
        "document.querySelector('details.card + .card.subagent')?.textContent",
        "the sub-agent card on the task call",
    )
    .await;
    let card = card.as_str().unwrap_or_default().to_string();
    assert!(card.starts_with("↳ general: Edit notes"), "{card}");
    wait_for(
        &page,
        "document.querySelector('.card.subagent li')?.textContent.startsWith('write ') && document.querySelector('.card.subagent li').textContent.endsWith('✓')",
        "the sub-agent's write, done",
    )
    .await;
    assert_eq!(env.read("notes.txt"), "new\n");
    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tabs_follow_one_session_and_one_answer_closes_both_prompts() {
    let env = Env::start(
        vec![
            Reply::new().text("first answer"),
            Reply::new().tool_call(
                "c1",
                "edit",
                r#"{"filePath": "notes.txt", "oldString": "world", "newString": "tabs"}"#,
            ),
            Reply::new().text("second answer"),
        ],
        "[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"ask\"\n",
    )
    .await;
    env.write("notes.txt", "hello world\n");
    let (browser, pump, _profile) = chromium().await;
    let a = open_page(&browser, &env.open_url).await;
    send_prompt(&a, "one").await;
    wait_for(
        &a,
        "document.getElementById('transcript').innerText.includes('first answer')",
        "the first answer",
    )
    .await;

    // Tab B opens the same session by its address.
    let session = eval(&a, "location.search").await;
    let (base, token) = env.open_url.split_once('#').expect("a fragment");
    let b_url = format!("{base}{}#{token}", session.as_str().unwrap_or_default());
    let b = browser.new_page(b_url.as_str()).await.expect("tab B");
    wait_for(
        &b,
        "document.getElementById('transcript').innerText.includes('first answer')",
        "the stored session in tab B",
    )
    .await;

    a.bring_to_front().await.expect("tab A in front");
    send_prompt(&a, "two").await;
    // B sees A's prompt and the same permission ask; A answers, B's prompt closes.
    wait_for(
        &b,
        "[...document.querySelectorAll('.msg.user')].some(m => m.textContent === 'two')",
        "A's prompt in tab B",
    )
    .await;
    wait_for(&b, "document.querySelector('.perm')", "the ask in tab B").await;
    wait_for(&a, "document.querySelector('.perm')", "the ask in tab A").await;
    click(&a, ".perm button.primary").await;
    wait_for(
        &b,
        "!document.querySelector('.perm')",
        "the ask closed in tab B",
    )
    .await;
    wait_for(
        &b,
        "document.getElementById('transcript').innerText.includes('second answer')",
        "the answer in tab B",
    )
    .await;
    assert_eq!(env.read("notes.txt"), "hello tabs\n");
    let users = eval(&a, "document.querySelectorAll('.msg.user').length").await;
    assert_eq!(
        users.as_u64(),
        Some(2),
        "tab A shows each of its prompts once"
    );

    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spent_sign_in_link_leads_to_the_form_which_takes_the_token() {
    let env = Env::start(vec![Reply::new().text("signed in again")], "").await;
    let (browser, pump, _profile) = chromium().await;
    // The link signs this browser in once.
    let first = open_page(&browser, &env.open_url).await;
    assert_secretless(&first, &env).await;
    // Another browser (no cookie) that got hold of the same link afterwards gets nothing.
    browser.clear_cookies().await.expect("clear cookies");
    let later = browser
        .new_page(env.open_url.as_str())
        .await
        .expect("open the spent link");
    wait_for(
        &later,
        "!document.getElementById('login').hidden",
        "the sign-in form",
    )
    .await;
    assert_eq!(
        eval(&later, "location.hash").await,
        Value::String(String::new())
    );
    assert_eq!(
        eval(
            &later,
            "document.getElementById('model-picker').options.length"
        )
        .await,
        0
    );
    // A wrong token is refused; the right one signs in.
    let field = later
        .find_element("#login-token")
        .await
        .expect("token field");
    field.click().await.expect("focus");
    field.type_str("not-the-token").await.expect("type");
    field.press_key("Enter").await.expect("send");
    wait_for(
        &later,
        "!document.getElementById('login-error').hidden && document.getElementById('login-error').textContent",
        "the refusal",
    )
    .await;
    eval(&later, "document.getElementById('login-token').value = ''").await;
    field.click().await.expect("focus");
    field.type_str(&env.token).await.expect("type");
    field.press_key("Enter").await.expect("send");
    wait_for(
        &later,
        "document.getElementById('model-picker').options.length",
        "the page",
    )
    .await;
    send_prompt(&later, "hello").await;
    wait_for(
        &later,
        "document.getElementById('transcript').innerText.includes('signed in again')",
        "the answer over the cookie-authorised stream",
    )
    .await;
    let field_value = eval(&later, "document.getElementById('login-token').value").await;
    assert_eq!(field_value, Value::String(String::new()));
    close(browser, pump).await;
    env.stop().await;
}
