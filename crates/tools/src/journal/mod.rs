//! The change journal's side of the pipeline: every file a tool changes is written
//! journal-first (`write`: `apply_journaled`), a change can be undone (`revert`), and writes
//! a crash interrupted are completed or rolled back at the next start (`recover`). All three
//! go through the `ChangeJournal` trait (`podcode-records`), never a database handle: the
//! engine hands the pipeline its store as that trait.

mod recover;
mod revert;
mod write;

pub use recover::recover_interrupted_writes;
pub use revert::{
    RevertError, RevertOptions, RevertOutcome, RevertTarget, diff_stats, is_reverted, revert,
    unified_diff,
};
pub use write::{Applied, FileWrite, WriteError, apply_journaled};
