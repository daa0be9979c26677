//! `ItemFold`: a session's live `Event`s folded into the conversation's `Item`s, the same
//! items the engine builds from the store once the turn is stored (`Engine::transcript`;
//! `crates/core/tests/it/items.rs` checks they are equal). Each applied event says which item
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
            Event::TextReplaced { message_id, text } => {
                let (index, item) = self.items.iter_mut().enumerate().rev().find(
                    |(_, i)| matches!(i, Item::Assistant { message_id: m, .. } if m == message_id),
                )?;
                if let Item::Assistant { text: shown, .. } = item {
                    shown.clone_from(text);
                }
                Some(ItemChange::Changed(index))
            }
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
#[path = "fold_tests.rs"]
mod tests;
