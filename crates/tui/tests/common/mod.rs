//! Shared by the render tests: draw a state into ratatui's test backend and read the
//! screen back as text, one trimmed line per row.
#![allow(dead_code)]

use podcode_tui::{AppState, draw};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

pub fn screen_sized(state: &AppState, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| draw(f, state)).unwrap();
    let buf = terminal.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
