//! The Changes view: every journaled change of the session, grouped by the prompt (turn)
//! and tool call that made it, with the selected change's diff beside the list. Reverting a
//! change, its call, everything since its prompt, or the whole session goes through
//! the engine's revert, the same journal-checked path as `podcode revert`; a refusal
//! shows its conflict diff and `f` forces the same revert.

use podcode_protocol::RevertTarget;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::render::{diff_style, fg, wrap_lines};
use crate::services::TuiServices;
use crate::state::AppState;

/// Reloads the session's changes, keeping the selection in range.
pub fn load_changes(state: &mut AppState, services: &dyn TuiServices) -> Result<(), String> {
    state.changes.changes = services.changes(&state.session_id)?;
    if state.changes.selected >= state.changes.changes.len() {
        state.changes.selected = state.changes.changes.len().saturating_sub(1);
    }
    Ok(())
}

/// What a revert key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevertScope {
    Change,
    Call,
    /// Everything since the prompt of the selected change's turn.
    Turn,
    Session,
}

/// Reverts the selected change, its call, its turn and what followed, or the whole
/// session; a conflict is kept in the state so the view shows it and `f` can force it.
pub fn revert_selected(
    state: &mut AppState,
    services: &dyn TuiServices,
    scope: RevertScope,
    force: bool,
) {
    let Some(item) = state.changes.changes.get(state.changes.selected) else {
        return;
    };
    let target = match scope {
        RevertScope::Change => RevertTarget::Change(item.change.id.clone()),
        RevertScope::Call => match &item.change.call_id {
            Some(c) => RevertTarget::Call(c.clone()),
            None => RevertTarget::Change(item.change.id.clone()),
        },
        RevertScope::Turn => match &item.turn {
            Some((message, _)) => RevertTarget::SinceMessage(message.clone()),
            None => RevertTarget::Session(state.session_id.clone()),
        },
        RevertScope::Session => RevertTarget::Session(state.session_id.clone()),
    };
    state.changes.conflict = None;
    let report = services.revert(&state.session_id, target, force);
    state.changes.message = Some(if let Some(c) = report.conflict {
        state.changes.conflict = Some((
            scope,
            format!("{} changed since Podcode wrote it:\n{}", c.file, c.diff),
        ));
        "revert refused: the file changed since (f forces, esc keeps it)".to_string()
    } else if let Some(e) = report.error {
        e
    } else {
        format!(
            "reverted {} change(s){}",
            report.reverted.len(),
            if report.skipped.is_empty() {
                String::new()
            } else {
                format!(", {} already reverted", report.skipped.len())
            }
        )
    });
    if let Err(e) = load_changes(state, services) {
        state.changes.message = Some(e);
    }
}

pub fn draw_changes(frame: &mut Frame, area: Rect, state: &AppState) {
    let view = &state.changes;
    let [list_area, diff_area] =
        Layout::horizontal([Constraint::Percentage(35), Constraint::Percentage(65)]).areas(area);
    let mut list: Vec<Line> = Vec::new();
    let mut last_call: Option<&Option<String>> = None;
    let mut last_turn: Option<&Option<(String, String)>> = None;
    for (i, item) in view.changes.iter().enumerate() {
        if last_turn != Some(&item.turn) {
            let prompt = item.turn.as_ref().map_or("(before any prompt)", |t| &t.1);
            list.push(Line::styled(
                format!("› {prompt}"),
                fg(state, Color::Cyan).add_modifier(Modifier::BOLD),
            ));
            last_turn = Some(&item.turn);
            last_call = None;
        }
        if last_call != Some(&item.change.call_id) {
            list.push(Line::styled(
                format!(" {}", item.call_label),
                fg(state, Color::DarkGray),
            ));
            last_call = Some(&item.change.call_id);
        }
        let mark = if i == view.selected { " ▶ " } else { "   " };
        let mut style = Style::default();
        if i == view.selected {
            style = style.add_modifier(Modifier::BOLD);
        }
        if item.reverted {
            style = style.add_modifier(Modifier::CROSSED_OUT);
        }
        let state_tag = if item.reverted { " (reverted)" } else { "" };
        list.push(Line::styled(
            format!(
                "{mark}{} {}{state_tag}",
                item.change.op.as_str(),
                item.display
            ),
            style,
        ));
    }
    if list.is_empty() {
        list.push(Line::raw("no changes in this session yet"));
    }
    list.push(Line::default());
    for help in [
        "r revert change · c call",
        "t since its prompt · a all",
        "f force · esc back",
    ] {
        list.push(Line::styled(help, fg(state, Color::DarkGray)));
    }
    if let Some(m) = &view.message {
        list.push(Line::styled(m.clone(), fg(state, Color::Yellow)));
    }
    let inner_w = list_area.width.saturating_sub(2) as usize;
    frame.render_widget(
        Paragraph::new(wrap_lines(list, inner_w.max(1))).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(fg(state, Color::DarkGray))
                .title(" changes "),
        ),
        list_area,
    );
    let (title, text) = match (&view.conflict, view.changes.get(view.selected)) {
        (Some((_, conflict)), _) => (" conflict ", conflict.as_str()),
        (None, Some(item)) => (" diff ", item.diff.as_str()),
        (None, None) => (" diff ", ""),
    };
    let lines: Vec<Line> = text
        .lines()
        .map(|l| Line::styled(l, diff_style(l, state).unwrap_or_default()))
        .collect();
    let inner_w = diff_area.width.saturating_sub(2) as usize;
    let border = if view.conflict.is_some() {
        fg(state, Color::Red)
    } else {
        fg(state, Color::DarkGray)
    };
    frame.render_widget(
        Paragraph::new(wrap_lines(lines, inner_w.max(1))).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(border)
                .title(title),
        ),
        diff_area,
    );
}
