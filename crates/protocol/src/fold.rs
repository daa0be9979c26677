//! `ItemFold`: a session's live `Event`s folded into the conversation's `Item`s, the same
//! items the engine builds from the store once the turn is stored (`Engine::transcript`;
//! `crates/core/tests/items.rs` checks they are equal). Each applied event says which item
//! it added or changed, so a front end redraws one item, not the conversation.
//!
//! The fold follows how the agent stores a step: text and reasoning become a new block
//! whenever the kind changes (the store closes a part then), a tool call's item is added
//! when the model asks for it (`ToolRequested`, in the order the model asked) and filled
//! by its `ToolStarted` / `ToolMetadata` / `ToolFinished` / `ToolFailed`; a step that did
//! not complete stores no tool calls, so the calls it asked for and never started are
//! dropped again. Events of other sessions are ignored; a sub-agent's (`Subagent`) only
//! name the child session on its `task` call's item.

use std::collections::{HashMap, HashSet};

use crate::item::{child_of, diff_of};
use crate::{Event, Item, ToolCallState, ToolItem};

/// What applying one event did to the items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemChange {
    /// A new item at this index (always the last).
    Added(usize),
    /// The item at this index changed.
    Changed(usize),
    /// Items were removed (the unstarted calls of a step that did not complete): redraw
    /// the list.
    Removed,
}

/// Folds one session's events into its conversation items (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct ItemFold {
    session_id: String,
    items: Vec<Item>,
    /// Calls that got their `ToolStarted`: they are stored, whatever their step did.
    started: HashSet<String>,
    /// The assistant message each call was asked for in.
    asked_in: HashMap<String, String>,
}

impl ItemFold {
    /// An empty conversation of `session_id`.
    pub fn new(session_id: &str) -> Self {
        Self::with_items(session_id, Vec::new())
    }

    /// Continues from items already shown (a stored transcript): live events append to them.
    pub fn with_items(session_id: &str, items: Vec<Item>) -> Self {
        let started = items
            .iter()
            .filter_map(|i| match i {
                Item::Tool(t) => Some(t.call_id.clone()),
                _ => None,
            })
            .collect();
        Self {
            session_id: session_id.to_string(),
            items,
            started,
            asked_in: HashMap::new(),
        }
    }

    /// The items so far.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// The items, taken.
    pub fn into_items(self) -> Vec<Item> {
        self.items
    }

    /// Applies one event; `None` when it changes no item.
    pub fn apply(&mut self, event: &Event) -> Option<ItemChange> {
        match event {
            Event::UserMessage {
                session_id,
                message_id,
                text,
                files,
            } if self.ours(session_id) => {
                // As the store reads it: a user message with neither text nor files shows
                // nothing.
                if text.is_empty() && files.is_empty() {
                    return None;
                }
                self.push(Item::User {
                    message_id: message_id.clone(),
                    text: text.clone(),
                    files: files.clone(),
                })
            }
            Event::TextDelta { message_id, text } => self.append(message_id, text, false),
            Event::ReasoningDelta { message_id, text } => self.append(message_id, text, true),
            Event::ToolRequested {
                message_id,
                call_id,
                tool,
            } => {
                self.asked_in.insert(call_id.clone(), message_id.clone());
                self.push(Item::Tool(ToolItem::requested(call_id, tool)))
            }
            Event::ToolStarted {
                session_id,
                call_id,
                tool,
                args,
            } if self.ours(session_id) => {
                // A call nobody asked for in a step (the `read` of a file attached to the
                // prompt) is part of the user's message, not an item of its own.
                let (i, call) = self.call(call_id)?;
                call.tool = tool.clone();
                call.args = args.clone();
                self.started.insert(call_id.clone());
                Some(ItemChange::Changed(i))
            }
            Event::ToolMetadata {
                call_id,
                title: Some(title),
                ..
            } => {
                let (i, call) = self.call(call_id)?;
                call.title = title.clone();
                Some(ItemChange::Changed(i))
            }
            Event::ToolFinished {
                call_id,
                tool,
                result,
                spill_path,
                duration_ms,
            } => {
                let (i, call) = self.call(call_id)?;
                call.state = ToolCallState::Completed;
                call.title = result.title.clone();
                call.output = result.output.clone();
                call.attachments = result.attachments.len();
                call.spill_path = spill_path.clone();
                call.elapsed_ms = *duration_ms;
                call.diff = diff_of(&result.metadata);
                if let Some(child) = child_of(tool, &result.metadata) {
                    call.child_session_id = Some(child);
                }
                Some(ItemChange::Changed(i))
            }
            Event::ToolFailed {
                call_id,
                error,
                duration_ms,
                state,
                ..
            } => {
                let (i, call) = self.call(call_id)?;
                call.state = *state;
                call.output = error.clone();
                call.elapsed_ms = *duration_ms;
                Some(ItemChange::Changed(i))
            }
            Event::StepFinished {
                session_id,
                message_id,
                status,
                ..
            } if self.ours(session_id) && status != "completed" => self.drop_unstarted(message_id),
            Event::Subagent {
                session_id: child,
                parent_id,
                call_id,
                ..
            } if self.ours(parent_id) => {
                let (i, call) = self.call(call_id)?;
                if call.child_session_id.as_deref() == Some(child.as_str()) {
                    return None;
                }
                call.child_session_id = Some(child.clone());
                Some(ItemChange::Changed(i))
            }
            Event::Compacted {
                session_id,
                reason,
                pruned,
                summarized,
                tokens_before,
                tokens_after,
            } if self.ours(session_id) => self.push(Item::Compaction {
                reason: reason.clone(),
                pruned: *pruned,
                summarized: *summarized,
                tokens_before: *tokens_before,
                tokens_after: *tokens_after,
            }),
            Event::Reverted { session_id, report } if self.ours(session_id) => {
                let text = report.note.clone()?;
                self.push(Item::RevertNote { text })
            }
            _ => None,
        }
    }

    fn ours(&self, session_id: &str) -> bool {
        session_id == self.session_id
    }

    fn push(&mut self, item: Item) -> Option<ItemChange> {
        self.items.push(item);
        Some(ItemChange::Added(self.items.len() - 1))
    }

    /// Streamed text joins the last block when it is of the same kind and message, as the
    /// store keeps one part until the kind changes.
    fn append(&mut self, message_id: &str, delta: &str, reasoning: bool) -> Option<ItemChange> {
        let last = self.items.len().checked_sub(1);
        match self.items.last_mut() {
            Some(Item::Reasoning {
                message_id: m,
                text,
            }) if reasoning && m == message_id => {
                text.push_str(delta);
                last.map(ItemChange::Changed)
            }
            Some(Item::Assistant {
                message_id: m,
                text,
            }) if !reasoning && m == message_id => {
                text.push_str(delta);
                last.map(ItemChange::Changed)
            }
            _ => {
                let (message_id, text) = (message_id.to_string(), delta.to_string());
                self.push(if reasoning {
                    Item::Reasoning { message_id, text }
                } else {
                    Item::Assistant { message_id, text }
                })
            }
        }
    }

    fn call(&mut self, call_id: &str) -> Option<(usize, &mut ToolItem)> {
        self.items
            .iter_mut()
            .enumerate()
            .rev()
            .find_map(|(i, item)| match item {
                Item::Tool(t) if t.call_id == call_id => Some((i, t)),
                _ => None,
            })
    }

    fn drop_unstarted(&mut self, message_id: &str) -> Option<ItemChange> {
        let before = self.items.len();
        let (started, asked_in) = (&self.started, &self.asked_in);
        self.items.retain(|item| match item {
            Item::Tool(t) => {
                started.contains(&t.call_id)
                    || asked_in.get(&t.call_id).map(String::as_str) != Some(message_id)
            }
            _ => true,
        });
        (self.items.len() != before).then_some(ItemChange::Removed)
    }
}

#[cfg(test)]
mod tests {
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
}
