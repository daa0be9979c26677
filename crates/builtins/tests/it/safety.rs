//! Data safety of `write`, `edit` and `apply_patch` through the real pipeline and store:
//! a file changed while the permission prompt is open is not overwritten (the stale-read
//! error instead), a symbolic link swapped in during the prompt stops the write before it
//! lands outside the approved path, and a journal that cannot be written fails the call
//! before the workspace is touched.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::fs;
use std::path::PathBuf;

use podcode_protocol::PermissionReply;
use podcode_tools::CallStatus;
use podcode_tools::testing::Harness;
use serde_json::{Value, json};

/// Where a test's folders are, for what happens while the prompt is open.
struct Paths {
    work: PathBuf,
    dir: PathBuf,
}

/// The user approves once; `meanwhile` runs while the prompt is open.
fn asked_once(meanwhile: impl FnOnce(&Paths) + Send + 'static) -> Harness {
    let h = common::builtins(vec![PermissionReply::Once], vec![]);
    let paths = Paths {
        work: h.work(),
        dir: h.dir.path().to_path_buf(),
    };
    h.user.while_asked(move |_| meanwhile(&paths));
    h
}

fn stale(tool: &str, file: &std::path::Path) -> String {
    format!(
        "The {tool} tool failed: {} was modified on disk since you last read it. Read it again with the read tool, then redo your change.",
        file.display()
    )
}

/// The three ways of changing `a.txt` from "one\n" to "two\n".
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("write", json!({"filePath": "a.txt", "content": "two\n"})),
        (
            "edit",
            json!({"filePath": "a.txt", "oldString": "one", "newString": "two"}),
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch"}),
        ),
    ]
}

#[tokio::test]
async fn a_file_saved_while_the_prompt_is_open_is_not_overwritten() {
    for (tool, args) in calls() {
        let h =
            asked_once(|p| fs::write(p.work.join("a.txt"), "one\nsaved by the editor\n").unwrap());
        fs::write(h.work().join("a.txt"), "one\n").unwrap();
        let out = h.call_json(tool, args).await;
        assert_eq!(out.status, CallStatus::Failed, "{tool}: {}", out.model_text);
        let file = h.work().canonicalize().unwrap().join("a.txt");
        assert_eq!(out.model_text, stale(tool, &file));
        assert_eq!(
            fs::read_to_string(h.work().join("a.txt")).unwrap(),
            "one\nsaved by the editor\n",
            "{tool}"
        );
        assert!(h.store.changes(None, None).unwrap().is_empty(), "{tool}");
        assert!(h.store.pending_changes().unwrap().is_empty(), "{tool}");
    }
}

#[tokio::test]
async fn a_file_created_while_the_prompt_is_open_is_not_overwritten() {
    let h = asked_once(|p| fs::write(p.work.join("new.txt"), "mine\n").unwrap());
    let out = h
        .call_json(
            "write",
            json!({"filePath": "new.txt", "content": "model\n"}),
        )
        .await;
    let file = h.work().canonicalize().unwrap().join("new.txt");
    assert_eq!(out.model_text, stale("write", &file));
    assert_eq!(fs::read_to_string(&file).unwrap(), "mine\n");
}

#[tokio::test]
async fn a_folder_swapped_for_a_symlink_during_the_prompt_stops_the_write() {
    for (tool, args) in calls() {
        let args: Value =
            serde_json::from_str(&args.to_string().replace("a.txt", "sub/a.txt")).unwrap();
        let h = asked_once(|p| {
            // The approved `sub/` is moved away and replaced by a link to a folder outside.
            fs::rename(p.work.join("sub"), p.work.join("sub.old")).unwrap();
            std::os::unix::fs::symlink(p.dir.join("outside"), p.work.join("sub")).unwrap();
        });
        fs::create_dir_all(h.work().join("sub")).unwrap();
        fs::write(h.work().join("sub/a.txt"), "one\n").unwrap();
        let outside = h.dir.path().join("outside");
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("a.txt"), "one\n").unwrap();

        let out = h.call_json(tool, args).await;
        assert_eq!(out.status, CallStatus::Failed, "{tool}: {}", out.model_text);
        assert_eq!(
            out.model_text,
            format!(
                "The {tool} tool failed: sub/a.txt was not written: a folder on its path (or the file itself) became a symbolic link after the change was approved, so the write could land somewhere else. Nothing was changed. Check the path with list, then try again."
            )
        );
        assert_eq!(
            fs::read_to_string(outside.join("a.txt")).unwrap(),
            "one\n",
            "{tool}"
        );
        assert_eq!(
            fs::read_to_string(h.work().join("sub.old/a.txt")).unwrap(),
            "one\n"
        );
        assert_eq!(
            fs::read_dir(&outside).unwrap().count(),
            1,
            "no temp file left outside"
        );
        assert!(h.store.changes(None, None).unwrap().is_empty(), "{tool}");
    }
}

#[tokio::test]
async fn a_file_swapped_for_a_symlink_during_the_prompt_is_not_followed() {
    let h = asked_once(|p| {
        fs::remove_file(p.work.join("a.txt")).unwrap();
        std::os::unix::fs::symlink(p.dir.join("secret.txt"), p.work.join("a.txt")).unwrap();
    });
    fs::write(h.dir.path().join("secret.txt"), "one\n").unwrap();
    fs::write(h.work().join("a.txt"), "one\n").unwrap();
    let out = h
        .call_json("write", json!({"filePath": "a.txt", "content": "two\n"}))
        .await;
    assert_eq!(out.status, CallStatus::Failed, "{}", out.model_text);
    assert!(
        out.model_text.contains("became a symbolic link"),
        "{}",
        out.model_text
    );
    assert_eq!(
        fs::read_to_string(h.dir.path().join("secret.txt")).unwrap(),
        "one\n"
    );
}

#[tokio::test]
async fn a_journal_that_cannot_be_written_fails_the_call_before_the_file_is_touched() {
    let h = common::builtins(vec![], common::allow_if("edit", true));
    fs::write(h.work().join("a.txt"), "one\n").unwrap();
    // A real SQLite failure on the journal insert, as a full data disk would give.
    let db = rusqlite::Connection::open(h.store.path()).unwrap();
    db.execute_batch(
        "CREATE TRIGGER full BEFORE INSERT ON changes BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;",
    )
    .unwrap();
    for (tool, args) in calls() {
        let out = h.call_json(tool, args).await;
        assert_eq!(out.status, CallStatus::Failed, "{tool}: {}", out.model_text);
        assert_eq!(
            out.model_text,
            format!(
                "The {tool} tool failed: could not journal the change to a.txt (store: sqlite: database or disk is full), so the file was not touched. Podcode's data folder may be full or read-only; tell the user."
            )
        );
        assert_eq!(fs::read_to_string(h.work().join("a.txt")).unwrap(), "one\n");
        let names: Vec<_> = fs::read_dir(h.work())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.txt"], "no temp file left");
    }
}

#[tokio::test]
async fn writes_keep_the_mode_and_leave_no_temp_files() {
    use std::os::unix::fs::PermissionsExt;
    let h = common::builtins(vec![], common::allow_if("edit", true));
    for (tool, args) in calls() {
        let name = format!("{tool}.sh");
        let file = h.work().join(&name);
        fs::write(&file, "one\n").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o750)).unwrap();
        let args: Value = serde_json::from_str(&args.to_string().replace("a.txt", &name)).unwrap();
        let out = h.call_json(tool, args).await;
        assert_eq!(
            out.status,
            CallStatus::Completed,
            "{tool}: {}",
            out.model_text
        );
        assert_eq!(fs::read_to_string(&file).unwrap(), "two\n");
        assert_eq!(
            fs::metadata(&file).unwrap().permissions().mode() & 0o7777,
            0o750,
            "{tool}"
        );
    }
    let mut names: Vec<_> = fs::read_dir(h.work())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["apply_patch.sh", "edit.sh", "write.sh"],
        "no temp files"
    );
    assert_eq!(h.store.changes(None, None).unwrap().len(), 3);
    assert!(h.store.pending_changes().unwrap().is_empty());
}
