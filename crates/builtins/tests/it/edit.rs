//! `edit` through the real pipeline: permission prompt with the diff, exact and
//! whitespace-tolerant matches, refusals (ambiguous, no-op, missing, stale, binary, .git),
//! the change journal, and reverting the session.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::fs;
use std::time::{Duration, SystemTime};

use podcode_protocol::{ChangeOp, PermissionReply};
use podcode_tools::testing::Harness;
use podcode_tools::{CallStatus, RevertOptions, RevertTarget, ToolRegistry, revert};
use serde_json::json;

fn setup(replies: Vec<PermissionReply>, allow_edit: bool) -> Harness {
    common::builtins(replies, common::allow_if("edit", allow_edit))
}

fn put(h: &Harness, rel: &str, text: &str) {
    let p = h.work().join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn disk(h: &Harness, rel: &str) -> Option<String> {
    fs::read_to_string(h.work().join(rel)).ok()
}

async fn edit(
    h: &Harness,
    path: &str,
    old: &str,
    new: &str,
    all: bool,
) -> podcode_tools::CallOutcome {
    h.call_json(
        "edit",
        json!({"filePath": path, "oldString": old, "newString": new, "replaceAll": all}),
    )
    .await
}

const SRC: &str = "fn main() {\n    let retries = 3;\n    run(retries);\n}\n";

#[test]
fn description_and_schema_are_pinned() {
    let mut r = ToolRegistry::new();
    podcode_builtins::register_all(&mut r);
    let tool = &r.get("edit").unwrap().tool;
    assert!(tool.gates_itself());
    let spec = tool.spec();
    assert!(!spec.idempotent);
    assert_eq!(
        spec.description,
        "Replaces text in an existing file: finds `oldString` and puts `newString` in its place. For small, targeted changes to one file; `write` creates or rewrites a file, `apply_patch` changes several files.
- `oldString` must match exactly one place: copy it from the file (read it first) with its indentation, without the line numbers `read` shows. If it matches several places the edit is refused with their line numbers: add surrounding lines, or set `replaceAll: true` to change every occurrence.
- If nothing matches exactly, whole lines are matched ignoring indentation and trailing whitespace, and `newString` is re-indented to fit.
- An empty `oldString` creates a file that does not exist yet.
- If the file changed on disk since you read it, the edit is refused: read it again.
Example: {\"filePath\": \"src/main.rs\", \"oldString\": \"let retries = 3;\", \"newString\": \"let retries = 5;\"}"
    );
    let p = &spec.parameters;
    assert_eq!(p["required"], json!(["filePath", "oldString", "newString"]));
    assert_eq!(p["properties"]["replaceAll"]["default"], json!(false));
    assert_eq!(
        p["properties"]["oldString"]["description"],
        "The exact text to replace, copied from the file with its indentation (empty to create a new file)."
    );
}

#[tokio::test]
async fn the_prompt_shows_the_diff_and_reject_leaves_the_file_untouched() {
    let h = setup(vec![PermissionReply::Reject { feedback: None }], false);
    put(&h, "src/main.rs", SRC);
    let out = edit(
        &h,
        "src/main.rs",
        "let retries = 3;",
        "let retries = 5;",
        false,
    )
    .await;
    assert_eq!(out.status, CallStatus::Denied);
    assert_eq!(
        out.model_text,
        "The user rejected the edit permission for \"src/main.rs\". Do not retry this call; stop and ask the user how they would like to proceed."
    );
    let asks = h.user.asks();
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].request.permission, "edit");
    assert_eq!(asks[0].request.patterns, vec!["src/main.rs"]);
    assert_eq!(asks[0].request.always, vec!["src/main.rs"]);
    assert_eq!(
        asks[0].request.metadata["diff"],
        "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,4 +1,4 @@\n fn main() {\n-    let retries = 3;\n+    let retries = 5;\n     run(retries);\n }\n"
    );
    assert_eq!(disk(&h, "src/main.rs").as_deref(), Some(SRC));
    assert!(
        h.store
            .changes(Some(&h.session), Some(&out.call_id))
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn an_approved_edit_is_written_journaled_and_shown_as_a_diff() {
    let h = setup(vec![PermissionReply::Once], false);
    put(&h, "src/main.rs", SRC);
    let out = edit(
        &h,
        "src/main.rs",
        "let retries = 3;",
        "let retries = 5;",
        false,
    )
    .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        "Edited src/main.rs (1 replacement, +1 -1 lines).\n\n--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,4 +1,4 @@\n fn main() {\n-    let retries = 3;\n+    let retries = 5;\n     run(retries);\n }"
    );
    assert_eq!(out.result.title, "src/main.rs");
    assert_eq!(
        (
            out.result.metadata["additions"].clone(),
            out.result.metadata["deletions"].clone()
        ),
        (json!(1), json!(1))
    );
    let new = SRC.replace("= 3", "= 5");
    assert_eq!(disk(&h, "src/main.rs"), Some(new.clone()));
    let changes = h
        .store
        .changes(Some(&h.session), Some(&out.call_id))
        .unwrap();
    assert_eq!(changes.len(), 1);
    let path = fs::canonicalize(h.work().join("src/main.rs")).unwrap();
    assert_eq!(changes[0].file, path.to_string_lossy());
    assert_eq!(changes[0].op, ChangeOp::Modify);
    assert_eq!(changes[0].old_content.as_deref(), Some(SRC));
    assert_eq!(changes[0].new_content.as_deref(), Some(new.as_str()));
}

#[tokio::test]
async fn ambiguous_matches_are_refused_with_their_lines_unless_replace_all() {
    let h = setup(vec![], true);
    put(&h, "a.txt", "x = 1\ny = 2\nx = 1\n\n    x = 1\n");
    let out = edit(&h, "a.txt", "x = 1", "x = 9", false).await;
    assert_eq!(out.status, CallStatus::Failed);
    assert_eq!(
        out.model_text,
        "The edit tool failed: oldString matches 3 places in a.txt (at lines 1, 3, 5). Include more surrounding lines in oldString so it matches exactly one place, or set replaceAll to true to change every match."
    );
    assert_eq!(
        disk(&h, "a.txt").as_deref(),
        Some("x = 1\ny = 2\nx = 1\n\n    x = 1\n")
    );

    let out = edit(&h, "a.txt", "x = 1", "x = 9", true).await;
    assert!(
        out.model_text
            .starts_with("Edited a.txt (3 replacements, +3 -3 lines)."),
        "{}",
        out.model_text
    );
    assert_eq!(
        disk(&h, "a.txt").as_deref(),
        Some("x = 9\ny = 2\nx = 9\n\n    x = 9\n")
    );

    // Ambiguity found by the tolerant matcher is reported the same way.
    put(&h, "b.txt", "  go()\nstop()\n\tgo()\n");
    let out = edit(&h, "b.txt", "go() ", "run()", false).await;
    assert_eq!(
        out.model_text,
        "The edit tool failed: oldString matches 2 places in b.txt when ignoring indentation and trailing whitespace (at lines 1, 3). Include more surrounding lines in oldString so it matches exactly one place, or set replaceAll to true to change every match."
    );
}

#[tokio::test]
async fn indentation_and_trailing_whitespace_are_tolerated() {
    let h = setup(vec![], true);
    put(
        &h,
        "lib.py",
        "class A:\n    def f(self):   \n        return 1\n",
    );
    let out = edit(
        &h,
        "lib.py",
        "def f(self):\n    return 1\n",
        "def f(self):\n    x = 2\n    return x\n",
        false,
    )
    .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert!(
        out.model_text.starts_with(
            "Edited lib.py (1 replacement, +3 -2 lines). oldString matched only when ignoring indentation and trailing whitespace; newString was re-indented to fit."
        ),
        "{}",
        out.model_text
    );
    assert_eq!(
        disk(&h, "lib.py").as_deref(),
        Some("class A:\n    def f(self):\n        x = 2\n        return x\n")
    );
}

#[tokio::test]
async fn refusals_have_clear_texts() {
    let h = setup(vec![], true);
    put(&h, "a.txt", "hello\n");
    let cases = [
        (
            json!({"filePath": "a.txt", "oldString": "hello", "newString": "hello"}),
            "The edit tool failed: oldString and newString are identical, so this edit would change nothing. Put the text to replace in oldString and the different text you want in newString.",
        ),
        (
            json!({"filePath": "missing.txt", "oldString": "a", "newString": "b"}),
            "The edit tool failed: missing.txt does not exist. Check the path (the list and glob tools find files); to create a new file, use the write tool.",
        ),
        (
            json!({"filePath": "a.txt", "oldString": "", "newString": "b"}),
            "The edit tool failed: oldString is empty, which only creates a new file, but a.txt already exists. To change it, put the exact text to replace in oldString (read the file first); to replace the whole file, use the write tool.",
        ),
        (
            json!({"filePath": "a.txt", "oldString": "goodbye", "newString": "b"}),
            "The edit tool failed: could not find oldString in a.txt, not even when ignoring indentation and trailing whitespace. Its first line does not appear in the file either. Read the file again and copy the exact lines you want to change into oldString.",
        ),
        (
            json!({"filePath": ".git/config", "oldString": "a", "newString": "b"}),
            "",
        ),
        (
            json!({"filePath": "", "oldString": "a", "newString": "b"}),
            "The edit tool failed: filePath is empty. Give the path of the file, relative to the session directory.",
        ),
        (
            json!({"filePath": ".", "oldString": "a", "newString": "b"}),
            "",
        ),
    ];
    for (args, expected) in cases {
        let out = h.call_json("edit", args.clone()).await;
        assert_eq!(out.status, CallStatus::Failed, "{args}");
        if !expected.is_empty() {
            assert_eq!(out.model_text, expected, "{args}");
        }
    }
    let git = h
        .call_json(
            "edit",
            json!({"filePath": ".git/config", "oldString": "a", "newString": "b"}),
        )
        .await;
    assert!(
        git.model_text
            .contains("refusing to write inside a .git directory"),
        "{}",
        git.model_text
    );
    let dir = h
        .call_json(
            "edit",
            json!({"filePath": ".", "oldString": "a", "newString": "b"}),
        )
        .await;
    assert!(
        dir.model_text.contains("is a directory, not a file."),
        "{}",
        dir.model_text
    );

    fs::write(h.work().join("blob.bin"), [0xff, 0xfe, 0x00, 0x41]).unwrap();
    let out = edit(&h, "blob.bin", "A", "B", false).await;
    assert_eq!(
        out.model_text,
        "The edit tool failed: blob.bin is not UTF-8 text (a binary file or another encoding), so it cannot be edited safely as text. Leave it alone, or change it with a command through bash."
    );
    assert_eq!(
        fs::read(h.work().join("blob.bin")).unwrap(),
        vec![0xff, 0xfe, 0x00, 0x41]
    );
    assert!(h.store.changes(Some(&h.session), None).unwrap().is_empty());
    assert!(h.user.asks().is_empty());
}

#[tokio::test]
async fn empty_old_string_creates_a_new_file() {
    let h = setup(vec![], true);
    let out = edit(&h, "new/dir/x.md", "", "# Title\n", false).await;
    assert_eq!(
        out.model_text.lines().next(),
        Some("Created new/dir/x.md with 1 line.")
    );
    assert_eq!(disk(&h, "new/dir/x.md").as_deref(), Some("# Title\n"));
    let changes = h
        .store
        .changes(Some(&h.session), Some(&out.call_id))
        .unwrap();
    assert_eq!(
        (changes[0].op, changes[0].old_content.clone()),
        (ChangeOp::Create, None)
    );
}

#[tokio::test]
async fn a_file_changed_on_disk_since_it_was_last_seen_is_refused() {
    let h = setup(vec![], true);
    put(&h, "a.txt", "one\n");
    let first = edit(&h, "a.txt", "one", "two", false).await;
    assert_eq!(first.status, CallStatus::Completed);
    // A follow-up edit is fine: the tool marked the file as seen after writing it.
    let second = edit(&h, "a.txt", "two", "three", false).await;
    assert_eq!(
        second.status,
        CallStatus::Completed,
        "{}",
        second.model_text
    );

    // Someone else changes it.
    let path = h.work().join("a.txt");
    fs::write(&path, "three\nuser line\n").unwrap();
    let f = fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    let out = edit(&h, "a.txt", "three", "four", false).await;
    let abs = fs::canonicalize(&path).unwrap();
    assert_eq!(
        out.model_text,
        format!(
            "The edit tool failed: {} was modified on disk since you last read it. Read it again with the read tool, then redo your change.",
            abs.display()
        )
    );
    assert_eq!(disk(&h, "a.txt").as_deref(), Some("three\nuser line\n"));
}

#[tokio::test]
async fn reverting_the_session_restores_the_original_files() {
    let h = setup(vec![], true);
    put(&h, "a.txt", "alpha\nbeta\n");
    for (old, new) in [("alpha", "ALPHA"), ("beta", "BETA")] {
        assert_eq!(
            edit(&h, "a.txt", old, new, false).await.status,
            CallStatus::Completed
        );
    }
    assert_eq!(
        edit(&h, "b.txt", "", "bee\n", false).await.status,
        CallStatus::Completed
    );
    assert_eq!(disk(&h, "a.txt").as_deref(), Some("ALPHA\nBETA\n"));

    let opts = RevertOptions {
        force: false,
        session_id: h.session.clone(),
    };
    let outcome = revert(&h.store, &RevertTarget::Session(h.session.clone()), &opts).unwrap();
    assert_eq!(outcome.reverted.len(), 3);
    assert_eq!(disk(&h, "a.txt").as_deref(), Some("alpha\nbeta\n"));
    assert_eq!(disk(&h, "b.txt"), None);
}

#[tokio::test]
async fn an_edit_after_read_is_refused_when_the_file_changed_since() {
    let h = setup(vec![], true);
    put(&h, "a.txt", "one\n");
    let read = h.call_json("read", json!({"filePath": "a.txt"})).await;
    assert_eq!(read.status, CallStatus::Completed, "{}", read.model_text);
    let path = h.work().join("a.txt");
    fs::write(&path, "one\nuser line\n").unwrap();
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    let out = edit(&h, "a.txt", "one", "two", false).await;
    assert!(out.model_text.ends_with("was modified on disk since you last read it. Read it again with the read tool, then redo your change."), "{}", out.model_text);
    assert_eq!(disk(&h, "a.txt").as_deref(), Some("one\nuser line\n"));

    // Reading again clears the refusal.
    assert_eq!(
        h.call_json("read", json!({"filePath": "a.txt"}))
            .await
            .status,
        CallStatus::Completed
    );
    assert_eq!(
        edit(&h, "a.txt", "one", "two", false).await.status,
        CallStatus::Completed
    );
    assert_eq!(disk(&h, "a.txt").as_deref(), Some("two\nuser line\n"));
}

#[tokio::test]
async fn huge_files_are_refused_without_being_loaded() {
    let h = setup(vec![], true);
    let f = fs::File::create(h.work().join("big.log")).unwrap();
    f.set_len(17 * 1024 * 1024).unwrap();
    let out = edit(&h, "big.log", "a", "b", false).await;
    assert_eq!(
        out.model_text,
        "The edit tool failed: big.log is too large to edit (17 MiB; the limit is 16 MiB). Change it with a command through bash instead (for example sed)."
    );
}
