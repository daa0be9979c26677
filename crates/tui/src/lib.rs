//! Podcode's full-screen terminal UI. It drives the core through the same `Op`/`Event` API
//! as every other front end: runtime events come in on the broadcast, prompts and aborts go
//! out as `Op`s, and permission asks arrive as `Event::PermissionAsked` and are answered with
//! `Op::PermissionReply`. Rendering is a pure function
//! of `AppState` (see `render::draw`), so every view is tested with ratatui's test backend.

mod actions;
mod changes_view;
mod error;
mod event_loop;
mod highlight;
mod input;
mod keys;
mod markdown;
mod mentions;
mod modal;
mod picker;
mod render;
mod services;
mod slash;
mod state;
pub mod transcript_cache;

pub use actions::ago;
pub use changes_view::{RevertScope, load_changes, revert_selected};
pub use error::TuiError;
pub use event_loop::{TuiParams, run};
pub use input::{EditOutcome, InputBuffer};
pub use keys::{Action, handle_key};
pub use modal::modal_key;
pub use picker::{Picker, PickerKind};
pub use render::draw;
pub use services::{NoServices, PickItem, TuiServices};
pub use state::{
    AppState, ChangeItem, ChangesView, Entry, PermissionModal, Screen, ToolCard, ToolStatus,
};
