//! The change journal: round-trips, filtering and ordering, `reverted_by`, and a real crash
//! (the test binary re-runs itself as a child that aborts mid-edit) to prove that a change is
//! durable once `record_change` has returned.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};

use podcode_protocol::{ChangeOp, ChangeRecord};
use podcode_store::Store;

fn record(file: &str, op: ChangeOp, old: Option<&str>, new: Option<&str>) -> ChangeRecord {
    ChangeRecord {
        file: file.to_string(),
        op,
        old_content: old.map(str::to_string),
        new_content: new.map(str::to_string),
    }
}

#[test]
fn changes_round_trip_filter_and_keep_their_order() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("j.db")).unwrap();
    let c1 = store
        .record_change(
            "ses_a",
            Some("call_1"),
            &record("/w/a.txt", ChangeOp::Create, None, Some("a\n")),
            None,
        )
        .unwrap();
    let c2 = store
        .record_change(
            "ses_a",
            Some("call_2"),
            &record("/w/a.txt", ChangeOp::Modify, Some("a\n"), Some("b\n")),
            None,
        )
        .unwrap();
    let c3 = store
        .record_change(
            "ses_b",
            Some("call_3"),
            &record("/w/c.txt", ChangeOp::Delete, Some("c\n"), None),
            None,
        )
        .unwrap();
    let c4 = store
        .record_change(
            "ses_a",
            Some("call_1"),
            &record("/w/d.txt", ChangeOp::Create, None, Some("")),
            None,
        )
        .unwrap();

    assert!(c1.id.starts_with("chg_"));
    assert_eq!(c1.session_id, "ses_a");
    assert_eq!(c1.call_id.as_deref(), Some("call_1"));
    assert_eq!(c1.op, ChangeOp::Create);
    assert_eq!(c1.old_content, None);
    assert_eq!(c1.new_content.as_deref(), Some("a\n"));
    assert_eq!(c1.reverts, None);
    assert_eq!(store.change(&c3.id).unwrap().unwrap(), c3);
    assert_eq!(
        store
            .change(&c4.id)
            .unwrap()
            .unwrap()
            .new_content
            .as_deref(),
        Some("")
    );
    assert_eq!(store.change("chg_missing").unwrap(), None);

    let ids = |v: Vec<podcode_protocol::RecordedChange>| -> Vec<String> {
        v.into_iter().map(|c| c.id).collect()
    };
    let all = vec![c1.id.clone(), c2.id.clone(), c3.id.clone(), c4.id.clone()];
    assert_eq!(ids(store.changes(None, None).unwrap()), all);
    assert_eq!(
        ids(store.changes(Some("ses_a"), None).unwrap()),
        vec![c1.id.clone(), c2.id.clone(), c4.id.clone()]
    );
    assert_eq!(
        ids(store.changes(None, Some("call_1")).unwrap()),
        vec![c1.id.clone(), c4.id.clone()]
    );
    assert_eq!(
        ids(store.changes(Some("ses_a"), Some("call_2")).unwrap()),
        vec![c2.id.clone()]
    );
    assert!(
        store
            .changes(Some("ses_b"), Some("call_1"))
            .unwrap()
            .is_empty()
    );
    assert!(store.changes(Some("ses_zzz"), None).unwrap().is_empty());
}

#[test]
fn reverted_by_names_the_newest_revert() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("j.db")).unwrap();
    let c = store
        .record_change(
            "ses_a",
            Some("call_1"),
            &record("/w/a.txt", ChangeOp::Modify, Some("a"), Some("b")),
            None,
        )
        .unwrap();
    assert_eq!(store.reverted_by(&c.id).unwrap(), None);
    let r1 = store
        .record_change(
            "ses_a",
            None,
            &record("/w/a.txt", ChangeOp::Modify, Some("b"), Some("a")),
            Some(&c.id),
        )
        .unwrap();
    assert_eq!(r1.reverts.as_deref(), Some(c.id.as_str()));
    assert_eq!(r1.call_id, None);
    assert_eq!(store.reverted_by(&c.id).unwrap(), Some(r1.id.clone()));
    assert_eq!(store.reverted_by(&r1.id).unwrap(), None);
    let r2 = store
        .record_change(
            "ses_a",
            None,
            &record("/w/a.txt", ChangeOp::Modify, Some("b"), Some("a")),
            Some(&c.id),
        )
        .unwrap();
    assert_eq!(store.reverted_by(&c.id).unwrap(), Some(r2.id));
}

const CRASH_ENV: &str = "PODCODE_STORE_CRASH_CHILD";
const CRASH_TEST: &str = "a_change_survives_a_crash_right_after_it_is_recorded";

/// The child half: journal change 1, then write b.txt and die before journaling change 2.
fn crash_child() {
    let Some(dir) = std::env::var_os(CRASH_ENV) else {
        return;
    };
    let dir = Path::new(&dir);
    let store = Store::open(&dir.join("crash.db")).unwrap();
    let a = dir.join("a.txt");
    std::fs::write(&a, "alpha\n").unwrap();
    store
        .record_change(
            "ses_crash",
            Some("call_1"),
            &record(
                &a.to_string_lossy(),
                ChangeOp::Create,
                None,
                Some("alpha\n"),
            ),
            None,
        )
        .unwrap();
    std::fs::write(dir.join("b.txt"), "beta\n").unwrap();
    std::process::abort();
}

#[test]
fn a_change_survives_a_crash_right_after_it_is_recorded() {
    // In the re-executed child this never returns; in the parent it returns at once.
    crash_child();
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", CRASH_TEST, "--nocapture", "--test-threads=1"])
        .env(CRASH_ENV, dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(
        !status.success(),
        "the child must die by abort, got {status:?}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(6), "SIGABRT expected, got {status:?}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "beta\n",
        "the child got as far as writing b.txt"
    );

    let store = Store::open(&dir.path().join("crash.db")).unwrap();
    let changes = store.changes(Some("ses_crash"), None).unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    let a = dir.path().join("a.txt");
    assert_eq!(changes[0].file, a.to_string_lossy());
    assert_eq!(changes[0].op, ChangeOp::Create);
    assert_eq!(changes[0].call_id.as_deref(), Some("call_1"));
    assert_eq!(changes[0].new_content.as_deref(), Some("alpha\n"));
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "alpha\n");
    drop(store);

    let raw = rusqlite::Connection::open(dir.path().join("crash.db")).unwrap();
    let check: String = raw
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}
