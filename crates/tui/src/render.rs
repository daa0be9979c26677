//! Drawing: a pure function of `AppState` onto a ratatui frame. It lays the screen out —
//! the main area (the transcript or the Changes view), the todo panel, the input box, the
//! status line —
//! and has each component draw itself there, then the overlays on top: help, a picker,
//! the permission modal.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};

use crate::state::{AppState, Screen};

/// Draws the whole screen for `state`.
pub fn draw(frame: &mut Frame, state: &AppState) {
    let theme = state.theme();
    let busy = state.status.busy;
    let area = frame.area();
    let [main, todos, input, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(state.todos.height(area.height)),
        Constraint::Length(state.input.height(area.width)),
        Constraint::Length(1),
    ])
    .areas(area);
    state.todos.draw(frame, todos, theme);
    match state.screen {
        Screen::Transcript if state.child.is_some() => {
            let [header, rest] =
                Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(main);
            crate::subagent_view::draw_header(frame, header, theme, state);
            state.transcript.draw(frame, rest, theme, busy);
        }
        Screen::Transcript => state.transcript.draw(frame, main, theme, busy),
        Screen::Changes => state.changes.draw(frame, main, theme),
    }
    state
        .input
        .draw(frame, input, theme, busy, state.modal.is_none());
    state
        .status
        .draw(frame, status, theme, &state.transcript.running_tools());
    if state.show_help {
        crate::help::draw_help(frame, main, theme);
    }
    if let Some(picker) = &state.picker {
        picker.draw(frame, main, theme);
    }
    if let Some(modal) = &state.modal {
        // Over the whole screen: in a short terminal the ask needs every line it can get.
        modal.draw(frame, area, theme);
    }
}
