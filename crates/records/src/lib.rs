//! What the tool pipeline keeps, as small traits: the call log (`CallLog`), the change
//! journal (`ChangeJournal`), remembered permission answers (`Approvals`), and the two reads a
//! tool may need (`Conversation`, `WorktreeRecords`), with the row types they carry.
//!
//! This crate sits below both sides: `podcode-tools` runs calls against these traits and never
//! sees a database; `podcode-store` implements them over SQLite; `podcode-core` hands the
//! store to the pipeline. Each trait is implemented for `Arc<T>` too, so an `Arc<Store>` can be
//! passed wherever one is asked for.
//!
//! Errors are a `RecordError` that wraps the implementation's own error and shows its text
//! unchanged, so what a user reads about a full disk does not depend on which side reports it.

mod calls;
mod journal;
mod reads;

use std::error::Error;

pub use calls::{CallLog, NewToolCall, ToolCallEnd, ToolCallState};
pub use journal::{ChangeJournal, Intent, PendingChange};
pub use reads::{ApprovalRow, Approvals, Conversation, MessageRow, WorktreeRecords, WorktreeRow};

/// Why a record could not be read or written: the implementation's error, shown as it is.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct RecordError(Box<dyn Error + Send + Sync + 'static>);

impl RecordError {
    /// Wraps an implementation's error.
    pub fn new(source: impl Error + Send + Sync + 'static) -> Self {
        Self(Box::new(source))
    }

    /// The wrapped error, to look for a particular kind (`downcast_ref`).
    pub fn inner(&self) -> &(dyn Error + Send + Sync + 'static) {
        self.0.as_ref()
    }
}
