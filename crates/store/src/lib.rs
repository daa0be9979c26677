//! Podcode's SQLite store: sessions, messages, parts, tool calls, the change journal,
//! remembered "always" approvals and the event log of served sessions, in one WAL-mode
//! database file.
//!
//! `Store` is `Send + Sync`; every write is its own committed transaction, so whatever a
//! method has returned survives a crash of the process right after it.

mod approvals;
mod changes;
mod db;
mod error;
mod events;
mod intents;
mod messages;
mod migrations;
mod sessions;
mod tool_calls;
mod usage;
mod worktrees;

pub use approvals::ApprovalRow;
pub use db::Store;
pub use error::StoreError;
pub use events::{EventRow, NewEvent};
pub use intents::{Intent, PendingChange};
pub use messages::{MessageRow, PartRow};
pub use sessions::{NewSession, SessionRow};
pub use tool_calls::{NewToolCall, ToolCallEnd, ToolCallRow, ToolCallState};
pub use worktrees::WorktreeRow;
