//! Drawing helpers every component shares, and no state: the colour `Theme` (`NO_COLOR`
//! turns colours off), the colours of unified-diff lines, hard wrapping for bordered panes,
//! and durations as tool cards show them. Components receive a `Theme` from `render::draw`
//! instead of reading the whole `AppState`.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

/// How things are coloured: every colour goes through `fg`, so `NO_COLOR` is one switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Theme {
    /// Draw without colours (`NO_COLOR`).
    pub no_color: bool,
}

impl Theme {
    /// A colour, or nothing under `NO_COLOR`.
    pub fn fg(self, color: Color) -> Style {
        if self.no_color {
            Style::default()
        } else {
            Style::default().fg(color)
        }
    }

    /// Colours of unified-diff lines.
    pub fn diff_style(self, line: &str) -> Option<Style> {
        if line.starts_with("+++") || line.starts_with("---") {
            Some(Style::default().add_modifier(Modifier::BOLD))
        } else if line.starts_with('+') {
            Some(self.fg(Color::Green))
        } else if line.starts_with('-') {
            Some(self.fg(Color::Red))
        } else if line.starts_with("@@") {
            Some(self.fg(Color::Cyan))
        } else {
            None
        }
    }
}

pub(crate) fn duration(ms: u64) -> String {
    if ms >= 1000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{ms}ms")
    }
}

/// Wraps lines wider than `width` at spaces (mid-word only for a word longer than a row),
/// keeping span styles and the line's own style; a first row keeps its indentation.
pub(crate) fn wrap_lines(lines: Vec<Line<'_>>, width: usize) -> Vec<Line<'static>> {
    lines
        .into_iter()
        .flat_map(|line| {
            let spans: Vec<Span<'static>> = line
                .spans
                .into_iter()
                .map(|s| Span::styled(s.content.into_owned(), line.style.patch(s.style)))
                .collect();
            crate::transcript_cache::wrap(&crate::transcript_cache::LogicalLine::new(spans), width)
        })
        .collect()
}
