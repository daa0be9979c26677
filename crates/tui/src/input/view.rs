//! Drawing the input box. The text is soft-wrapped into rows (`layout`: at the last space
//! that fits, else mid-word; widths from `unicode-width`, so CJK and emoji take two cells)
//! and the rows around the cursor are drawn cell by cell, so the terminal cursor lands on
//! exactly the cell the buffer's cursor is on. The same layout drives Up/Down in
//! `InputBuffer::edit_key`, through the wrap width recorded at each draw.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;
use ratatui::widgets::{Block, Borders};
use unicode_width::UnicodeWidthChar;

use super::InputBuffer;
use crate::style::Theme;

/// The most rows the input box takes, borders included.
const MAX_HEIGHT: usize = 8;

/// One screen row of the input: bytes `start..end` of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Row {
    pub start: usize,
    pub end: usize,
    /// The next row continues this line (a soft wrap), so a cursor at `end` is drawn there.
    pub cont: bool,
}

/// Display width of one char: tabs take 4 cells, other control chars none.
pub(crate) fn char_width(c: char) -> usize {
    if c == '\t' {
        4
    } else if c.is_control() {
        0
    } else {
        c.width().unwrap_or(0)
    }
}

fn str_width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// Splits `text` into rows at most `width` cells wide (no wrapping when `width` < 2).
/// A line that exactly fills its last row gets an empty row after it for the cursor.
pub(crate) fn layout(text: &str, width: usize) -> Vec<Row> {
    let width = if width < 2 { 0 } else { width };
    let mut rows = Vec::new();
    let mut base = 0;
    for line in text.split('\n') {
        let end = base + line.len();
        let (mut start, mut w, mut space_end) = (base, 0usize, None::<usize>);
        for (off, c) in line.char_indices() {
            let i = base + off;
            let cw = char_width(c);
            if width > 0 && w + cw > width && i > start {
                let word_break = space_end
                    .filter(|&b| c != ' ' && b > start && str_width(&text[b..i]) + cw <= width);
                let brk = word_break.unwrap_or(i);
                rows.push(Row {
                    start,
                    end: brk,
                    cont: true,
                });
                w = str_width(&text[brk..i]);
                start = brk;
                space_end = None;
            }
            w += cw;
            if c == ' ' {
                space_end = Some(i + 1);
            }
        }
        let full = width > 0 && w >= width;
        rows.push(Row {
            start,
            end,
            cont: full,
        });
        if full {
            rows.push(Row {
                start: end,
                end,
                cont: false,
            });
        }
        base = end + 1;
    }
    rows
}

/// The (row, display column) of byte `pos`.
pub(crate) fn cursor_cell(text: &str, rows: &[Row], pos: usize) -> (usize, usize) {
    let row = rows
        .iter()
        .position(|r| r.start <= pos && (pos < r.end || (pos == r.end && !r.cont)))
        .unwrap_or(rows.len().saturating_sub(1));
    let col = rows
        .get(row)
        .map_or(0, |r| str_width(&text[r.start..pos.max(r.start)]));
    (row, col)
}

/// The byte position in row `row` nearest to display column `goal` without passing it.
pub(crate) fn pos_at_column(text: &str, rows: &[Row], row: usize, goal: usize) -> usize {
    let Some(r) = rows.get(row) else {
        return text.len();
    };
    let (mut pos, mut w) = (r.start, 0);
    for (i, c) in text[r.start..r.end].char_indices() {
        let cw = char_width(c);
        if w + cw > goal {
            break;
        }
        w += cw;
        pos = r.start + i + c.len_utf8();
    }
    if r.cont && pos == r.end {
        // The end of a wrapped row is drawn on the next row: stay on the last char.
        pos = text[..pos]
            .chars()
            .next_back()
            .map_or(pos, |c| pos - c.len_utf8());
    }
    pos
}

/// Rows the input box needs (borders included) when it is `width` columns wide.
pub fn input_height_for(input: &InputBuffer, width: u16) -> u16 {
    let rows = layout(input.text(), usize::from(width.saturating_sub(2)));
    (rows.len().max(1) + 2).min(MAX_HEIGHT) as u16
}

/// Draws the box with `input` in it; `busy` (a turn runs) changes the title, and the
/// terminal cursor is placed only when `show_cursor` (no modal has the keyboard).
pub fn draw_input(
    frame: &mut Frame,
    area: Rect,
    input: &InputBuffer,
    theme: Theme,
    busy: bool,
    show_cursor: bool,
) {
    // The longest title that fits: a title cut mid-phrase reads as a mistake.
    let titles: &[&str] = if busy {
        &[" working… (esc to abort) ", " working… "]
    } else {
        &[
            " message (enter to send, alt-enter for a new line) ",
            " message (enter sends) ",
            " message ",
        ]
    };
    let room = area.width.saturating_sub(2) as usize;
    let title = titles
        .iter()
        .find(|t| t.chars().count() <= room)
        .copied()
        .unwrap_or("");
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.fg(Color::DarkGray))
        .title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    input.set_wrap_width(inner.width);
    let text = input.text();
    let rows = layout(text, usize::from(inner.width));
    let (row, col) = cursor_cell(text, &rows, input.cursor());
    let height = usize::from(inner.height);
    let top = input
        .scroll_top
        .get()
        .min(row)
        .max((row + 1).saturating_sub(height))
        .min(rows.len().saturating_sub(height));
    input.scroll_top.set(top);
    let buf = frame.buffer_mut();
    for (y, r) in rows.iter().skip(top).take(height).enumerate() {
        draw_row(buf, inner, inner.y + y as u16, &text[r.start..r.end]);
    }
    if show_cursor {
        let x = (col as u16).min(inner.width - 1);
        frame.set_cursor_position((inner.x + x, inner.y + (row - top) as u16));
    }
}

/// Writes one row's chars into their cells; zero-width chars join the previous cell.
fn draw_row(buf: &mut Buffer, inner: Rect, y: u16, s: &str) {
    let (mut x, mut last) = (0usize, None::<u16>);
    for c in s.chars() {
        let cw = char_width(c);
        if cw == 0 {
            if let Some(cell) = last.and_then(|lx| buf.cell_mut((lx, y)))
                && !c.is_control()
            {
                let joined = format!("{}{c}", cell.symbol());
                cell.set_symbol(&joined);
            }
            continue;
        }
        if x + cw > usize::from(inner.width) {
            break;
        }
        let cx = inner.x + x as u16;
        for i in 0..cw as u16 {
            if let Some(cell) = buf.cell_mut((cx + i, y)) {
                if c == '\t' {
                    cell.set_symbol(" ");
                } else if i == 0 {
                    cell.set_char(c);
                } else {
                    cell.reset();
                }
            }
        }
        last = Some(cx);
        x += cw;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::layout::Position;

    fn rows_of(text: &str, width: usize) -> Vec<&str> {
        layout(text, width)
            .iter()
            .map(|r| &text[r.start..r.end])
            .collect()
    }

    #[test]
    fn layout_wraps_at_spaces_then_mid_word() {
        assert_eq!(rows_of("hello world", 8), ["hello ", "world"]);
        assert_eq!(rows_of("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(rows_of("a\n\nb", 4), ["a", "", "b"]);
        assert_eq!(rows_of("界界界", 5), ["界界", "界"]);
        // Exactly full: an empty row follows for the cursor.
        assert_eq!(rows_of("abcd", 4), ["abcd", ""]);
        assert_eq!(rows_of("abcdef", 0), ["abcdef"]);
    }

    #[test]
    fn cursor_cells_follow_wraps_and_wide_chars() {
        let text = "ab界cd";
        let rows = layout(text, 4);
        assert_eq!(rows_of(text, 4), ["ab界", "cd"]);
        assert_eq!(cursor_cell(text, &rows, 2), (0, 2));
        // The end of a wrapped row is the start of the next.
        assert_eq!(cursor_cell(text, &rows, 5), (1, 0));
        assert_eq!(cursor_cell(text, &rows, text.len()), (1, 2));
        assert_eq!(pos_at_column(text, &rows, 0, 3), 2);
        assert_eq!(pos_at_column(text, &rows, 0, 9), 2);
    }

    fn draw(f: &mut Frame, input: &InputBuffer) {
        draw_input(f, f.area(), input, Theme::default(), false, true);
    }

    fn cursor_after_draw(text: &str, cursor: usize, w: u16, h: u16) -> Position {
        let mut input = InputBuffer::default();
        input.set(text);
        input.set_cursor(cursor);
        let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("terminal");
        terminal.draw(|f| draw(f, &input)).expect("draw");
        terminal.get_cursor_position().expect("cursor")
    }

    #[test]
    fn terminal_cursor_lands_on_the_cursor_cell() {
        assert_eq!(cursor_after_draw("", 0, 20, 3), Position::new(1, 1));
        assert_eq!(cursor_after_draw("abc", 3, 20, 3), Position::new(4, 1));
        assert_eq!(cursor_after_draw("a\nbc", 4, 20, 4), Position::new(3, 2));
        // Wide chars: 界 and 🦀 take two cells each.
        assert_eq!(cursor_after_draw("界🦀x", 7, 20, 3), Position::new(5, 1));
        // Wrapping at an inner width of 4: "abcd" fills a row, the cursor goes below.
        assert_eq!(cursor_after_draw("abcd", 4, 6, 4), Position::new(1, 2));
        assert_eq!(cursor_after_draw("abcdef", 5, 6, 4), Position::new(2, 2));
        assert_eq!(cursor_after_draw("ab界界", 8, 6, 5), Position::new(3, 2));
    }

    #[test]
    fn tall_text_shows_the_rows_around_the_cursor() {
        let text = (0..20)
            .map(|i| format!("l{i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut input = InputBuffer::default();
        input.set(&text);
        let mut terminal = Terminal::new(TestBackend::new(10, 8)).expect("terminal");
        terminal.draw(|f| draw(f, &input)).expect("draw");
        assert_eq!(
            terminal.get_cursor_position().expect("cursor"),
            Position::new(4, 6)
        );
        let buf = terminal.backend().buffer();
        assert_eq!(buf[(1, 6)].symbol(), "l");
        assert_eq!(buf[(2, 6)].symbol(), "1");
        assert_eq!(buf[(3, 6)].symbol(), "9");
        // Moving to the top scrolls the view up to it.
        input.set_cursor(0);
        terminal.draw(|f| draw(f, &input)).expect("draw");
        assert_eq!(
            terminal.get_cursor_position().expect("cursor"),
            Position::new(1, 1)
        );
        assert_eq!(input_height_for(&input, 20), 8);
    }

    #[test]
    fn height_counts_wrapped_rows() {
        let mut input = InputBuffer::default();
        input.set("abcdefg");
        assert_eq!(input_height_for(&input, 6), 4);
        assert_eq!(input_height_for(&input, 80), 3);
    }
}
