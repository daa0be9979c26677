//! The browser's life around Podcode's (real Chromium, real processes): a process that
//! started a browser and is then killed with SIGKILL takes its whole Chromium tree with it;
//! and `browser_look` attaches its image only for models that take images, saying so
//! otherwise.
//!
//! The killed process is this test binary itself, re-run as a child for one helper test
//! (`browser_owner_process`, which does nothing unless the parent sets
//! `PODCODE_BROWSER_OWNER`): it starts a browser through the pipeline, prints the
//! browser's process tree and waits to be killed.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use axum::Router;
use axum::response::Html;
use axum::routing::get;
use podcode_protocol::{PermissionAction, PermissionRule};
use podcode_tools::testing::{Harness, Setup, harness};
use podcode_tools::{CallIdentity, CallOutcome, CallRequest, CallStatus, RawArgs, ToolRegistry};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const PAGE: &str = r#"<!DOCTYPE html><title>Card</title><h1>Pricing</h1><p>Pro plan: 9 euros</p>"#;
const OWNER_ENV: &str = "PODCODE_BROWSER_OWNER";
const TREE_PREFIX: &str = "browser tree:";

async fn serve() -> std::net::SocketAddr {
    let app = Router::new().route("/", get(|| async { Html(PAGE) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

fn setup() -> Harness {
    let mut registry = ToolRegistry::new();
    podcode_browser::register(&mut registry);
    let mut rules = podcode_builtins::default_rules();
    for permission in ["browser_private", "browser"] {
        rules.push(PermissionRule::new(
            permission,
            "127.0.0.1",
            PermissionAction::Allow,
        ));
    }
    harness(
        registry,
        Setup {
            rules,
            ..Default::default()
        },
    )
}

async fn call(
    h: &Harness,
    tool: &str,
    args: serde_json::Value,
    images: Option<bool>,
) -> CallOutcome {
    let identity = CallIdentity {
        model_images: images,
        ..h.identity()
    };
    let out = h
        .runtime
        .call(CallRequest {
            identity,
            tool: tool.into(),
            args: RawArgs::Json(args),
            abort: CancellationToken::new(),
        })
        .await;
    assert_eq!(
        out.status,
        CallStatus::Completed,
        "{tool}: {}",
        out.model_text
    );
    out
}

/// Running and not a zombie (an orphan's zombie waits for a reaper, it runs nothing).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z ") && !s.contains(") X "))
        .unwrap_or(false)
}

/// Not a test of its own: the child process of `a_killed_podcode_takes_its_browser_with_it`.
#[test]
#[ignore = "helper process, started by a_killed_podcode_takes_its_browser_with_it"]
fn browser_owner_process() {
    if std::env::var_os(OWNER_ENV).is_none() {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let addr = serve().await;
        let h = setup();
        let out = call(
            &h,
            "browser_navigate",
            json!({ "url": format!("http://{addr}/") }),
            None,
        )
        .await;
        let pid = out.result.metadata["browserPid"].as_u64().unwrap() as u32;
        let tree: Vec<String> = podcode_browser::process_tree(pid)
            .iter()
            .map(u32::to_string)
            .collect();
        println!("{TREE_PREFIX} {}", tree.join(" "));
        // Wait to be killed; never close the browser.
        tokio::time::sleep(Duration::from_secs(600)).await;
    });
}

#[test]
fn a_killed_podcode_takes_its_browser_with_it() {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "browser_owner_process",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(OWNER_ENV, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut tree: Vec<u32> = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        // libtest may print `test browser_owner_process ... ` before it on the same line.
        if let Some((_, pids)) = line.split_once(TREE_PREFIX) {
            tree = pids
                .split_whitespace()
                .map(|p| p.parse().unwrap())
                .collect();
            break;
        }
    }
    assert!(
        !tree.is_empty(),
        "the owner process printed no browser tree"
    );
    // The browser's main process and at least one helper (renderer or zygote) run.
    assert!(tree.len() >= 2, "{tree:?}");
    assert!(tree.iter().all(|p| alive(*p)), "{tree:?}");

    // SIGKILL: no destructor, no close, no signal handler of ours runs.
    child.kill().unwrap();
    child.wait().unwrap();
    // Bounded far above how long a busy machine takes to end Chromium.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
        if tree.iter().all(|p| !alive(*p)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let left: Vec<u32> = tree.iter().copied().filter(|p| alive(*p)).collect();
    for pid in &left {
        // Do not leave them behind for the next test.
        unsafe {
            libc::kill(*pid as i32, libc::SIGKILL);
        }
    }
    panic!("Chromium processes outlived the killed process that started them: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn browser_look_attaches_the_image_only_for_models_that_take_images() {
    let addr = serve().await;
    let h = setup();
    call(
        &h,
        "browser_navigate",
        json!({ "url": format!("http://{addr}/") }),
        None,
    )
    .await;
    let question = json!({ "question": "Is the price visible?" });

    let seeing = call(&h, "browser_look", question.clone(), Some(true)).await;
    assert_eq!(seeing.result.attachments.len(), 1);
    assert_eq!(seeing.result.attachments[0].mime, "image/png");
    assert!(
        seeing
            .model_text
            .contains("The screenshot is attached as an image."),
        "{}",
        seeing.model_text
    );

    // A model known not to take images: the text, the note, no image.
    let blind = call(&h, "browser_look", question.clone(), Some(false)).await;
    assert!(blind.result.attachments.is_empty());
    assert_eq!(
        blind.model_text,
        "Question: Is the price visible?\n\
         No image is attached: the model of this session cannot take images. Judge from the \
         visible text below, and use browser_measure for sizes, positions and colours.\n\n\
         Visible text:\nPricing\n\nPro plan: 9 euros"
    );

    // Unknown (a call by hand): the image is attached.
    let unknown = call(&h, "browser_look", question, None).await;
    assert_eq!(unknown.result.attachments.len(), 1);
    podcode_browser::close_session(&h.session).await;
}
