//! The picker overlay behind `/sessions`, `/model` and `/agent`: a filterable list. Typing
//! narrows it (case-insensitive, every word must match), ↑/↓ select, Enter picks, Esc
//! closes. The model picker also accepts a typed `provider/model-id` that is not listed.
//! The event loop opens it with the items `TuiServices` offers; what is picked goes back
//! to it as an `Action::Pick` (see `keys`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::services::PickItem;
use crate::style::Theme;

/// What a picker chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerKind {
    /// A stored session to resume.
    Session,
    /// The model for the next turns.
    Model,
    /// The agent profile for the next turns.
    Agent,
    /// A sub-agent of this conversation, to open its transcript.
    Subagent,
}

impl PickerKind {
    fn title(self) -> &'static str {
        match self {
            Self::Session => " resume a session ",
            Self::Model => " model (type provider/model-id to use another) ",
            Self::Agent => " agent ",
            Self::Subagent => " sub-agents (enter opens its transcript) ",
        }
    }
}

/// What a key did to an open picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerOutcome {
    /// It stays open.
    Open,
    /// Closed without a choice.
    Closed,
    /// Closed with this choice.
    Picked(PickerKind, String),
}

/// A filterable list the user picks one item from.
#[derive(Debug, Clone, PartialEq)]
pub struct Picker {
    /// What it chooses.
    pub kind: PickerKind,
    /// Every item, before filtering.
    pub items: Vec<PickItem>,
    /// What the user typed to narrow the list (fuzzy match).
    pub filter: String,
    /// Index of the highlighted item among the filtered ones.
    pub selected: usize,
}

impl Picker {
    /// A picker of `items`, unfiltered, first item highlighted.
    pub fn new(kind: PickerKind, items: Vec<PickItem>) -> Self {
        Self {
            kind,
            items,
            filter: String::new(),
            selected: 0,
        }
    }

    /// The items matching the filter, in order.
    pub fn visible(&self) -> Vec<&PickItem> {
        let words: Vec<String> = self
            .filter
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        self.items
            .iter()
            .filter(|i| {
                let hay = format!("{} {} {}", i.label, i.detail, i.value).to_lowercase();
                words.iter().all(|w| hay.contains(w))
            })
            .collect()
    }

    /// What Enter picks: the selected match, or for models a typed `provider/model-id`.
    fn chosen(&self) -> Option<String> {
        if let Some(item) = self.visible().get(self.selected) {
            return Some(item.value.clone());
        }
        let typed = self.filter.trim();
        (self.kind == PickerKind::Model && typed.contains('/') && !typed.contains(' '))
            .then(|| typed.to_string())
    }
}

impl Picker {
    /// Keys while the picker is open.
    pub fn key(&mut self, key: KeyEvent) -> PickerOutcome {
        let p = self;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return PickerOutcome::Closed,
            KeyCode::Enter => {
                return match p.chosen() {
                    Some(value) => PickerOutcome::Picked(p.kind, value),
                    None => PickerOutcome::Closed,
                };
            }
            KeyCode::Up => p.selected = p.selected.saturating_sub(1),
            KeyCode::Char('p') if ctrl => p.selected = p.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Tab if p.selected + 1 < p.visible().len() => p.selected += 1,
            KeyCode::Char('n') if ctrl && p.selected + 1 < p.visible().len() => p.selected += 1,
            KeyCode::Down | KeyCode::Tab => {}
            KeyCode::Char('n') if ctrl => {}
            KeyCode::Backspace => {
                p.filter.pop();
                p.selected = 0;
            }
            KeyCode::Char(c) if !ctrl => {
                p.filter.push(c);
                p.selected = 0;
            }
            _ => {}
        }
        PickerOutcome::Open
    }

    /// Draws the picker centred over `area`.
    pub fn draw(&self, frame: &mut Frame, area: Rect, theme: Theme) {
        draw_picker(frame, area, self, theme);
    }
}

fn draw_picker(frame: &mut Frame, area: Rect, p: &Picker, theme: Theme) {
    let width = area.width.saturating_sub(4).clamp(20, 100);
    let visible = p.visible();
    let list_rows = area.height.saturating_sub(5).max(1) as usize;
    let height = (visible.len().clamp(1, list_rows) as u16 + 4).min(area.height);
    let rect = Rect::new(
        area.x + area.width.saturating_sub(width) / 2,
        area.y + area.height.saturating_sub(height) / 2,
        width.min(area.width),
        height,
    );
    let mut lines = vec![Line::from(vec![
        Span::styled("filter: ", theme.fg(Color::DarkGray)),
        Span::styled(
            format!("{}▏", p.filter),
            Style::default().add_modifier(Modifier::BOLD),
        ),
    ])];
    // Keep the selection in view.
    let start = p.selected.saturating_sub(list_rows.saturating_sub(1));
    for (i, item) in visible.iter().enumerate().skip(start).take(list_rows) {
        let selected = i == p.selected;
        let mark = if selected { "▶ " } else { "  " };
        let mut style = Style::default();
        if selected {
            style = if theme.no_color {
                style.add_modifier(Modifier::REVERSED)
            } else {
                style.fg(Color::Cyan).add_modifier(Modifier::BOLD)
            };
        }
        lines.push(Line::from(vec![
            Span::styled(format!("{mark}{}", item.label), style),
            Span::styled(format!("  {}", item.detail), theme.fg(Color::DarkGray)),
        ]));
    }
    if visible.is_empty() {
        let text = if p.kind == PickerKind::Model && p.filter.contains('/') {
            "enter uses the model you typed"
        } else {
            "nothing matches"
        };
        lines.push(Line::styled(text, theme.fg(Color::DarkGray)));
    }
    lines.push(Line::styled(
        "↑/↓ select · enter pick · esc close",
        theme.fg(Color::DarkGray),
    ));
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.fg(Color::Cyan))
                .title(p.kind.title()),
        ),
        rect,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn picker(kind: PickerKind) -> Picker {
        Picker::new(
            kind,
            vec![
                PickItem::new("openai/gpt-4.1", "configured"),
                PickItem::new("anthropic/claude-sonnet-4-5", "used before"),
            ],
        )
    }

    #[test]
    fn typing_filters_and_enter_picks_the_selection() {
        let mut p = picker(PickerKind::Model);
        for c in "claude".chars() {
            assert_eq!(p.key(key(KeyCode::Char(c))), PickerOutcome::Open);
        }
        assert_eq!(p.visible().len(), 1);
        assert_eq!(
            p.key(key(KeyCode::Enter)),
            PickerOutcome::Picked(PickerKind::Model, "anthropic/claude-sonnet-4-5".into())
        );
    }

    #[test]
    fn a_typed_model_is_used_when_nothing_matches_and_esc_closes() {
        let mut p = picker(PickerKind::Model);
        for c in "ollama/qwen3".chars() {
            p.key(key(KeyCode::Char(c)));
        }
        assert_eq!(
            p.key(key(KeyCode::Enter)),
            PickerOutcome::Picked(PickerKind::Model, "ollama/qwen3".into())
        );
        let mut p = picker(PickerKind::Agent);
        for c in "zzz".chars() {
            p.key(key(KeyCode::Char(c)));
        }
        assert_eq!(p.key(key(KeyCode::Enter)), PickerOutcome::Closed);
        let mut p = picker(PickerKind::Session);
        assert_eq!(p.key(key(KeyCode::Esc)), PickerOutcome::Closed);
    }

    #[test]
    fn down_moves_within_the_matches() {
        let mut p = picker(PickerKind::Agent);
        p.key(key(KeyCode::Down));
        p.key(key(KeyCode::Down));
        assert_eq!(p.selected, 1);
        assert_eq!(
            p.key(key(KeyCode::Enter)),
            PickerOutcome::Picked(PickerKind::Agent, "anthropic/claude-sonnet-4-5".into())
        );
    }
}
