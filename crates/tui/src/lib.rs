//! Podcode's full-screen terminal UI. It drives the core through the same `Op`/`Event` API
//! as every other front end: runtime events come in on the broadcast, prompts and aborts go
//! out as `Op`s, and permission asks arrive as `Event::PermissionAsked` and are answered with
//! `Op::PermissionReply`.
//!
//! The screen is made of components that own their state and draw themselves: the
//! `Transcript` (`transcript.rs`), the `Input` box with history and `@path` completion
//! (`input.rs`), the `StatusLine` (`status.rs`), the `PermissionModal` (`modal.rs`), the
//! `ChangesView` (`changes.rs`) and the `Picker` (`picker.rs`). `AppState` (`state.rs`) is
//! their composition; `keys.rs` dispatches each key to the component that has the keyboard,
//! a sub-agent's transcript opens in place of the main one (`subagent_view.rs`),
//! and `render::draw` lays the screen out and has each component draw into its area, so
//! every view is tested with ratatui's test backend. Components import none of that: they
//! share only the drawing helpers in `style.rs`. The event loop (`event_loop.rs`) and what
//! it does for actions (`actions.rs`, `changes_view.rs`) sit on top.

mod actions;
mod changes;
mod changes_view;
mod engine_services;
mod error;
mod event_loop;
mod help;
mod highlight;
mod input;
mod keys;
mod launch;
mod markdown;
mod modal;
mod mouse;
mod picker;
mod render;
mod services;
mod state;
mod status;
mod style;
mod subagent_view;
pub mod todo_panel;
mod transcript;
pub mod transcript_cache;

pub use actions::ago;
pub use changes::{ChangeItem, ChangesKey, ChangesView};
pub use changes_view::{RevertScope, load_changes, revert_selected};
pub use engine_services::EngineServices;
pub use error::TuiError;
pub use event_loop::{TuiParams, run};
pub use help::KEYS_HELP;
pub use input::{EditOutcome, Input, InputBuffer};
pub use keys::{Action, handle_key};
pub use launch::{LaunchOptions, launch};
pub use modal::{KEY_GRACE, ModalKey, PermissionModal};
pub use mouse::handle_mouse;
pub use picker::{Picker, PickerKind, PickerOutcome};
pub use render::draw;
pub use services::{NoServices, PickItem, TuiServices};
pub use state::{AppState, Screen};
pub use status::StatusLine;
pub use style::Theme;
pub use subagent_view::ChildView;
pub use transcript::{Entry, ToolCard, ToolStatus, Transcript};
