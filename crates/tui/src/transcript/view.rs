//! Drawing the transcript. It is wrapped by hand, so only the visible lines are handed to
//! ratatui however long the session: entries are rendered (or taken from the render cache)
//! from the newest backwards until the screen is full.

use std::hash::{Hash, Hasher};

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{Entry, ToolCard, ToolStatus, Transcript};
use crate::style::{Theme, duration};
use crate::transcript_cache::{LastView, LogicalLine, TranscriptCache, wrap};

const SPINNER: [&str; 4] = ["⠋", "⠙", "⠹", "⠸"];
/// Output lines a collapsed tool card shows.
const PREVIEW_LINES: usize = 4;
/// Diff lines a collapsed card of a file change shows.
const DIFF_PREVIEW_LINES: usize = 12;

/// What an entry's rendering reads besides the entry itself.
#[derive(Clone, Copy)]
pub(super) struct Look {
    theme: Theme,
    /// A turn runs: the newest reasoning shows its latest line.
    busy: bool,
    /// The spinner frame of running cards.
    frame: u64,
}

impl Transcript {
    /// Draws the rows that end `scroll` rows above the bottom into `area`; `busy` says a
    /// turn is running.
    pub fn draw(&self, frame: &mut Frame, area: Rect, theme: Theme, busy: bool) {
        let width = area.width.max(1) as usize;
        let height = area.height as usize;
        if self.entries.is_empty() {
            let hint = LogicalLine::new(vec![Span::styled(
                "Podcode — type a request and press Enter. /help for commands.",
                theme.fg(Color::DarkGray),
            )]);
            frame.render_widget(Paragraph::new(wrap(&hint, width)), area);
            return;
        }
        let look = Look {
            theme,
            busy,
            frame: self.frame,
        };
        // A re-entrant draw (never expected) renders without the cache rather than panicking.
        let mut local = TranscriptCache::default();
        let mut guard = self.render_cache.try_borrow_mut();
        let cache: &mut TranscriptCache = match guard.as_mut() {
            Ok(c) => c,
            Err(_) => &mut local,
        };
        cache.truncate(self.entries.len());
        let mut visible = self.visible_rows(cache, look, width, height, self.scroll as usize);
        if let Err(total) = visible {
            // Scrolled past the top: show the first screenful, and remember where that is so
            // scrolling back down starts from it.
            let top = total.saturating_sub(height);
            cache.set_max_scroll(Some(u16::try_from(top).unwrap_or(u16::MAX)));
            visible = self.visible_rows(cache, look, width, height, top);
        } else {
            cache.set_max_scroll(None);
        }
        let (lines, rows) = visible.unwrap_or_default();
        cache.last_view = Some(LastView {
            area,
            no_color: theme.no_color,
            busy,
            rows,
        });
        frame.render_widget(Paragraph::new(lines), area);
    }

    /// The entry drawn at screen cell (`column`, `row`) by the last draw.
    pub(crate) fn entry_at(&self, column: u16, row: u16) -> Option<usize> {
        let cache = self.render_cache.borrow();
        let view = cache.last_view.as_ref()?;
        let a = view.area;
        if column < a.x || column >= a.x + a.width || row < a.y {
            return None;
        }
        let mut top = a.y as usize;
        for (entry, rows) in &view.rows {
            if (row as usize) < top + rows {
                return Some(*entry);
            }
            top += rows;
        }
        None
    }

    /// Scrolls so entry `target` is on screen (as the last draw measured the screen).
    pub(crate) fn reveal(&mut self, target: usize) {
        let scroll = {
            let mut cache = self.render_cache.borrow_mut();
            let Some(view) = cache.last_view.clone() else {
                return;
            };
            let look = Look {
                theme: Theme {
                    no_color: view.no_color,
                },
                busy: view.busy,
                frame: self.frame,
            };
            let (width, height) = (view.area.width.max(1) as usize, view.area.height as usize);
            let last = self.entries.len().saturating_sub(1);
            // Rows below the target, counted from the bottom.
            let mut below = 0usize;
            let mut found = None;
            for (i, entry) in self.entries.iter().enumerate().rev() {
                let (newest, picked) = (i == last, self.is_selected(entry));
                let key = entry_key(entry, look, newest, picked);
                let rows = cache
                    .rows(i, key, width, || entry_lines(entry, look, newest, picked))
                    .len();
                if i == target {
                    found = Some(rows);
                    break;
                }
                below += rows;
            }
            let Some(rows) = found else {
                return;
            };
            let now = self.scroll as usize;
            if below < now {
                // Below the screen: its end goes to the bottom.
                below
            } else if below + rows > now + height {
                // Above the screen: its first row goes to the top.
                (below + rows).saturating_sub(height)
            } else {
                now
            }
        };
        self.scroll = u16::try_from(scroll).unwrap_or(u16::MAX);
    }

    fn is_selected(&self, entry: &Entry) -> bool {
        matches!((entry, &self.selected), (Entry::Tool(c), Some(id)) if c.call_id == *id)
    }

    /// The `height` rows that end `scroll` rows above the bottom, rendering (or reusing)
    /// entries from the newest back only as far as needed, with which entry each group of
    /// rows is (top to bottom); `Err(total rows)` when `scroll` goes past the top.
    fn visible_rows(
        &self,
        cache: &mut TranscriptCache,
        look: Look,
        width: usize,
        height: usize,
        scroll: usize,
    ) -> Result<VisibleRows, usize> {
        let last = self.entries.len().saturating_sub(1);
        let (mut skip, mut need, mut total) = (scroll, height, 0);
        let mut parts: Vec<(usize, Vec<Line<'static>>)> = Vec::new();
        for (i, entry) in self.entries.iter().enumerate().rev() {
            if need == 0 {
                break;
            }
            let (newest, picked) = (i == last, self.is_selected(entry));
            let key = entry_key(entry, look, newest, picked);
            let rows = cache.rows(i, key, width, || entry_lines(entry, look, newest, picked));
            total += rows.len();
            if skip >= rows.len() {
                skip -= rows.len();
                continue;
            }
            let end = rows.len() - skip;
            let start = end.saturating_sub(need);
            parts.push((i, rows[start..end].to_vec()));
            need -= end - start;
            skip = 0;
        }
        if skip > 0 {
            return Err(total);
        }
        let layout = parts.iter().rev().map(|(i, r)| (*i, r.len())).collect();
        Ok((
            parts.into_iter().rev().flat_map(|(_, r)| r).collect(),
            layout,
        ))
    }
}

/// Screen rows, and `(entry index, rows)` for each entry they show, top to bottom.
type VisibleRows = (Vec<Line<'static>>, Vec<(usize, usize)>);

/// A cheap fingerprint of everything `entry_lines` reads for `entry`, or `None` when the
/// entry animates (a running card's spinner and clock) and must be drawn every frame.
fn entry_key(entry: &Entry, look: Look, newest: bool, picked: bool) -> Option<u64> {
    let mut h = std::hash::DefaultHasher::new();
    (look.theme.no_color, picked).hash(&mut h);
    match entry {
        Entry::User(t) => (0u8, text_print(t)).hash(&mut h),
        Entry::Assistant { text, .. } => (1u8, text_print(text)).hash(&mut h),
        Entry::Reasoning { text, .. } => {
            (2u8, text_print(text), newest && look.busy).hash(&mut h);
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
fn entry_lines(entry: &Entry, look: Look, newest: bool, picked: bool) -> Vec<LogicalLine> {
    let theme = look.theme;
    let mut out = Vec::new();
    match entry {
        Entry::User(text) => {
            let mark = theme.fg(Color::Cyan).add_modifier(Modifier::BOLD);
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
        // Assistant text is Markdown (see `markdown`).
        Entry::Assistant { text, .. } => {
            out.extend(crate::markdown::render(&clean(text), theme.no_color))
        }
        Entry::Reasoning { text, .. } => {
            let n = text.lines().count();
            let dim = theme.fg(Color::DarkGray).add_modifier(Modifier::ITALIC);
            out.push(LogicalLine::new(vec![Span::styled(
                format!("▸ thinking ({n} line{})", if n == 1 { "" } else { "s" }),
                dim,
            )]));
            // While it streams as the newest entry, its latest line shows beneath.
            if newest
                && look.busy
                && let Some(l) = text.lines().rev().find(|l| !l.trim().is_empty())
            {
                out.push(
                    LogicalLine::new(vec![Span::styled(clean(l.trim()).into_owned(), dim)])
                        .gutter(vec![Span::raw("  ")], vec![Span::raw("  ")]),
                );
            }
        }
        Entry::Tool(card) => card_lines(card, look, picked, &mut out),
        Entry::Notice(text) => {
            for l in text.lines() {
                out.push(LogicalLine::new(vec![Span::styled(
                    clean(l).into_owned(),
                    theme.fg(Color::DarkGray),
                )]));
            }
        }
    }
    out.push(LogicalLine::default());
    out
}

/// Text from the model, a tool, a plugin or an MCP server with its terminal control
/// sequences removed or made visible (the sanitiser the CLI uses too).
fn clean(text: &str) -> std::borrow::Cow<'_, str> {
    podcode_protocol::sanitize_for_terminal(text)
}

fn card_lines(card: &ToolCard, look: Look, picked: bool, out: &mut Vec<LogicalLine>) {
    let theme = look.theme;
    let (mark, color) = match card.status {
        ToolStatus::Running => (SPINNER[(look.frame % 4) as usize], Color::Yellow),
        ToolStatus::Waiting => ("?", Color::Yellow),
        ToolStatus::Done => ("✓", Color::Green),
        ToolStatus::Failed => ("✗", Color::Red),
        ToolStatus::Denied => ("⊘", Color::Magenta),
        ToolStatus::Interrupted => ("■", Color::DarkGray),
        ToolStatus::TimedOut => ("⧗", Color::Yellow),
    };
    // The selected card (alt-↑/↓, a click) shows its name reversed.
    let name = if picked {
        Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED)
    } else {
        Style::default().add_modifier(Modifier::BOLD)
    };
    let mut head = vec![Span::styled(card.tool.clone(), name)];
    if !card.title.is_empty() {
        head.push(Span::raw(format!(" — {}", clean(&card.title))));
    }
    head.push(Span::styled(
        format!(" · {} · {}", card.status.label(), duration(card.elapsed_ms)),
        theme.fg(Color::DarkGray),
    ));
    out.push(LogicalLine::new(head).gutter(
        vec![Span::styled(format!("{mark} "), theme.fg(color))],
        vec![Span::raw("  ")],
    ));
    // A finished file change shows its diff; everything else its output.
    let diff = card
        .diff
        .as_deref()
        .filter(|d| card.status == ToolStatus::Done && !d.trim().is_empty());
    let output = podcode_protocol::shown_output(&card.tool, &card.output);
    let (body, preview): (Vec<&str>, usize) = match diff {
        Some(d) => (d.lines().collect(), DIFF_PREVIEW_LINES),
        None => (output.lines().collect(), PREVIEW_LINES),
    };
    let shown = if card.expanded { body.len() } else { preview };
    let style = match card.status {
        ToolStatus::Failed | ToolStatus::Denied => theme.fg(Color::Red),
        _ => theme.fg(Color::Gray),
    };
    let gutter = || vec![Span::styled("  │ ", theme.fg(Color::DarkGray))];
    let note = |text: String| {
        LogicalLine::new(vec![Span::styled(text, theme.fg(Color::DarkGray))])
            .gutter(gutter(), gutter())
    };
    for l in body.iter().take(shown) {
        let style = theme.diff_style(l).unwrap_or(style);
        // Wrapped at spaces like prose: output is mostly words and paths.
        out.push(
            LogicalLine::new(vec![Span::styled(clean(l).replace('\t', "    "), style)])
                .gutter(gutter(), gutter()),
        );
    }
    if body.len() > shown {
        out.push(note(format!(
            "… {} (ctrl-o or a click expands)",
            podcode_protocol::more_lines(body.len() - shown)
        )));
    }
    if card.attachments > 0 {
        out.push(note(format!("{} attachment(s)", card.attachments)));
    }
    if let Some(p) = &card.spill_path {
        out.push(note(format!("full output: {p}")));
    }
}
