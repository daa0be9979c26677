//! `/` command completion. When the input starts with `/` and the cursor is still in that
//! first word, `refresh` opens `Input::slash` with the commands whose name starts with what
//! was typed: Podcode's own (`BUILT_IN`, with what each does) and the workspace's custom
//! commands (`Input::commands`, set at launch, with their argument hint and description).
//! While it is open, `key` takes Up/Down/Ctrl-P/Ctrl-N, Tab (complete), Enter (complete,
//! or submit when the word already names a command) and Esc; `draw` puts the list above the
//! input box.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use super::Input;
use crate::style::Theme;

/// One command the popup can offer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SlashChoice {
    /// The name, without the slash.
    pub name: String,
    /// What to type after it (`[provider/id]`, `<path>`).
    pub hint: String,
    /// What it does.
    pub description: String,
    /// A custom command (it runs as a prompt), not one of the UI's own.
    pub custom: bool,
}

/// The open popup.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SlashPopup {
    /// What was typed after the slash.
    pub query: String,
    /// Indexes into the choices, in the order shown.
    pub matches: Vec<usize>,
    pub selected: usize,
}

/// The UI's own commands: name, argument hint, what it does.
const BUILT_IN: &[(&str, &str, &str)] = &[
    ("new", "", "start a new session"),
    (
        "sessions",
        "",
        "switch to another session of this directory",
    ),
    ("subagents", "", "open a sub-agent's transcript"),
    ("model", "[provider/id]", "pick the model"),
    ("agent", "[name]", "pick the agent profile"),
    ("tools", "", "the tools the model can call"),
    ("plugins", "", "plugin and tool files and their status"),
    ("skills", "", "the skills the model may load"),
    (
        "commands",
        "",
        "the custom commands and where they come from",
    ),
    ("todos", "", "show or hide the todo list"),
    ("changes", "", "the Changes view"),
    ("undo", "", "revert the last turn's changes"),
    ("compact", "", "summarise the older conversation now"),
    ("help", "", "keys and commands"),
];

/// The UI's own commands, then `custom` (in the order given).
pub fn choices(custom: Vec<SlashChoice>) -> Vec<SlashChoice> {
    BUILT_IN
        .iter()
        .map(|(name, hint, description)| SlashChoice {
            name: (*name).to_string(),
            hint: (*hint).to_string(),
            description: (*description).to_string(),
            custom: false,
        })
        .chain(custom)
        .collect()
}

/// The command word being typed: the text after `/` up to the cursor, when the cursor is
/// still in the first word of a one-line input that starts with `/`.
fn typed_word(text: &str, cursor: usize) -> Option<&str> {
    let word = text.strip_prefix('/')?;
    let before = text.get(1..cursor)?;
    let end = word.find(char::is_whitespace).map_or(text.len(), |i| i + 1);
    (cursor <= end && !before.contains(char::is_whitespace)).then_some(before)
}

/// Opens, updates or closes the popup for the text. Call it after every edit.
pub fn refresh(input: &mut Input) {
    let Some(query) = typed_word(input.buffer.text(), input.buffer.cursor()) else {
        input.slash = None;
        return;
    };
    let matches: Vec<usize> = input
        .commands
        .iter()
        .enumerate()
        .filter(|(_, c)| c.name.starts_with(query))
        .map(|(i, _)| i)
        .collect();
    let selected = match &input.slash {
        Some(old) if old.query == query => old.selected.min(matches.len().saturating_sub(1)),
        _ => 0,
    };
    input.slash = Some(SlashPopup {
        query: query.to_string(),
        matches,
        selected,
    });
}

/// Handles a key while the popup is open; `false` lets the normal key handling run.
pub fn key(input: &mut Input, key: KeyEvent) -> bool {
    let Some(popup) = input.slash.as_mut() else {
        return false;
    };
    let len = popup.matches.len();
    if super::move_selection(&key, &mut popup.selected, len) {
        return true;
    }
    match key.code {
        KeyCode::Esc => input.slash = None,
        KeyCode::Tab if key.modifiers.is_empty() => accept(input),
        KeyCode::Enter if key.modifiers.is_empty() => {
            let exact = input.commands.iter().any(|c| c.name == popup.query);
            if len == 0 || exact {
                input.slash = None;
                return false;
            }
            accept(input);
        }
        _ => return false,
    }
    true
}

/// Replaces the typed word with `/name ` and closes the popup.
fn accept(input: &mut Input) {
    let Some(popup) = input.slash.take() else {
        return;
    };
    let Some(choice) = popup
        .matches
        .get(popup.selected)
        .and_then(|&i| input.commands.get(i))
    else {
        return;
    };
    let text = input.buffer.text();
    let end = text.find(char::is_whitespace).unwrap_or(text.len());
    let rest = text[end..].trim_start().to_string();
    let filled = format!("/{} {rest}", choice.name);
    input.buffer.set(&filled);
}

/// The popup, just above the input box, never taller than the space above it.
pub fn draw(frame: &mut Frame, input_area: Rect, input: &Input, theme: Theme) {
    let Some(popup) = &input.slash else {
        return;
    };
    let rows: Vec<(String, String, bool)> = if popup.matches.is_empty() {
        vec![("no matching command".into(), String::new(), false)]
    } else {
        popup
            .matches
            .iter()
            .filter_map(|&i| input.commands.get(i))
            .map(|c| {
                let head = format!("/{} {}", c.name, c.hint).trim_end().to_string();
                (head, c.description.clone(), c.custom)
            })
            .collect()
    };
    let above = input_area.y.saturating_sub(frame.area().y);
    let height = (rows.len() as u16 + 2).min(above).min(12);
    if height < 3 || input_area.width < 8 {
        return;
    }
    let visible = usize::from(height - 2);
    let width = input_area.width;
    let text_width = usize::from(width - 2);
    let head_width = rows
        .iter()
        .map(|r| r.0.width())
        .max()
        .unwrap_or(0)
        .min(text_width / 2);
    let area = Rect {
        x: input_area.x,
        y: input_area.y - height,
        width,
        height,
    };
    let first = (popup.selected + 1).saturating_sub(visible);
    let selected_style = super::selected_style(theme);
    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .skip(first)
        .take(visible)
        .map(|(i, (head, description, custom))| {
            let mark = if *custom { "  ·" } else { "" };
            let row = format!("{head:<head_width$}  {description}{mark}");
            let row: String = row.chars().take(text_width).collect();
            let style = if popup.matches.is_empty() {
                theme.fg(Color::DarkGray)
            } else if i == popup.selected {
                selected_style
            } else {
                Style::default()
            };
            Line::styled(format!("{row:<text_width$}"), style)
        })
        .collect();
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.fg(Color::DarkGray))
        .title(" / commands (tab completes; · custom) ");
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    fn typed(input: &mut Input, text: &str) {
        input.buffer.set(text);
        refresh(input);
    }

    #[test]
    fn the_popup_follows_the_first_word_and_tab_completes_it() {
        let mut input = Input {
            commands: choices(vec![SlashChoice {
                name: "review".into(),
                hint: "<path>".into(),
                description: "Review a file".into(),
                custom: true,
            }]),
            ..Default::default()
        };
        typed(&mut input, "/re");
        let popup = input.slash.clone().unwrap();
        let names: Vec<&str> = popup
            .matches
            .iter()
            .map(|&i| input.commands[i].name.as_str())
            .collect();
        assert_eq!(names, ["review"]);
        assert!(key(
            &mut input,
            KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE)
        ));
        assert_eq!(input.buffer.text(), "/review ");
        typed(&mut input, "/review src/a.rs");
        assert!(
            input.slash.is_none(),
            "past the first word the popup closes"
        );
        typed(&mut input, "/c");
        let names: Vec<&str> = input
            .slash
            .as_ref()
            .unwrap()
            .matches
            .iter()
            .map(|&i| input.commands[i].name.as_str())
            .collect();
        assert_eq!(names, ["commands", "changes", "compact"]);
        // Enter on a word that is already a command submits.
        typed(&mut input, "/compact");
        assert!(!key(
            &mut input,
            KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)
        ));
        typed(&mut input, "hello /x");
        assert!(input.slash.is_none());
    }
}
