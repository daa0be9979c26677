//! The mouse: the wheel scrolls what is under the keyboard's focus (the permission modal's
//! body, else the transcript), and a left click on a tool card selects it and expands or
//! collapses it (the transcript's last draw says which entry is on which row). Other
//! overlays (help, pickers) and the Changes view take keys only.

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};

use crate::state::{AppState, Screen};

/// Rows one wheel notch moves.
const WHEEL_ROWS: u16 = 3;

/// Applies a mouse event; `true` when the screen changed.
pub fn handle_mouse(state: &mut AppState, event: MouseEvent) -> bool {
    if let Some(modal) = &mut state.modal {
        return match event.kind {
            MouseEventKind::ScrollUp => modal.scroll_by(-(WHEEL_ROWS as isize)),
            MouseEventKind::ScrollDown => modal.scroll_by(WHEEL_ROWS as isize),
            _ => return false,
        };
    }
    if state.show_help || state.picker.is_some() || state.screen != Screen::Transcript {
        return false;
    }
    let t = &mut state.transcript;
    match event.kind {
        MouseEventKind::ScrollUp => {
            t.clamp_scroll();
            t.scroll = t.scroll.saturating_add(WHEEL_ROWS);
            true
        }
        MouseEventKind::ScrollDown => {
            t.clamp_scroll();
            t.scroll = t.scroll.saturating_sub(WHEEL_ROWS);
            true
        }
        MouseEventKind::Down(MouseButton::Left) => t.click(event.column, event.row),
        _ => false,
    }
}
