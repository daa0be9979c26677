//! The event log and deleting a session, against a real SQLite file.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use podcode_protocol::{ChangeOp, ChangeRecord};
use podcode_store::{NewEvent, NewSession, Store};
use serde_json::json;

fn session(store: &Store, parent: Option<&str>) -> String {
    store
        .create_session(&NewSession {
            parent_id: parent.map(str::to_string),
            root_id: parent.map(str::to_string),
            agent: "build".into(),
            cwd: "/w".into(),
            main_cwd: "/w".into(),
            model: None,
            title: "t".into(),
        })
        .unwrap()
        .id
}

fn event(session: &str, text: &str) -> NewEvent {
    NewEvent {
        session_id: session.into(),
        kind: "text_delta".into(),
        data: json!({"type": "text_delta", "message_id": "m", "text": text}).to_string(),
    }
}

#[test]
fn events_get_increasing_seqs_and_read_back_after_an_id() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("p.db")).unwrap();
    assert_eq!(store.last_event_seq().unwrap(), 0);
    let a = session(&store, None);
    let b = session(&store, None);
    let first = store
        .append_events(&[event(&a, "1"), event(&b, "x"), event(&a, "2")])
        .unwrap();
    let second = store.append_events(&[event(&a, "3")]).unwrap();
    assert_eq!(first.len(), 3);
    assert!(first.windows(2).all(|w| w[0] < w[1]));
    assert!(second[0] > first[2]);

    let of_a = store.events_after(first[0], Some(&a), 100).unwrap();
    let texts: Vec<_> = of_a.iter().map(|r| r.data.clone()).collect();
    assert_eq!(of_a.len(), 2, "{texts:?}");
    assert!(of_a[0].data.contains("\"2\"") && of_a[1].data.contains("\"3\""));
    assert_eq!(of_a[0].kind, "text_delta");

    assert_eq!(store.last_event_seq().unwrap(), second[0]);
    let all = store.events_after(0, None, 100).unwrap();
    assert_eq!(all.len(), 4);
    assert_eq!(store.events_after(0, None, 2).unwrap().len(), 2);
}

#[test]
fn deleting_a_session_removes_its_rows_and_its_sub_sessions_and_never_reuses_a_seq() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("p.db")).unwrap();
    let keep = session(&store, None);
    let gone = session(&store, None);
    let child = session(&store, Some(&gone));
    let msg = store.add_message(&gone, "user", &json!({})).unwrap();
    store
        .add_part(&msg, &gone, "text", &json!({"text": "hi"}))
        .unwrap();
    let change = ChangeRecord {
        file: "/w/a.txt".into(),
        op: ChangeOp::Create,
        old_content: None,
        new_content: Some("a".into()),
    };
    store.record_change(&child, None, &change, None).unwrap();
    let seqs = store
        .append_events(&[event(&gone, "g"), event(&keep, "k")])
        .unwrap();
    store.append_events(&[event(&gone, "last")]).unwrap();

    assert!(store.delete_session(&gone).unwrap());
    assert!(!store.delete_session(&gone).unwrap());
    assert!(store.session(&gone).unwrap().is_none());
    assert!(store.session(&child).unwrap().is_none());
    assert!(store.session(&keep).unwrap().is_some());
    assert!(store.messages(&gone).unwrap().is_empty());
    assert!(store.changes(Some(&child), None).unwrap().is_empty());
    let left = store.events_after(0, None, 100).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].seq, seqs[1]);

    let next = store.append_events(&[event(&keep, "new")]).unwrap();
    assert!(next[0] > seqs[1] + 1, "the deleted last seq is not reused");
}

#[test]
fn an_untitled_session_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("p.db")).unwrap();
    let id = store
        .create_session(&NewSession {
            agent: "build".into(),
            cwd: "/w".into(),
            main_cwd: "/w".into(),
            title: String::new(),
            ..Default::default()
        })
        .unwrap()
        .id;
    assert!(store.name_session(&id, "fix the parser").unwrap());
    assert!(!store.name_session(&id, "something else").unwrap());
    assert_eq!(store.session(&id).unwrap().unwrap().title, "fix the parser");
}
