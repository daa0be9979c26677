//! Helpers for the tests that drive the web page in a real headless Chromium against the
//! real server (in process, real engine, SQLite store, scripted model over HTTP): start a
//! workspace and server, launch Chromium with a watchdog, open the page (signed in by its
//! one-time code), type a prompt, evaluate or wait on expressions in the page, and check
//! that no secret is left where a script or the address bar could show it.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::element::Element;
use chromiumoxide::page::Page;
use futures_util::StreamExt;
use podcode_core::testing::ScratchWorkspace;
use podcode_providers::testing::{Reply, ScriptedModel};
use podcode_server::{ServeOptions, Server};
use serde_json::Value;
use tokio::sync::oneshot;

/// A repository, its config and data folders, the scripted model, and a server over them.
pub struct Env {
    pub root: ScratchWorkspace,
    model: ScriptedModel,
    pub open_url: String,
    pub token: String,
    stop: Option<oneshot::Sender<()>>,
    served: Option<tokio::task::JoinHandle<()>>,
}

impl Env {
    /// `extra` is added to the user's config (permission rules).
    pub async fn start(script: Vec<Reply>, extra: &str) -> Env {
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
            model,
            open_url,
            token,
            stop: Some(stop),
            served: Some(served),
        }
    }
    /// Stops the server and starts another on the same address over the same workspace, as
    /// a restarted `podcode serve` is: a new token, and no sign-in of the old one.
    pub async fn restart(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(served) = self.served.take() {
            let _ = tokio::time::timeout(Duration::from_secs(30), served).await;
        }
        let port: u16 = self
            .open_url
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|host| host.rsplit(':').next())
            .and_then(|p| p.parse().ok())
            .expect("the old server's port");
        let opts = ServeOptions {
            port,
            ..ServeOptions::default()
        };
        let server = Server::bind(self.root.engine().expect("engine"), opts)
            .await
            .expect("bind the old address again");
        self.open_url = server.page_url().expect("page url");
        self.token = server.token().to_string();
        let (stop, stopped) = oneshot::channel::<()>();
        self.served = Some(tokio::spawn(async move {
            let _ = server
                .run(async move {
                    let _ = stopped.await;
                })
                .await;
        }));
        self.stop = Some(stop);
    }
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.repo().join(rel)
    }
    /// Writes `text` to `rel` in the repository, making its folders.
    pub fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("make the folder");
        }
        std::fs::write(path, text).expect("write");
    }
    /// The request bodies the scripted model received, oldest first.
    pub fn requests(&self) -> Vec<Value> {
        self.model.requests()
    }
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).expect("read")
    }
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(served) = self.served.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), served).await;
        }
    }
}

/// Debian's `chromium` (or another usual name) on PATH.
pub fn find_chromium() -> std::path::PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser", "google-chrome"].map(|n| d.join(n)))
        .find(|p| p.is_file())
        .expect("this test needs Chromium on PATH (Debian: apt-get install chromium)")
}

/// A test's Chromium profile, and a watchdog: a test still running after [`TEST_LIMIT`] (a
/// wait with no end, say for a page that never answers) ends the test binary with a message
/// instead of holding CI until its own limit.
pub struct Profile {
    _dir: tempfile::TempDir,
    _done: std::sync::mpsc::Sender<()>,
}

pub const TEST_LIMIT: Duration = Duration::from_secs(300);

pub fn watchdog() -> std::sync::mpsc::Sender<()> {
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let name = std::thread::current()
        .name()
        .unwrap_or("a web page test")
        .to_string();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(TEST_LIMIT) {
            // Straight to the process's stderr: libtest captures `eprintln!` of test threads
            // (and of threads they spawn) and would drop it when the process exits here.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr().lock(),
                "{name} ran over {} s: stopping the test binary",
                TEST_LIMIT.as_secs()
            );
            std::process::exit(101);
        }
    });
    done
}

/// Closes Chromium, killing it when it does not close in time, and stops the CDP pump.
pub async fn close(mut browser: Browser, pump: tokio::task::JoinHandle<()>) {
    let closed = tokio::time::timeout(Duration::from_secs(10), browser.close()).await;
    if !matches!(closed, Ok(Ok(_))) {
        let _ = browser.kill().await;
    }
    let _ = tokio::time::timeout(Duration::from_secs(10), browser.wait()).await;
    pump.abort();
}

pub async fn chromium() -> (Browser, tokio::task::JoinHandle<()>, Profile) {
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
pub async fn open_page(browser: &Browser, url: &str) -> Page {
    let page = new_tab(browser, url).await;
    wait_for(
        &page,
        "document.getElementById('model-picker').options.length",
        "the page",
    )
    .await;
    page
}

/// Opens `url` in a new tab, bounded (a navigation that never ends fails here, naming it).
pub async fn new_tab(browser: &Browser, url: &str) -> Page {
    tokio::time::timeout(Duration::from_secs(60), browser.new_page(url))
        .await
        .unwrap_or_else(|_| panic!("open {url}: the tab did not load in 60 s"))
        .unwrap_or_else(|e| panic!("open {url}: {e}"))
}

/// The page signed in with a cookie no script can read (HttpOnly), sent only to this site
/// (SameSite=Strict) and with an end; no secret is in the address, in storage, or in the
/// URL of anything the page fetched.
pub async fn assert_secretless(page: &Page, env: &Env) {
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
pub async fn send_prompt(page: &Page, text: &str) -> Element {
    let prompt = page.find_element("#prompt").await.expect("prompt box");
    prompt.click().await.expect("focus the prompt");
    prompt.type_str(text).await.expect("type");
    prompt.press_key("Enter").await.expect("send");
    prompt
}

/// Evaluates `expr` (an expression) in the page.
/// Bounded: a page whose renderer stopped answering fails the test here, naming the
/// expression, instead of waiting for the watchdog.
pub async fn eval(page: &Page, expr: &str) -> Value {
    tokio::time::timeout(Duration::from_secs(60), page.evaluate(expr))
        .await
        .unwrap_or_else(|_| panic!("evaluate {expr}: no answer from the page in 60 s"))
        .unwrap_or_else(|e| panic!("evaluate {expr}: {e}"))
        .into_value::<Value>()
        .unwrap_or(Value::Null)
}

/// Polls `expr` until it is truthy (bounded, so a broken page fails instead of hanging; the
/// bound is far above what a slow, busy machine needs).
pub async fn wait_for(page: &Page, expr: &str, what: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
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
pub async fn click(page: &Page, selector: &str) {
    let mut last = String::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
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
