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
