//! `grep` through the real pipeline: grouped output with line numbers, newest files first,
//! `include`, ignore files, binary files, the match cap and its note, `.env` files, and
//! bad patterns.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::fs;
use std::time::{Duration, SystemTime};

use podcode_protocol::{PermissionReply, PermissionRule};
use podcode_tools::CallStatus;
use podcode_tools::testing::Harness;
use serde_json::json;

fn setup(replies: Vec<PermissionReply>, extra: Vec<PermissionRule>) -> Harness {
    common::builtins(replies, extra)
}

/// Writes a file whose mtime is `age` seconds in the past.
fn put(h: &Harness, rel: &str, data: impl AsRef<[u8]>, age: u64) {
    let p = h.work().join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(&p, data).unwrap();
    let f = fs::File::options().write(true).open(&p).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(age))
        .unwrap();
}

#[test]
fn description_and_schema_are_pinned() {
    let r = common::registry();
    let tool = &r.get("grep").unwrap().tool;
    assert!(tool.gates_itself());
    let spec = tool.spec();
    assert!(spec.idempotent);
    assert_eq!(
        spec.description,
        "Searches file contents with a regular expression and returns the matching lines with their line numbers, grouped by file, most recently modified files first. glob finds files by name.
- The pattern is a Rust/ripgrep regular expression, matched case-sensitively line by line (never across lines): escape special characters (`\\(`, `\\.`, `\\{`); `(?i)` ignores case.
- `include` filters the files with a glob: `*.rs` matches file names, `src/**/*.ts` paths relative to the search folder.
- Files ignored by .gitignore or .ignore, the .git folder and binary files are skipped.
- At most 100 matching lines are returned; a note says how many more there were. Lines over 500 characters are cut.
Example: {\"pattern\": \"fn\\\\s+parse_\\\\w+\", \"include\": \"*.rs\"}"
    );
    assert_eq!(spec.parameters["required"], json!(["pattern"]));
    assert_eq!(
        spec.parameters["properties"]["include"]["description"],
        "Only search files matching this glob, e.g. `*.{ts,tsx}`."
    );
}

#[tokio::test]
async fn matches_are_grouped_by_file_newest_first_with_line_numbers() {
    let h = setup(vec![], vec![]);
    fs::write(h.work().join(".gitignore"), "dist/\n").unwrap();
    put(
        &h,
        "src/old.rs",
        "fn parse_a() {}\nlet x = 1;\nfn parse_b() {}\n",
        300,
    );
    put(&h, "src/new.rs", "// fn parse_c\nfn parse_c() {}\n", 10);
    put(&h, "README.md", "call parse_a() first\n", 100);
    put(&h, "dist/bundle.js", "fn parse_z() {}\n", 1);
    put(&h, ".git/config", "fn parse_git() {}\n", 1);
    put(&h, "logo.bin", b"fn parse_bin() {}\n\0\x01\x02", 1);
    let out = h.call("grep", r#"{"pattern": "fn\\s+parse_\\w+"}"#).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        "src/new.rs:\n  1: // fn parse_c\n  2: fn parse_c() {}\n\nsrc/old.rs:\n  1: fn parse_a() {}\n  3: fn parse_b() {}"
    );
    assert_eq!(out.result.title, "fn\\s+parse_\\w+ in .");
    assert!(h.user.asks().is_empty());

    let out = h
        .call("grep", r#"{"pattern": "parse_a", "include": "*.md"}"#)
        .await;
    assert_eq!(out.model_text, "README.md:\n  1: call parse_a() first");
    let out = h
        .call(
            "grep",
            r#"{"pattern": "parse_", "include": "src/*.rs", "path": "."}"#,
        )
        .await;
    assert!(out.model_text.starts_with("src/new.rs:\n"));
    let out = h
        .call("grep", r#"{"pattern": "let", "path": "src/old.rs"}"#)
        .await;
    assert_eq!(out.model_text, "src/old.rs:\n  2: let x = 1;");
    let out = h.call("grep", r#"{"pattern": "(?i)README|CALL"}"#).await;
    assert_eq!(out.model_text, "README.md:\n  1: call parse_a() first");
}

#[tokio::test]
async fn at_most_100_matches_with_a_note() {
    let h = setup(vec![], vec![]);
    let body: String = (1..=60).map(|i| format!("hit {i}\n")).collect();
    put(&h, "a.txt", &body, 10);
    put(&h, "b.txt", &body, 20);
    put(&h, "c.txt", &body, 30);
    let out = h.call("grep", r#"{"pattern": "hit"}"#).await;
    let text = &out.model_text;
    assert!(text.starts_with("a.txt:\n  1: hit 1\n"));
    assert!(text.contains("\n  60: hit 60\n\nb.txt:\n  1: hit 1\n"));
    assert!(
        text.contains("\n  40: hit 40\n\n(Showing 100 of 180 matches in 3 files."),
        "{text}"
    );
    assert!(text.ends_with("(Showing 100 of 180 matches in 3 files. Use a more specific pattern, path or include to see the others.)"));
    assert!(!text.contains("c.txt"));
    assert_eq!(out.result.metadata["matches"], json!(180));
}

#[tokio::test]
async fn long_and_non_utf8_lines() {
    let h = setup(vec![], vec![]);
    put(&h, "min.js", format!("var a='{}';\n", "q".repeat(900)), 1);
    put(&h, "latin1.txt", b"caf\xe9 needle\n", 1);
    let out = h.call("grep", r#"{"pattern": "var a"}"#).await;
    assert_eq!(
        out.model_text,
        format!(
            "min.js:\n  1: var a='{}… [line cut at 500 characters]",
            "q".repeat(493)
        )
    );
    let out = h.call("grep", r#"{"pattern": "needle"}"#).await;
    assert_eq!(out.model_text, "latin1.txt:\n  1: caf\u{FFFD} needle");
}

#[tokio::test]
async fn bad_patterns_get_clear_errors() {
    let h = setup(vec![], vec![]);
    let out = h.call("grep", r#"{"pattern": ""}"#).await;
    assert_eq!(
        out.model_text,
        "The grep tool failed: the pattern is empty. Pass the regular expression to search for, e.g. \"fn main\"."
    );
    let out = h.call("grep", r#"{"pattern": "foo(bar"}"#).await;
    assert_eq!(out.status, CallStatus::Failed);
    let text = &out.model_text;
    assert!(
        text.starts_with("The grep tool failed: \"foo(bar\" is not a valid regular expression: "),
        "{text}"
    );
    assert!(text.ends_with(
        "\nThe pattern uses Rust regex syntax (like ripgrep). Escape special characters such as ( ) [ ] { } . * + ? | \\ with a backslash to match them literally."
    ));
    let out = h.call("grep", r#"{"pattern": "x", "include": "{a"}"#).await;
    assert!(
        out.model_text
            .starts_with("The grep tool failed: include \"{a\" is not a valid glob ("),
        "{}",
        out.model_text
    );
    let out = h
        .call("grep", r#"{"pattern": "nothing-matches-this"}"#)
        .await;
    assert_eq!(
        out.model_text,
        "No matches found for \"nothing-matches-this\" in the working directory."
    );
    let out = h.call("grep", r#"{"pattern": "x", "path": "gone"}"#).await;
    assert_eq!(
        out.model_text,
        "The grep tool failed: gone does not exist. Check the path, or use list or glob to find the right one."
    );
}

#[tokio::test]
async fn matches_in_env_files_need_read_permission() {
    let h = setup(
        vec![
            PermissionReply::Reject { feedback: None },
            PermissionReply::Once,
        ],
        vec![],
    );
    put(&h, ".env", "API_KEY=secret\n", 10);
    put(&h, ".env.example", "API_KEY=\n", 20);
    put(&h, "src/config.rs", "let key = env(\"API_KEY\");\n", 30);
    let out = h.call("grep", r#"{"pattern": "API_KEY"}"#).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        ".env.example:\n  1: API_KEY=\n\nsrc/config.rs:\n  1: let key = env(\"API_KEY\");\n\n(Matches in .env were not shown because reading those files was not permitted.)"
    );
    let asks = h.user.asks();
    assert_eq!(asks.len(), 1);
    assert_eq!(
        (
            asks[0].request.permission.as_str(),
            asks[0].request.patterns.clone()
        ),
        ("read", vec![".env".to_string()])
    );

    let out = h.call("grep", r#"{"pattern": "API_KEY"}"#).await;
    assert!(
        out.model_text.starts_with(".env:\n  1: API_KEY=secret\n"),
        "{}",
        out.model_text
    );
}
