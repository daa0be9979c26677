//! The permission modal: what asks for what, the metadata the tool attached (the command,
//! the diff) or the call's arguments, and the four answers — the text from
//! `podcode_protocol::prompt_text`, shared with the CLI prompt. Keys: `o`/`y`/enter once,
//! `a` always, `r`/`n` reject,
//! `f` reject with feedback (type, enter sends, esc goes back); esc rejects and aborts the
//! turn (handled by `keys`). The event loop opens it for the ask at the front of its queue
//! and closes it when the answer goes back.

use crossterm::event::{KeyCode, KeyEvent};
use podcode_protocol::{PermissionReply, PermissionRequest};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::style::{Theme, wrap_lines};

/// A permission ask waiting for the user.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionModal {
    /// The tool asking.
    pub tool: String,
    /// The call waiting for the answer.
    pub call_id: String,
    /// What it asks for.
    pub request: PermissionRequest,
    /// `Some` while the user types the feedback of a rejection.
    pub feedback: Option<String>,
}

impl PermissionModal {
    /// Handles a key; `Some` is the user's answer.
    pub fn key(&mut self, key: KeyEvent) -> Option<PermissionReply> {
        modal_key(self, key)
    }

    /// Draws the modal centred over `area`.
    pub fn draw(&self, frame: &mut Frame, area: Rect, theme: Theme) {
        draw_modal(frame, area, self, theme);
    }
}

/// Handles a key while the modal is open; `Some` is the user's answer.
pub fn modal_key(modal: &mut PermissionModal, key: KeyEvent) -> Option<PermissionReply> {
    if let Some(text) = &mut modal.feedback {
        match key.code {
            KeyCode::Enter => {
                let t = text.trim().to_string();
                return Some(PermissionReply::Reject {
                    feedback: (!t.is_empty()).then_some(t),
                });
            }
            KeyCode::Esc => modal.feedback = None,
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Char(c) => text.push(c),
            _ => {}
        }
        return None;
    }
    match key.code {
        KeyCode::Char('o' | 'y') | KeyCode::Enter => Some(PermissionReply::Once),
        KeyCode::Char('a') => Some(PermissionReply::Always),
        KeyCode::Char('r' | 'n') => Some(PermissionReply::Reject { feedback: None }),
        KeyCode::Char('f') => {
            modal.feedback = Some(String::new());
            None
        }
        _ => None,
    }
}

fn draw_modal(frame: &mut Frame, area: Rect, m: &PermissionModal, theme: Theme) {
    let width = area.width.saturating_sub(4).clamp(20, 100);
    let inner_w = width.saturating_sub(2) as usize;
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let text = podcode_protocol::prompt_text(&m.tool, &m.request);
    let mut lines: Vec<Line> = vec![Line::styled(clean(&text.title).into_owned(), bold)];
    if let Some(warning) = &text.warning {
        lines.push(Line::styled(
            format!("! {warning}"),
            theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ));
    }
    for section in &text.sections {
        lines.push(Line::styled(
            format!("{}:", section.label),
            theme.fg(Color::DarkGray),
        ));
        for l in &section.lines {
            let style = if section.label == "diff" {
                theme.diff_style(l).unwrap_or_default()
            } else {
                Style::default()
            };
            lines.push(Line::styled(format!("  {}", clean(l)), style));
        }
    }
    lines.push(Line::default());
    match &m.feedback {
        None => {
            let key = |k: &'static str| {
                Span::styled(k, theme.fg(Color::Cyan).add_modifier(Modifier::BOLD))
            };
            lines.push(Line::from(vec![key("[o]"), Span::raw(" allow once")]));
            let mut always = text.always.iter();
            let first = clean(always.next().map(String::as_str).unwrap_or_default()).into_owned();
            lines.push(Line::from(vec![key("[a]"), Span::raw(format!(" {first}"))]));
            lines.extend(always.map(|rule| Line::raw(format!("    {}", clean(rule)))));
            lines.push(Line::from(vec![key("[r]"), Span::raw(" reject")]));
            lines.push(Line::from(vec![
                key("[f]"),
                Span::raw(" reject with feedback"),
            ]));
            lines.push(Line::from(vec![
                key("[esc]"),
                Span::raw(" reject and stop the turn"),
            ]));
        }
        Some(text) => {
            lines.push(Line::raw("feedback for the model (enter sends, esc back):"));
            lines.push(Line::styled(format!("> {text}▏"), bold));
        }
    }
    let lines = wrap_lines(lines, inner_w);
    let height = (lines.len() as u16 + 2).min(area.height);
    let x = area.x + (area.width.saturating_sub(width)) / 2;
    let y = area.y + (area.height.saturating_sub(height)) / 2;
    let rect = Rect::new(x, y, width.min(area.width), height);
    // Keep the answers visible when the metadata is long: show the end.
    let skip = lines
        .len()
        .saturating_sub(height.saturating_sub(2) as usize);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines[skip..].to_vec()).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.fg(Color::Yellow))
                .title(" permission "),
        ),
        rect,
    );
}

/// A prompt's text with terminal control sequences removed or made visible.
fn clean(text: &str) -> std::borrow::Cow<'_, str> {
    podcode_protocol::sanitize_for_terminal(text)
}
