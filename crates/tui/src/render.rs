//! Drawing: a pure function of `AppState` onto a ratatui frame. The transcript is wrapped
//! by hand (so only the visible lines are handed to ratatui, however long the session),
//! with the input box and status line below and the permission modal on top.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::changes_view::draw_changes;
use crate::state::{AppState, Entry, Screen, ToolCard, ToolStatus};

const SPINNER: [&str; 4] = ["⠋", "⠙", "⠹", "⠸"];
/// Output lines a collapsed tool card shows.
const PREVIEW_LINES: usize = 4;

/// A colour, or nothing under `NO_COLOR`.
pub(crate) fn fg(state: &AppState, color: Color) -> Style {
    if state.no_color {
        Style::default()
    } else {
        Style::default().fg(color)
    }
}

pub fn draw(frame: &mut Frame, state: &AppState) {
    let area = frame.area();
    let input_height = crate::input::input_height(state);
    let [main, input, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(input_height),
        Constraint::Length(1),
    ])
    .areas(area);
    match state.screen {
        Screen::Transcript => draw_transcript(frame, main, state),
        Screen::Changes => draw_changes(frame, main, state),
    }
    crate::input::draw_input(frame, input, state);
    draw_status(frame, status, state);
    if state.show_help {
        draw_help(frame, main, state);
    }
    if state.modal.is_some() {
        crate::modal::draw_modal(frame, main, state);
    }
}

fn draw_transcript(frame: &mut Frame, area: Rect, state: &AppState) {
    let width = area.width.max(1) as usize;
    let mut lines: Vec<Line> = Vec::new();
    if state.entries.is_empty() {
        lines.push(Line::styled(
            "Podcode — type a request and press Enter. /help for commands.",
            fg(state, Color::DarkGray),
        ));
    }
    for entry in &state.entries {
        entry_lines(entry, state, &mut lines);
        lines.push(Line::default());
    }
    let wrapped = wrap_lines(lines, width);
    let height = area.height as usize;
    let end = wrapped.len().saturating_sub(state.scroll as usize);
    let start = end.saturating_sub(height);
    let visible: Vec<Line> = wrapped[start..end].to_vec();
    frame.render_widget(Paragraph::new(visible), area);
}

fn entry_lines<'a>(entry: &'a Entry, state: &AppState, out: &mut Vec<Line<'a>>) {
    match entry {
        Entry::User(text) => {
            for (i, l) in text.lines().enumerate() {
                let mark = if i == 0 { "› " } else { "  " };
                out.push(Line::from(vec![
                    Span::styled(mark, fg(state, Color::Cyan).add_modifier(Modifier::BOLD)),
                    Span::styled(l, Style::default().add_modifier(Modifier::BOLD)),
                ]));
            }
        }
        Entry::Assistant { text, .. } => markdown_lines(text, state, out),
        Entry::Reasoning { text, .. } => {
            let n = text.lines().count();
            out.push(Line::styled(
                format!("▸ thinking ({n} line{})", if n == 1 { "" } else { "s" }),
                fg(state, Color::DarkGray).add_modifier(Modifier::ITALIC),
            ));
        }
        Entry::Tool(card) => card_lines(card, state, out),
        Entry::Notice(text) => {
            for l in text.lines() {
                out.push(Line::styled(l, fg(state, Color::DarkGray)));
            }
        }
    }
}

/// Headings bold, fenced code in its own colour, everything else as is.
fn markdown_lines<'a>(text: &'a str, state: &AppState, out: &mut Vec<Line<'a>>) {
    let mut in_code = false;
    for l in text.lines() {
        if l.trim_start().starts_with("```") {
            in_code = !in_code;
            out.push(Line::styled(l, fg(state, Color::DarkGray)));
        } else if in_code {
            out.push(Line::styled(l, fg(state, Color::Yellow)));
        } else if l.starts_with('#') {
            out.push(Line::styled(
                l,
                Style::default().add_modifier(Modifier::BOLD),
            ));
        } else {
            out.push(Line::raw(l));
        }
    }
}

fn card_lines<'a>(card: &'a ToolCard, state: &AppState, out: &mut Vec<Line<'a>>) {
    let (mark, color) = match card.status {
        ToolStatus::Running => (SPINNER[(state.frame % 4) as usize], Color::Yellow),
        ToolStatus::Done => ("✓", Color::Green),
        ToolStatus::Failed => ("✗", Color::Red),
        ToolStatus::Denied => ("⊘", Color::Magenta),
        ToolStatus::Interrupted => ("■", Color::DarkGray),
    };
    let mut head = vec![
        Span::styled(format!("{mark} "), fg(state, color)),
        Span::styled(
            card.tool.as_str(),
            Style::default().add_modifier(Modifier::BOLD),
        ),
    ];
    if !card.title.is_empty() {
        head.push(Span::raw(format!(" — {}", card.title)));
    }
    head.push(Span::styled(
        format!(" · {} · {}", card.status.label(), duration(card.elapsed_ms)),
        fg(state, Color::DarkGray),
    ));
    out.push(Line::from(head));
    let body: Vec<&str> = card.output.lines().collect();
    let shown = if card.expanded {
        body.len()
    } else {
        PREVIEW_LINES
    };
    let style = match card.status {
        ToolStatus::Failed | ToolStatus::Denied => fg(state, Color::Red),
        _ => fg(state, Color::Gray),
    };
    for l in body.iter().take(shown) {
        let style = diff_style(l, state).unwrap_or(style);
        out.push(Line::from(vec![
            Span::styled("  │ ", fg(state, Color::DarkGray)),
            Span::styled(*l, style),
        ]));
    }
    if body.len() > shown {
        out.push(Line::styled(
            format!("  │ … {} more lines (ctrl-o to expand)", body.len() - shown),
            fg(state, Color::DarkGray),
        ));
    }
    if card.attachments > 0 {
        out.push(Line::styled(
            format!("  │ {} attachment(s)", card.attachments),
            fg(state, Color::DarkGray),
        ));
    }
    if let Some(p) = &card.spill_path {
        out.push(Line::styled(
            format!("  │ full output: {p}"),
            fg(state, Color::DarkGray),
        ));
    }
}

/// Colours of unified-diff lines.
pub(crate) fn diff_style(line: &str, state: &AppState) -> Option<Style> {
    if line.starts_with("+++") || line.starts_with("---") {
        Some(Style::default().add_modifier(Modifier::BOLD))
    } else if line.starts_with('+') {
        Some(fg(state, Color::Green))
    } else if line.starts_with('-') {
        Some(fg(state, Color::Red))
    } else if line.starts_with("@@") {
        Some(fg(state, Color::Cyan))
    } else {
        None
    }
}

pub(crate) fn duration(ms: u64) -> String {
    if ms >= 1000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{ms}ms")
    }
}

/// Splits lines wider than `width` at character boundaries, keeping span styles.
pub(crate) fn wrap_lines(lines: Vec<Line<'_>>, width: usize) -> Vec<Line<'_>> {
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        if line.width() <= width {
            out.push(line);
            continue;
        }
        let mut current: Vec<Span> = Vec::new();
        let mut used = 0;
        for span in line.spans {
            let mut chunk = String::new();
            for ch in span.content.chars() {
                let w = ratatui::text::Span::raw(ch.to_string()).width();
                if used + w > width {
                    if !chunk.is_empty() {
                        current.push(Span::styled(std::mem::take(&mut chunk), span.style));
                    }
                    out.push(Line::from(std::mem::take(&mut current)));
                    used = 0;
                }
                chunk.push(ch);
                used += w;
            }
            if !chunk.is_empty() {
                current.push(Span::styled(chunk, span.style));
            }
        }
        out.push(Line::from(current));
    }
    out
}

fn draw_status(frame: &mut Frame, area: Rect, state: &AppState) {
    let u = &state.usage;
    let mut parts = vec![state.model.clone(), state.agent.clone()];
    if !state.title.is_empty() {
        parts.push(state.title.chars().take(30).collect());
    }
    let mut tokens = format!("{}↑ {}↓", u.input_tokens, u.output_tokens);
    if let Some(c) = u.cost {
        tokens.push_str(&format!(" ${c:.4}"));
    }
    parts.push(tokens);
    parts.push(state.cwd.clone());
    let running = state.running_tools();
    if !running.is_empty() {
        parts.push(format!("running: {}", running.join(", ")));
    }
    if state.quit_armed {
        parts.insert(0, "ctrl-c again to quit".into());
    }
    let style = if state.no_color {
        Style::default().add_modifier(Modifier::REVERSED)
    } else {
        Style::default().bg(Color::DarkGray).fg(Color::White)
    };
    frame.render_widget(
        Paragraph::new(format!(" {}", parts.join(" · "))).style(style),
        area,
    );
}

pub const HELP: &str = "enter send · alt-enter newline · ↑/↓ history · pgup/pgdn scroll
esc abort the turn · ctrl-c twice quit · ctrl-o expand last tool output
ctrl-g or /changes: Changes view (↑/↓ select, r revert change, c revert call, a revert all, f force, esc back)
/new  /changes  /undo (revert the last turn)  /tools  /model  /agent  /help";

fn draw_help(frame: &mut Frame, area: Rect, state: &AppState) {
    let h = 8.min(area.height);
    let rect = Rect::new(area.x, area.bottom().saturating_sub(h), area.width, h);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(HELP).wrap(Wrap { trim: false }).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(fg(state, Color::Cyan))
                .title(" help (any key closes) "),
        ),
        rect,
    );
}
