//! The picker overlay behind `/sessions`, `/model` and `/agent`: a filterable list. Typing
//! narrows it (case-insensitive, every word must match), ↑/↓ select, Enter picks, Esc
//! closes. The model picker also accepts a typed `provider/model-id` that is not listed.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::keys::Action;
use crate::render::fg;
use crate::services::PickItem;
use crate::state::AppState;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerKind {
    Session,
    Model,
    Agent,
}

impl PickerKind {
    fn title(self) -> &'static str {
        match self {
            Self::Session => " resume a session ",
            Self::Model => " model (type provider/model-id to use another) ",
            Self::Agent => " agent ",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Picker {
    pub kind: PickerKind,
    pub items: Vec<PickItem>,
    pub filter: String,
    pub selected: usize,
}

impl Picker {
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

/// Keys while a picker is open.
pub fn picker_key(state: &mut AppState, key: KeyEvent) -> Action {
    let Some(p) = &mut state.picker else {
        return Action::None;
    };
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        KeyCode::Esc => state.picker = None,
        KeyCode::Enter => {
            let kind = p.kind;
            let chosen = p.chosen();
            state.picker = None;
            if let Some(value) = chosen {
                return Action::Pick(kind, value);
            }
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
    Action::None
}

pub fn draw_picker(frame: &mut Frame, area: Rect, state: &AppState) {
    let Some(p) = &state.picker else { return };
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
        Span::styled("filter: ", fg(state, Color::DarkGray)),
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
            style = if state.no_color {
                style.add_modifier(Modifier::REVERSED)
            } else {
                style.fg(Color::Cyan).add_modifier(Modifier::BOLD)
            };
        }
        lines.push(Line::from(vec![
            Span::styled(format!("{mark}{}", item.label), style),
            Span::styled(format!("  {}", item.detail), fg(state, Color::DarkGray)),
        ]));
    }
    if visible.is_empty() {
        let text = if p.kind == PickerKind::Model && p.filter.contains('/') {
            "enter uses the model you typed"
        } else {
            "nothing matches"
        };
        lines.push(Line::styled(text, fg(state, Color::DarkGray)));
    }
    lines.push(Line::styled(
        "↑/↓ select · enter pick · esc close",
        fg(state, Color::DarkGray),
    ));
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(fg(state, Color::Cyan))
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

    fn state_with(kind: PickerKind) -> AppState {
        AppState {
            picker: Some(Picker::new(
                kind,
                vec![
                    PickItem::new("openai/gpt-4.1", "configured"),
                    PickItem::new("anthropic/claude-sonnet-4-5", "used before"),
                ],
            )),
            ..Default::default()
        }
    }

    #[test]
    fn typing_filters_and_enter_picks_the_selection() {
        let mut s = state_with(PickerKind::Model);
        for c in "claude".chars() {
            picker_key(&mut s, key(KeyCode::Char(c)));
        }
        assert_eq!(s.picker.as_ref().unwrap().visible().len(), 1);
        assert_eq!(
            picker_key(&mut s, key(KeyCode::Enter)),
            Action::Pick(PickerKind::Model, "anthropic/claude-sonnet-4-5".into())
        );
        assert!(s.picker.is_none());
    }

    #[test]
    fn a_typed_model_is_used_when_nothing_matches_and_esc_closes() {
        let mut s = state_with(PickerKind::Model);
        for c in "ollama/qwen3".chars() {
            picker_key(&mut s, key(KeyCode::Char(c)));
        }
        assert_eq!(
            picker_key(&mut s, key(KeyCode::Enter)),
            Action::Pick(PickerKind::Model, "ollama/qwen3".into())
        );
        let mut s = state_with(PickerKind::Agent);
        for c in "zzz".chars() {
            picker_key(&mut s, key(KeyCode::Char(c)));
        }
        assert_eq!(picker_key(&mut s, key(KeyCode::Enter)), Action::None);
        let mut s = state_with(PickerKind::Session);
        picker_key(&mut s, key(KeyCode::Esc));
        assert!(s.picker.is_none());
    }

    #[test]
    fn down_moves_within_the_matches() {
        let mut s = state_with(PickerKind::Agent);
        picker_key(&mut s, key(KeyCode::Down));
        picker_key(&mut s, key(KeyCode::Down));
        assert_eq!(s.picker.as_ref().unwrap().selected, 1);
        assert_eq!(
            picker_key(&mut s, key(KeyCode::Enter)),
            Action::Pick(PickerKind::Agent, "anthropic/claude-sonnet-4-5".into())
        );
    }
}
