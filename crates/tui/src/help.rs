//! The `/help` overlay: the keys and commands, drawn over the bottom of the main area until
//! any key closes it (`AppState::show_help`).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Color;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::style::Theme;

pub const HELP: &str =
    "enter send (queued while a turn runs) · alt-enter or ctrl-j newline · ↑/↓ history
←/→ ctrl-←/→ home/end move · ctrl-w ctrl-u ctrl-k delete · @path attach a file (tab completes)
pgup/pgdn shift-↑/↓ ctrl-home/end or the mouse wheel scroll · esc abort the turn · ctrl-c twice quit
alt-↑/↓ pick a tool card · ctrl-o or a click expands it (the newest when none is picked)
ctrl-g or /changes: Changes view (r change · c call · t since its prompt · a all · f force)
ctrl-t or /subagents: open a sub-agent's transcript (live while it runs; esc goes back)
ctrl-l or /todos: show or hide the todo list panel
/new  /sessions  /subagents  /model [provider/id]  /agent [name]  /tools  /plugins  /skills  /commands  /todos  /changes  /undo  /help
/compact: summarise the older conversation now (it also happens by itself when the context fills)
/name args runs your custom command (a .podcode/commands/name.md prompt; / then tab completes)";

/// What `podcode tui --help` adds after the options: the keys and commands inside.
pub const KEYS_HELP: &str = "Inside the UI:
  enter sends (queued while a turn runs) · alt-enter or ctrl-j: new line · ↑/↓ history
  @path attaches a file (tab completes) · esc aborts the turn · ctrl-c twice quits
  ctrl-g or /changes: the Changes view (r change · c call · t since its prompt · a all)
  ctrl-t or /subagents: a sub-agent's transcript · ctrl-l or /todos: the todo list panel
  alt-↑/↓ picks a tool card, ctrl-o or a click expands it · pgup/pgdn or the wheel scroll
  /new /sessions /model [provider/id] /agent [name] /tools /plugins /skills /commands /undo /help
  /compact: summarise the older conversation now (it also happens when the context fills)
  /name args: a custom command (`podcode commands`); / then tab completes";

pub fn draw_help(frame: &mut Frame, area: Rect, theme: Theme) {
    let h = 14.min(area.height);
    let rect = Rect::new(area.x, area.bottom().saturating_sub(h), area.width, h);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(HELP).wrap(Wrap { trim: false }).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme.fg(Color::Cyan))
                .title(" help (any key closes) "),
        ),
        rect,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_helps_name_every_built_in_command() {
        for name in podcode_protocol::BUILTIN_COMMANDS {
            let slash = format!("/{name}");
            let named = |text: &str| {
                text.split(|c: char| c.is_whitespace() || c == ':')
                    .any(|w| w == slash)
            };
            assert!(named(HELP), "/help lacks {slash}");
            assert!(named(KEYS_HELP), "tui --help lacks {slash}");
        }
    }
}
