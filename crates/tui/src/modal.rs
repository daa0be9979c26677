//! The permission modal: what asks for what (the header, always shown), the details the
//! tool attached (the command, the whole diff) or the call's arguments in a body that
//! scrolls, and the answers (the footer, always shown) — the text from
//! `podcode_protocol::prompt_text_whole`, shared with the CLI prompt. Keys (as on the web
//! page): `y` (or `o`, enter) once, `a` always, `n` (or `r`) reject, `f` reject with feedback (type, enter sends, esc goes
//! back); esc rejects and aborts the turn (handled by `keys`); ↑/↓/PgUp/PgDn/Home/End
//! scroll the body. For a moment after it first shows, the modal takes no key: a key
//! pressed then was meant for the screen beneath (typing, esc to go back), and must not
//! answer an ask the user has not read. The event loop opens it for the ask at the front of
//! its queue and closes it when the answer goes back.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};
use podcode_protocol::{PermissionReply, PermissionRequest, PromptText};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::style::{Theme, wrap_lines};

/// How long after the modal first shows its keys stay with the screen beneath.
pub const KEY_GRACE: Duration = Duration::from_millis(400);

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
    /// First body line shown.
    scroll: usize,
    /// Set by the first draw: keys answer from `KEY_GRACE` after it.
    shown_at: Cell<Option<Instant>>,
    /// The body's height and how far it can scroll, as last drawn.
    page: Cell<usize>,
    max_scroll: Cell<usize>,
}

/// What a key did to the open modal.
#[derive(Debug, Clone, PartialEq)]
pub enum ModalKey {
    /// The modal is too new to take keys: the key is for the screen beneath.
    NotYet,
    /// The key moved or edited something in the modal.
    Handled,
    /// The user's answer.
    Answer(PermissionReply),
}

impl PermissionModal {
    /// The modal for `tool`'s ask on `call_id`.
    pub fn new(tool: &str, call_id: &str, request: PermissionRequest) -> Self {
        Self {
            tool: tool.to_string(),
            call_id: call_id.to_string(),
            request,
            feedback: None,
            scroll: 0,
            shown_at: Cell::new(None),
            page: Cell::new(1),
            max_scroll: Cell::new(0),
        }
    }

    /// Marks the modal as shown at `at` (the first draw does it).
    pub fn shown(&self, at: Instant) {
        self.shown_at.set(Some(at));
    }

    /// Whether keys pressed at `now` are for the modal (it has been on screen long enough
    /// to be read).
    pub fn takes_keys(&self, now: Instant) -> bool {
        self.shown_at
            .get()
            .is_some_and(|t| now.saturating_duration_since(t) >= KEY_GRACE)
    }

    /// Handles a key pressed at `now`.
    pub fn key_at(&mut self, key: KeyEvent, now: Instant) -> ModalKey {
        if !self.takes_keys(now) {
            return ModalKey::NotYet;
        }
        match modal_key(self, key) {
            Some(reply) => ModalKey::Answer(reply),
            None => ModalKey::Handled,
        }
    }

    /// Draws the modal centred over `area`.
    pub fn draw(&self, frame: &mut Frame, area: Rect, theme: Theme) {
        if self.shown_at.get().is_none() {
            self.shown_at.set(Some(Instant::now()));
        }
        draw_modal(frame, area, self, theme);
    }

    /// Scrolls the body by `delta` lines; `true` (the screen changes).
    pub(crate) fn scroll_by(&mut self, delta: isize) -> bool {
        let max = self.max_scroll.get();
        self.scroll = self.scroll.saturating_add_signed(delta).min(max);
        true
    }
}

/// Handles a key while the modal takes keys; `Some` is the user's answer.
fn modal_key(modal: &mut PermissionModal, key: KeyEvent) -> Option<PermissionReply> {
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
    let page = modal.page.get().max(1) as isize;
    match key.code {
        KeyCode::Char('o' | 'y') | KeyCode::Enter => return Some(PermissionReply::Once),
        KeyCode::Char('a') => return Some(PermissionReply::Always),
        KeyCode::Char('r' | 'n') => return Some(PermissionReply::Reject { feedback: None }),
        KeyCode::Char('f') => modal.feedback = Some(String::new()),
        KeyCode::Down | KeyCode::Char('j') => _ = modal.scroll_by(1),
        KeyCode::Up | KeyCode::Char('k') => _ = modal.scroll_by(-1),
        KeyCode::PageDown | KeyCode::Char(' ') => _ = modal.scroll_by(page),
        KeyCode::PageUp => _ = modal.scroll_by(-page),
        KeyCode::Home => modal.scroll = 0,
        KeyCode::End => modal.scroll = modal.max_scroll.get(),
        _ => {}
    }
    None
}

/// The header: who asks for what, and the hidden-characters warning.
fn header_lines(text: &PromptText, theme: Theme) -> Vec<Line<'static>> {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut lines = vec![Line::styled(clean(&text.title).into_owned(), bold)];
    if let Some(warning) = &text.warning {
        lines.push(Line::styled(
            format!("! {warning}"),
            theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ));
    }
    lines
}

/// The body: every line of every detail.
fn body_lines(text: &PromptText, theme: Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for section in &text.sections {
        // The title names the path already, and a diff's `---`/`+++` header repeats it:
        // on a small screen every line goes to the change itself.
        if section.label == "path"
            && section
                .lines
                .iter()
                .all(|p| text.title.contains(p.as_str()))
        {
            continue;
        }
        lines.push(Line::styled(
            format!("{}:", section.label),
            theme.fg(Color::DarkGray),
        ));
        let diff = section.label == "diff";
        let headers = if diff {
            section
                .lines
                .iter()
                .take(2)
                .take_while(|l| l.starts_with("--- ") || l.starts_with("+++ "))
                .count()
        } else {
            0
        };
        for l in section.lines.iter().skip(headers) {
            let style = if diff {
                theme.diff_style(l).unwrap_or_default()
            } else {
                Style::default()
            };
            lines.push(Line::styled(format!("  {}", clean(l)), style));
        }
    }
    lines
}

/// The answers: one per line, or all on one line when the screen is short.
fn footer_lines(
    m: &PermissionModal,
    text: &PromptText,
    theme: Theme,
    compact: bool,
) -> Vec<Line<'static>> {
    let key = |k: &'static str| Span::styled(k, theme.fg(Color::Cyan).add_modifier(Modifier::BOLD));
    if let Some(typed) = &m.feedback {
        return vec![
            Line::raw("feedback for the model (enter sends, esc back):"),
            Line::styled(
                format!("> {typed}▏"),
                Style::default().add_modifier(Modifier::BOLD),
            ),
        ];
    }
    if !m.takes_keys(Instant::now()) {
        return vec![Line::styled(
            "(read the ask: its keys answer in a moment)",
            theme.fg(Color::DarkGray),
        )];
    }
    if compact {
        return vec![Line::from(vec![
            key("[y]"),
            Span::raw(" once  "),
            key("[a]"),
            Span::raw(" always  "),
            key("[n]"),
            Span::raw(" reject  "),
            key("[f]"),
            Span::raw(" feedback  "),
            key("[esc]"),
            Span::raw(" stop"),
        ])];
    }
    let mut lines = vec![Line::from(vec![key("[y]"), Span::raw(" allow once")])];
    let mut always = text.always.iter();
    let first = clean(always.next().map(String::as_str).unwrap_or_default()).into_owned();
    lines.push(Line::from(vec![key("[a]"), Span::raw(format!(" {first}"))]));
    lines.extend(always.map(|rule| Line::raw(format!("    {}", clean(rule)))));
    lines.push(Line::from(vec![key("[n]"), Span::raw(" reject")]));
    lines.push(Line::from(vec![
        key("[f]"),
        Span::raw(" reject with feedback"),
    ]));
    lines.push(Line::from(vec![
        key("[esc]"),
        Span::raw(" reject and stop the turn"),
    ]));
    lines
}

fn draw_modal(frame: &mut Frame, area: Rect, m: &PermissionModal, theme: Theme) {
    // A narrow screen gives the modal every column: what shows beside it is only noise.
    let width = if area.width < 60 {
        area.width
    } else {
        area.width.saturating_sub(4).min(100)
    };
    let inner_w = width.saturating_sub(2) as usize;
    let text = podcode_protocol::prompt_text_whole(&m.tool, &m.request);
    let header = wrap_lines(header_lines(&text, theme), inner_w);
    let body = wrap_lines(body_lines(&text, theme), inner_w);
    let inner_h = area.height.saturating_sub(2) as usize;
    let mut footer = wrap_lines(footer_lines(m, &text, theme, false), inner_w);
    // Header, a few body lines and the answers must fit: else the answers go on one line.
    if header.len() + footer.len() + 3.min(body.len()) + 1 > inner_h {
        footer = wrap_lines(footer_lines(m, &text, theme, true), inner_w);
    }
    let header_h = header
        .len()
        .min(inner_h.saturating_sub(footer.len() + 1).max(1));
    let room = inner_h.saturating_sub(header_h + footer.len());
    // One line under the body says where it is when it does not fit.
    let scrolls = body.len() + 1 > room;
    let body_h = if scrolls {
        room.saturating_sub(1)
    } else {
        body.len()
    };
    let max_scroll = body.len().saturating_sub(body_h);
    m.page.set(body_h.max(1));
    m.max_scroll.set(max_scroll);
    let first = m.scroll.min(max_scroll);
    let mut lines: Vec<Line> = header.into_iter().take(header_h).collect();
    lines.extend(body.iter().skip(first).take(body_h).cloned());
    if scrolls && body_h > 0 {
        let last = (first + body_h).min(body.len());
        let mut hint = format!(
            "lines {}–{last} of {} · ↑↓ PgUp PgDn scroll",
            first + 1,
            body.len()
        );
        if hint.chars().count() > inner_w {
            hint = format!("{}–{last}/{} ↑↓", first + 1, body.len());
        }
        lines.push(Line::styled(hint, theme.fg(Color::DarkGray)));
    } else {
        lines.push(Line::default());
    }
    lines.extend(footer);
    let height = (lines.len() as u16 + 2).min(area.height);
    let x = area.x + (area.width.saturating_sub(width)) / 2;
    let y = area.y + (area.height.saturating_sub(height)) / 2;
    let rect = Rect::new(x, y, width, height);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).block(
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
