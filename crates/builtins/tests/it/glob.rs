//! `glob` through the real pipeline: name and path patterns, newest-first order, ignore
//! files, the result cap and its note, and bad input.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::fs;
use std::time::{Duration, SystemTime};

use podcode_protocol::PermissionReply;
use podcode_tools::CallStatus;
use podcode_tools::testing::Harness;
use serde_json::json;

fn setup(replies: Vec<PermissionReply>) -> Harness {
    common::builtins(replies, vec![])
}

/// Writes a file whose mtime is `age` seconds in the past.
fn put(h: &Harness, rel: &str, age: u64) {
    let p = h.work().join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, rel).unwrap();
    let f = fs::File::options().write(true).open(&p).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(age))
        .unwrap();
}

#[test]
fn description_and_schema_are_pinned() {
    let r = common::registry();
    let tool = &r.get("glob").unwrap().tool;
    assert!(tool.gates_itself());
    let spec = tool.spec();
    assert!(spec.idempotent);
    assert_eq!(
        spec.description,
        "Finds files by name with a glob pattern and returns their paths, most recently modified first; grep searches file contents.
- A pattern without `/` matches file names at any depth (`*.rs`, `Cargo.toml`); one with `/` matches the path relative to the search folder (`src/**/*.ts`), where `*` stays within one folder and `**` crosses folders. `{a,b}` and `[abc]` work.
- Files ignored by .gitignore or .ignore and the .git folder are skipped; hidden files are included.
- At most 100 paths are returned; a note says how many more matched.
Example: {\"pattern\": \"src/**/*.test.ts\"}"
    );
    assert_eq!(spec.parameters["required"], json!(["pattern"]));
}

#[tokio::test]
async fn matches_come_newest_first_and_ignored_files_are_skipped() {
    let h = setup(vec![]);
    fs::write(h.work().join(".gitignore"), "target/\n").unwrap();
    put(&h, "src/old.rs", 300);
    put(&h, "src/new.rs", 10);
    put(&h, "src/deep/mid.rs", 100);
    put(&h, "build.rs", 200);
    put(&h, "target/gen.rs", 1);
    put(&h, ".git/hooks/x.rs", 1);
    put(&h, "notes.md", 1);
    let out = h.call("glob", r#"{"pattern": "*.rs"}"#).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        "src/new.rs\nsrc/deep/mid.rs\nbuild.rs\nsrc/old.rs"
    );
    assert_eq!(out.result.title, "*.rs in .");

    let out = h.call("glob", r#"{"pattern": "src/*.rs"}"#).await;
    assert_eq!(out.model_text, "src/new.rs\nsrc/old.rs");
    let out = h.call("glob", r#"{"pattern": "src/**/*.{rs,md}"}"#).await;
    assert_eq!(out.model_text, "src/new.rs\nsrc/deep/mid.rs\nsrc/old.rs");
    let out = h
        .call("glob", r#"{"pattern": "*.rs", "path": "src/deep"}"#)
        .await;
    assert_eq!(out.model_text, "src/deep/mid.rs");
    let out = h
        .call("glob", r#"{"pattern": "deep/*.rs", "path": "src"}"#)
        .await;
    assert_eq!(out.model_text, "src/deep/mid.rs");
    assert!(h.user.asks().is_empty());
}

#[tokio::test]
async fn at_most_100_paths_with_a_note() {
    let h = setup(vec![]);
    for i in 0..130u64 {
        put(&h, &format!("gen/f{i:03}.txt"), 1000 - i);
    }
    let out = h.call("glob", r#"{"pattern": "*.txt"}"#).await;
    let lines: Vec<&str> = out.model_text.lines().collect();
    assert_eq!(lines[0], "gen/f129.txt");
    assert_eq!(lines[99], "gen/f030.txt");
    assert_eq!(
        lines[101],
        "(Showing the 100 most recently modified of 130 matching files. Use a more specific pattern or path to see the others.)"
    );
    assert_eq!(lines.len(), 102);
}

#[tokio::test]
async fn no_matches_and_bad_input() {
    let h = setup(vec![]);
    put(&h, "a.txt", 1);
    let out = h.call("glob", r#"{"pattern": "*.zig"}"#).await;
    assert_eq!(out.status, CallStatus::Completed);
    assert_eq!(
        out.model_text,
        "No files found matching \"*.zig\" in the working directory. Files ignored by .gitignore or .ignore are not searched."
    );
    let out = h.call("glob", r#"{"pattern": " "}"#).await;
    assert_eq!(
        out.model_text,
        "The glob tool failed: the pattern is empty. Pass a glob such as \"*.rs\" or \"src/**/*.ts\"."
    );
    let out = h.call("glob", r#"{"pattern": "src/[a.rs"}"#).await;
    assert_eq!(out.status, CallStatus::Failed);
    assert!(
        out.model_text
            .starts_with("The glob tool failed: \"src/[a.rs\" is not a valid glob ("),
        "{}",
        out.model_text
    );
    assert!(
        out.model_text
            .ends_with("Use `*`, `**`, `?`, `[abc]` and `{a,b}`, e.g. \"src/**/*.rs\".")
    );
    let out = h
        .call("glob", r#"{"pattern": "*", "path": "missing"}"#)
        .await;
    assert_eq!(
        out.model_text,
        "The glob tool failed: missing does not exist. Check the path, or use list or glob to find the right one."
    );
}

#[tokio::test]
async fn searching_outside_the_workspace_asks_external_directory() {
    let h = setup(vec![PermissionReply::Once]);
    let outside = h.dir.path().join("elsewhere");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("x.rs"), "").unwrap();
    let out = h
        .call_json("glob", json!({"pattern": "*.rs", "path": outside}))
        .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        outside
            .canonicalize()
            .unwrap()
            .join("x.rs")
            .display()
            .to_string()
    );
    assert_eq!(h.user.asks()[0].request.permission, "external_directory");
}
