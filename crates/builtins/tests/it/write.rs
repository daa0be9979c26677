//! `write` through the real pipeline: the permission prompt with the diff, create and
//! overwrite with their journal records, refusals (stale file, .git, binary, directory,
//! outside the workspace), and reverting the session.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::fs;
use std::time::{Duration, SystemTime};

use podcode_protocol::{ChangeOp, PermissionReply};
use podcode_tools::testing::Harness;
use podcode_tools::{CallOutcome, CallStatus, RevertOptions, RevertTarget, ToolRegistry, revert};
use serde_json::json;

fn setup(replies: Vec<PermissionReply>, allow_edit: bool) -> Harness {
    common::builtins(replies, common::allow_if("edit", allow_edit))
}

fn disk(h: &Harness, rel: &str) -> Option<String> {
    fs::read_to_string(h.work().join(rel)).ok()
}

async fn write(h: &Harness, path: &str, content: &str) -> CallOutcome {
    h.call_json("write", json!({"filePath": path, "content": content}))
        .await
}

#[test]
fn description_and_schema_are_pinned() {
    let mut r = ToolRegistry::new();
    podcode_builtins::register_all(&mut r);
    let tool = &r.get("write").unwrap().tool;
    assert!(tool.gates_itself());
    assert!(!tool.spec().idempotent);
    assert_eq!(
        tool.spec().description,
        "Writes a file: creates it (and missing parent folders) or replaces its whole content. For a new file or a rewrite; a small change is an `edit`, changes across files an `apply_patch`.
- `content` is the complete new text; nothing of the old file is kept.
- If you read the file and it changed on disk since, the write is refused: read it again. Writing inside `.git/` is refused.
- The user may be asked to approve the change; they see the diff.
Example: {\"filePath\": \"src/util/math.rs\", \"content\": \"pub fn add(a: i32, b: i32) -> i32 {\\n    a + b\\n}\\n\"}"
    );
    let p = &tool.spec().parameters;
    assert_eq!(p["required"], json!(["filePath", "content"]));
    assert_eq!(
        p["properties"]["content"]["description"],
        "The complete content of the file after the write."
    );
}

#[tokio::test]
async fn creating_a_file_asks_with_the_diff_and_journals_a_create() {
    let h = setup(vec![PermissionReply::Once], false);
    let out = write(&h, "src/new/a.rs", "fn a() {}\nfn b() {}\n").await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(out.model_text, "Wrote 2 lines to src/new/a.rs (new file).");
    assert_eq!(out.result.title, "src/new/a.rs");
    let asks = h.user.asks();
    assert_eq!(asks.len(), 1);
    assert_eq!(
        (
            asks[0].request.permission.as_str(),
            asks[0].request.patterns.clone()
        ),
        ("edit", vec!["src/new/a.rs".to_string()])
    );
    assert_eq!(
        asks[0].request.metadata["diff"],
        "--- a/src/new/a.rs\n+++ b/src/new/a.rs\n@@ -0,0 +1,2 @@\n+fn a() {}\n+fn b() {}\n"
    );
    assert_eq!(
        disk(&h, "src/new/a.rs").as_deref(),
        Some("fn a() {}\nfn b() {}\n")
    );
    let changes = h
        .store
        .changes(Some(&h.session), Some(&out.call_id))
        .unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(
        (changes[0].op, changes[0].old_content.clone()),
        (ChangeOp::Create, None)
    );
    assert_eq!(
        changes[0].new_content.as_deref(),
        Some("fn a() {}\nfn b() {}\n")
    );
}

#[tokio::test]
async fn overwriting_journals_a_modify_and_reject_changes_nothing() {
    let h = setup(
        vec![
            PermissionReply::Reject {
                feedback: Some("keep it".into()),
            },
            PermissionReply::Once,
        ],
        false,
    );
    fs::write(h.work().join("a.txt"), "one\ntwo\n").unwrap();
    let out = write(&h, "a.txt", "three\n").await;
    assert_eq!(out.status, CallStatus::Denied);
    assert_eq!(
        out.model_text,
        "The user rejected the edit permission for \"a.txt\" and said: keep it"
    );
    assert_eq!(disk(&h, "a.txt").as_deref(), Some("one\ntwo\n"));
    assert_eq!(
        h.user.asks()[0].request.metadata["diff"],
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1 @@\n-one\n-two\n+three\n"
    );
    assert!(h.store.changes(Some(&h.session), None).unwrap().is_empty());

    let out = write(&h, "a.txt", "three\n").await;
    assert_eq!(
        out.model_text,
        "Wrote 1 line to a.txt (replaced the previous 2 lines)."
    );
    assert_eq!(disk(&h, "a.txt").as_deref(), Some("three\n"));
    let changes = h
        .store
        .changes(Some(&h.session), Some(&out.call_id))
        .unwrap();
    assert_eq!(changes[0].op, ChangeOp::Modify);
    assert_eq!(changes[0].old_content.as_deref(), Some("one\ntwo\n"));
    assert_eq!(out.result.metadata["deletions"], json!(2));

    // The same content again: no prompt, no journal entry.
    let out = write(&h, "a.txt", "three\n").await;
    assert_eq!(
        out.model_text,
        "a.txt already has exactly this content (1 line); nothing changed."
    );
    assert_eq!(h.user.asks().len(), 2);
    assert_eq!(h.store.changes(Some(&h.session), None).unwrap().len(), 1);
}

#[tokio::test]
async fn a_file_changed_on_disk_since_the_last_write_is_refused() {
    let h = setup(vec![], true);
    assert_eq!(
        write(&h, "a.txt", "v1\n").await.status,
        CallStatus::Completed
    );
    assert_eq!(
        write(&h, "a.txt", "v2\n").await.status,
        CallStatus::Completed,
        "a write marks the file as seen"
    );
    let path = h.work().join("a.txt");
    fs::write(&path, "user edit\n").unwrap();
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    let out = write(&h, "a.txt", "v3\n").await;
    assert_eq!(out.status, CallStatus::Failed);
    assert_eq!(
        out.model_text,
        format!(
            "The write tool failed: {} was modified on disk since you last read it. Read it again with the read tool, then redo your change.",
            fs::canonicalize(&path).unwrap().display()
        )
    );
    assert_eq!(disk(&h, "a.txt").as_deref(), Some("user edit\n"));
}

#[tokio::test]
async fn unsafe_targets_are_refused() {
    let h = setup(vec![PermissionReply::Reject { feedback: None }], true);
    fs::create_dir_all(h.work().join(".git")).unwrap();
    let out = write(&h, ".git/HEAD", "ref: refs/heads/evil\n").await;
    assert!(
        out.model_text
            .starts_with("The write tool failed: refusing to write inside a .git directory"),
        "{}",
        out.model_text
    );
    assert!(!h.work().join(".git/HEAD").exists());

    fs::write(h.work().join("img.bin"), [0x89, 0x50, 0xff, 0x00]).unwrap();
    let out = write(&h, "img.bin", "text").await;
    assert_eq!(
        out.model_text,
        "The write tool failed: img.bin is not UTF-8 text (a binary file or another encoding), so it cannot be edited safely as text. Leave it alone, or change it with a command through bash."
    );
    assert_eq!(
        fs::read(h.work().join("img.bin")).unwrap(),
        vec![0x89, 0x50, 0xff, 0x00]
    );

    fs::create_dir_all(h.work().join("sub")).unwrap();
    let out = write(&h, "sub", "x").await;
    assert_eq!(
        out.model_text,
        "The write tool failed: sub is a directory, not a file. Give the path of a file inside it."
    );

    // Outside the workspace: external_directory is asked first (and rejected here).
    let outside = h.dir.path().join("outside.txt");
    let out = write(&h, outside.to_str().unwrap(), "x").await;
    assert_eq!(out.status, CallStatus::Denied);
    let asks = h.user.asks();
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].request.permission, "external_directory");
    assert!(!outside.exists());
    assert!(h.store.changes(Some(&h.session), None).unwrap().is_empty());
}

#[tokio::test]
async fn reverting_the_session_restores_the_original_files() {
    let h = setup(vec![], true);
    fs::write(h.work().join("keep.txt"), "original\n").unwrap();
    assert_eq!(
        write(&h, "keep.txt", "changed\n").await.status,
        CallStatus::Completed
    );
    assert_eq!(
        write(&h, "deep/new.txt", "new\n").await.status,
        CallStatus::Completed
    );
    let opts = RevertOptions {
        force: false,
        session_id: h.session.clone(),
    };
    let outcome = revert(&h.store, &RevertTarget::Session(h.session.clone()), &opts).unwrap();
    assert_eq!(outcome.reverted.len(), 2);
    assert_eq!(disk(&h, "keep.txt").as_deref(), Some("original\n"));
    assert_eq!(disk(&h, "deep/new.txt"), None);
}
