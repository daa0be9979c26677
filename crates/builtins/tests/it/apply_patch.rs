//! `apply_patch` through the real pipeline: a multi-file patch (add, update, delete, move)
//! with one prompt showing the combined diff, all-or-nothing on bad hunks, bad patches and
//! failed writes, the journal, and reverting the session to the original files.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::fs;

use podcode_protocol::{ChangeOp, PermissionReply};
use podcode_tools::testing::Harness;
use podcode_tools::{CallOutcome, CallStatus, RevertOptions, RevertTarget, ToolRegistry, revert};
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

async fn patch(h: &Harness, text: &str) -> CallOutcome {
    h.call_json("apply_patch", json!({ "patch": text })).await
}

const MAIN: &str = "use std::io;\n\nfn main() {\n    let port = 8080;\n    serve(port);\n}\n\nfn serve(p: u16) {\n    println!(\"{p}\");\n}\n";
const UTIL: &str = "pub fn one() -> u8 {\n    1\n}\n";

fn project(h: &Harness) {
    put(h, "src/main.rs", MAIN);
    put(h, "src/util.rs", UTIL);
    put(h, "old/notes.txt", "remember\n");
    put(h, "README.md", "# Demo\n");
}

const MULTI: &str = "*** Begin Patch
*** Update File: src/main.rs
@@ fn main() {
-    let port = 8080;
+    let port = 3000;
     serve(port);
@@ fn serve(p: u16) {
-    println!(\"{p}\");
+    println!(\"serving on {p}\");
*** Add File: docs/port.md
+# Port
+
+The default port is 3000.
*** Delete File: old/notes.txt
*** Update File: src/util.rs
*** Move to: src/numbers.rs
@@
 pub fn one() -> u8 {
     1
 }
+
+pub fn two() -> u8 {
+    2
+}
*** End Patch
";

#[test]
fn description_and_schema_are_pinned() {
    let mut r = ToolRegistry::new();
    podcode_builtins::register_all(&mut r);
    let tool = &r.get("apply_patch").unwrap().tool;
    assert!(tool.gates_itself());
    assert!(!tool.spec().idempotent);
    assert_eq!(
        tool.spec().description,
        "Applies a patch that adds, updates, deletes or moves files in one step. Every hunk is checked against the current files first; either the whole patch is applied or nothing is. For changes across files or at several places in one; one small change is an `edit`.

Format (paths relative to the session directory):
*** Begin Patch
*** Add File: path        then every line of the new file, each prefixed with +
*** Delete File: path
*** Update File: path
*** Move to: new/path     (optional: renames the updated file)
@@ a line above the change, e.g. the function signature (or just @@)
 context line (starts with a space; give about 3 lines above and below each change)
-removed line
+added line
*** End Patch

Copy context and - lines exactly from the file (without the line numbers read shows); keep a file's hunks in file order. If a hunk does not match, nothing changes and the error names it: read that file again and fix the hunk.
Example:
*** Begin Patch
*** Update File: src/config.rs
@@ fn default_port() -> u16 {
-    8080
+    3000
*** Add File: docs/port.md
+The default port is 3000.
*** End Patch"
    );
    let p = &tool.spec().parameters;
    assert_eq!(p["required"], json!(["patch"]));
    assert_eq!(
        p["properties"]["patch"]["description"],
        "The whole patch, from `*** Begin Patch` to `*** End Patch`."
    );
}

#[tokio::test]
async fn a_multi_file_patch_asks_once_applies_everything_and_reverts() {
    let h = setup(vec![PermissionReply::Once], false);
    project(&h);
    let out = patch(&h, MULTI).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        "Applied the patch: 5 files changed.
M src/main.rs +2 -2
A docs/port.md +3 -0
D old/notes.txt +0 -1
D src/util.rs (moved to src/numbers.rs) +0 -3
A src/numbers.rs (moved from src/util.rs) +7 -0"
    );
    assert_eq!(out.result.title, "5 files");

    let main = MAIN
        .replace("8080", "3000")
        .replace("\"{p}\"", "\"serving on {p}\"");
    assert_eq!(disk(&h, "src/main.rs"), Some(main.clone()));
    assert_eq!(
        disk(&h, "docs/port.md").as_deref(),
        Some("# Port\n\nThe default port is 3000.\n")
    );
    assert_eq!(disk(&h, "old/notes.txt"), None);
    assert_eq!(disk(&h, "src/util.rs"), None);
    assert_eq!(
        disk(&h, "src/numbers.rs"),
        Some(format!("{UTIL}\npub fn two() -> u8 {{\n    2\n}}\n"))
    );
    assert_eq!(disk(&h, "README.md").as_deref(), Some("# Demo\n"));

    let asks = h.user.asks();
    assert_eq!(asks.len(), 1, "one prompt for the whole patch");
    assert_eq!(asks[0].request.permission, "edit");
    assert_eq!(
        asks[0].request.patterns,
        vec![
            "src/main.rs",
            "docs/port.md",
            "old/notes.txt",
            "src/util.rs",
            "src/numbers.rs"
        ]
    );
    let diff = asks[0].request.metadata["diff"].as_str().unwrap();
    assert!(
        diff.starts_with(
            "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,10 +1,10 @@\n use std::io;\n"
        ),
        "{diff}"
    );
    assert!(diff.contains("-    let port = 8080;\n+    let port = 3000;\n"));
    assert!(diff.contains("--- a/docs/port.md\n+++ b/docs/port.md\n@@ -0,0 +1,3 @@\n+# Port\n"));
    assert!(diff.contains("--- a/old/notes.txt\n+++ b/old/notes.txt\n@@ -1 +0,0 @@\n-remember\n"));
    assert_eq!(
        out.result.metadata["diff"],
        asks[0].request.metadata["diff"]
    );

    let changes = h
        .store
        .changes(Some(&h.session), Some(&out.call_id))
        .unwrap();
    let ops: Vec<(String, ChangeOp)> = changes
        .iter()
        .map(|c| {
            (
                c.file
                    .strip_prefix(&format!(
                        "{}/",
                        fs::canonicalize(h.work()).unwrap().display()
                    ))
                    .unwrap()
                    .to_string(),
                c.op,
            )
        })
        .collect();
    assert_eq!(
        ops,
        vec![
            ("src/main.rs".to_string(), ChangeOp::Modify),
            ("docs/port.md".to_string(), ChangeOp::Create),
            ("old/notes.txt".to_string(), ChangeOp::Delete),
            ("src/util.rs".to_string(), ChangeOp::Delete),
            ("src/numbers.rs".to_string(), ChangeOp::Create),
        ]
    );
    assert_eq!(changes[0].old_content.as_deref(), Some(MAIN));
    assert_eq!(changes[0].new_content.as_deref(), Some(main.as_str()));

    let opts = RevertOptions {
        force: false,
        session_id: h.session.clone(),
    };
    revert(&h.store, &RevertTarget::Session(h.session.clone()), &opts).unwrap();
    assert_eq!(disk(&h, "src/main.rs").as_deref(), Some(MAIN));
    assert_eq!(disk(&h, "src/util.rs").as_deref(), Some(UTIL));
    assert_eq!(disk(&h, "old/notes.txt").as_deref(), Some("remember\n"));
    assert_eq!(disk(&h, "src/numbers.rs"), None);
    assert_eq!(disk(&h, "docs/port.md"), None);
}

#[tokio::test]
async fn a_hunk_that_does_not_match_leaves_every_file_untouched() {
    let h = setup(vec![PermissionReply::Once], false);
    project(&h);
    let bad = MULTI.replace("-    println!(\"{p}\");", "-    println!(\"port {p}\");");
    let out = patch(&h, &bad).await;
    assert_eq!(out.status, CallStatus::Failed);
    assert_eq!(
        out.model_text,
        "The apply_patch tool failed: hunk 2 of src/main.rs (patch line 7, `@@ fn serve(p: u16) {`) did not match the file: could not find these lines after line 8:
        println!(\"port {p}\");
No file was changed. Read src/main.rs again and rewrite this hunk with context and '-' lines copied exactly from the file."
    );
    let missing_context = MULTI.replace("@@ fn serve(p: u16) {", "@@ fn serve(port: u16) {");
    let out = patch(&h, &missing_context).await;
    assert!(
        out.model_text.starts_with("The apply_patch tool failed: hunk 2 of src/main.rs (patch line 7, `@@ fn serve(port: u16) {`) did not match the file: could not find the @@ context line `fn serve(port: u16) {` after line 5\n"),
        "{}",
        out.model_text
    );
    assert_eq!(disk(&h, "src/main.rs").as_deref(), Some(MAIN));
    assert_eq!(disk(&h, "src/util.rs").as_deref(), Some(UTIL));
    assert_eq!(disk(&h, "old/notes.txt").as_deref(), Some("remember\n"));
    assert_eq!(disk(&h, "docs/port.md"), None);
    assert_eq!(disk(&h, "src/numbers.rs"), None);
    assert!(
        h.user.asks().is_empty(),
        "nothing is asked for a patch that cannot apply"
    );
    assert!(h.store.changes(Some(&h.session), None).unwrap().is_empty());
}

#[tokio::test]
async fn bad_patches_and_bad_targets_are_explained() {
    let h = setup(vec![], true);
    project(&h);
    let cases = [
        (
            "*** Begin Patch\n*** Update File: src/main.rs\n@@ fn main() {\n-    let port = 8080;\n+    let port = 1;\n",
            "The apply_patch tool failed: the patch could not be parsed: line 5: the patch must end with '*** End Patch', found '+    let port = 1;' (was the patch cut short?). No file was changed. A patch looks like:\n*** Begin Patch\n*** Update File: path/to/file\n@@ a line above the change\n context line\n-old line\n+new line\n*** End Patch",
        ),
        (
            "*** Begin Patch\n*** Update File: src/main.rs\n@@ fn main() {\nlet port = 8080;\n*** End Patch",
            "",
        ),
        (
            "",
            "The apply_patch tool failed: the patch could not be parsed: line 1: the patch is empty. No file was changed. A patch looks like:\n*** Begin Patch\n*** Update File: path/to/file\n@@ a line above the change\n context line\n-old line\n+new line\n*** End Patch",
        ),
        (
            "*** Begin Patch\n*** Add File: README.md\n+again\n*** End Patch",
            "The apply_patch tool failed: '*** Add File: README.md' (patch line 2): README.md already exists. Change it with '*** Update File:', or delete it first. No file was changed.",
        ),
        (
            "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch",
            "The apply_patch tool failed: '*** Delete File: nope.txt' (patch line 2): nope.txt does not exist. No file was changed.",
        ),
        (
            "*** Begin Patch\n*** Update File: nope.rs\n@@\n-a\n+b\n*** End Patch",
            "The apply_patch tool failed: '*** Update File: nope.rs' (patch line 2): nope.rs does not exist. Create new files with '*** Add File:'. No file was changed.",
        ),
        (
            "*** Begin Patch\n*** Update File: src/util.rs\n*** Move to: README.md\n*** End Patch",
            "The apply_patch tool failed: '*** Move to: README.md' (patch line 2): README.md already exists; move to a new path, or delete it first. No file was changed.",
        ),
        (
            "*** Begin Patch\n*** Update File: README.md\n@@\n-# Demo\n+# Demo\n*** End Patch",
            "The apply_patch tool failed: the patch applies but changes nothing: every file would keep its current content. No file was changed. Check whether the change is already there.",
        ),
        (
            "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+echo hi\n*** End Patch",
            "",
        ),
    ];
    for (text, expected) in cases {
        let out = patch(&h, text).await;
        assert_eq!(out.status, CallStatus::Failed, "{text}");
        if !expected.is_empty() {
            assert_eq!(out.model_text, expected, "{text}");
        }
    }
    let out = patch(&h, cases[1].0).await;
    assert!(out.model_text.starts_with("The apply_patch tool failed: the patch could not be parsed: line 4: unexpected line in the hunk for src/main.rs: 'let port = 8080;'."), "{}", out.model_text);
    let out = patch(&h, cases[8].0).await;
    assert!(
        out.model_text
            .contains("refusing to write inside a .git directory"),
        "{}",
        out.model_text
    );
    assert!(!h.work().join(".git").exists());

    fs::write(h.work().join("blob.bin"), [0xc3, 0x28, 0x0a]).unwrap();
    let out = patch(
        &h,
        "*** Begin Patch\n*** Update File: blob.bin\n@@\n-x\n+y\n*** End Patch",
    )
    .await;
    assert!(
        out.model_text.contains("blob.bin is not UTF-8 text"),
        "{}",
        out.model_text
    );
    assert_eq!(disk(&h, "src/main.rs").as_deref(), Some(MAIN));
    assert!(h.store.changes(Some(&h.session), None).unwrap().is_empty());
}

#[tokio::test]
async fn whitespace_differences_are_tolerated_and_reported() {
    let h = setup(vec![], true);
    put(
        &h,
        "a.py",
        "def f():\n\tif x:   \n\t\treturn 1\n\treturn 0\n",
    );
    let out = patch(&h, "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n     if x:\n-        return 1\n+        return 2\n*** End Patch").await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        "Applied the patch: 1 file changed.\nM a.py +1 -1\nNote: hunk 1 of a.py matched only when ignoring whitespace; check that the result is what you meant."
    );
    // Context lines keep the file's own text; only the + line comes from the patch.
    assert_eq!(
        disk(&h, "a.py").as_deref(),
        Some("def f():\n\tif x:   \n        return 2\n\treturn 0\n")
    );
}

#[tokio::test]
async fn a_failed_write_restores_the_files_already_written() {
    let h = setup(vec![], true);
    put(&h, "a.txt", "one\n");
    // `d/x.txt` is written (creating folder d), then writing the file `d` fails.
    let out = patch(&h, "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** Add File: d/x.txt\n+x\n*** Add File: d\n+d\n*** End Patch").await;
    assert_eq!(out.status, CallStatus::Failed);
    assert!(
        out.model_text
            .starts_with("The apply_patch tool failed: could not write d: "),
        "{}",
        out.model_text
    );
    assert!(
        out.model_text.ends_with(
            "The files the patch had already changed were restored, so nothing was applied."
        ),
        "{}",
        out.model_text
    );
    assert_eq!(disk(&h, "a.txt").as_deref(), Some("one\n"));
    assert!(
        !h.work().join("d").exists(),
        "the folder created for d/x.txt is gone again"
    );
    assert!(h.store.changes(Some(&h.session), None).unwrap().is_empty());
}

#[tokio::test]
async fn rejecting_the_prompt_changes_nothing() {
    let h = setup(vec![PermissionReply::Reject { feedback: None }], false);
    project(&h);
    let out = patch(&h, MULTI).await;
    assert_eq!(out.status, CallStatus::Denied);
    assert!(
        out.model_text.starts_with(
            "The user rejected the edit permission for \"src/main.rs\", \"docs/port.md\""
        ),
        "{}",
        out.model_text
    );
    assert_eq!(disk(&h, "src/main.rs").as_deref(), Some(MAIN));
    assert_eq!(disk(&h, "src/numbers.rs"), None);
    assert!(h.store.changes(Some(&h.session), None).unwrap().is_empty());
}
