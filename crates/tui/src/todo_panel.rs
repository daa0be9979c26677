//! The session's todo list as a panel above the input box: the list the newest `todowrite`
//! call wrote (live from its `ToolFinished` metadata, or from the stored transcript when a
//! session opens), `[x]` done, `[>]` in progress (highlighted), `[ ]` pending, `[-]`
//! cancelled (struck through), with what is left in the title. It shows while something is
//! left to do; Ctrl-L or `/todos` shows or hides it whatever the list holds.

use podcode_protocol::{Event, Item, ToolCallState};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};
use serde_json::Value;

use crate::style::Theme;

/// The most rows the panel takes (borders included); the rest is summarised.
const MAX_HEIGHT: u16 = 10;

/// The todo list and whether the user wants it shown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TodoPanel {
    /// `(status, content)` in the list's order.
    pub items: Vec<(String, String)>,
    /// `Some` once the user toggled it: shown or hidden whatever the list holds.
    pub pinned: Option<bool>,
}

fn items_of(todos: &Value) -> Vec<(String, String)> {
    todos
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            (
                t["status"].as_str().unwrap_or("pending").to_string(),
                t["content"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

impl TodoPanel {
    /// The list of a stored conversation: its newest completed `todowrite` call's.
    pub fn from_items(items: &[Item]) -> Self {
        let last = items.iter().rev().find_map(|item| match item {
            Item::Tool(t) if t.tool == "todowrite" && t.state == ToolCallState::Completed => {
                Some(items_of(&t.args["todos"]))
            }
            _ => None,
        });
        Self {
            items: last.unwrap_or_default(),
            pinned: None,
        }
    }

    /// Takes the list of a finished `todowrite` call.
    pub fn apply_event(&mut self, event: &Event) {
        if let Event::ToolFinished { tool, result, .. } = event
            && tool == "todowrite"
        {
            self.items = items_of(&result.metadata["todos"]);
        }
    }

    /// Ctrl-L, `/todos`: shows a hidden panel, hides a shown one.
    pub fn toggle(&mut self) {
        self.pinned = Some(!self.visible());
    }

    fn left(&self) -> usize {
        self.items
            .iter()
            .filter(|(s, _)| s != "completed" && s != "cancelled")
            .count()
    }

    /// Whether the panel is on screen.
    pub fn visible(&self) -> bool {
        self.pinned.unwrap_or(self.left() > 0) && !self.items.is_empty()
    }

    /// The rows it takes on a screen `screen_height` rows tall (never more than a third).
    pub fn height(&self, screen_height: u16) -> u16 {
        if !self.visible() {
            return 0;
        }
        let wanted = self.items.len() as u16 + 2;
        wanted.min(MAX_HEIGHT).min(screen_height / 3)
    }

    /// Draws the list into `area` (the rows `height` gave).
    pub fn draw(&self, frame: &mut Frame, area: Rect, theme: Theme) {
        if area.height < 3 {
            return;
        }
        let rows = usize::from(area.height - 2);
        // Keep the item in progress in view: start a little before it.
        let current = self
            .items
            .iter()
            .position(|(s, _)| s == "in_progress")
            .unwrap_or(0);
        let first = current
            .saturating_sub(1)
            .min(self.items.len().saturating_sub(rows));
        let mut lines: Vec<Line> = Vec::new();
        for (status, content) in self.items.iter().skip(first).take(rows) {
            let (mark, style) = match status.as_str() {
                "completed" => ("[x]", theme.fg(Color::DarkGray)),
                "in_progress" => ("[>]", theme.fg(Color::Yellow).add_modifier(Modifier::BOLD)),
                "cancelled" => (
                    "[-]",
                    theme
                        .fg(Color::DarkGray)
                        .add_modifier(Modifier::CROSSED_OUT),
                ),
                _ => ("[ ]", Style::default()),
            };
            lines.push(Line::styled(format!("{mark} {content}"), style));
        }
        let hidden = self.items.len().saturating_sub(first + rows);
        let more = if hidden > 0 {
            format!(", {hidden} more below")
        } else {
            String::new()
        };
        let title = format!(
            " todo: {} of {} left{more} (ctrl-l hides) ",
            self.left(),
            self.items.len()
        );
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.fg(Color::DarkGray))
            .title(title);
        frame.render_widget(Paragraph::new(lines).block(block), area);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use podcode_protocol::ToolResult;
    use serde_json::json;

    #[test]
    fn the_panel_follows_todowrite_and_hides_when_nothing_is_left() {
        let mut p = TodoPanel::default();
        assert!(!p.visible());
        let write = |todos: Value| Event::ToolFinished {
            call_id: "c".into(),
            tool: "todowrite".into(),
            result: ToolResult::text("").with_metadata(json!({ "todos": todos })),
            spill_path: None,
            duration_ms: 1,
        };
        p.apply_event(&write(json!([
            {"content": "a", "status": "completed", "priority": "high"},
            {"content": "b", "status": "in_progress", "priority": "high"},
        ])));
        assert!(p.visible());
        assert_eq!(p.height(40), 4);
        assert_eq!(p.height(9), 3, "a third of a short screen at most");
        p.toggle();
        assert!(!p.visible());
        p.toggle();
        assert!(p.visible());
        p.pinned = None;
        p.apply_event(&write(
            json!([{"content": "a", "status": "completed", "priority": "high"}]),
        ));
        assert!(!p.visible(), "all done: hidden unless asked for");
    }
}
