//! The UI's whole state: the components, each owning its own state and drawing itself
//! (transcript, input, status line, permission modal, Changes view, picker), which screen
//! shows, and the little that belongs to no component. Runtime events come in through
//! `apply_event`, which hands each component its part; keys go through `keys::handle_key`,
//! which dispatches to the component that has the keyboard. Components never see
//! `AppState`, so each can be built and drawn on its own in tests.

use podcode_protocol::Event;

use crate::changes::ChangesView;
use crate::input::Input;
use crate::modal::PermissionModal;
use crate::picker::Picker;
use crate::status::StatusLine;
use crate::style::Theme;
use crate::transcript::Transcript;

/// Which main view is on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Screen {
    /// The conversation.
    #[default]
    Transcript,
    /// The session's changes, for review and revert.
    Changes,
}

/// Everything the screen shows.
#[derive(Debug, Clone, Default)]
pub struct AppState {
    /// The conversation as shown.
    pub transcript: Transcript,
    /// The prompt editor.
    pub input: Input,
    /// The bottom line: model, agent, title, tokens.
    pub status: StatusLine,
    /// The permission ask waiting for the user.
    pub modal: Option<PermissionModal>,
    /// The Changes view's state.
    pub changes: ChangesView,
    /// The open `/sessions`, `/model` or `/agent` picker.
    pub picker: Option<Picker>,
    /// Which main view is on screen.
    pub screen: Screen,
    /// The session shown.
    pub session_id: String,
    /// The key help overlay is open.
    pub show_help: bool,
    /// Draw without colours (`NO_COLOR`).
    pub no_color: bool,
    /// What `/tools` shows: the merged tool set with sources, then load problems.
    pub tools_info: Vec<String>,
    /// The sub-agent transcript shown instead of the main one (`subagent_view`).
    pub child: Option<crate::subagent_view::ChildView>,
    /// The session's todo list panel.
    pub todos: crate::todo_panel::TodoPanel,
}

impl AppState {
    /// The state of a fresh screen for a session.
    pub fn new(model: &str, agent: &str, cwd: &str, session_id: &str) -> Self {
        Self {
            status: StatusLine::new(model, agent, cwd),
            session_id: session_id.into(),
            transcript: Transcript::new(session_id),
            ..Default::default()
        }
    }

    /// The colours to draw with.
    pub fn theme(&self) -> Theme {
        Theme {
            no_color: self.no_color,
        }
    }

    /// Advances spinners and the elapsed time of running calls (not the one whose
    /// permission prompt is open) by `ms`.
    pub fn tick(&mut self, ms: u64) {
        let waiting = self.modal.as_ref().map(|m| m.call_id.as_str());
        self.transcript.tick(ms, waiting);
        if let Some(child) = &mut self.child {
            child.parent.tick(ms, waiting);
        }
    }

    /// The user sent `text` (it shows when the session reports it: `Event::UserMessage`).
    pub fn push_user(&mut self, text: &str) {
        self.transcript.follow();
        self.status.prompted(text);
    }

    /// Applies one session event to the screen state.
    pub fn apply_event(&mut self, event: &Event) {
        self.status.apply_event(event);
        self.todos.apply_event(event);
        self.apply_to_transcripts(event);
        if let Event::ToolsReloaded { tools } = event {
            self.tools_info = tools.clone();
        }
    }
}
