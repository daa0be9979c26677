//! The `@path` completion popup: a small bordered list drawn just above the input box from
//! `Input::completion`, the selected row highlighted (reverse video under `no_color`),
//! never taller than the space above the input. Long paths are cut from the left so the
//! file name stays visible.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use crate::input::Input;
use crate::style::Theme;

/// The popup never gets narrower than this (when the screen allows).
const MIN_WIDTH: usize = 28;

pub fn draw_completion(frame: &mut Frame, input_area: Rect, state: &Input, theme: Theme) {
    let Some(c) = &state.completion else {
        return;
    };
    let notice = if c.indexing {
        Some("indexing…")
    } else if c.matches.is_empty() {
        Some("no matching files")
    } else {
        None
    };
    // The index finished after the last refresh and nobody polled yet: match now.
    let late: Option<Vec<String>> = match (&state.file_index, c.indexing) {
        (Some(index), true) => index
            .entries()
            .map(|e| super::best_matches(e, &c.query, super::MAX_MATCHES)),
        _ => None,
    };
    let matches = late.as_ref().unwrap_or(&c.matches);
    let notice = match (&late, notice) {
        (Some(l), _) if l.is_empty() => Some("no matching files"),
        (Some(_), _) => None,
        (None, n) => n,
    };
    let rows: Vec<&str> = match notice {
        Some(n) => vec![n],
        None => matches.iter().map(String::as_str).collect(),
    };
    let above = input_area.y.saturating_sub(frame.area().y);
    let height = (rows.len() as u16 + 2).min(above);
    if height < 3 || input_area.width < 4 {
        return;
    }
    let visible = usize::from(height - 2);
    let widest = rows.iter().map(|r| r.width()).max().unwrap_or(0);
    let width = (widest + 2)
        .max(MIN_WIDTH)
        .min(usize::from(input_area.width)) as u16;
    let area = Rect {
        x: input_area.x,
        y: input_area.y - height,
        width,
        height,
    };
    let text_width = usize::from(width - 2);
    // Scroll so the selected row is visible.
    let first = (c.selected + 1).saturating_sub(visible);
    let selected_style = crate::input::selected_style(theme);
    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .skip(first)
        .take(visible)
        .map(|(i, row)| {
            let shown = cut_left(row, text_width);
            let style = if notice.is_some() {
                theme.fg(Color::DarkGray)
            } else if i == c.selected {
                selected_style
            } else if row.ends_with('/') {
                theme.fg(Color::Blue)
            } else {
                Style::default()
            };
            Line::styled(format!("{shown:<text_width$}"), style)
        })
        .collect();
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.fg(Color::DarkGray))
        .title(" @ files (tab to attach) ");
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// `s` cut to `width` cells from the left, with a leading `…` when cut.
fn cut_left(s: &str, width: usize) -> String {
    if s.width() <= width {
        return s.to_string();
    }
    let mut kept: Vec<char> = Vec::new();
    let mut w = 1; // the ellipsis
    for ch in s.chars().rev() {
        let cw = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        if w + cw > width {
            break;
        }
        w += cw;
        kept.push(ch);
    }
    std::iter::once('…').chain(kept.into_iter().rev()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_paths_are_cut_from_the_left() {
        assert_eq!(cut_left("src/main.rs", 20), "src/main.rs");
        assert_eq!(cut_left("src/parser/lexer.rs", 10), "…/lexer.rs");
    }

    #[test]
    fn the_popup_says_indexing_until_the_index_is_ready() {
        use ratatui::Terminal;
        use ratatui::backend::TestBackend;
        let mut state = Input {
            file_index: Some(std::sync::Arc::new(super::super::FileIndex::default())),
            completion: Some(super::super::Completion {
                query: "ma".into(),
                indexing: true,
                ..Default::default()
            }),
            ..Default::default()
        };
        let draw = |state: &Input| {
            let mut terminal = Terminal::new(TestBackend::new(40, 10)).expect("terminal");
            terminal
                .draw(|f| draw_completion(f, Rect::new(0, 7, 40, 3), state, Theme::default()))
                .expect("draw");
            let buf = terminal.backend().buffer().clone();
            (0..7)
                .map(|y| (0..40).map(|x| buf[(x, y)].symbol()).collect::<String>())
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert!(draw(&state).contains("indexing…"));
        if let Some(index) = &state.file_index {
            index.fill(vec!["src/main.rs".into()], false);
        }
        // Drawn before anyone polls: the popup matches on the spot.
        assert!(draw(&state).contains("src/main.rs"));
        state.completion = None;
        assert!(!draw(&state).contains('┌'));
    }
}
