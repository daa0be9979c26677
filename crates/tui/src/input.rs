//! The input box: a multi-line text buffer with a cursor. `edit_key` applies editing keys
//! (typing, deletion, cursor motion) and tells the caller when a vertical motion ran past
//! the first or last line, which the key handler turns into history navigation.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Color;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::render::fg;
use crate::state::AppState;

/// What `edit_key` did with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditOutcome {
    /// The key edited the text or moved the cursor.
    Handled,
    /// Not an editing key.
    Ignored,
    /// Up on the first line: the caller may show the previous history entry.
    PastTop,
    /// Down on the last line: the caller may show the next history entry.
    PastBottom,
}

/// The text being typed and the cursor, a byte offset on a char boundary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputBuffer {
    text: String,
    cursor: usize,
}

impl InputBuffer {
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replaces the text; the cursor goes to the end.
    pub fn set(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
    }

    pub fn clear(&mut self) {
        self.set("");
    }

    pub fn insert_str(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
    }

    pub fn insert_char(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    /// Replaces the bytes `range` with `with`, leaving the cursor after it.
    pub fn replace_range(&mut self, range: std::ops::Range<usize>, with: &str) {
        self.text.replace_range(range.clone(), with);
        self.cursor = range.start + with.len();
    }

    pub fn edit_key(&mut self, key: KeyEvent) -> EditOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char(c) if !ctrl => self.insert_char(c),
            KeyCode::Backspace => {
                if let Some(c) = self.text[..self.cursor].chars().next_back() {
                    self.cursor -= c.len_utf8();
                    self.text.remove(self.cursor);
                }
            }
            KeyCode::Up if !self.text[..self.cursor].contains('\n') => return EditOutcome::PastTop,
            KeyCode::Down if !self.text[self.cursor..].contains('\n') => {
                return EditOutcome::PastBottom;
            }
            _ => return EditOutcome::Ignored,
        }
        EditOutcome::Handled
    }
}

/// Rows the input box needs (borders included).
pub fn input_height(state: &AppState) -> u16 {
    (state.input.text().split('\n').count().max(1) as u16 + 2).min(8)
}

pub fn draw_input(frame: &mut Frame, area: Rect, state: &AppState) {
    let title = if state.busy {
        " working… (esc to abort) "
    } else {
        " message (enter to send, alt-enter for a new line) "
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(fg(state, Color::DarkGray))
        .title(title);
    let inner_h = area.height.saturating_sub(2) as usize;
    let lines: Vec<&str> = state.input.text().split('\n').collect();
    let skip = lines.len().saturating_sub(inner_h.max(1));
    let text: Vec<Line> = lines[skip..].iter().map(|l| Line::raw(*l)).collect();
    frame.render_widget(Paragraph::new(text).block(block), area);
    let last = lines.last().map(|l| l.chars().count()).unwrap_or(0) as u16;
    let row = (lines.len() - skip) as u16;
    if state.modal.is_none() {
        frame.set_cursor_position((
            (area.x + 1 + last).min(area.right().saturating_sub(2)),
            area.y + row.min(area.height.saturating_sub(2)),
        ));
    }
}
