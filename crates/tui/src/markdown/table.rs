//! Markdown tables for the transcript: the renderer collects each cell's styled spans
//! (`TableBuilder`), and `lines` lays the rows out in columns as wide as their widest cell,
//! aligned as the table's delimiter row says, `│` between columns and a `─┼─` rule under
//! the header. Rows hard-wrap (`WrapMode::Chars`) when the table is wider than the screen,
//! so a row never re-flows into its neighbour's column.

use pulldown_cmark::Alignment;
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use crate::transcript_cache::{LogicalLine, WrapMode};

type Cell = Vec<Span<'static>>;

/// A table being read: its alignments and the rows so far.
#[derive(Default)]
pub(super) struct TableBuilder {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Cell>>,
    row: Vec<Cell>,
    /// Whether the first row is the header.
    head: bool,
}

impl TableBuilder {
    pub(super) fn new(aligns: Vec<Alignment>) -> Self {
        Self {
            aligns,
            ..Self::default()
        }
    }

    pub(super) fn cell(&mut self, spans: Cell) {
        self.row.push(spans);
    }

    /// Ends a row; `head` when it was the header row.
    pub(super) fn end_row(&mut self, head: bool) {
        self.head |= head;
        let row = std::mem::take(&mut self.row);
        self.rows.push(row);
    }

    /// The table as lines, each behind `gutter`; `dim` styles the column rules.
    pub(super) fn lines(self, gutter: &[Span<'static>], dim: Style) -> Vec<LogicalLine> {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let width = |cell: &Cell| cell.iter().map(Span::width).sum::<usize>();
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(width)
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = Vec::new();
        for (i, row) in self.rows.into_iter().enumerate() {
            let header = self.head && i == 0;
            let mut spans: Vec<Span<'static>> = Vec::new();
            for (c, w) in widths.iter().enumerate() {
                if c > 0 {
                    spans.push(Span::styled(" │ ", dim));
                }
                let cell = row.get(c).cloned().unwrap_or_default();
                let pad = w.saturating_sub(width(&cell));
                let (before, after) = match self.aligns.get(c) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                if before > 0 {
                    spans.push(Span::raw(" ".repeat(before)));
                }
                spans.extend(cell.into_iter().map(|s| {
                    if header {
                        let style = s.style.add_modifier(Modifier::BOLD);
                        Span::styled(s.content, style)
                    } else {
                        s
                    }
                }));
                // The last column needs no trailing blanks.
                if after > 0 && c + 1 < widths.len() {
                    spans.push(Span::raw(" ".repeat(after)));
                }
            }
            out.push(row_line(spans, gutter));
            if header {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                out.push(row_line(vec![Span::styled(rule.join("─┼─"), dim)], gutter));
            }
        }
        out
    }
}

fn row_line(spans: Vec<Span<'static>>, gutter: &[Span<'static>]) -> LogicalLine {
    LogicalLine::new(spans)
        .gutter(gutter.to_vec(), gutter.to_vec())
        .mode(WrapMode::Chars)
}
