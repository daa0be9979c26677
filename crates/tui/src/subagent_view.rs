//! A sub-agent's own transcript, opened from its `task` card. Ctrl+T (or `/subagents`)
//! lists the sub-agents of this conversation in a picker, newest first; picking one shows
//! its session's transcript in place of the main one: what the store holds so far, then
//! kept live by the sub-agent's events (each arrives wrapped in `Event::Subagent`) while it
//! runs. Esc goes back. While the child is shown, the main transcript is kept aside in
//! `ChildView::parent` and still receives every event, so nothing is missed meanwhile.

use podcode_protocol::{Event, Item};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Paragraph;

use crate::services::PickItem;
use crate::state::AppState;
use crate::style::Theme;
use crate::transcript::{Entry, ToolStatus, Transcript};

/// The child transcript on screen (`AppState::transcript` holds the child's meanwhile).
#[derive(Debug, Clone, Default)]
pub struct ChildView {
    /// The sub-agent's session.
    pub session_id: String,
    /// The card's title when it was opened (`general · Edit notes — …`).
    pub label: String,
    /// The main conversation's transcript, set aside.
    pub parent: Transcript,
}

/// The header line over a child transcript.
pub fn header_text(child: &ChildView, live: bool) -> String {
    let label = child.label.split(" — ").next().unwrap_or(&child.label);
    format!(
        " sub-agent {label} ({}) · esc: back to the main conversation · {}",
        if live { "live" } else { "finished" },
        child.session_id
    )
}

/// The child session's id in a finished `task` card's output (`task_id: ses_…`).
fn task_id_in(output: &str) -> Option<String> {
    let rest = &output[output.find("task_id: ")? + "task_id: ".len()..];
    let id: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!id.is_empty()).then_some(id)
}

impl AppState {
    /// The main conversation's transcript, whether or not a child is shown.
    pub fn main_transcript(&self) -> &Transcript {
        match &self.child {
            Some(c) => &c.parent,
            None => &self.transcript,
        }
    }

    /// The sub-agents of the main conversation, newest first, for the picker: label the
    /// card's title, detail its state and session id, value the session id.
    pub fn subagent_items(&self) -> Vec<PickItem> {
        let main = self.main_transcript();
        main.entries
            .iter()
            .rev()
            .filter_map(|e| match e {
                Entry::Tool(card) if card.tool == "task" => {
                    let id = main
                        .subagents
                        .get(&card.call_id)
                        .map(|p| p.session_id.clone())
                        .or_else(|| task_id_in(&card.output))?;
                    let state = match card.status {
                        ToolStatus::Running => "running",
                        ToolStatus::Done => "done",
                        _ => "stopped",
                    };
                    Some(PickItem {
                        label: card.title.clone(),
                        detail: format!("{state} · {id}"),
                        value: id,
                    })
                }
                _ => None,
            })
            .collect()
    }

    /// Shows `items` (the child's stored conversation) in place of the main transcript.
    pub fn open_child(&mut self, session_id: &str, label: &str, items: Vec<Item>) {
        self.close_child();
        let child = Transcript::from_items(session_id, items);
        let parent = std::mem::replace(&mut self.transcript, child);
        self.child = Some(ChildView {
            session_id: session_id.into(),
            label: label.into(),
            parent,
        });
    }

    /// Back to the main conversation.
    pub fn close_child(&mut self) {
        if let Some(child) = self.child.take() {
            self.transcript = child.parent;
        }
    }

    /// Whether the shown child still runs (its card in the main transcript is running).
    pub fn child_live(&self) -> bool {
        let Some(child) = &self.child else {
            return false;
        };
        child.parent.entries.iter().any(|e| {
            matches!(e, Entry::Tool(card) if card.status == ToolStatus::Running
                && child.parent.subagents.get(&card.call_id).is_some_and(|p| p.session_id == child.session_id))
        })
    }

    /// An event for the transcripts: the main one always; the shown child's own events
    /// (unwrapped from `Event::Subagent`) also to the child's.
    pub(crate) fn apply_to_transcripts(&mut self, event: &Event) {
        let Some(child) = &mut self.child else {
            self.transcript.apply_event(event);
            return;
        };
        child.parent.apply_event(event);
        if let Event::Subagent {
            session_id, event, ..
        } = event
            && *session_id == child.session_id
        {
            self.transcript.apply_event(event);
        }
    }
}

/// Draws the header line over a child transcript.
pub fn draw_header(frame: &mut Frame, area: Rect, theme: Theme, state: &AppState) {
    let Some(child) = &state.child else {
        return;
    };
    let style = if theme.no_color {
        Style::default().add_modifier(Modifier::REVERSED)
    } else {
        Style::default().bg(Color::Blue).fg(Color::White)
    };
    frame.render_widget(
        Paragraph::new(header_text(child, state.child_live())).style(style),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::ToolCard;

    /// A call the model asked for, then its start.
    fn started(call: &str, tool: &str, session: &str) -> [Event; 2] {
        [
            Event::ToolRequested {
                message_id: format!("msg_{session}"),
                call_id: call.into(),
                tool: tool.into(),
            },
            Event::ToolStarted {
                session_id: session.into(),
                call_id: call.into(),
                tool: tool.into(),
                args: serde_json::Value::Null,
            },
        ]
    }

    fn apply(s: &mut AppState, events: [Event; 2], child: bool) {
        for e in events {
            s.apply_to_transcripts(&if child { from_child(e) } else { e });
        }
    }

    fn from_child(inner: Event) -> Event {
        Event::Subagent {
            session_id: "ses_child".into(),
            parent_id: "ses_main".into(),
            call_id: "call_task".into(),
            agent: "general".into(),
            description: "Edit notes".into(),
            event: Box::new(inner),
        }
    }

    #[test]
    fn a_child_transcript_opens_stays_live_and_closes_back_to_the_main_one() {
        let mut s = AppState::new("m", "build", "/w", "ses_main");
        apply(&mut s, started("call_task", "task", "ses_main"), false);
        apply(&mut s, started("c1", "read", "ses_child"), true);
        let items = s.subagent_items();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].value, "ses_child");
        assert_eq!(items[0].detail, "running · ses_child");
        assert_eq!(items[0].label, "general · Edit notes — read · 1 tool call");

        s.open_child(
            "ses_child",
            &items[0].label,
            vec![Item::User {
                message_id: "msg_u".into(),
                text: "Write new.".into(),
                files: Vec::new(),
            }],
        );
        assert!(s.child_live());
        assert_eq!(
            header_text(s.child.as_ref().unwrap(), true),
            " sub-agent general · Edit notes (live) · esc: back to the main conversation · ses_child"
        );
        // The child's next call shows in its transcript and moves the parent's card.
        apply(&mut s, started("c2", "bash", "ses_child"), true);
        assert!(
            matches!(s.transcript.entries.last(), Some(Entry::Tool(ToolCard { tool, .. })) if tool == "bash")
        );
        assert_eq!(s.main_transcript().subagents["call_task"].tool_calls, 2);
        // The main conversation's own events land in the main transcript only.
        apply(&mut s, started("c3", "glob", "ses_main"), false);
        assert_eq!(s.transcript.entries.len(), 2);

        s.close_child();
        assert!(s.child.is_none());
        assert!(
            matches!(s.transcript.entries.last(), Some(Entry::Tool(ToolCard { tool, .. })) if tool == "glob")
        );
    }

    #[test]
    fn a_stored_task_card_finds_its_session_in_the_output() {
        assert_eq!(
            task_id_in("task_id: ses_01ABC (pass it as task_id to continue)").as_deref(),
            Some("ses_01ABC")
        );
        assert_eq!(task_id_in("no id"), None);
    }
}
