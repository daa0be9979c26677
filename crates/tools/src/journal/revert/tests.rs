//! Tests of `revert` over a real store in a temp dir.

use super::*;
use podcode_protocol::{ChangeOp, ChangeRecord};
use podcode_store::Store;
use tempfile::TempDir;

struct Fixture {
    dir: TempDir,
    store: Store,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db/podcode.db")).unwrap();
    Fixture { dir, store }
}

impl Fixture {
    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_string_lossy().into_owned()
    }

    fn disk(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.path(name)).ok()
    }

    /// What a tool does: change the file (None = delete) and journal it.
    fn edit(&self, session: &str, call: &str, name: &str, new: Option<&str>) -> RecordedChange {
        let file = self.path(name);
        let old = self.disk(name);
        let op = match (&old, new) {
            (None, _) => ChangeOp::Create,
            (Some(_), None) => ChangeOp::Delete,
            (Some(_), Some(_)) => ChangeOp::Modify,
        };
        restore(&file, new).unwrap();
        let record = ChangeRecord {
            file,
            op,
            old_content: old,
            new_content: new.map(str::to_string),
        };
        self.store
            .record_change(session, Some(call), &record, None)
            .unwrap()
    }

    fn revert(&self, target: RevertTarget, force: bool) -> Result<RevertOutcome, RevertError> {
        let opts = RevertOptions {
            force,
            session_id: "ses_1".into(),
        };
        revert(&self.store, &target, &opts)
    }
}

fn change(id: &str) -> RevertTarget {
    RevertTarget::Change(id.to_string())
}

#[test]
fn reverting_create_modify_and_delete_restores_each() {
    let f = fixture();
    let created = f.edit("ses_1", "call_1", "new.txt", Some("fresh\n"));
    std::fs::write(f.path("mod.txt"), "one\n").unwrap();
    let modified = f.edit("ses_1", "call_2", "mod.txt", Some("two\n"));
    std::fs::create_dir_all(f.dir.path().join("sub/deep")).unwrap();
    std::fs::write(f.path("sub/deep/gone.txt"), "keep me\n").unwrap();
    let deleted = f.edit("ses_1", "call_3", "sub/deep/gone.txt", None);
    std::fs::remove_dir_all(f.dir.path().join("sub")).unwrap();

    let out = f.revert(change(&created.id), false).unwrap();
    assert_eq!(f.disk("new.txt"), None);
    let rec = &out.reverted[0];
    assert_eq!(rec.op, ChangeOp::Delete);
    assert_eq!(rec.old_content.as_deref(), Some("fresh\n"));
    assert_eq!(rec.new_content, None);
    assert_eq!(rec.reverts.as_deref(), Some(created.id.as_str()));
    assert_eq!(
        (rec.session_id.as_str(), rec.call_id.as_deref()),
        ("ses_1", None)
    );

    let out = f.revert(change(&modified.id), false).unwrap();
    assert_eq!(f.disk("mod.txt").as_deref(), Some("one\n"));
    assert_eq!(out.reverted[0].op, ChangeOp::Modify);
    assert_eq!(out.reverted[0].old_content.as_deref(), Some("two\n"));
    assert_eq!(out.reverted[0].new_content.as_deref(), Some("one\n"));

    let out = f.revert(change(&deleted.id), false).unwrap();
    assert_eq!(f.disk("sub/deep/gone.txt").as_deref(), Some("keep me\n"));
    assert_eq!(out.reverted[0].op, ChangeOp::Create);
    assert_eq!(out.reverted[0].old_content, None);
    let by = f.store.reverted_by(&deleted.id).unwrap();
    assert_eq!(by, Some(out.reverted[0].id.clone()));
}

#[test]
fn call_and_session_reverts_undo_successive_edits_newest_first() {
    let f = fixture();
    std::fs::write(f.path("a.txt"), "original\n").unwrap();
    let e1 = f.edit("ses_1", "call_1", "a.txt", Some("first\n"));
    let e2 = f.edit("ses_1", "call_1", "a.txt", Some("second\n"));
    let out = f
        .revert(RevertTarget::Call("call_1".into()), false)
        .unwrap();
    assert_eq!(f.disk("a.txt").as_deref(), Some("original\n"));
    let undone: Vec<_> = out
        .reverted
        .iter()
        .map(|r| r.reverts.clone().unwrap())
        .collect();
    assert_eq!(undone, vec![e2.id.clone(), e1.id.clone()]);
    assert_eq!(out.reverted[0].old_content.as_deref(), Some("second\n"));
    assert_eq!(out.reverted[1].new_content.as_deref(), Some("original\n"));

    // A session spanning calls and files; the revert records above are not re-reverted
    // and the already-undone edits are reported as skipped.
    f.edit("ses_1", "call_2", "a.txt", Some("third\n"));
    f.edit("ses_1", "call_3", "a.txt", Some("fourth\n"));
    f.edit("ses_1", "call_3", "b.txt", Some("bee\n"));
    let out = f
        .revert(RevertTarget::Session("ses_1".into()), false)
        .unwrap();
    assert_eq!(f.disk("a.txt").as_deref(), Some("original\n"));
    assert_eq!(f.disk("b.txt"), None);
    assert_eq!(out.reverted.len(), 3);
    assert_eq!(out.skipped, vec![e1.id, e2.id]);

    let again = f
        .revert(RevertTarget::Session("ses_1".into()), false)
        .unwrap();
    assert!(again.reverted.is_empty());
    assert_eq!(again.skipped.len(), 5);
}

#[test]
fn a_conflict_refuses_before_touching_any_file_and_force_overrides() {
    let f = fixture();
    std::fs::write(f.path("b.txt"), "b0\n").unwrap();
    f.edit("ses_1", "call_1", "b.txt", Some("b1\n"));
    f.edit("ses_1", "call_2", "a.txt", Some("a1\n"));
    std::fs::write(f.path("b.txt"), "b1\nuser line\n").unwrap();

    let err = f
        .revert(RevertTarget::Session("ses_1".into()), false)
        .unwrap_err();
    let b = f.path("b.txt");
    let expected = format!(
        "revert refused: {b} changed since Podcode wrote it (use --force to overwrite)\n\
         --- {b} (as Podcode wrote it)\n+++ {b} (on disk now)\n@@ -1 +1,2 @@\n b1\n+user line\n"
    );
    assert_eq!(err.to_string(), expected);
    assert!(matches!(&err, RevertError::Conflict { file, .. } if *file == b));
    assert_eq!(f.disk("a.txt").as_deref(), Some("a1\n"), "a.txt untouched");
    assert_eq!(f.disk("b.txt").as_deref(), Some("b1\nuser line\n"));
    assert_eq!(
        f.store.changes(None, None).unwrap().len(),
        2,
        "nothing journaled"
    );

    let out = f
        .revert(RevertTarget::Session("ses_1".into()), true)
        .unwrap();
    assert_eq!(f.disk("a.txt"), None);
    assert_eq!(f.disk("b.txt").as_deref(), Some("b0\n"));
    let b_rec = out.reverted.iter().find(|r| r.file == b).unwrap();
    assert_eq!(b_rec.old_content.as_deref(), Some("b1\nuser line\n"));
}

#[test]
fn a_file_deleted_since_is_a_conflict() {
    let f = fixture();
    let c = f.edit("ses_1", "call_1", "x.txt", Some("x\n"));
    std::fs::remove_file(f.path("x.txt")).unwrap();
    let err = f.revert(change(&c.id), false).unwrap_err();
    assert!(err.to_string().ends_with("@@ -1 +0,0 @@\n-x\n"), "{err}");
}

#[test]
fn already_reverted_changes_are_skipped_and_a_revert_can_be_redone() {
    let f = fixture();
    std::fs::write(f.path("a.txt"), "old\n").unwrap();
    let c = f.edit("ses_1", "call_1", "a.txt", Some("new\n"));
    let first = f.revert(change(&c.id), false).unwrap();
    let second = f.revert(change(&c.id), false).unwrap();
    assert!(second.reverted.is_empty());
    assert_eq!(second.skipped, vec![c.id.clone()]);
    assert_eq!(f.disk("a.txt").as_deref(), Some("old\n"));

    // Redo: revert the revert record.
    let redo = f.revert(change(&first.reverted[0].id), false).unwrap();
    assert_eq!(f.disk("a.txt").as_deref(), Some("new\n"));
    assert_eq!(
        redo.reverted[0].reverts.as_ref(),
        Some(&first.reverted[0].id)
    );
    // The original is live again, so a call revert undoes it once more.
    let out = f
        .revert(RevertTarget::Call("call_1".into()), false)
        .unwrap();
    assert_eq!(out.reverted.len(), 1);
    assert_eq!(f.disk("a.txt").as_deref(), Some("old\n"));
}

#[test]
fn since_message_reverts_what_changed_from_that_prompt_on() {
    let f = fixture();
    let ses = f
        .store
        .create_session(&podcode_store::NewSession {
            agent: "build".into(),
            cwd: "/w".into(),
            main_cwd: "/w".into(),
            title: String::new(),
            ..Default::default()
        })
        .unwrap()
        .id;
    std::fs::write(f.path("a.txt"), "v0\n").unwrap();
    f.edit(&ses, "call_1", "a.txt", Some("v1\n"));
    std::thread::sleep(std::time::Duration::from_millis(3));
    let msg = f
        .store
        .add_message(&ses, "user", &serde_json::json!({}))
        .unwrap();
    f.edit(&ses, "call_2", "a.txt", Some("v2\n"));
    f.edit(&ses, "call_3", "b.txt", Some("new\n"));
    let out = f
        .revert(RevertTarget::SinceMessage(msg.clone()), false)
        .unwrap();
    assert_eq!(out.reverted.len(), 2);
    assert_eq!(
        f.disk("a.txt").as_deref(),
        Some("v1\n"),
        "the earlier turn stays"
    );
    assert_eq!(f.disk("b.txt"), None);
    // Again: nothing left, the revert records themselves are not undone.
    let again = f.revert(RevertTarget::SinceMessage(msg), false).unwrap();
    assert!(again.reverted.is_empty());
    assert_eq!(again.skipped.len(), 2);
}

#[test]
fn unknown_targets_are_not_found() {
    let f = fixture();
    for target in [
        change("chg_x"),
        RevertTarget::Call("call_x".into()),
        RevertTarget::Session("ses_x".into()),
        RevertTarget::SinceMessage("msg_x".into()),
    ] {
        let err = f.revert(target, false).unwrap_err();
        assert!(matches!(err, RevertError::NotFound(_)));
        assert!(
            err.to_string()
                .starts_with("no change, call, message or session with id ")
        );
    }
    assert_eq!(
        f.revert(change("chg_x"), false).unwrap_err().to_string(),
        "no change, call, message or session with id chg_x"
    );
}

#[test]
fn unified_diff_has_git_style_headers() {
    let d = unified_diff("src/x.rs", "a\nb\nc\n", "a\nB\nc\n");
    assert_eq!(
        d,
        "--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    );
    assert_eq!(unified_diff("x", "same\n", "same\n"), "");
    let abs = unified_diff("/w/src/x.rs", "a\n", "b\n");
    assert!(
        abs.starts_with("--- /w/src/x.rs\n+++ /w/src/x.rs\n"),
        "{abs}"
    );
}
