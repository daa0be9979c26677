//! A provider whose real context window is smaller than the catalog says: the real binary
//! against a scripted model server that refuses every request above its window with an
//! overflow error that states no number. After the first refusal, Podcode compacts and
//! retries, and must keep every later request of the session — the rest of that turn, and a
//! turn resumed with `--continue` in a new process — under the window it learned.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use podcode_providers::testing::{Reply, ScriptedModel};
use serde_json::Value;

use crate::common;
use common::*;

/// Files of about 1,700 tokens each, one read per step.
const PARTS: usize = 24;
/// The window is this many tokens above the first request (system prompt and tool specs).
const ROOM: u64 = 12_000;

const OVERFLOW: &str = r#"{"error":{"message":"Input is too long for this model.","type":"invalid_request_error","code":"context_length_exceeded"}}"#;

/// What the server counts as a request's prompt size: its body's length / 4.
fn tokens(body: &Value) -> u64 {
    body.to_string().len() as u64 / 4
}

/// The summarising request offers no tools; every step of the turn does.
fn is_summary_request(body: &Value) -> bool {
    body.get("tools").is_none()
}

struct Server {
    /// The window: set from the first request's size.
    window: Arc<AtomicU64>,
    /// Sizes of the requests after the first refusal (the first refusal excluded).
    after: Arc<Mutex<Option<Vec<u64>>>>,
    refusals: Arc<AtomicUsize>,
}

fn server() -> (ScriptedModel, Server) {
    let window = Arc::new(AtomicU64::new(0));
    let after: Arc<Mutex<Option<Vec<u64>>>> = Arc::new(Mutex::new(None));
    let refusals = Arc::new(AtomicUsize::new(0));
    let step = Arc::new(AtomicUsize::new(0));
    let (w, a, r) = (window.clone(), after.clone(), refusals.clone());
    let model = ScriptedModel::responding(
        vec![],
        Arc::new(move |body: &Value| {
            let size = tokens(body);
            if w.load(Ordering::SeqCst) == 0 {
                w.store(size + ROOM, Ordering::SeqCst);
            }
            let mut after = a.lock().unwrap();
            if let Some(sizes) = after.as_mut() {
                sizes.push(size);
            }
            if size > w.load(Ordering::SeqCst) {
                r.fetch_add(1, Ordering::SeqCst);
                after.get_or_insert_with(Vec::new);
                return Reply::raw(400, "application/json", OVERFLOW);
            }
            if is_summary_request(body) {
                return Reply::new()
                    .text("SUMMARY: the user asked to read the parts one by one.")
                    .usage(size, 20);
            }
            let k = step.fetch_add(1, Ordering::SeqCst) + 1;
            let reply = if k.is_multiple_of(PARTS / 2 + 1) {
                Reply::new().text("Read them all.")
            } else {
                Reply::new().tool_call(
                    format!("c{k}"),
                    "read",
                    format!(r#"{{"filePath": "part{k}.txt"}}"#),
                )
            };
            reply.usage(size, 20)
        }),
    );
    (
        model,
        Server {
            window,
            after,
            refusals,
        },
    )
}

#[test]
fn the_window_an_overflow_taught_holds_for_the_rest_of_the_session_and_after_a_resume() {
    let (model, server) = server();
    let env = Env::with_server(model);
    for k in 1..=PARTS + 2 {
        let line = format!("part {k}: {}\n", "some content of this part ".repeat(3));
        env.write(&format!("part{k}.txt"), &line.repeat(80));
    }
    let first = env.run(&["run", "read the parts one by one"]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert_eq!(text(&first.stdout).trim(), "Read them all.");
    assert!(
        server.refusals.load(Ordering::SeqCst) >= 1,
        "the scripted window was never reached, so nothing was tested"
    );
    let second = env.run(&["run", "--continue", "and the next ones"]);
    assert!(second.status.success(), "{}", text(&second.stderr));
    assert_eq!(text(&second.stdout).trim(), "Read them all.");

    let window = server.window.load(Ordering::SeqCst);
    let after = server.after.lock().unwrap().clone().unwrap();
    let over: Vec<u64> = after.iter().copied().filter(|s| *s > window).collect();
    assert!(
        over.is_empty(),
        "after the first refusal, {} of {} requests were over the {window}-token window: {over:?}",
        over.len(),
        after.len()
    );
    assert_eq!(server.refusals.load(Ordering::SeqCst), 1);
}
