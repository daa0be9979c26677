//! Files attached to a prompt (`Op::Prompt.files`, `@path` in the TUI): read through the
//! real `read` built-in and its permission rules, sent to the model in the user's message,
//! kept in the store so a resumed session sends the same text again.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use podcode_agent::{AgentProfile, StoredPart, attached_file_failed_text, load_history};
use podcode_protocol::{Event, PermissionReply};
use podcode_providers::testing::Reply;
use podcode_providers::{Part, Role};
use tokio_util::sync::CancellationToken;

fn user_text_of_first_request(w: &World) -> String {
    let reqs = w.requests();
    let msgs = reqs[0]["messages"].as_array().expect("messages").clone();
    msgs.iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attached_file_is_read_through_the_read_tool_and_sent_with_the_prompt() {
    let w = world(
        vec![Reply::new().text("It adds.").usage(10, 2)],
        Opts {
            builtins: true,
            ..Default::default()
        },
    );
    let file = w.work.join("lib.rs");
    std::fs::write(&file, "pub fn add(a: i32, b: i32) -> i32 { a + b }\n").unwrap();
    let path = file.to_string_lossy().into_owned();
    let agent = w.agent(AgentProfile::build(), |_| {});
    let mut events = w.runtime.subscribe();
    let summary = agent
        .run_turn_with_files(
            &w.session,
            "what does this do?",
            std::slice::from_ref(&path),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(summary.tool_calls, 0, "the attachment is not a model call");

    let sent = user_text_of_first_request(&w);
    assert!(sent.contains("what does this do?"), "{sent}");
    assert!(
        sent.contains(&format!(
            "The user attached {path}. Called the read tool with"
        )),
        "{sent}"
    );
    assert!(sent.contains("pub fn add(a: i32, b: i32)"), "{sent}");

    // The read ran through the pipeline: front ends saw a read call.
    let mut saw_read = false;
    while let Ok(e) = events.try_recv() {
        if let Event::ToolFinished { tool, .. } = e {
            saw_read |= tool == "read";
        }
    }
    assert!(saw_read, "the read tool ran through the pipeline");

    // Stored as a file part; the rebuilt history carries the same text.
    let history = load_history(&w.store, &w.session).unwrap();
    let first = &history[0];
    assert_eq!(first.role, Role::User);
    assert!(first.parts.iter().any(
        |p| matches!(p, Part::Text { text } if text.contains("pub fn add") && text.contains("The user attached"))
    ));
    let msgs = w.store.messages(&w.session).unwrap();
    let parts = w.store.parts(&msgs[0].id).unwrap();
    assert!(parts.iter().any(
        |p| matches!(StoredPart::parse(p), StoredPart::File(f) if f.path == path && !f.failed)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_or_missing_attachment_tells_the_model_why_and_the_turn_goes_on() {
    let w = world(
        vec![Reply::new().text("Understood.").usage(10, 2)],
        Opts {
            builtins: true,
            // `.env` files ask by default; the user rejects.
            replies: vec![PermissionReply::Reject { feedback: None }],
            ..Default::default()
        },
    );
    let secret = w.work.join(".env");
    std::fs::write(&secret, "TOKEN=abc\n").unwrap();
    let missing = w.work.join("nope.txt").to_string_lossy().into_owned();
    let secret = secret.to_string_lossy().into_owned();
    let agent = w.agent(AgentProfile::build(), |_| {});
    let summary = agent
        .run_turn_with_files(
            &w.session,
            "look",
            &[secret.clone(), missing.clone()],
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(summary.end, podcode_protocol::TurnEnd::Answered);
    let sent = user_text_of_first_request(&w);
    assert!(!sent.contains("TOKEN=abc"), "a rejected read sends nothing");
    let denied_prefix = attached_file_failed_text(&secret, "");
    let missing_prefix = attached_file_failed_text(&missing, "");
    let json_escaped = |s: &str| serde_json::to_string(s).unwrap()[1..].to_string();
    let strip_end = |s: String| s.trim_end_matches('"').to_string();
    assert!(
        sent.contains(&strip_end(json_escaped(&denied_prefix))),
        "{sent}"
    );
    assert!(
        sent.contains(&strip_end(json_escaped(&missing_prefix))),
        "{sent}"
    );
}
