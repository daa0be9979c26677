//! Podcode's SQLite store: sessions, messages, parts, tool calls, the change journal,
//! remembered "always" approvals and the event log of served sessions, in one WAL-mode
//! database file. It implements the `podcode-records` traits the tool pipeline writes its
//! call log, change journal and approvals through (`records.rs`).
//!
//! `Store` is `Send + Sync`; every write is its own committed transaction, so whatever a
//! method has returned survives a crash of the process right after it.

mod approvals;
mod changes;
mod db;
mod error;
mod events;
mod fork;
mod fresh_schema;
mod intents;
mod messages;
mod migrations;
mod records;
mod sessions;
mod tool_calls;
mod usage;
mod worktrees;

pub use db::Store;
pub use error::StoreError;
pub use events::{EventRow, NewEvent};
pub use messages::PartRow;
pub use sessions::{NewSession, SessionRow};
pub use tool_calls::ToolCallRow;
// The rows the tool pipeline's records carry are defined beside its traits; the store
// implements those traits (`records.rs`) and offers the rows under its own name too.
pub use podcode_records::{
    ApprovalRow, Intent, MessageRow, NewToolCall, PendingChange, RecordError, ToolCallEnd,
    ToolCallState, WorktreeRow,
};
