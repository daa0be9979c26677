//! Secret files ask whatever the workspace: a session started in a home folder has `.ssh`
//! and `.aws` inside its workspace, yet `read`, the searches and `bash` do not show them
//! without the user's say (the `sensitive` permission), and the searches say what they
//! left out. Real built-ins, real pipeline, real files.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::PathBuf;

use podcode_protocol::{PermissionAction, PermissionReply, PermissionRule};
use podcode_tools::CallStatus;
use podcode_tools::testing::Harness;

const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA KEY\n";
const NOTE_3: &str = "(3 files or folders that may hold secrets (keys, credentials, tokens, .env files) left out. Read a file by its path to ask the user for it.)";

/// A workspace laid out like a home folder.
fn home(replies: Vec<PermissionReply>, extra: Vec<PermissionRule>) -> Harness {
    let h = common::builtins(replies, extra);
    for (rel, text) in [
        (".ssh/id_ed25519", KEY),
        (
            ".aws/credentials",
            "[default]\naws_secret_access_key = KEY\n",
        ),
        (".env", "API_KEY=x\n"),
        ("notes.txt", "the KEY is in the drawer\n"),
    ] {
        let p = h.work().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    h
}

fn abs(h: &Harness, rel: &str) -> String {
    let p: PathBuf = h.work().canonicalize().unwrap().join(rel);
    p.to_string_lossy().into_owned()
}

fn asked(h: &Harness) -> Vec<(String, Vec<String>)> {
    h.user
        .asks()
        .into_iter()
        .map(|a| (a.request.permission, a.request.patterns))
        .collect()
}

#[tokio::test]
async fn reading_a_key_inside_the_workspace_asks_first() {
    let h = home(
        vec![
            PermissionReply::Reject { feedback: None },
            PermissionReply::Once,
        ],
        vec![],
    );
    let out = h.call("read", r#"{"filePath": ".ssh/id_ed25519"}"#).await;
    assert_eq!(out.status, CallStatus::Denied, "{}", out.model_text);
    assert!(
        !out.model_text.contains("PRIVATE KEY"),
        "{}",
        out.model_text
    );
    assert_eq!(
        asked(&h),
        [("sensitive".to_string(), vec![abs(&h, ".ssh/id_ed25519")])]
    );

    let out = h.call("read", r#"{"filePath": ".ssh/id_ed25519"}"#).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert!(out.model_text.contains("PRIVATE KEY"), "{}", out.model_text);

    // Ordinary files do not ask.
    let out = h.call("read", r#"{"filePath": "notes.txt"}"#).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(h.user.asks().len(), 2);
}

#[tokio::test]
async fn searches_leave_secrets_out_and_say_how_many() {
    let h = home(vec![], vec![]);

    let out = h.call("grep", r#"{"pattern": "KEY"}"#).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    // `.env` matches still go through the read ask (rejected here); keys and credentials
    // are not searched at all.
    assert_eq!(
        out.model_text,
        "notes.txt:\n  1: the KEY is in the drawer\n\n(Matches in .env were not shown because reading those files was not permitted.)\n\n(2 files or folders that may hold secrets (keys, credentials, tokens, .env files) left out. Read a file by its path to ask the user for it.)"
    );

    let out = h.call("glob", r#"{"pattern": "**/*"}"#).await;
    assert_eq!(out.model_text, format!("notes.txt\n\n{NOTE_3}"));

    let out = h.call("list", "{}").await;
    assert_eq!(
        out.model_text,
        format!(
            "{}/\n  notes.txt\n\n{NOTE_3}",
            h.work().canonicalize().unwrap().display()
        )
    );
    let out = h.call("read", r#"{"filePath": "."}"#).await;
    assert!(
        out.model_text.ends_with(&format!(
            "its entries (1):\nnotes.txt\n\n(Use the list tool for a recursive tree, or read a file by its path.)\n\n{NOTE_3}"
        )),
        "{}",
        out.model_text
    );
    // Only grep's `.env` ask; nothing else asked.
    assert_eq!(asked(&h), [("read".to_string(), vec![".env".to_string()])]);
}

#[tokio::test]
async fn an_allow_rule_shows_them_and_a_secret_root_asks() {
    let allow = vec![
        PermissionRule::new("sensitive", "*", PermissionAction::Allow),
        PermissionRule::new("read", "*.env", PermissionAction::Allow),
    ];
    let h = home(vec![], allow);
    let out = h.call("glob", r#"{"pattern": "**/*"}"#).await;
    let mut files: Vec<&str> = out.model_text.lines().collect();
    files.sort();
    assert_eq!(
        files,
        [".aws/credentials", ".env", ".ssh/id_ed25519", "notes.txt"]
    );
    assert!(h.user.asks().is_empty());

    let h = home(vec![PermissionReply::Once], vec![]);
    let out = h
        .call("grep", r#"{"pattern": "KEY", "path": ".ssh"}"#)
        .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert!(
        out.model_text
            .starts_with(".ssh/id_ed25519:\n  1: -----BEGIN"),
        "{}",
        out.model_text
    );
    assert_eq!(
        asked(&h),
        [("sensitive".to_string(), vec![abs(&h, ".ssh")])]
    );
    let out = h.call("list", r#"{"path": ".aws"}"#).await;
    assert_eq!(out.status, CallStatus::Denied, "{}", out.model_text);
    let out = h.call("symbols", r#"{"path": ".ssh"}"#).await;
    assert_eq!(out.status, CallStatus::Denied, "{}", out.model_text);
}

#[tokio::test]
async fn bash_asks_before_a_command_that_names_a_secret_file() {
    let h = home(
        vec![PermissionReply::Reject { feedback: None }],
        vec![PermissionRule::new("bash", "*", PermissionAction::Allow)],
    );
    let out = h
        .call(
            "bash",
            r#"{"command": "cat .ssh/id_ed25519 | base64 && cat notes.txt"}"#,
        )
        .await;
    assert_eq!(out.status, CallStatus::Denied, "{}", out.model_text);
    assert!(!out.model_text.contains("PRIVATE"), "{}", out.model_text);
    let ssh = h
        .work()
        .join(".ssh/id_ed25519")
        .to_string_lossy()
        .into_owned();
    assert_eq!(asked(&h), [("sensitive".to_string(), vec![ssh])]);

    let out = h.call("bash", r#"{"command": "cat notes.txt"}"#).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(h.user.asks().len(), 1);
}
