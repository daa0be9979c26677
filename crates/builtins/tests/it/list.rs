//! `list` through the real pipeline: the tree shape, ignore files and `ignore` globs, the
//! entry cap and its notes, and bad paths.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::fs;

use podcode_protocol::PermissionReply;
use podcode_tools::CallStatus;
use podcode_tools::testing::Harness;
use serde_json::json;

fn setup(replies: Vec<PermissionReply>) -> Harness {
    common::builtins(replies, vec![])
}

fn put(h: &Harness, rel: &str, data: &str) {
    let p = h.work().join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, data).unwrap();
}

fn root(h: &Harness) -> String {
    h.work().canonicalize().unwrap().display().to_string()
}

#[test]
fn description_and_schema_are_pinned() {
    let r = common::registry();
    let tool = &r.get("list").unwrap().tool;
    assert!(tool.gates_itself());
    let spec = tool.spec();
    assert!(spec.idempotent);
    assert_eq!(
        spec.description,
        "Lists a folder as an indented tree (folders first, marked with a trailing `/`), walking into subfolders.
Use it for an overview of a project or folder; glob finds files by name, grep searches their contents.
- Files ignored by .gitignore or .ignore and the .git folder are left out; hidden files are shown.
- At most 1000 entries are shown, shallowest first; folders whose entries were left out say how many.
Example: {\"path\": \"src\", \"ignore\": [\"*.snap\"]}"
    );
    assert!(
        spec.parameters
            .get("required")
            .is_none_or(|r| r == &json!([]))
    );
    assert_eq!(spec.parameters["properties"]["ignore"]["type"], "array");
}

#[tokio::test]
async fn a_tree_with_folders_first_honouring_ignore_files_and_skipping_git() {
    let h = setup(vec![]);
    put(&h, ".gitignore", "target/\n*.log\n");
    put(&h, ".git/HEAD", "ref: refs/heads/main\n");
    put(&h, "Cargo.toml", "");
    put(&h, "debug.log", "");
    put(&h, "target/debug/app", "");
    put(&h, "src/main.rs", "");
    put(&h, "src/util/mod.rs", "");
    put(&h, "src/util/.ignore", "generated.rs\n");
    put(&h, "src/util/generated.rs", "");
    put(&h, ".github/workflows/ci.yml", "");
    let out = h.call("list", "{}").await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        format!(
            "{}/\n  .github/\n    workflows/\n      ci.yml\n  src/\n    util/\n      .ignore\n      mod.rs\n    main.rs\n  .gitignore\n  Cargo.toml",
            root(&h)
        )
    );
    assert_eq!(out.result.title, ".");
    assert!(h.user.asks().is_empty());

    let out = h
        .call("list", r#"{"path": "src", "ignore": ["util"]}"#)
        .await;
    assert_eq!(out.model_text, format!("{}/src/\n  main.rs", root(&h)));
    assert_eq!(out.result.title, "src");
}

#[tokio::test]
async fn the_cap_keeps_the_shallowest_entries_and_says_what_was_left_out() {
    let h = setup(vec![]);
    put(&h, "README.md", "");
    for i in 0..1200 {
        put(&h, &format!("big/f{i:04}.txt"), "");
    }
    put(&h, "small/deep/x.txt", "");
    let out = h.call("list", "{}").await;
    let text = &out.model_text;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1], "  big/");
    assert_eq!(lines[2], "    f0000.txt");
    // All of depth 1 (big/, small/, README.md), then depth 2 in path order until the cap.
    assert!(
        text.contains(
            "\n    f0996.txt\n    … 203 more entries\n  small/ (1 entry not shown)\n  README.md\n"
        ),
        "{text}"
    );
    assert!(text.ends_with(
        "\n\n(1000 of 1205 entries shown; 205 were left out. List a subfolder to see more, or use glob to find specific files.)"
    ));
    assert_eq!(out.result.metadata["count"], json!(1205));
}

#[tokio::test]
async fn empty_folders_files_and_missing_paths() {
    let h = setup(vec![]);
    fs::create_dir_all(h.work().join("empty")).unwrap();
    put(&h, "a.txt", "");
    let out = h.call("list", r#"{"path": "empty"}"#).await;
    assert_eq!(
        out.model_text,
        format!(
            "{}/empty/\n  (empty: no entries, or all of them are ignored)",
            root(&h)
        )
    );
    let out = h.call("list", r#"{"path": "a.txt"}"#).await;
    assert_eq!(
        out.model_text,
        "The list tool failed: a.txt is a file, not a folder. Pass a folder as path (or read the file with the read tool)."
    );
    let out = h.call("list", r#"{"path": "nope"}"#).await;
    assert_eq!(
        out.model_text,
        "The list tool failed: nope does not exist. Check the path, or use list or glob to find the right one."
    );
    let out = h.call("list", r#"{"ignore": ["a[b"]}"#).await;
    assert_eq!(out.status, CallStatus::Failed);
    assert!(
        out.model_text
            .starts_with("The list tool failed: ignore glob \"a[b\" is not valid ("),
        "{}",
        out.model_text
    );
}

#[tokio::test]
async fn listing_outside_the_workspace_asks_external_directory() {
    let h = setup(vec![]);
    let outside = h.dir.path().join("elsewhere");
    fs::create_dir_all(&outside).unwrap();
    let out = h.call_json("list", json!({"path": outside})).await;
    assert_eq!(out.status, CallStatus::Denied);
    let asks = h.user.asks();
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].request.permission, "external_directory");
}
