//! The input component: the text being typed (`buffer.rs`), the prompts sent before (Up/Down
//! past the first or last row walks them), the prompts queued while a turn runs, and the
//! `@path` completion (`mentions/`) and `/` command completion (`slash_popup.rs`). The key handler gives it the keys no other component
//! took (`key`) and asks it for the prompt on Enter (`take_prompt`); `view.rs` draws the
//! box, and the completion popup above it.

mod buffer;
pub(crate) mod mentions;
pub(crate) mod slash_popup;
pub(crate) mod view;

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;

pub use buffer::{EditOutcome, InputBuffer};
use mentions::{Completion, FileIndex};
use slash_popup::{SlashChoice, SlashPopup};

use crate::style::Theme;

/// The prompt editor: its text, sent-prompt history and `@path` completion.
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// The text being edited.
    pub buffer: InputBuffer,
    /// Prompts sent so far, oldest first.
    pub history: Vec<String>,
    /// The history entry shown in the box while the user walks it.
    pub history_pos: Option<usize>,
    /// Prompts sent while a turn ran, with their attached files: each goes when the
    /// previous turn ends.
    pub queued: Vec<(String, Vec<String>)>,
    /// The open `@path` completion popup.
    pub completion: Option<Completion>,
    /// The workspace file index for `@path` completion, built on first use.
    pub file_index: Option<Arc<FileIndex>>,
    /// The commands `/` completes: the UI's own, then the workspace's custom ones.
    pub commands: Vec<SlashChoice>,
    /// The open `/` command popup.
    pub slash: Option<SlashPopup>,
}

/// Up/Down (or Ctrl-P/Ctrl-N) in a completion popup of `len` rows: moves `selected`
/// round the list and says `true`; any other key is left alone (`false`).
pub(crate) fn move_selection(key: &KeyEvent, selected: &mut usize, len: usize) -> bool {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let up = key.code == KeyCode::Up || (ctrl && key.code == KeyCode::Char('p'));
    let down = key.code == KeyCode::Down || (ctrl && key.code == KeyCode::Char('n'));
    if (up || down) && len > 0 {
        let step = if up { len - 1 } else { 1 };
        *selected = (*selected + step) % len;
    }
    up || down
}

/// How a completion popup draws its selected row.
pub(crate) fn selected_style(theme: Theme) -> ratatui::style::Style {
    use ratatui::style::{Color, Modifier, Style};
    if theme.no_color {
        Style::default().add_modifier(Modifier::REVERSED)
    } else {
        Style::default().fg(Color::Black).bg(Color::Cyan)
    }
}

impl Input {
    /// An editing key: newlines, motions, deletions, typing, and history past the ends.
    /// The `@path` popup follows the edit; its index covers `cwd`.
    pub fn key(&mut self, key: KeyEvent, cwd: &str) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let newline = (ctrl && key.code == KeyCode::Char('j'))
            || (key.code == KeyCode::Enter
                && key
                    .modifiers
                    .intersects(KeyModifiers::ALT | KeyModifiers::SHIFT));
        if newline {
            self.buffer.insert_char('\n');
            return;
        }
        match self.buffer.edit_key(key) {
            EditOutcome::PastTop => self.history(true),
            EditOutcome::PastBottom => self.history(false),
            EditOutcome::Handled => self.history_pos = None,
            EditOutcome::Ignored => {}
        }
        mentions::refresh(self, cwd);
        slash_popup::refresh(self);
    }

    /// A key for the open `@path` or `/` popup; `false` when there is none or it passes the
    /// key on.
    pub fn completion_key(&mut self, key: KeyEvent, cwd: &str) -> bool {
        slash_popup::key(self, key) || mentions::completion_key(self, key, cwd)
    }

    /// The custom command `text` runs (`/name args` naming one of `commands`): its name and
    /// arguments.
    pub fn custom_command(&self, text: &str) -> Option<(String, String)> {
        let (name, args) = podcode_protocol::slash_command(text)?;
        self.commands
            .iter()
            .any(|c| c.custom && c.name == name)
            .then(|| (name.to_string(), args.to_string()))
    }

    /// Matches an open popup that waited for the file index, once the index is ready;
    /// `true` while the popup waits (it may have changed).
    pub fn poll_completion(&mut self, cwd: &str) -> bool {
        let waiting = self.completion.as_ref().is_some_and(|c| c.indexing);
        if waiting {
            mentions::poll(self, cwd);
        }
        waiting
    }

    /// Enter: the trimmed text, which leaves the box for the history; `None` when blank.
    pub fn take_prompt(&mut self) -> Option<String> {
        let text = self.buffer.text().trim().to_string();
        if text.is_empty() {
            return None;
        }
        self.buffer.clear();
        self.history_pos = None;
        if self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        Some(text)
    }

    fn history(&mut self, up: bool) {
        if self.history.is_empty() {
            return;
        }
        let last = self.history.len() - 1;
        let pos = match (self.history_pos, up) {
            (None, true) => Some(last),
            (None, false) => None,
            (Some(p), true) => Some(p.saturating_sub(1)),
            (Some(p), false) if p < last => Some(p + 1),
            (Some(_), false) => None,
        };
        self.history_pos = pos;
        let text = pos
            .and_then(|p| self.history.get(p).cloned())
            .unwrap_or_default();
        self.buffer.set(&text);
    }

    /// Rows the box needs (borders included) when it is `width` columns wide.
    pub fn height(&self, width: u16) -> u16 {
        view::input_height_for(&self.buffer, width)
    }

    /// Draws the box into `area` and the completion popup above it; `busy` (a turn runs)
    /// changes the title, and the terminal cursor shows only when `show_cursor`.
    pub fn draw(&self, frame: &mut Frame, area: Rect, theme: Theme, busy: bool, show_cursor: bool) {
        view::draw_input(frame, area, &self.buffer, theme, busy, show_cursor);
        mentions::draw_completion(frame, area, self, theme);
        slash_popup::draw(frame, area, self, theme);
    }
}
