//! The transcript component: the session's blocks (prompts, answers, reasoning, tool cards,
//! notices), how far the user scrolled up, the spinner frame and the render cache. Runtime
//! events grow it (`apply_event`): the conversation through the engine's item model (an
//! `ItemFold`, the same items a stored transcript is made of, shown by `items.rs`), and
//! besides it what only the screen shows (warnings, a turn's ending, a sub-agent's progress);
//! the key handler scrolls it and expands cards; `view.rs` draws it.

mod items;
mod view;

pub use items::{entries_of, revert_note_notice};

use std::cell::RefCell;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use podcode_protocol::{Event, Item, ItemFold, ToolCallState, TurnEnd};

use crate::transcript_cache::TranscriptCache;

/// One block of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A prompt the user sent.
    User(String),
    /// Assistant text.
    Assistant {
        /// The assistant message it belongs to.
        message_id: String,
        /// The text so far.
        text: String,
    },
    /// Model reasoning.
    Reasoning {
        /// The assistant message it belongs to.
        message_id: String,
        /// The reasoning so far.
        text: String,
    },
    /// A tool call's card.
    Tool(ToolCard),
    /// Warnings, turn endings and other lines from Podcode itself.
    Notice(String),
}

/// Where a tool call is, as its card shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolStatus {
    /// Still running.
    Running,
    /// Running, and waiting for the user's answer to its permission prompt.
    Waiting,
    /// Returned a result.
    Done,
    /// Returned an error.
    Failed,
    /// Refused by a rule or the user.
    Denied,
    /// Aborted.
    Interrupted,
    /// Stopped at its time limit.
    TimedOut,
}

impl ToolStatus {
    /// The word the card shows.
    pub fn label(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Waiting => "waiting for your answer",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Denied => "denied",
            Self::Interrupted => "interrupted",
            Self::TimedOut => "timed out",
        }
    }
}

/// A tool call as the transcript shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCard {
    /// The call's id.
    pub call_id: String,
    /// The tool's id.
    pub tool: String,
    /// The call's title (empty until the tool sets one).
    pub title: String,
    /// Where the call is.
    pub status: ToolStatus,
    /// Milliseconds since start while running (advanced by `tick`), the duration after.
    pub elapsed_ms: u64,
    /// The output when done, the error when it failed.
    pub output: String,
    /// How many attachments the result had.
    pub attachments: usize,
    /// The file with the full output, when it was truncated.
    pub spill_path: Option<String>,
    /// The card shows the output (toggled by the user).
    pub expanded: bool,
    /// The unified diff of a finished file change (`metadata.diff` of edit/write/apply_patch).
    pub diff: Option<String>,
}

/// The transcript and everything that drawing it depends on besides the theme.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    /// The blocks, oldest first.
    pub entries: Vec<Entry>,
    /// Lines scrolled up from the bottom of the transcript (0 = follow the end).
    pub scroll: u16,
    /// Advances with every tick; drives the spinner.
    pub frame: u64,
    /// Rendered transcript entries, reused across frames (see `transcript_cache`).
    pub render_cache: RefCell<TranscriptCache>,
    /// Live progress of each sub-agent, by the `task` call that started it.
    pub subagents: std::collections::HashMap<String, SubagentProgress>,
    /// The tool card picked with alt-↑/↓ or a click (its call id): ctrl-o toggles it.
    pub selected: Option<String>,
    /// The conversation's items, as the session's events build them.
    fold: ItemFold,
}

/// What a sub-agent is doing, shown as its `task` card's title while it runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubagentProgress {
    pub session_id: String,
    pub tool_calls: u32,
    /// The tool running now, if any.
    pub current: Option<String>,
}

/// `general · Look left — bash · 3 tool calls` (`— thinking` between tools).
pub fn subagent_title(agent: &str, description: &str, p: &SubagentProgress) -> String {
    let now = p.current.as_deref().unwrap_or("thinking");
    let n = p.tool_calls;
    format!(
        "{agent} · {description} — {now} · {n} tool call{}",
        if n == 1 { "" } else { "s" }
    )
}

impl Transcript {
    /// The empty conversation of session `session_id`.
    pub fn new(session_id: &str) -> Self {
        Self::from_items(session_id, Vec::new())
    }

    /// Session `session_id`'s stored conversation; its live events continue it.
    pub fn from_items(session_id: &str, items: Vec<Item>) -> Self {
        Self {
            entries: items.iter().cloned().flat_map(entries_of).collect(),
            fold: ItemFold::with_items(session_id, items),
            ..Default::default()
        }
    }

    /// A line from Podcode itself.
    pub fn notice(&mut self, text: String) {
        self.entries.push(Entry::Notice(text));
    }

    /// The user sent a prompt: the view follows the end again (the prompt shows when the
    /// session reports it, as the item the model reads).
    pub fn follow(&mut self) {
        self.scroll = 0;
        self.selected = None;
    }

    /// Running tool calls, for the status line.
    pub fn running_tools(&self) -> Vec<&str> {
        self.entries
            .iter()
            .filter_map(|e| match e {
                Entry::Tool(c) if c.status == ToolStatus::Running => Some(c.tool.as_str()),
                _ => None,
            })
            .collect()
    }

    fn card(&mut self, call_id: &str) -> Option<&mut ToolCard> {
        self.entries.iter_mut().rev().find_map(|e| match e {
            Entry::Tool(c) if c.call_id == call_id => Some(c),
            _ => None,
        })
    }

    /// Advances spinners and the elapsed time of running calls by `ms`, except the call
    /// `waiting` for the user's answer: its card counts the tool's time, not the user's.
    pub fn tick(&mut self, ms: u64, waiting: Option<&str>) {
        self.frame = self.frame.wrapping_add(1);
        for e in &mut self.entries {
            if let Entry::Tool(c) = e
                && c.status == ToolStatus::Running
                && waiting != Some(c.call_id.as_str())
            {
                c.elapsed_ms += ms;
            }
        }
    }

    /// The transcript's part of a runtime event (the status line takes the rest).
    pub fn apply_event(&mut self, event: &Event) {
        if let Some(change) = self.fold.apply(event) {
            self.show(change);
        }
        match event {
            Event::Subagent {
                session_id,
                call_id,
                agent,
                description,
                event,
                ..
            } => {
                let p = self.subagents.entry(call_id.clone()).or_default();
                p.session_id = session_id.clone();
                match event.as_ref() {
                    Event::ToolStarted { tool, .. } => {
                        p.tool_calls += 1;
                        p.current = Some(tool.clone());
                    }
                    Event::ToolFinished { .. } | Event::ToolFailed { .. } => p.current = None,
                    // A grandchild at work: this sub-agent is in its `task` call.
                    Event::Subagent { .. } => p.current = Some("task".into()),
                    _ => {}
                }
                let title = subagent_title(agent, description, p);
                if let Some(c) = self.card(call_id)
                    && c.status == ToolStatus::Running
                {
                    c.title = title;
                }
            }
            Event::Warning { message } => self.notice(format!("⚠ {message}")),
            Event::Toast {
                title,
                message,
                variant,
            } => self.notice(podcode_protocol::toast_text(title, message, variant)),
            Event::Configured { agent, model } => {
                self.notice(format!("next turns use agent {agent} with {model}"));
            }
            Event::ToolsReloaded { tools } => self.notice(format!(
                "tools reloaded: {} tool(s) offered (/tools lists them)",
                tools.iter().filter(|t| !t.starts_with('⚠')).count()
            )),
            Event::StepRetry { attempt, error, .. } => self.notice(format!(
                "↻ the response was cut off ({error}); retrying (attempt {attempt})"
            )),
            Event::TurnFinished { summary, .. } => {
                let end = match summary.end {
                    TurnEnd::Answered => "done".to_string(),
                    TurnEnd::MaxSteps => "stopped at the step limit".to_string(),
                    TurnEnd::Aborted => "aborted".to_string(),
                    TurnEnd::Error => format!(
                        "failed: {}",
                        summary
                            .error
                            .clone()
                            .unwrap_or_else(|| "unknown error".into())
                    ),
                };
                // Counted nouns stay with their number (non-breaking space): a narrow
                // screen wraps between parts, not inside "1 file".
                let count = |n: usize, one: &str, many: &str| {
                    format!("{n}\u{a0}{}", if n == 1 { one } else { many })
                };
                let files = if summary.files.is_empty() {
                    String::new()
                } else {
                    format!(
                        " · {} changed (ctrl-g: Changes)",
                        count(summary.files.len(), "file", "files")
                    )
                };
                self.notice(format!(
                    "── {end} · {} · {}{files}",
                    count(summary.steps as usize, "step", "steps"),
                    count(summary.tool_calls as usize, "tool call", "tool calls")
                ));
            }
            _ => {}
        }
    }

    /// Marks the card of a running call whose permission prompt opened (`true`) or was
    /// answered (`false`): while it waits, it says so and its clock stops.
    pub fn mark_waiting(&mut self, call_id: &str, waiting: bool) {
        if let Some(c) = self.card(call_id) {
            c.status = match (c.status, waiting) {
                (ToolStatus::Running, true) => ToolStatus::Waiting,
                (ToolStatus::Waiting, false) => ToolStatus::Running,
                (other, _) => other,
            };
        }
    }

    /// Marks the card of a call whose permission the user rejected.
    pub fn mark_denied(&mut self, call_id: &str) {
        if let Some(c) = self.card(call_id) {
            c.status = ToolStatus::Denied;
        }
    }

    /// Expands or collapses the selected tool card, else the newest finished one.
    pub fn toggle_last_output(&mut self) {
        let selected = self.selected.clone();
        if let Some(c) = self.entries.iter_mut().rev().find_map(|e| match e {
            Entry::Tool(c)
                if match &selected {
                    Some(id) => *id == c.call_id,
                    None => c.status != ToolStatus::Running,
                } =>
            {
                Some(c)
            }
            _ => None,
        }) {
            c.expanded = !c.expanded;
        }
        // A picked card opened from above the screen shows from its first line.
        if let Some(id) = selected
            && let Some(i) = self
                .entries
                .iter()
                .position(|e| matches!(e, Entry::Tool(c) if c.call_id == id))
        {
            self.reveal(i);
        }
    }

    /// Moves the selection to the previous (`older`) or next tool card, starting from the
    /// newest, and scrolls it into view; past the newest the selection ends.
    pub fn select_card(&mut self, older: bool) {
        let cards: Vec<(usize, &str)> = self
            .entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| match e {
                Entry::Tool(c) => Some((i, c.call_id.as_str())),
                _ => None,
            })
            .collect();
        let at = self
            .selected
            .as_ref()
            .and_then(|id| cards.iter().position(|(_, c)| c == id));
        let next = match (at, older) {
            (None, true) => cards.len().checked_sub(1),
            (None, false) => None,
            (Some(i), true) => Some(i.saturating_sub(1)),
            (Some(i), false) => (i + 1 < cards.len()).then_some(i + 1),
        };
        let target = next
            .and_then(|i| cards.get(i))
            .map(|(e, id)| (*e, id.to_string()));
        self.selected = target.as_ref().map(|(_, id)| id.clone());
        match target {
            Some((entry, _)) => self.reveal(entry),
            None => self.scroll = 0,
        }
    }

    /// A click at `row` of the screen: the tool card drawn there is selected and toggled.
    /// `true` when a card was hit.
    pub fn click(&mut self, column: u16, row: u16) -> bool {
        let Some(entry) = self.entry_at(column, row) else {
            return false;
        };
        let Some(Entry::Tool(c)) = self.entries.get_mut(entry) else {
            return false;
        };
        c.expanded = !c.expanded;
        self.selected = Some(c.call_id.clone());
        true
    }

    /// Brings a scroll past the top (remembered by the last draw) back to the first
    /// screenful, so scrolling down from there moves at once.
    pub fn clamp_scroll(&mut self) {
        if let Some(max) = self.render_cache.borrow().max_scroll() {
            self.scroll = self.scroll.min(max);
        }
    }

    /// The transcript's keys: scrolling, picking a card and expanding it; `false` when
    /// `key` is not one of them.
    pub fn key(&mut self, key: KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('o') if ctrl => self.toggle_last_output(),
            KeyCode::Up if alt => self.select_card(true),
            KeyCode::Down if alt => self.select_card(false),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_add(10),
            KeyCode::PageDown => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Up if shift => self.scroll = self.scroll.saturating_add(1),
            KeyCode::Down if shift => self.scroll = self.scroll.saturating_sub(1),
            // A scroll past the top is clamped to the first screenful when drawn.
            KeyCode::Home if ctrl => self.scroll = u16::MAX,
            KeyCode::End if ctrl => self.scroll = 0,
            _ => return false,
        }
        true
    }
}

/// Denied and interrupted calls end as `ToolFailed` too; their model-facing text says which.
impl From<ToolCallState> for ToolStatus {
    /// How a card shows a call's recorded or reported state; a stored call still "running"
    /// was cut off when its process ended.
    fn from(state: ToolCallState) -> Self {
        match state {
            ToolCallState::Completed => Self::Done,
            ToolCallState::Failed => Self::Failed,
            ToolCallState::Denied => Self::Denied,
            ToolCallState::TimedOut => Self::TimedOut,
            ToolCallState::Running | ToolCallState::Interrupted => Self::Interrupted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(inner: Event) -> Event {
        Event::Subagent {
            session_id: "ses_child".into(),
            parent_id: "ses_parent".into(),
            call_id: "call_task".into(),
            agent: "explore".into(),
            description: "Find callers".into(),
            event: Box::new(inner),
        }
    }

    #[test]
    fn a_sub_agent_s_task_card_shows_its_current_tool_and_call_count() {
        let mut t = Transcript::new("ses_parent");
        t.apply_event(&Event::ToolRequested {
            message_id: "msg_1".into(),
            call_id: "call_task".into(),
            tool: "task".into(),
        });
        t.apply_event(&Event::ToolStarted {
            session_id: "ses_parent".into(),
            call_id: "call_task".into(),
            tool: "task".into(),
            args: serde_json::Value::Null,
        });
        t.apply_event(&sub(Event::ToolStarted {
            session_id: "ses_child".into(),
            call_id: "c1".into(),
            tool: "grep".into(),
            args: serde_json::Value::Null,
        }));
        let title = |t: &Transcript| match &t.entries[0] {
            Entry::Tool(c) => c.title.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(title(&t), "explore · Find callers — grep · 1 tool call");
        t.apply_event(&sub(Event::ToolFailed {
            call_id: "c1".into(),
            tool: "grep".into(),
            error: "x".into(),
            duration_ms: 1,
            state: podcode_protocol::ToolCallState::Failed,
        }));
        assert_eq!(title(&t), "explore · Find callers — thinking · 1 tool call");
        assert_eq!(
            t.entries.len(),
            1,
            "the child's calls get no cards of their own"
        );
        assert_eq!(t.subagents["call_task"].session_id, "ses_child");
    }

    #[test]
    fn a_plugin_toast_is_a_notice_in_the_transcript() {
        let mut t = Transcript::default();
        t.apply_event(&Event::Toast {
            title: "Deploy".into(),
            message: "api is live".into(),
            variant: "success".into(),
        });
        match &t.entries[..] {
            [Entry::Notice(text)] => assert_eq!(text, "✓ Deploy: api is live"),
            other => panic!("{other:?}"),
        }
    }
}
