//! `ItemFold`'s unit tests: a turn's blocks and cards, what is ignored or dropped, sub-agents,
//! compactions and revert notes.

use serde_json::json;

use super::*;
use crate::{RevertReport, StepUsage, ToolResult};

fn user(text: &str) -> Event {
    Event::UserMessage {
        session_id: "ses_a".into(),
        message_id: "msg_u".into(),
        text: text.into(),
        files: vec!["notes.md".into()],
    }
}

fn text(m: &str, t: &str) -> Event {
    Event::TextDelta {
        message_id: m.into(),
        text: t.into(),
    }
}

fn asked(m: &str, call: &str, tool: &str) -> Event {
    Event::ToolRequested {
        message_id: m.into(),
        call_id: call.into(),
        tool: tool.into(),
    }
}

fn started(session: &str, call: &str, tool: &str) -> Event {
    Event::ToolStarted {
        session_id: session.into(),
        call_id: call.into(),
        tool: tool.into(),
        args: json!({"filePath": "a.txt"}),
    }
}

fn step_end(m: &str, status: &str) -> Event {
    Event::StepFinished {
        session_id: "ses_a".into(),
        message_id: m.into(),
        step: 1,
        status: status.into(),
        finish_reason: None,
        usage: StepUsage::default(),
    }
}

#[test]
fn a_turn_folds_into_blocks_and_cards_and_says_what_changed() {
    let mut f = ItemFold::new("ses_a");
    let events = [
        user("fix it"),
        Event::ReasoningDelta {
            message_id: "m1".into(),
            text: "think".into(),
        },
        text("m1", "Look"),
        text("m1", "ing."),
        asked("m1", "c1", "edit"),
        asked("m1", "c2", "read"),
        started("ses_a", "c1", "edit"),
        Event::ToolMetadata {
            call_id: "c1".into(),
            title: Some("a.txt".into()),
            metadata: None,
        },
        Event::ToolFinished {
            call_id: "c1".into(),
            tool: "edit".into(),
            result: ToolResult {
                title: "Edited a.txt".into(),
                output: "ok".into(),
                metadata: json!({"diff": "-a\n+b"}),
                attachments: Vec::new(),
            },
            spill_path: None,
            duration_ms: 7,
        },
        started("ses_a", "c2", "read"),
        Event::ToolFailed {
            call_id: "c2".into(),
            tool: "read".into(),
            error: "denied".into(),
            duration_ms: 2,
            state: ToolCallState::Denied,
        },
        step_end("m1", "completed"),
        text("m2", "Done."),
    ];
    let changes: Vec<_> = events.iter().map(|e| f.apply(e)).collect();
    use ItemChange::*;
    assert_eq!(
        changes,
        [
            Some(Added(0)),
            Some(Added(1)),
            Some(Added(2)),
            Some(Changed(2)),
            Some(Added(3)),
            Some(Added(4)),
            Some(Changed(3)),
            Some(Changed(3)),
            Some(Changed(3)),
            Some(Changed(4)),
            Some(Changed(4)),
            None,
            Some(Added(5)),
        ]
    );
    let items = f.items();
    assert_eq!(
        items[0],
        Item::User {
            message_id: "msg_u".into(),
            text: "fix it".into(),
            files: vec!["notes.md".into()],
        }
    );
    assert!(matches!(&items[1], Item::Reasoning { text, .. } if text == "think"));
    assert!(matches!(&items[2], Item::Assistant { text, .. } if text == "Looking."));
    let Item::Tool(edit) = &items[3] else {
        panic!("{:?}", items[3])
    };
    assert_eq!(edit.args, json!({"filePath": "a.txt"}));
    assert_eq!(edit.state, ToolCallState::Completed);
    assert_eq!(edit.title, "Edited a.txt");
    assert_eq!((edit.output.as_str(), edit.elapsed_ms), ("ok", 7));
    assert_eq!(edit.diff.as_deref(), Some("-a\n+b"));
    let Item::Tool(read) = &items[4] else {
        panic!("{:?}", items[4])
    };
    assert_eq!(read.state, ToolCallState::Denied);
    assert_eq!(read.output, "denied");
    assert!(matches!(&items[5], Item::Assistant { message_id, .. } if message_id == "m2"));
}

#[test]
fn other_sessions_attachment_reads_and_unrun_calls_of_a_cut_step_add_nothing() {
    let mut f = ItemFold::new("ses_a");
    // Another session's prompt and a call nobody asked for in a step.
    let other = Event::UserMessage {
        session_id: "ses_b".into(),
        message_id: "x".into(),
        text: "hi".into(),
        files: vec![],
    };
    assert_eq!(f.apply(&other), None);
    assert_eq!(f.apply(&started("ses_a", "c_attach", "read")), None);
    // A cut step asked for a call that never ran, then the retry ran its own.
    f.apply(&text("m1", "par"));
    f.apply(&asked("m1", "c1", "read"));
    assert_eq!(f.apply(&step_end("m1", "cut")), Some(ItemChange::Removed));
    f.apply(&asked("m2", "c2", "read"));
    f.apply(&started("ses_a", "c2", "read"));
    assert_eq!(f.apply(&step_end("m2", "aborted")), None);
    let kinds: Vec<_> = f
        .items()
        .iter()
        .map(|i| match i {
            Item::Tool(t) => t.call_id.clone(),
            Item::Assistant { text, .. } => text.clone(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(kinds, ["par", "c2"]);
}

#[test]
fn subagents_name_their_child_and_compactions_and_revert_notes_are_items() {
    let mut f = ItemFold::new("ses_a");
    f.apply(&asked("m1", "c_task", "task"));
    let sub = |child: &str, parent: &str, inner: Event| Event::Subagent {
        session_id: child.into(),
        parent_id: parent.into(),
        call_id: "c_task".into(),
        agent: "explore".into(),
        description: "look".into(),
        event: Box::new(inner),
    };
    // The child's own events add nothing to the parent's items.
    let child_text = sub("ses_child", "ses_a", text("m_child", "child says"));
    assert_eq!(f.apply(&child_text), Some(ItemChange::Changed(0)));
    assert_eq!(f.apply(&child_text), None);
    assert_eq!(f.items().len(), 1);
    let Item::Tool(task) = &f.items()[0] else {
        panic!()
    };
    assert_eq!(task.child_session_id.as_deref(), Some("ses_child"));
    assert_eq!(
        f.apply(&sub("ses_x", "ses_other", text("m", "t"))),
        None,
        "a wrapper from another session's task"
    );
    let compacted = Event::Compacted {
        session_id: "ses_a".into(),
        reason: "manual".into(),
        pruned: 2,
        summarized: 3,
        tokens_before: 900,
        tokens_after: 100,
    };
    assert_eq!(f.apply(&compacted), Some(ItemChange::Added(1)));
    let reverted = |note: Option<&str>| Event::Reverted {
        session_id: "ses_a".into(),
        report: RevertReport {
            note: note.map(str::to_string),
            ..RevertReport::default()
        },
    };
    assert_eq!(f.apply(&reverted(None)), None, "nothing was reverted");
    assert_eq!(
        f.apply(&reverted(Some("The user reverted"))),
        Some(ItemChange::Added(2))
    );
    assert_eq!(
        f.items()[1..],
        [
            Item::Compaction {
                reason: "manual".into(),
                pruned: 2,
                summarized: 3,
                tokens_before: 900,
                tokens_after: 100,
            },
            Item::RevertNote {
                text: "The user reverted".into()
            },
        ]
    );
}

#[test]
fn a_fold_continues_after_stored_items() {
    let mut call = ToolItem::requested("c1", "bash");
    call.state = ToolCallState::Completed;
    let mut f = ItemFold::with_items("ses_a", vec![Item::Tool(call)]);
    assert_eq!(f.apply(&step_end("m_old", "cut")), None);
    assert_eq!(f.apply(&user("next")), Some(ItemChange::Added(1)));
}

#[test]
fn a_text_a_plugin_rewrote_replaces_its_messages_last_block_only() {
    let mut f = ItemFold::new("ses_a");
    for e in [
        text("m1", "first"),
        asked("m1", "c1", "read"),
        text("m1", "Draft"),
    ] {
        f.apply(&e);
    }
    let replaced = Event::TextReplaced {
        message_id: "m1".into(),
        text: "Final.".into(),
    };
    assert_eq!(f.apply(&replaced), Some(ItemChange::Changed(2)));
    let texts: Vec<_> = f
        .items()
        .iter()
        .filter_map(|i| match i {
            Item::Assistant { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["first", "Final."]);
    let unknown = Event::TextReplaced {
        message_id: "m9".into(),
        text: "x".into(),
    };
    assert_eq!(f.apply(&unknown), None);
}
