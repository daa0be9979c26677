//! `read` through the real pipeline: numbered windows and their footers, long lines, the
//! output caps, folders, images, binary refusal, "did you mean", the permission gates
//! (`external_directory`, `.env`, the spill folder) and the file-times bookkeeping.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::fs;
use std::time::{Duration, SystemTime};

use podcode_protocol::{PermissionAction, PermissionReply, PermissionRule, Truncation};
use podcode_tools::testing::{Harness, Setup, harness, spew};
use podcode_tools::{CallStatus, SourceKind, ToolOrigin, wildcard_match};
use serde_json::json;

fn setup(replies: Vec<PermissionReply>, extra: Vec<PermissionRule>) -> Harness {
    common::builtins(replies, extra)
}

fn put(h: &Harness, rel: &str, data: impl AsRef<[u8]>) {
    let p = h.work().join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, data).unwrap();
}

fn numbered(from: usize, to: usize) -> String {
    (from..=to).map(|i| format!("{i:>6}\tline {i}\n")).collect()
}

fn lines(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn description_and_schema_are_pinned() {
    let r = common::registry();
    let tool = &r.get("read").unwrap().tool;
    assert!(tool.gates_itself());
    let spec = tool.spec();
    assert!(spec.idempotent);
    assert_eq!(
        spec.description,
        "Reads a file and returns its lines numbered like `cat -n` (line number, tab, text). Read a file before editing it; read also gets the rest of a truncated tool output.
- Returns up to 2000 lines from the start; for long files pass `offset` (1-based first line) and `limit`, and follow the footer, which says where to continue.
- Lines over 2000 characters are cut; output is capped at about 50 KB per call.
- png, jpeg, gif and webp images come back as attachments; other binary files are refused. A folder path lists its entries.
Example: {\"filePath\": \"src/main.rs\", \"offset\": 120, \"limit\": 80}"
    );
    let p = &spec.parameters;
    assert_eq!(p["required"], json!(["filePath"]));
    assert_eq!(p["properties"]["limit"]["default"], json!(2000));
    assert_eq!(p["properties"]["limit"]["minimum"], json!(1));
    assert_eq!(
        p["properties"]["offset"]["description"],
        "The 1-based line to start at (default: the first)."
    );
}

#[tokio::test]
async fn a_whole_small_file_is_numbered_with_an_end_of_file_footer() {
    let h = setup(vec![], vec![]);
    put(&h, "src/a.txt", lines(3));
    let out = h.call("read", r#"{"filePath": "src/a.txt"}"#).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        format!("{}\n(End of file - total 3 lines)", numbered(1, 3))
    );
    assert_eq!(out.result.title, "src/a.txt");
    assert!(h.user.asks().is_empty());
}

#[tokio::test]
async fn offset_and_limit_window_the_file_and_the_footer_says_how_to_continue() {
    let h = setup(vec![], vec![]);
    put(&h, "a.txt", lines(10));
    let out = h
        .call("read", r#"{"filePath": "a.txt", "offset": 3, "limit": 2}"#)
        .await;
    assert_eq!(
        out.model_text,
        format!(
            "{}\n(File has more lines. Use offset=5 to continue.)",
            numbered(3, 4)
        )
    );
    let out = h
        .call("read", r#"{"filePath": "a.txt", "offset": 9, "limit": 5}"#)
        .await;
    assert_eq!(
        out.model_text,
        format!("{}\n(End of file - total 10 lines)", numbered(9, 10))
    );
    let out = h
        .call("read", r#"{"filePath": "a.txt", "offset": 11}"#)
        .await;
    assert_eq!(out.status, CallStatus::Failed);
    assert_eq!(
        out.model_text,
        "The read tool failed: offset 11 is past the end of a.txt, which has 10 lines. Use an offset between 1 and 10."
    );
}

#[tokio::test]
async fn the_default_window_fits_the_pipeline_limits_so_nothing_is_spilled() {
    let h = setup(vec![], vec![]);
    put(&h, "big.txt", lines(3000));
    let out = h.call("read", r#"{"filePath": "big.txt"}"#).await;
    assert!(out.truncated.is_none());
    assert_eq!(
        out.model_text,
        format!(
            "{}\n(File has more lines. Use offset=1999 to continue.)",
            numbered(1, 1998)
        )
    );
    let out = h
        .call("read", r#"{"filePath": "big.txt", "offset": 1999}"#)
        .await;
    assert_eq!(
        out.model_text,
        format!("{}\n(End of file - total 3000 lines)", numbered(1999, 3000))
    );
}

#[tokio::test]
async fn long_lines_are_cut_and_the_output_is_capped_at_50_kb() {
    let h = setup(vec![], vec![]);
    put(
        &h,
        "long.txt",
        format!("short\n{}\nafter\n", "x".repeat(3000)),
    );
    let out = h.call("read", r#"{"filePath": "long.txt"}"#).await;
    assert_eq!(
        out.model_text,
        format!(
            "     1\tshort\n     2\t{}… [line truncated at 2000 characters]\n     3\tafter\n\n(End of file - total 3 lines)",
            "x".repeat(2000)
        )
    );

    let row = "y".repeat(1000);
    put(&h, "wide.txt", format!("{row}\n").repeat(200));
    let out = h.call("read", r#"{"filePath": "wide.txt"}"#).await;
    assert!(out.truncated.is_none());
    let shown = out.model_text.lines().filter(|l| l.ends_with(&row)).count();
    assert_eq!(shown, 50);
    assert!(out.model_text.ends_with(
        "\n\n(Output capped at 50 KB. File has more lines. Use offset=51 to continue.)"
    ));
}

#[tokio::test]
async fn a_line_deep_in_a_file_without_newlines_stays_bounded() {
    let h = setup(vec![], vec![]);
    // One 3 MiB line, then a short one: the long line is streamed, never held whole.
    let mut data = vec![b'z'; 3 * 1024 * 1024];
    data.extend_from_slice(b"\nend\n");
    put(&h, "one.txt", data);
    let out = h
        .call("read", r#"{"filePath": "one.txt", "offset": 2}"#)
        .await;
    assert_eq!(
        out.model_text,
        "     2\tend\n\n(End of file - total 2 lines)"
    );
}

#[tokio::test]
async fn empty_files_non_utf8_and_empty_paths() {
    let h = setup(vec![], vec![]);
    put(&h, "empty.txt", "");
    assert_eq!(
        h.call("read", r#"{"filePath": "empty.txt"}"#)
            .await
            .model_text,
        "(File is empty.)"
    );
    put(&h, "latin1.txt", b"caf\xe9\n");
    let out = h.call("read", r#"{"filePath": "latin1.txt"}"#).await;
    assert_eq!(
        out.model_text,
        "     1\tcaf\u{FFFD}\n\n(End of file - total 1 lines)\n(Some bytes are not valid UTF-8 and are shown as \u{FFFD}.)"
    );
    let out = h.call("read", r#"{"filePath": "  "}"#).await;
    assert_eq!(
        out.model_text,
        "The read tool failed: filePath is empty. Pass the path of the file to read, relative to the working directory or absolute."
    );
}

#[tokio::test]
async fn a_folder_is_listed_instead_of_failing() {
    let h = setup(vec![], vec![]);
    put(&h, "src/b.rs", "");
    put(&h, "src/a.rs", "");
    put(&h, "src/nested/c.rs", "");
    let out = h.call("read", r#"{"filePath": "src"}"#).await;
    assert_eq!(out.status, CallStatus::Completed);
    assert_eq!(
        out.model_text,
        "src is a folder; its entries (3):\na.rs\nb.rs\nnested/\n\n(Use the list tool for a recursive tree, or read a file by its path.)"
    );
    let out = h
        .call("read", r#"{"filePath": "src", "offset": 2, "limit": 1}"#)
        .await;
    assert_eq!(
        out.model_text,
        "src is a folder; its entries (3):\nb.rs\n\n(Showing entries 2-2 of 3. Use offset=3 to see more.)"
    );
}

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\nIDATx\x9cc\0\x01\0\0\x05\0\x01\r\n-\xb4\0\0\0\0IEND\xaeB`\x82";

#[tokio::test]
async fn images_come_back_as_attachments() {
    let h = setup(vec![], vec![]);
    put(&h, "img/dot.png", PNG);
    let out = h.call("read", r#"{"filePath": "img/dot.png"}"#).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        "img/dot.png is an image (image/png, 67 bytes); it is attached to this result."
    );
    let att = &out.result.attachments;
    assert_eq!(att.len(), 1);
    assert_eq!(att[0].mime, "image/png");
    assert_eq!(att[0].filename.as_deref(), Some("dot.png"));
    assert!(
        att[0].url.starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{}",
        att[0].url
    );
}

#[tokio::test]
async fn other_binary_files_are_refused() {
    let h = setup(vec![], vec![]);
    let mut blob = b"\x7fELF".to_vec();
    blob.extend_from_slice(&[0u8; 100]);
    put(&h, "bin/tool", &blob);
    let out = h.call("read", r#"{"filePath": "bin/tool"}"#).await;
    assert_eq!(out.status, CallStatus::Failed);
    assert_eq!(
        out.model_text,
        "The read tool failed: bin/tool is a binary file (104 bytes), not text, so it cannot be shown. read only shows text files and png, jpeg, gif or webp images."
    );
}

#[tokio::test]
async fn a_missing_file_suggests_similar_names() {
    let h = setup(vec![], vec![]);
    put(&h, "src/main.rs", "");
    put(&h, "src/mail.txt", "");
    put(&h, "src/unrelated.md", "");
    let out = h.call("read", r#"{"filePath": "src/mian.rs"}"#).await;
    assert_eq!(out.status, CallStatus::Failed);
    assert_eq!(
        out.model_text,
        "The read tool failed: File not found: src/mian.rs\n\nDid you mean one of these?\nsrc/main.rs"
    );
    let out = h.call("read", r#"{"filePath": "src/zzzzqqq.py"}"#).await;
    assert_eq!(
        out.model_text,
        "The read tool failed: File not found: src/zzzzqqq.py. Check the path, or use glob or list to find the file."
    );
    let out = h.call("read", r#"{"filePath": "nowhere/x.rs"}"#).await;
    assert_eq!(
        out.model_text,
        "The read tool failed: File not found: nowhere/x.rs. Its folder does not exist either; use list or glob to find the file."
    );
}

#[tokio::test]
async fn os_permission_errors_are_explained() {
    use std::os::unix::fs::PermissionsExt;
    let h = setup(vec![], vec![]);
    put(&h, "secret.txt", "hidden\n");
    let path = h.work().join("secret.txt");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::read(&path).is_ok() {
        eprintln!("running with privileges that ignore file modes; skipping");
        return;
    }
    let out = h.call("read", r#"{"filePath": "secret.txt"}"#).await;
    assert_eq!(
        out.model_text,
        "The read tool failed: the operating system denied access to secret.txt (permission denied). Podcode cannot read it; ask the user if you need its contents."
    );
}

#[tokio::test]
async fn reading_outside_the_workspace_asks_external_directory() {
    let h = setup(vec![PermissionReply::Once], vec![]);
    let outside = h.dir.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("notes.txt"), "hi\n").unwrap();
    let abs = outside.canonicalize().unwrap();
    let file = abs.join("notes.txt");
    let out = h.call_json("read", json!({"filePath": file})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        "     1\thi\n\n(End of file - total 1 lines)"
    );
    let asks = h.user.asks();
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].request.permission, "external_directory");
    assert_eq!(
        asks[0].request.patterns,
        vec![format!("{}/*", abs.display())]
    );

    // Through `..` as well; the scripted user now rejects.
    let out = h
        .call("read", r#"{"filePath": "../outside/notes.txt"}"#)
        .await;
    assert_eq!(out.status, CallStatus::Denied);
    assert!(
        out.model_text
            .starts_with("The user rejected the external_directory permission"),
        "{}",
        out.model_text
    );
}

#[test]
fn the_default_env_rules_match_the_paths_read_asks_with() {
    assert!(wildcard_match("*.env", ".env"));
    assert!(wildcard_match("*.env", "config/.env"));
    assert!(wildcard_match("*.env.*", ".env.local"));
    assert!(wildcard_match("*.env.*", "config/.env.local"));
    assert!(wildcard_match("*.env.example", ".env.example"));
    assert!(!wildcard_match("*.env", "src/environment.rs"));
}

#[tokio::test]
async fn env_files_ask_but_env_example_does_not() {
    let h = setup(
        vec![
            PermissionReply::Once,
            PermissionReply::Reject { feedback: None },
        ],
        vec![],
    );
    put(&h, ".env", "TOKEN=1\n");
    put(&h, "config/.env.local", "TOKEN=2\n");
    put(&h, ".env.example", "TOKEN=\n");
    let out = h.call("read", r#"{"filePath": ".env"}"#).await;
    assert_eq!(out.status, CallStatus::Completed);
    let out = h.call("read", r#"{"filePath": "config/.env.local"}"#).await;
    assert_eq!(out.status, CallStatus::Denied);
    assert_eq!(
        out.model_text,
        "The user rejected the read permission for \"config/.env.local\". Do not retry this call; stop and ask the user how they would like to proceed."
    );
    let out = h.call("read", r#"{"filePath": ".env.example"}"#).await;
    assert_eq!(out.status, CallStatus::Completed);
    let asks: Vec<_> = h
        .user
        .asks()
        .into_iter()
        .map(|a| (a.request.permission, a.request.patterns))
        .collect();
    assert_eq!(
        asks,
        vec![
            ("read".to_string(), vec![".env".to_string()]),
            ("read".to_string(), vec!["config/.env.local".to_string()])
        ]
    );
}

#[tokio::test]
async fn a_deny_rule_wins() {
    let h = setup(
        vec![],
        vec![PermissionRule::new(
            "read",
            "secrets/*",
            PermissionAction::Deny,
        )],
    );
    put(&h, "secrets/key.pem", "k\n");
    let out = h.call("read", r#"{"filePath": "secrets/key.pem"}"#).await;
    assert_eq!(out.status, CallStatus::Denied);
    assert!(
        out.model_text
            .starts_with("Permission denied: a rule in the user's configuration denies read")
    );
}

#[tokio::test]
async fn spill_files_are_readable_without_a_prompt() {
    let mut r = common::registry();
    r.merge(
        ToolOrigin::new(SourceKind::Test, "test"),
        vec![spew("spew", Truncation::Head)],
    );
    let mut rules = podcode_builtins::default_rules();
    rules.push(PermissionRule::new("spew", "*", PermissionAction::Allow));
    let h = harness(
        r,
        Setup {
            rules,
            ..Default::default()
        },
    );
    let out = h.call("spew", r#"{"bytes": 200000}"#).await;
    let spill = out
        .truncated
        .expect("the spew output is truncated")
        .spill_path;
    let out = h
        .call_json(
            "read",
            json!({"filePath": spill, "offset": 2001, "limit": 2}),
        )
        .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        "  2001\tline 2001\n  2002\tline 2002\n\n(File has more lines. Use offset=2003 to continue.)"
    );
    assert!(h.user.asks().is_empty(), "{:?}", h.user.asks());
}

#[tokio::test]
async fn a_file_changed_since_it_was_read_cannot_be_overwritten() {
    let h = setup(
        vec![],
        vec![PermissionRule::new("edit", "*", PermissionAction::Allow)],
    );
    put(&h, "a.txt", "one\n");
    let out = h.call("read", r#"{"filePath": "a.txt"}"#).await;
    assert_eq!(out.status, CallStatus::Completed);
    let later = SystemTime::now() + Duration::from_secs(5);
    fs::write(h.work().join("a.txt"), "two\n").unwrap();
    fs::File::options()
        .write(true)
        .open(h.work().join("a.txt"))
        .unwrap()
        .set_modified(later)
        .unwrap();
    let out = h
        .call("write", r#"{"filePath": "a.txt", "content": "three\n"}"#)
        .await;
    assert_eq!(out.status, CallStatus::Failed, "{}", out.model_text);
    assert!(
        out.model_text
            .contains("modified on disk since you last read it"),
        "{}",
        out.model_text
    );
}

#[tokio::test]
async fn crlf_lines_and_cut_multibyte_characters() {
    let h = setup(vec![], vec![]);
    put(&h, "dos.txt", "x\r\ny\r\n");
    let out = h.call("read", r#"{"filePath": "dos.txt"}"#).await;
    assert_eq!(
        out.model_text,
        "     1\tx\n     2\ty\n\n(End of file - total 2 lines)"
    );
    // 5000 two-byte characters: cut at 2000 characters, and the byte cap splitting a
    // character is not reported as invalid UTF-8.
    put(&h, "wide.txt", format!("{}\n", "é".repeat(5000)));
    let out = h.call("read", r#"{"filePath": "wide.txt"}"#).await;
    assert_eq!(
        out.model_text,
        format!(
            "     1\t{}… [line truncated at 2000 characters]\n\n(End of file - total 1 lines)",
            "é".repeat(2000)
        )
    );
}

#[tokio::test]
async fn images_are_recognised_by_their_magic_bytes() {
    let h = setup(vec![], vec![]);
    put(&h, "a.gif", b"GIF89a\x01\0\x01\0\0\0\0;");
    put(
        &h,
        "a.webp",
        b"RIFF\x1a\0\0\0WEBPVP8L\x0d\0\0\0/\0\0\0\x10\x07\x10\x11\x11\x88\x88\xfe\x07\0",
    );
    put(&h, "photo.dat", b"\xff\xd8\xff\xe0\0\x10JFIF\0");
    for (file, mime) in [
        ("a.gif", "image/gif"),
        ("a.webp", "image/webp"),
        ("photo.dat", "image/jpeg"),
    ] {
        let out = h.call_json("read", json!({ "filePath": file })).await;
        assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
        assert_eq!(out.result.attachments[0].mime, mime);
    }
    // Not an image, and mostly control characters: binary.
    put(&h, "ctl.dat", [1u8, 2, 3, 4, 5, 6, 7, b'a']);
    let out = h.call("read", r#"{"filePath": "ctl.dat"}"#).await;
    assert_eq!(out.status, CallStatus::Failed);
    assert!(
        out.model_text
            .contains("ctl.dat is a binary file (8 bytes)")
    );
}
