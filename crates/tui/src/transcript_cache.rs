//! The transcript's render cache, and the wrapping it caches. `entry_lines` (in
//! `transcript/view.rs`) turns an entry into width-independent `LogicalLine`s (Markdown, cards…); `wrap` cuts them into
//! screen rows for one width. `TranscriptCache` keeps both per entry index, keyed by a cheap
//! fingerprint of what the entry's rendering depends on: a changed fingerprint re-renders the
//! entry, a changed width only re-wraps it, and `Transcript::draw` asks for entries from the
//! newest backwards until the screen is full, so a frame costs the visible tail, not the
//! whole session. Entries that animate (running tool cards) pass no fingerprint and are
//! rebuilt every frame.

use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// How a logical line breaks when it is wider than the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum WrapMode {
    /// At spaces, mid-word only for words longer than a row.
    #[default]
    Words,
    /// At any character (code, tool output).
    Chars,
    /// A horizontal rule filling the row.
    Rule,
}

/// One line of an entry before wrapping: a gutter for its first row, one for the rows it
/// wraps onto, and its content.
#[derive(Debug, Clone, Default)]
pub(crate) struct LogicalLine {
    pub prefix: Vec<Span<'static>>,
    pub cont: Vec<Span<'static>>,
    pub spans: Vec<Span<'static>>,
    pub mode: WrapMode,
}

impl LogicalLine {
    /// A line of `spans` with no gutter, wrapped at words.
    pub fn new(spans: Vec<Span<'static>>) -> Self {
        Self {
            spans,
            ..Default::default()
        }
    }

    pub fn gutter(mut self, prefix: Vec<Span<'static>>, cont: Vec<Span<'static>>) -> Self {
        self.prefix = prefix;
        self.cont = cont;
        self
    }

    pub fn mode(mut self, mode: WrapMode) -> Self {
        self.mode = mode;
        self
    }
}

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(Span::width).sum()
}

fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// Appends `text` in `style` to `row`, merging with the last span when the style matches.
fn push(row: &mut Vec<Span<'static>>, text: &str, style: ratatui::style::Style) {
    if let Some(last) = row.last_mut()
        && last.style == style
    {
        last.content.to_mut().push_str(text);
        return;
    }
    row.push(Span::styled(text.to_string(), style));
}

/// A row being filled: its spans and the columns used after the gutter.
struct Rows<'a> {
    line: &'a LogicalLine,
    avail: usize,
    out: Vec<Line<'static>>,
    row: Vec<Span<'static>>,
    used: usize,
}

impl Rows<'_> {
    fn break_row(&mut self) {
        let row = std::mem::take(&mut self.row);
        self.out.push(Line::from(row));
        self.row = self.line.cont.clone();
        self.used = 0;
    }

    /// Places `text` character by character, breaking rows where it does not fit.
    fn put_chars(&mut self, text: &str, style: ratatui::style::Style) {
        let mut chunk = String::new();
        for ch in text.chars() {
            let w = char_width(ch);
            if self.used + w > self.avail && self.used > 0 {
                if !chunk.is_empty() {
                    push(&mut self.row, &std::mem::take(&mut chunk), style);
                }
                self.break_row();
            }
            chunk.push(ch);
            self.used += w;
        }
        if !chunk.is_empty() {
            push(&mut self.row, &chunk, style);
        }
    }
}

/// The screen rows of `line` at `width` columns.
pub(crate) fn wrap(line: &LogicalLine, width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let gutter = spans_width(&line.prefix).max(spans_width(&line.cont));
    // A gutter wider than the screen still leaves one column of content.
    let avail = width.saturating_sub(gutter).max(1);
    if line.mode == WrapMode::Rule {
        let mut row = line.prefix.clone();
        let style = line.spans.first().map(|s| s.style).unwrap_or_default();
        row.push(Span::styled("─".repeat(avail.min(width)), style));
        return vec![Line::from(row)];
    }
    if spans_width(&line.spans) <= avail {
        let mut row = line.prefix.clone();
        row.extend(line.spans.iter().cloned());
        return vec![Line::from(row)];
    }
    let mut rows = Rows {
        line,
        avail,
        out: Vec::new(),
        row: line.prefix.clone(),
        used: 0,
    };
    if line.mode == WrapMode::Chars {
        for span in &line.spans {
            rows.put_chars(&span.content, span.style);
        }
    } else {
        wrap_words(&mut rows);
    }
    let last = std::mem::take(&mut rows.row);
    rows.out.push(Line::from(last));
    rows.out
}

/// A word or a run of spaces, as styled pieces (a word may change style midway).
struct Token {
    pieces: Vec<(String, ratatui::style::Style)>,
    width: usize,
    space: bool,
}

fn tokens(spans: &[Span<'static>]) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    for span in spans {
        for ch in span.content.chars() {
            let space = ch == ' ';
            let start_new = out.last().is_none_or(|t| t.space != space);
            if start_new {
                out.push(Token {
                    pieces: Vec::new(),
                    width: 0,
                    space,
                });
            }
            if let Some(t) = out.last_mut() {
                match t.pieces.last_mut() {
                    Some((s, style)) if *style == span.style => s.push(ch),
                    _ => t.pieces.push((ch.to_string(), span.style)),
                }
                t.width += char_width(ch);
            }
        }
    }
    out
}

fn wrap_words(rows: &mut Rows<'_>) {
    let toks = tokens(&rows.line.spans);
    let mut pending_space: Option<&Token> = None;
    for tok in &toks {
        if tok.space {
            pending_space = Some(tok);
            continue;
        }
        let space_w = pending_space.map_or(0, |s| s.width);
        if rows.used > 0 && rows.used + space_w + tok.width > rows.avail {
            rows.break_row();
        } else if let Some(space) = pending_space
            && rows.used + space_w <= rows.avail
        {
            // Leading spaces of the first row (indentation) are kept as well.
            for (s, style) in &space.pieces {
                push(&mut rows.row, s, *style);
            }
            rows.used += space_w;
        }
        pending_space = None;
        for (s, style) in &tok.pieces {
            rows.put_chars(s, *style);
        }
    }
}

/// One entry's cached rendering.
#[derive(Debug, Clone, Default)]
struct Slot {
    /// `None` for an entry that animates, which is never reused.
    key: Option<u64>,
    logical: Vec<LogicalLine>,
    width: usize,
    rows: Vec<Line<'static>>,
}

/// What the last draw showed: its area, how it looked, and which entry each row group was,
/// top to bottom (`(entry index, rows)`); a click and a jump to a card read it.
#[derive(Debug, Clone, Default)]
pub(crate) struct LastView {
    pub area: ratatui::layout::Rect,
    pub no_color: bool,
    pub busy: bool,
    pub rows: Vec<(usize, usize)>,
}

/// Per-entry rendered and wrapped lines; see the module docs.
#[derive(Clone, Default)]
pub struct TranscriptCache {
    slots: Vec<Slot>,
    /// The last draw, once there was one.
    pub(crate) last_view: Option<LastView>,
    /// The largest useful scroll offset, known once a draw scrolled past the top.
    max_scroll: Option<u16>,
    /// Entries rendered (not reused) since the cache was made, for tests and benches.
    renders: u64,
}

impl std::fmt::Debug for TranscriptCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TranscriptCache")
            .field("slots", &self.slots.len())
            .field("renders", &self.renders)
            .finish()
    }
}

impl TranscriptCache {
    /// The scroll offset that shows the first screenful, when the last draw went past it.
    pub fn max_scroll(&self) -> Option<u16> {
        self.max_scroll
    }

    pub(crate) fn set_max_scroll(&mut self, max: Option<u16>) {
        self.max_scroll = max;
    }

    /// Forgets entries at index `len` and above (the transcript shrank or was replaced).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.slots.truncate(len);
    }

    /// How many entries were rendered rather than reused so far.
    pub fn renders(&self) -> u64 {
        self.renders
    }

    /// The rows of entry `index` at `width`: reused when `key` matches the cached one,
    /// re-wrapped when only the width changed, rendered with `render` otherwise.
    pub(crate) fn rows(
        &mut self,
        index: usize,
        key: Option<u64>,
        width: usize,
        render: impl FnOnce() -> Vec<LogicalLine>,
    ) -> &[Line<'static>] {
        if self.slots.len() <= index {
            self.slots.resize_with(index + 1, Slot::default);
        }
        let slot = &mut self.slots[index];
        let fresh = key.is_some() && slot.key == key;
        if !fresh {
            slot.logical = render();
            slot.key = key;
            slot.width = 0;
            self.renders += 1;
        }
        if !fresh || slot.width != width {
            slot.rows = slot.logical.iter().flat_map(|l| wrap(l, width)).collect();
            slot.width = width;
        }
        &slot.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Modifier, Style};

    fn rows(line: &LogicalLine, width: usize) -> Vec<String> {
        wrap(line, width)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn prose_wraps_at_spaces_with_a_hanging_gutter() {
        let line = LogicalLine::new(vec![Span::raw("the quick brown fox jumps over")])
            .gutter(vec![Span::raw("• ")], vec![Span::raw("  ")]);
        assert_eq!(
            rows(&line, 12),
            ["• the quick", "  brown fox", "  jumps over"]
        );
    }

    #[test]
    fn long_words_and_code_break_mid_word() {
        let word = LogicalLine::new(vec![Span::raw("a abcdefghijkl")]);
        assert_eq!(rows(&word, 5), ["a", "abcde", "fghij", "kl"]);
        let code = LogicalLine::new(vec![Span::raw("let x = 1;")])
            .gutter(vec![Span::raw("| ")], vec![Span::raw("| ")])
            .mode(WrapMode::Chars);
        assert_eq!(rows(&code, 6), ["| let ", "| x = ", "| 1;"]);
    }

    #[test]
    fn styles_survive_wrapping() {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let line = LogicalLine::new(vec![Span::raw("plain "), Span::styled("bold words", bold)]);
        let out = wrap(&line, 8);
        assert_eq!(out.len(), 3);
        assert_eq!(out[1].spans[0].content, "bold");
        assert_eq!(out[2].spans[0].content, "words");
        assert_eq!(out[2].spans[0].style, bold);
    }

    #[test]
    fn wide_characters_count_two_columns() {
        let line = LogicalLine::new(vec![Span::raw("日本語のテキスト")]).mode(WrapMode::Chars);
        assert_eq!(rows(&line, 6), ["日本語", "のテキ", "スト"]);
    }

    #[test]
    fn rules_fill_the_width() {
        let rule = LogicalLine::new(vec![]).mode(WrapMode::Rule);
        assert_eq!(rows(&rule, 4), ["────"]);
    }

    #[test]
    fn the_cache_reuses_rewraps_and_rerenders() {
        let mut cache = TranscriptCache::default();
        let make = || vec![LogicalLine::new(vec![Span::raw("one two three")])];
        assert_eq!(cache.rows(0, Some(1), 80, make).len(), 1);
        assert_eq!(cache.rows(0, Some(1), 80, make).len(), 1);
        assert_eq!(cache.renders(), 1);
        // A new width re-wraps without rendering again.
        assert_eq!(cache.rows(0, Some(1), 5, make).len(), 3);
        assert_eq!(cache.renders(), 1);
        cache.rows(0, Some(2), 5, make);
        cache.rows(0, None, 5, make);
        cache.rows(0, None, 5, make);
        assert_eq!(cache.renders(), 4);
    }
}
