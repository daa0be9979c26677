//! Drawing: a pure function of `AppState` onto a ratatui frame. The transcript is wrapped
//! by hand (so only the visible lines are handed to ratatui, however long the session),
//! with the input box and status line below and the permission modal on top.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use std::hash::{Hash, Hasher};

use crate::changes_view::draw_changes;
use crate::state::{AppState, Entry, Screen, ToolCard, ToolStatus};
use crate::transcript_cache::{LogicalLine, TranscriptCache, WrapMode, wrap};

const SPINNER: [&str; 4] = ["⠋", "⠙", "⠹", "⠸"];
/// Output lines a collapsed tool card shows.
const PREVIEW_LINES: usize = 4;
/// Diff lines a collapsed card of a file change shows.
const DIFF_PREVIEW_LINES: usize = 12;

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
    let input_height = crate::input::view::input_height_for(state, area.width);
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
    crate::mentions::draw_completion(frame, input, state);
    draw_status(frame, status, state);
    if state.show_help {
        draw_help(frame, main, state);
    }
    if state.picker.is_some() {
        crate::picker::draw_picker(frame, main, state);
    }
    if state.modal.is_some() {
        crate::modal::draw_modal(frame, main, state);
    }
}

fn draw_transcript(frame: &mut Frame, area: Rect, state: &AppState) {
    let width = area.width.max(1) as usize;
    let height = area.height as usize;
    if state.entries.is_empty() {
        let hint = LogicalLine::new(vec![Span::styled(
            "Podcode — type a request and press Enter. /help for commands.",
            fg(state, Color::DarkGray),
        )]);
        frame.render_widget(Paragraph::new(wrap(&hint, width)), area);
        return;
    }
    // A re-entrant draw (never expected) renders without the cache rather than panicking.
    let mut local = TranscriptCache::default();
    let mut guard = state.render_cache.try_borrow_mut();
    let cache: &mut TranscriptCache = match guard.as_mut() {
        Ok(c) => c,
        Err(_) => &mut local,
    };
    cache.truncate(state.entries.len());
    let mut visible = visible_rows(cache, state, width, height, state.scroll as usize);
    if let Err(total) = visible {
        // Scrolled past the top: show the first screenful, and remember where that is so
        // scrolling back down starts from it.
        let top = total.saturating_sub(height);
        cache.set_max_scroll(Some(u16::try_from(top).unwrap_or(u16::MAX)));
        visible = visible_rows(cache, state, width, height, top);
    } else {
        cache.set_max_scroll(None);
    }
    frame.render_widget(Paragraph::new(visible.unwrap_or_default()), area);
}

/// The `height` rows that end `scroll` rows above the bottom, rendering (or reusing) entries
/// from the newest back only as far as needed; `Err(total rows)` when `scroll` goes past
/// the top.
fn visible_rows(
    cache: &mut TranscriptCache,
    state: &AppState,
    width: usize,
    height: usize,
    scroll: usize,
) -> Result<Vec<Line<'static>>, usize> {
    let last = state.entries.len().saturating_sub(1);
    let (mut skip, mut need, mut total) = (scroll, height, 0);
    let mut parts: Vec<Vec<Line<'static>>> = Vec::new();
    for (i, entry) in state.entries.iter().enumerate().rev() {
        if need == 0 {
            break;
        }
        let newest = i == last;
        let key = entry_key(entry, state, newest);
        let rows = cache.rows(i, key, width, || entry_lines(entry, state, newest));
        total += rows.len();
        if skip >= rows.len() {
            skip -= rows.len();
            continue;
        }
        let end = rows.len() - skip;
        let start = end.saturating_sub(need);
        parts.push(rows[start..end].to_vec());
        need -= end - start;
        skip = 0;
    }
    if skip > 0 {
        return Err(total);
    }
    Ok(parts.into_iter().rev().flatten().collect())
}

/// A cheap fingerprint of everything `entry_lines` reads for `entry`, or `None` when the
/// entry animates (a running card's spinner and clock) and must be drawn every frame.
fn entry_key(entry: &Entry, state: &AppState, newest: bool) -> Option<u64> {
    let mut h = std::hash::DefaultHasher::new();
    state.no_color.hash(&mut h);
    match entry {
        Entry::User(t) => (0u8, text_print(t)).hash(&mut h),
        Entry::Assistant { text, .. } => (1u8, text_print(text)).hash(&mut h),
        Entry::Reasoning { text, .. } => {
            (2u8, text_print(text), newest && state.busy).hash(&mut h);
        }
        Entry::Notice(t) => (3u8, text_print(t)).hash(&mut h),
        Entry::Tool(c) => {
            if c.status == ToolStatus::Running {
                return None;
            }
            (4u8, c.status.label(), c.expanded, &c.tool, &c.title).hash(&mut h);
            (c.elapsed_ms, text_print(&c.output), c.attachments).hash(&mut h);
            (&c.spill_path, c.diff.as_deref().map(text_print)).hash(&mut h);
        }
    }
    Some(h.finish())
}

/// Length plus both ends: texts only grow (streaming) or get replaced wholesale.
fn text_print(t: &str) -> (usize, &[u8], &[u8]) {
    let b = t.as_bytes();
    (
        b.len(),
        &b[..b.len().min(32)],
        &b[b.len().saturating_sub(32)..],
    )
}

/// An entry as logical lines, followed by the blank line that separates entries.
fn entry_lines(entry: &Entry, state: &AppState, newest: bool) -> Vec<LogicalLine> {
    let mut out = Vec::new();
    match entry {
        Entry::User(text) => {
            let mark = fg(state, Color::Cyan).add_modifier(Modifier::BOLD);
            for (i, l) in text.lines().enumerate() {
                let first = if i == 0 { "› " } else { "  " };
                out.push(
                    LogicalLine::new(vec![Span::styled(
                        l.to_string(),
                        Style::default().add_modifier(Modifier::BOLD),
                    )])
                    .gutter(vec![Span::styled(first, mark)], vec![Span::raw("  ")]),
                );
            }
        }
        Entry::Assistant { text, .. } => markdown_lines(text, state, &mut out),
        Entry::Reasoning { text, .. } => {
            let n = text.lines().count();
            let dim = fg(state, Color::DarkGray).add_modifier(Modifier::ITALIC);
            out.push(LogicalLine::new(vec![Span::styled(
                format!("▸ thinking ({n} line{})", if n == 1 { "" } else { "s" }),
                dim,
            )]));
            // While it streams as the newest entry, its latest line shows beneath.
            if newest
                && state.busy
                && let Some(l) = text.lines().rev().find(|l| !l.trim().is_empty())
            {
                out.push(
                    LogicalLine::new(vec![Span::styled(l.trim().to_string(), dim)])
                        .gutter(vec![Span::raw("  ")], vec![Span::raw("  ")]),
                );
            }
        }
        Entry::Tool(card) => card_lines(card, state, &mut out),
        Entry::Notice(text) => {
            for l in text.lines() {
                out.push(LogicalLine::new(vec![Span::styled(
                    l.to_string(),
                    fg(state, Color::DarkGray),
                )]));
            }
        }
    }
    out.push(LogicalLine::default());
    out
}

/// Assistant text as Markdown (see `markdown`).
fn markdown_lines(text: &str, state: &AppState, out: &mut Vec<LogicalLine>) {
    out.extend(crate::markdown::render(text, state.no_color));
}

fn card_lines(card: &ToolCard, state: &AppState, out: &mut Vec<LogicalLine>) {
    let (mark, color) = match card.status {
        ToolStatus::Running => (SPINNER[(state.frame % 4) as usize], Color::Yellow),
        ToolStatus::Done => ("✓", Color::Green),
        ToolStatus::Failed => ("✗", Color::Red),
        ToolStatus::Denied => ("⊘", Color::Magenta),
        ToolStatus::Interrupted => ("■", Color::DarkGray),
        ToolStatus::TimedOut => ("⧗", Color::Yellow),
    };
    let mut head = vec![Span::styled(
        card.tool.clone(),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    if !card.title.is_empty() {
        head.push(Span::raw(format!(" — {}", card.title)));
    }
    head.push(Span::styled(
        format!(" · {} · {}", card.status.label(), duration(card.elapsed_ms)),
        fg(state, Color::DarkGray),
    ));
    out.push(LogicalLine::new(head).gutter(
        vec![Span::styled(format!("{mark} "), fg(state, color))],
        vec![Span::raw("  ")],
    ));
    // A finished file change shows its diff; everything else its output.
    let diff = card
        .diff
        .as_deref()
        .filter(|d| card.status == ToolStatus::Done && !d.trim().is_empty());
    let (body, preview): (Vec<&str>, usize) = match diff {
        Some(d) => (d.lines().collect(), DIFF_PREVIEW_LINES),
        None => (card.output.lines().collect(), PREVIEW_LINES),
    };
    let shown = if card.expanded { body.len() } else { preview };
    let style = match card.status {
        ToolStatus::Failed | ToolStatus::Denied => fg(state, Color::Red),
        _ => fg(state, Color::Gray),
    };
    let gutter = || vec![Span::styled("  │ ", fg(state, Color::DarkGray))];
    let note = |text: String| {
        LogicalLine::new(vec![Span::styled(text, fg(state, Color::DarkGray))])
            .gutter(gutter(), gutter())
    };
    for l in body.iter().take(shown) {
        let style = diff_style(l, state).unwrap_or(style);
        out.push(
            LogicalLine::new(vec![Span::styled(l.replace('\t', "    "), style)])
                .gutter(gutter(), gutter())
                .mode(WrapMode::Chars),
        );
    }
    if body.len() > shown {
        out.push(note(format!(
            "… {} more lines (ctrl-o to expand)",
            body.len() - shown
        )));
    }
    if card.attachments > 0 {
        out.push(note(format!("{} attachment(s)", card.attachments)));
    }
    if let Some(p) = &card.spill_path {
        out.push(note(format!("full output: {p}")));
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

pub const HELP: &str =
    "enter send (queued while a turn runs) · alt-enter or ctrl-j newline · ↑/↓ history
←/→ ctrl-←/→ home/end move · ctrl-w ctrl-u ctrl-k delete · @path attach a file (tab completes)
pgup/pgdn shift-↑/↓ ctrl-home/end scroll · esc abort the turn · ctrl-c twice quit · ctrl-o expand the last tool output
ctrl-g or /changes: Changes view (r change · c call · t since its prompt · a all · f force)
/new  /sessions  /model [provider/id]  /agent [name]  /tools  /plugins  /changes  /undo  /help";

fn draw_help(frame: &mut Frame, area: Rect, state: &AppState) {
    let h = 11.min(area.height);
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
