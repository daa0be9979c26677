//! Conversation items (`podcode_protocol::Item`, the engine's model of a conversation) as
//! transcript entries: a stored transcript and the live `ItemFold` both become entries
//! through `entries_of`, and a changed item updates its entry in place (`Transcript::show`),
//! keeping what belongs to the screen (an expanded card, a running card's clock and its
//! sub-agent progress title).

use std::collections::HashSet;

use podcode_protocol::{Item, ItemChange, ToolCallState, ToolItem, compacted_text};

use super::{Entry, ToolCard, ToolStatus, Transcript};

/// The transcript entries of one conversation item.
pub fn entries_of(item: Item) -> Vec<Entry> {
    match item {
        Item::User { text, files, .. } => {
            let mut entries = Vec::new();
            if !text.is_empty() {
                entries.push(Entry::User(text));
            }
            for path in files {
                entries.push(Entry::Notice(format!("📎 attached {path}")));
            }
            entries
        }
        Item::Assistant { message_id, text } => vec![Entry::Assistant { message_id, text }],
        Item::Reasoning { message_id, text } => vec![Entry::Reasoning { message_id, text }],
        Item::Tool(call) => vec![Entry::Tool(card_of(call))],
        Item::Compaction {
            reason,
            pruned,
            summarized,
            tokens_before,
            tokens_after,
        } => vec![Entry::Notice(compacted_text(
            &reason,
            pruned,
            summarized,
            tokens_before,
            tokens_after,
        ))],
        Item::RevertNote { text } => vec![Entry::Notice(revert_note_notice(&text))],
    }
}

fn card_of(call: ToolItem) -> ToolCard {
    ToolCard {
        call_id: call.call_id,
        tool: call.tool,
        title: call.title,
        status: ToolStatus::from(call.state),
        elapsed_ms: call.elapsed_ms,
        output: call.output,
        attachments: call.attachments,
        spill_path: call.spill_path,
        expanded: false,
        diff: call.diff,
    }
}

/// How the TUI shows what the model was told after a revert.
pub fn revert_note_notice(note: &str) -> String {
    format!("↶ the model was told: {}", note.replace('\n', " "))
}

impl Transcript {
    /// Shows what one event did to the conversation's items.
    pub(super) fn show(&mut self, change: ItemChange) {
        let items = self.fold.items();
        match change {
            ItemChange::Added(i) => {
                if let Some(item) = items.get(i) {
                    let mut added = entries_of(item.clone());
                    // Live, a running call runs (stored, it was cut off: `ToolStatus::from`).
                    for e in &mut added {
                        if let (Entry::Tool(card), Item::Tool(call)) = (e, item)
                            && call.state == ToolCallState::Running
                        {
                            card.status = ToolStatus::Running;
                        }
                    }
                    self.entries.extend(added);
                }
            }
            ItemChange::Changed(i) => match items.get(i) {
                Some(Item::Tool(call)) => {
                    let has_subagent = self.subagents.contains_key(&call.call_id);
                    let card = self.entries.iter_mut().rev().find_map(|e| match e {
                        Entry::Tool(c) if c.call_id == call.call_id => Some(c),
                        _ => None,
                    });
                    if let Some(card) = card {
                        update_card(card, call, has_subagent);
                    }
                }
                Some(
                    Item::Assistant { message_id, text } | Item::Reasoning { message_id, text },
                ) => {
                    let reasoning = matches!(items.get(i), Some(Item::Reasoning { .. }));
                    let shown = self.entries.iter_mut().rev().find_map(|e| match e {
                        Entry::Assistant {
                            message_id: m,
                            text: t,
                        } if !reasoning && m == message_id => Some(t),
                        Entry::Reasoning {
                            message_id: m,
                            text: t,
                        } if reasoning && m == message_id => Some(t),
                        _ => None,
                    });
                    if let Some(shown) = shown {
                        // Streamed text only grows: copy what is new, not the whole answer.
                        match text.get(shown.len()..) {
                            Some(new) if text.starts_with(shown.as_str()) => shown.push_str(new),
                            _ => *shown = text.clone(),
                        }
                    }
                }
                _ => {}
            },
            ItemChange::Removed => {
                let kept: HashSet<&str> = items
                    .iter()
                    .filter_map(|i| match i {
                        Item::Tool(t) => Some(t.call_id.as_str()),
                        _ => None,
                    })
                    .collect();
                self.entries
                    .retain(|e| !matches!(e, Entry::Tool(c) if !kept.contains(c.call_id.as_str())));
            }
        }
    }
}

/// A card takes its call's news; a running card keeps its own clock (the item has none
/// until the call ends), and its sub-agent's progress title while the sub-agent works.
fn update_card(card: &mut ToolCard, call: &ToolItem, has_subagent: bool) {
    let running = call.state == ToolCallState::Running;
    card.tool = call.tool.clone();
    if !running || !(has_subagent || call.title.is_empty()) {
        card.title = call.title.clone();
    }
    // A call the user refused shows as denied at once (`mark_denied`), before its failure.
    if !running {
        card.status = ToolStatus::from(call.state);
    } else if !matches!(card.status, ToolStatus::Denied | ToolStatus::Waiting) {
        card.status = ToolStatus::Running;
    }
    if !running {
        card.elapsed_ms = call.elapsed_ms;
    }
    card.output = call.output.clone();
    card.attachments = call.attachments;
    card.spill_path = call.spill_path.clone();
    card.diff = call.diff.clone();
}

#[cfg(test)]
mod tests {
    use podcode_protocol::{Event, StepUsage, ToolResult};
    use serde_json::json;

    use super::*;

    const SES: &str = "ses_1";

    fn events() -> Vec<Event> {
        let requested = |call: &str, tool: &str| Event::ToolRequested {
            message_id: "msg_a".into(),
            call_id: call.into(),
            tool: tool.into(),
        };
        vec![
            Event::UserMessage {
                session_id: SES.into(),
                message_id: "msg_u".into(),
                text: "fix it".into(),
                files: vec!["/w/a.rs".into()],
            },
            Event::ReasoningDelta {
                message_id: "msg_a".into(),
                text: "look ".into(),
            },
            Event::ReasoningDelta {
                message_id: "msg_a".into(),
                text: "first".into(),
            },
            Event::TextDelta {
                message_id: "msg_a".into(),
                text: "Reading.".into(),
            },
            requested("c1", "read"),
            requested("c2", "bash"),
            Event::ToolStarted {
                session_id: SES.into(),
                call_id: "c1".into(),
                tool: "read".into(),
                args: json!({"filePath": "/w/a.rs"}),
            },
            Event::ToolFinished {
                call_id: "c1".into(),
                tool: "read".into(),
                result: ToolResult {
                    title: "a.rs".into(),
                    output: "fn a() {}".into(),
                    metadata: json!({}),
                    attachments: Vec::new(),
                },
                spill_path: None,
                duration_ms: 7,
            },
            // The stream broke: the call that never started is not part of the conversation.
            Event::StepFinished {
                session_id: SES.into(),
                message_id: "msg_a".into(),
                step: 1,
                status: "error".into(),
                finish_reason: None,
                usage: StepUsage::default(),
            },
            Event::Compacted {
                session_id: SES.into(),
                reason: "manual".into(),
                pruned: 1,
                summarized: 0,
                tokens_before: 900,
                tokens_after: 300,
            },
            // Another session's news is not this conversation's.
            Event::UserMessage {
                session_id: "ses_other".into(),
                message_id: "msg_x".into(),
                text: "elsewhere".into(),
                files: Vec::new(),
            },
        ]
    }

    #[test]
    fn a_text_block_a_plugin_rewrote_shows_its_final_text() {
        let mut live = Transcript::new(SES);
        for text in ["Checking ", "host-7."] {
            live.apply_event(&Event::TextDelta {
                message_id: "msg_a".into(),
                text: text.into(),
            });
        }
        live.apply_event(&Event::TextReplaced {
            message_id: "msg_a".into(),
            text: "Checking [host].".into(),
        });
        let shown: Vec<_> = live
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::Assistant { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(shown, ["Checking [host]."]);
    }

    #[test]
    fn the_live_transcript_is_the_stored_items_drawn() {
        let mut live = Transcript::new(SES);
        let mut fold = podcode_protocol::ItemFold::new(SES);
        for e in events() {
            live.apply_event(&e);
            fold.apply(&e);
        }
        let stored = Transcript::from_items(SES, fold.into_items());
        assert_eq!(live.entries, stored.entries);
        let tools: Vec<&str> = live
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::Tool(c) => Some(c.call_id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(tools, ["c1"], "the unstarted call's card is gone");
        assert!(matches!(&live.entries[0], Entry::User(t) if t == "fix it"));
        assert!(matches!(&live.entries[1], Entry::Notice(t) if t == "📎 attached /w/a.rs"));
        assert!(matches!(&live.entries[2], Entry::Reasoning { text, .. } if text == "look first"));
    }

    #[test]
    fn a_running_card_runs_keeps_its_clock_and_its_expansion() {
        let mut t = Transcript::new(SES);
        for e in events().into_iter().take(7) {
            t.apply_event(&e);
        }
        t.tick(250, None);
        // While its permission prompt is open, the card's clock waits with it.
        t.tick(4000, Some("c1"));
        let card = |t: &Transcript| match t
            .entries
            .iter()
            .find(|e| matches!(e, Entry::Tool(c) if c.call_id == "c1"))
        {
            Some(Entry::Tool(c)) => c.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(card(&t).status, ToolStatus::Running);
        assert_eq!(card(&t).elapsed_ms, 250);
        if let Some(Entry::Tool(c)) = t
            .entries
            .iter_mut()
            .find(|e| matches!(e, Entry::Tool(c) if c.call_id == "c1"))
        {
            c.expanded = true;
        }
        t.apply_event(&events()[7]);
        let done = card(&t);
        assert_eq!(
            (done.status, done.elapsed_ms, done.expanded),
            (ToolStatus::Done, 7, true)
        );
        assert_eq!(done.output, "fn a() {}");
    }
}
