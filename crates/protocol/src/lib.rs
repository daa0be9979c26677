//! Types shared by every Podcode crate: ids, tool specs and results, permission requests,
//! change-journal records, the `Op`/`Event` API that front ends use to drive the core, and
//! the conversation's `Item`s with `ItemFold`, which builds them from a session's events.
//!
//! This crate holds data only, plus one pure text function every front end shares
//! (`sanitize_for_terminal`, `sanitize_json`, `repair_lone_surrogates`). Behaviour lives in `podcode-tools` (the pipeline),
//! `podcode-store` (persistence) and the front ends.

mod call_state;
mod call_title;
mod change;
mod commands;
mod error_text;
mod event;
mod file_content;
mod fold;
mod ids;
mod invisible;
mod item;
mod json_surrogates;
mod permission;
mod prompt_text;
mod terminal;
mod tool;

pub use call_state::ToolCallState;
pub use call_title::{PatchOp, patch_files, shown_output, str_arg, tool_title};
pub use change::{
    ChangeOp, ChangeRecord, RecordedChange, RevertConflict, RevertReport, RevertTarget,
};
pub use commands::{BUILTIN_COMMANDS, CommandInfo, slash_command};
pub use error_text::error_chain;
pub use event::{Event, Op, StepUsage, TurnEnd, TurnSummary, compacted_text, toast_text, tokens};
pub use file_content::{FileContent, display_text};
pub use fold::{ItemChange, ItemFold};
pub use ids::{new_id, now_millis};
pub use invisible::{HIDDEN_CHARS_WARNING, has_hidden_chars, show_hidden_chars};
pub use item::{Item, ToolItem, child_of, diff_of};
pub use json_surrogates::repair_lone_surrogates;
pub use permission::{PermissionAction, PermissionReply, PermissionRequest, PermissionRule};
pub use prompt_text::{
    PromptSection, PromptText, argument_lines, more_lines, prompt_text, prompt_text_whole,
};
pub use terminal::{sanitize as sanitize_for_terminal, sanitize_json};
pub use tool::{
    Attachment, TITLE_MAX_CHARS, ToolResult, ToolSpec, Truncation, clip_title, is_valid_tool_id,
};
