//! The input box's text buffer: a multi-line string with a byte cursor that always sits on
//! a char boundary. `edit_key` applies one editing key (typing, deletion, cursor motion)
//! and tells the caller when a vertical motion ran past the first or last row, which the
//! key handler turns into history navigation. `paste` inserts bracketed-paste text.
//!
//! Drawing lives in `input/view.rs`: it soft-wraps the text to the box width and records
//! that width here (`wrap_width`, a `Cell` so drawing can stay `&self`), so that Up and
//! Down move between the rows the user actually sees.

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::view;

/// What `edit_key` did with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditOutcome {
    /// The key edited the text or moved the cursor.
    Handled,
    /// Not an editing key.
    Ignored,
    /// Up on the first row: the caller may show the previous history entry.
    PastTop,
    /// Down on the last row: the caller may show the next history entry.
    PastBottom,
}

/// The text being typed and the cursor, a byte offset on a char boundary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputBuffer {
    text: String,
    cursor: usize,
    /// The display column Up/Down aim for, kept across consecutive vertical moves.
    goal: Option<usize>,
    /// The text width of the box at the last draw (0 = not drawn yet: no wrapping).
    wrap_width: Cell<u16>,
    /// The first visible row at the last draw, so the view scrolls only when it must.
    pub(super) scroll_top: Cell<usize>,
}

/// Char classes for word motions.
#[derive(PartialEq, Eq, Clone, Copy)]
enum Class {
    Space,
    Word,
    Punct,
}

fn class(c: char) -> Class {
    if c.is_whitespace() {
        Class::Space
    } else if c.is_alphanumeric() || c == '_' {
        Class::Word
    } else {
        Class::Punct
    }
}

impl InputBuffer {
    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cursor's byte offset.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Whether there is no text.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replaces the text; the cursor goes to the end.
    pub fn set(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
        self.goal = None;
    }

    /// Removes all text.
    pub fn clear(&mut self) {
        self.set("");
    }

    /// Moves the cursor to `pos`, clamped to the text and to a char boundary (backwards).
    pub fn set_cursor(&mut self, pos: usize) {
        let mut pos = pos.min(self.text.len());
        while !self.text.is_char_boundary(pos) {
            pos -= 1;
        }
        self.cursor = pos;
        self.goal = None;
    }

    /// Inserts `s` at the cursor, leaving the cursor after it.
    pub fn insert_str(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
        self.goal = None;
    }

    /// Inserts `c` at the cursor, leaving the cursor after it.
    pub fn insert_char(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
        self.goal = None;
    }

    /// Inserts pasted text at the cursor, with `\r\n` and `\r` line endings made `\n`.
    pub fn paste(&mut self, s: &str) {
        let normalised = s.replace("\r\n", "\n").replace('\r', "\n");
        self.insert_str(&normalised);
    }

    /// Replaces the bytes `range` with `with`, leaving the cursor after it.
    pub fn replace_range(&mut self, range: std::ops::Range<usize>, with: &str) {
        self.text.replace_range(range.clone(), with);
        self.cursor = range.start + with.len();
        self.goal = None;
    }

    /// The wrap width recorded by the last draw (0 before the first one).
    pub fn wrap_width(&self) -> u16 {
        self.wrap_width.get()
    }

    /// Records the width the text is wrapped to; `draw_input` calls it.
    pub fn set_wrap_width(&self, width: u16) {
        self.wrap_width.set(width);
    }

    /// Applies an editing key (arrows, word moves, deletes, characters) and says whether it
    /// was one.
    pub fn edit_key(&mut self, key: KeyEvent) -> EditOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let word = ctrl || alt;
        let vertical = matches!(key.code, KeyCode::Up | KeyCode::Down)
            || (ctrl && !alt && matches!(key.code, KeyCode::Char('p' | 'n')));
        if !vertical {
            self.goal = None;
        }
        match key.code {
            KeyCode::Left if word => self.cursor = self.word_left(),
            KeyCode::Right if word => self.cursor = self.word_right(),
            KeyCode::Left => self.cursor = self.prev_boundary(self.cursor),
            KeyCode::Right => self.cursor = self.next_boundary(self.cursor),
            KeyCode::Home => self.cursor = self.line_start(),
            KeyCode::End => self.cursor = self.line_end(),
            KeyCode::Up => return self.vertical(true),
            KeyCode::Down => return self.vertical(false),
            KeyCode::Backspace if word => self.delete_to(self.word_left()),
            KeyCode::Backspace => self.delete_to(self.prev_boundary(self.cursor)),
            KeyCode::Delete if word => self.delete_to(self.word_right()),
            KeyCode::Delete => self.delete_to(self.next_boundary(self.cursor)),
            KeyCode::Char(c) if ctrl && !alt => match c {
                'a' => self.cursor = self.line_start(),
                'e' => self.cursor = self.line_end(),
                'b' => self.cursor = self.prev_boundary(self.cursor),
                'f' => self.cursor = self.next_boundary(self.cursor),
                'p' => return self.vertical(true),
                'n' => return self.vertical(false),
                'h' => self.delete_to(self.prev_boundary(self.cursor)),
                'w' => self.delete_to(self.word_left()),
                'u' => self.delete_to(self.line_start()),
                'k' => self.delete_to(self.line_end()),
                _ => return EditOutcome::Ignored,
            },
            KeyCode::Char(c) if alt && !ctrl => match c {
                'b' => self.cursor = self.word_left(),
                'f' => self.cursor = self.word_right(),
                'd' => self.delete_to(self.word_right()),
                _ => return EditOutcome::Ignored,
            },
            // Plain, shifted, or AltGr (reported as Ctrl+Alt on some platforms).
            KeyCode::Char(c) => self.insert_char(c),
            _ => return EditOutcome::Ignored,
        }
        EditOutcome::Handled
    }

    /// Deletes between the cursor and `pos` (either side), leaving the cursor at the start.
    fn delete_to(&mut self, pos: usize) {
        let (a, b) = if pos < self.cursor {
            (pos, self.cursor)
        } else {
            (self.cursor, pos)
        };
        self.text.replace_range(a..b, "");
        self.cursor = a;
    }

    fn prev_boundary(&self, pos: usize) -> usize {
        self.text[..pos]
            .chars()
            .next_back()
            .map_or(pos, |c| pos - c.len_utf8())
    }

    fn next_boundary(&self, pos: usize) -> usize {
        self.text[pos..]
            .chars()
            .next()
            .map_or(pos, |c| pos + c.len_utf8())
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    /// Start of the word before the cursor: skips whitespace, then one run of a class.
    fn word_left(&self) -> usize {
        let mut pos = self.cursor;
        let mut chars = self.text[..self.cursor].char_indices().rev().peekable();
        while let Some((i, _)) = chars.next_if(|&(_, c)| class(c) == Class::Space) {
            pos = i;
        }
        if let Some(&(_, first)) = chars.peek() {
            let k = class(first);
            while let Some((i, _)) = chars.next_if(|&(_, c)| class(c) == k) {
                pos = i;
            }
        }
        pos
    }

    /// End of the word after the cursor: skips whitespace, then one run of a class.
    fn word_right(&self) -> usize {
        let rest = &self.text[self.cursor..];
        let mut chars = rest.char_indices().peekable();
        while chars.next_if(|&(_, c)| class(c) == Class::Space).is_some() {}
        if let Some(&(_, first)) = chars.peek() {
            let k = class(first);
            while chars.next_if(|&(_, c)| class(c) == k).is_some() {}
        }
        chars
            .peek()
            .map_or(self.text.len(), |&(i, _)| self.cursor + i)
    }

    /// Up/Down between visible rows, keeping the display column.
    fn vertical(&mut self, up: bool) -> EditOutcome {
        let rows = view::layout(&self.text, usize::from(self.wrap_width.get()));
        let (row, col) = view::cursor_cell(&self.text, &rows, self.cursor);
        let target = if up {
            if row == 0 {
                return EditOutcome::PastTop;
            }
            row - 1
        } else {
            if row + 1 >= rows.len() {
                return EditOutcome::PastBottom;
            }
            row + 1
        };
        let goal = *self.goal.get_or_insert(col);
        self.cursor = view::pos_at_column(&self.text, &rows, target, goal);
        EditOutcome::Handled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }
    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }
    fn with(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }
    /// A buffer from text with `|` marking the cursor.
    fn buf(marked: &str) -> InputBuffer {
        let pos = marked.find('|').expect("cursor mark");
        let mut b = InputBuffer::default();
        b.set(&marked.replacen('|', "", 1));
        b.set_cursor(pos);
        b
    }
    fn shown(b: &InputBuffer) -> String {
        let mut s = b.text().to_string();
        s.insert(b.cursor(), '|');
        s
    }
    fn apply(marked: &str, key: KeyEvent) -> (String, EditOutcome) {
        let mut b = buf(marked);
        let out = b.edit_key(key);
        (shown(&b), out)
    }
    fn after(marked: &str, key: KeyEvent) -> String {
        apply(marked, key).0
    }

    #[test]
    fn typing_inserts_at_the_cursor() {
        assert_eq!(after("ab|c", k(KeyCode::Char('x'))), "abx|c");
        let shifted = with(KeyCode::Char('X'), KeyModifiers::SHIFT);
        assert_eq!(after("|", shifted), "X|");
        let altgr = with(
            KeyCode::Char('@'),
            KeyModifiers::CONTROL | KeyModifiers::ALT,
        );
        assert_eq!(after("a|", altgr), "a@|");
        assert_eq!(apply("a|", ctrl('z')).1, EditOutcome::Ignored);
        assert_eq!(apply("a|", k(KeyCode::Tab)).1, EditOutcome::Ignored);
    }

    #[test]
    fn left_and_right_move_by_whole_chars() {
        assert_eq!(after("aé|b", k(KeyCode::Left)), "a|éb");
        assert_eq!(after("a|界b", k(KeyCode::Right)), "a界|b");
        assert_eq!(after("|ab", k(KeyCode::Left)), "|ab");
        assert_eq!(after("ab|", k(KeyCode::Right)), "ab|");
        assert_eq!(after("a|🦀", k(KeyCode::Right)), "a🦀|");
        assert_eq!(after("ab|", ctrl('b')), "a|b");
        assert_eq!(after("|ab", ctrl('f')), "a|b");
    }

    #[test]
    fn word_motions() {
        let cl = with(KeyCode::Left, KeyModifiers::CONTROL);
        let cr = with(KeyCode::Right, KeyModifiers::CONTROL);
        let al = with(KeyCode::Left, KeyModifiers::ALT);
        assert_eq!(after("foo bar|", cl), "foo |bar");
        assert_eq!(after("foo bar  |", cl), "foo |bar  ");
        assert_eq!(after("foo ba|r", al), "foo |bar");
        assert_eq!(after("foo.bar|", cl), "foo.|bar");
        assert_eq!(after("  |x", cl), "|  x");
        assert_eq!(after("|foo bar", cr), "foo| bar");
        assert_eq!(after("foo| bar", cr), "foo bar|");
        assert_eq!(after("a|  ", cr), "a  |");
        assert_eq!(after("one\ntwo|", cl), "one\n|two");
        let ab = with(KeyCode::Char('b'), KeyModifiers::ALT);
        let af = with(KeyCode::Char('f'), KeyModifiers::ALT);
        assert_eq!(after("x yz|", ab), "x |yz");
        assert_eq!(after("|x yz", af), "x| yz");
    }

    #[test]
    fn home_end_and_ctrl_a_e_stay_on_the_line() {
        assert_eq!(after("a\nbc|d\ne", k(KeyCode::Home)), "a\n|bcd\ne");
        assert_eq!(after("a\nb|cd\ne", k(KeyCode::End)), "a\nbcd|\ne");
        assert_eq!(after("ab|c", ctrl('a')), "|abc");
        assert_eq!(after("a|bc", ctrl('e')), "abc|");
    }

    #[test]
    fn up_and_down_keep_the_column() {
        let (s, out) = apply("abc\nde|f", k(KeyCode::Up));
        assert_eq!((s.as_str(), out), ("ab|c\ndef", EditOutcome::Handled));
        // A short line in between clamps, and the goal column survives it.
        let mut b = buf("abcd\nx\nabc|d");
        b.edit_key(k(KeyCode::Up));
        assert_eq!(shown(&b), "abcd\nx|\nabcd");
        b.edit_key(k(KeyCode::Up));
        assert_eq!(shown(&b), "abc|d\nx\nabcd");
        b.edit_key(ctrl('n'));
        b.edit_key(ctrl('n'));
        assert_eq!(shown(&b), "abcd\nx\nabc|d");
        // Columns are display columns: a wide char counts two.
        assert_eq!(after("界x\nab|c", k(KeyCode::Up)), "界|x\nabc");
        assert_eq!(after("ab\n界|x", k(KeyCode::Up)), "ab|\n界x");
    }

    #[test]
    fn vertical_motion_past_the_ends_reports_it() {
        assert_eq!(apply("a|b\nc", k(KeyCode::Up)).1, EditOutcome::PastTop);
        assert_eq!(apply("a\nc|", k(KeyCode::Down)).1, EditOutcome::PastBottom);
        assert_eq!(apply("|", k(KeyCode::Up)).1, EditOutcome::PastTop);
        assert_eq!(apply("a|\nc", k(KeyCode::Down)).1, EditOutcome::Handled);
    }

    #[test]
    fn vertical_motion_follows_wrapped_rows() {
        let mut b = buf("abcdefgh|");
        b.set_wrap_width(5);
        assert_eq!(b.edit_key(k(KeyCode::Up)), EditOutcome::Handled);
        assert_eq!(shown(&b), "abc|defgh");
        assert_eq!(b.edit_key(k(KeyCode::Up)), EditOutcome::PastTop);
        assert_eq!(b.edit_key(k(KeyCode::Down)), EditOutcome::Handled);
        assert_eq!(shown(&b), "abcdefgh|");
    }

    #[test]
    fn deletions() {
        assert_eq!(after("a界|b", k(KeyCode::Backspace)), "a|b");
        assert_eq!(after("|ab", k(KeyCode::Backspace)), "|ab");
        assert_eq!(after("a|🦀b", k(KeyCode::Delete)), "a|b");
        assert_eq!(after("ab|", k(KeyCode::Delete)), "ab|");
        assert_eq!(after("ab|", ctrl('h')), "a|");
        assert_eq!(after("foo bar|", ctrl('w')), "foo |");
        let ab = with(KeyCode::Backspace, KeyModifiers::ALT);
        assert_eq!(after("foo bar |", ab), "foo |");
        let ad = with(KeyCode::Char('d'), KeyModifiers::ALT);
        assert_eq!(after("|foo bar", ad), "| bar");
        assert_eq!(after("x\nfoo b|ar", ctrl('u')), "x\n|ar");
        assert_eq!(after("fo|o bar\ny", ctrl('k')), "fo|\ny");
        assert_eq!(after("foo|\ny", ctrl('k')), "foo|\ny");
    }

    #[test]
    fn paste_normalises_line_endings() {
        let mut b = buf("<|>");
        b.paste("a\r\nb\rc\nd");
        assert_eq!(shown(&b), "<a\nb\nc\nd|>");
    }

    #[test]
    fn set_cursor_clamps_to_a_char_boundary() {
        let mut b = buf("界|");
        b.set_cursor(2);
        assert_eq!(b.cursor(), 0);
        b.set_cursor(99);
        assert_eq!(b.cursor(), 3);
    }
}
