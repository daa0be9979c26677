//! The Changes view component: the session's journaled changes, grouped by the prompt
//! (turn) and tool call that made them, with the selected change's diff beside the list, the
//! conflict of a refused revert and what the last revert said. ↑/↓ select; the revert keys
//! become `ChangesKey::Revert`, which the event loop carries out (`changes_view.rs` loads
//! the journal and reverts through the store).

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::style::{Theme, wrap_lines};

/// The Changes view: the session's journal, and what the last revert said.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChangesView {
    /// The session's changes, newest first.
    pub changes: Vec<ChangeItem>,
    /// Index of the highlighted change.
    pub selected: usize,
    /// A refused revert: what was asked and the refusal with its diff; `f` forces it.
    pub conflict: Option<(RevertScope, String)>,
    /// The last revert's outcome, shown under the list.
    pub message: Option<String>,
}

/// One journaled change as the view lists it (the engine's `ChangeEntry`).
pub use podcode_core::ChangeEntry as ChangeItem;

/// What a revert key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevertScope {
    /// The selected change only.
    Change,
    /// Every change of the selected change's tool call.
    Call,
    /// Everything since the prompt of the selected change's turn.
    Turn,
    /// Every change of the session.
    Session,
}

/// What a key did in the Changes view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangesKey {
    /// Handled inside the view (or ignored).
    Done,
    /// Esc or `q` with no conflict showing: back to the transcript.
    Close,
    /// Revert the selection at this scope; `true` forces it past a conflict.
    Revert(RevertScope, bool),
}

impl ChangesView {
    /// Handles a key while the view is open.
    pub fn key(&mut self, key: KeyEvent) -> ChangesKey {
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => {
                if self.conflict.is_some() {
                    self.conflict = None;
                    self.message = Some("revert cancelled".into());
                    return ChangesKey::Done;
                }
                ChangesKey::Close
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.selected = self.selected.saturating_sub(1);
                self.conflict = None;
                ChangesKey::Done
            }
            KeyCode::Down | KeyCode::Char('j') => {
                if self.selected + 1 < self.changes.len() {
                    self.selected += 1;
                }
                self.conflict = None;
                ChangesKey::Done
            }
            KeyCode::Char('r') => ChangesKey::Revert(RevertScope::Change, false),
            KeyCode::Char('c') => ChangesKey::Revert(RevertScope::Call, false),
            KeyCode::Char('t') => ChangesKey::Revert(RevertScope::Turn, false),
            KeyCode::Char('a') => ChangesKey::Revert(RevertScope::Session, false),
            KeyCode::Char('f') => match &self.conflict {
                Some((scope, _)) => ChangesKey::Revert(*scope, true),
                None => ChangesKey::Done,
            },
            _ => ChangesKey::Done,
        }
    }

    /// Draws the list and the diff (or the conflict) side by side into `area`.
    pub fn draw(&self, frame: &mut Frame, area: Rect, theme: Theme) {
        draw_changes(frame, area, self, theme);
    }
}

fn draw_changes(frame: &mut Frame, area: Rect, view: &ChangesView, theme: Theme) {
    let [list_area, diff_area] =
        Layout::horizontal([Constraint::Percentage(35), Constraint::Percentage(65)]).areas(area);
    let mut list: Vec<Line> = Vec::new();
    let mut last_call: Option<&Option<String>> = None;
    let mut last_turn: Option<&Option<(String, String)>> = None;
    for (i, item) in view.changes.iter().enumerate() {
        if last_turn != Some(&item.turn) {
            let prompt = item.turn.as_ref().map_or("(before any prompt)", |t| &t.1);
            list.push(Line::styled(
                format!("› {prompt}"),
                theme.fg(Color::Cyan).add_modifier(Modifier::BOLD),
            ));
            last_turn = Some(&item.turn);
            last_call = None;
        }
        if last_call != Some(&item.change.call_id) {
            list.push(Line::styled(
                format!(" {}", item.call_label),
                theme.fg(Color::DarkGray),
            ));
            last_call = Some(&item.change.call_id);
        }
        let mark = if i == view.selected { " ▶ " } else { "   " };
        let mut style = Style::default();
        if i == view.selected {
            style = style.add_modifier(Modifier::BOLD);
        }
        if item.reverted {
            style = style.add_modifier(Modifier::CROSSED_OUT);
        }
        let state_tag = if item.reverted { " (reverted)" } else { "" };
        list.push(Line::styled(
            format!(
                "{mark}{} {}{state_tag}",
                item.change.op.as_str(),
                item.display
            ),
            style,
        ));
    }
    if list.is_empty() {
        list.push(Line::raw("no changes in this session yet"));
    }
    list.push(Line::default());
    for help in [
        "r revert change · c call",
        "t since its prompt · a all",
        "f force · esc back",
    ] {
        list.push(Line::styled(help, theme.fg(Color::DarkGray)));
    }
    if let Some(m) = &view.message {
        list.push(Line::styled(m.clone(), theme.fg(Color::Yellow)));
    }
    let inner_w = list_area.width.saturating_sub(2) as usize;
    frame.render_widget(
        Paragraph::new(wrap_lines(list, inner_w.max(1))).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.fg(Color::DarkGray))
                .title(" changes "),
        ),
        list_area,
    );
    let (title, text) = match (&view.conflict, view.changes.get(view.selected)) {
        (Some((_, conflict)), _) => (" conflict ", conflict.as_str()),
        (None, Some(item)) => (" diff ", item.diff.as_str()),
        (None, None) => (" diff ", ""),
    };
    let lines: Vec<Line> = text
        .lines()
        .map(|l| Line::styled(l, theme.diff_style(l).unwrap_or_default()))
        .collect();
    let inner_w = diff_area.width.saturating_sub(2) as usize;
    let border = if view.conflict.is_some() {
        theme.fg(Color::Red)
    } else {
        theme.fg(Color::DarkGray)
    };
    frame.render_widget(
        Paragraph::new(wrap_lines(lines, inner_w.max(1))).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(border)
                .title(title),
        ),
        diff_area,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    fn key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn esc_cancels_a_conflict_before_it_closes_and_f_forces_only_a_conflict() {
        let mut view = ChangesView::default();
        assert_eq!(view.key(key('f')), ChangesKey::Done);
        assert_eq!(
            view.key(key('t')),
            ChangesKey::Revert(RevertScope::Turn, false)
        );
        view.conflict = Some((RevertScope::Call, "a.rs changed since".into()));
        assert_eq!(
            view.key(key('f')),
            ChangesKey::Revert(RevertScope::Call, true)
        );
        let esc = KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE);
        assert_eq!(view.key(esc), ChangesKey::Done);
        assert_eq!(view.conflict, None);
        assert_eq!(view.message.as_deref(), Some("revert cancelled"));
        assert_eq!(view.key(esc), ChangesKey::Close);
    }
}
