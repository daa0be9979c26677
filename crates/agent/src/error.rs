//! `AgentError`: what stops a turn before it can produce a `TurnSummary`. Model and stream
//! failures are not errors here: they end the turn with `TurnEnd::Error` and a summary, so
//! front ends always get one closing event.

use podcode_store::StoreError;

/// Why a turn or session could not run, for the user.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// Recording the conversation failed; continuing would leave it half-stored.
    #[error("could not record the conversation: {0}")]
    Store(#[from] StoreError),
    /// The session id is not in the store.
    #[error("no session with id {0}")]
    UnknownSession(String),
    /// `--agent NAME` named no built-in or configured profile.
    #[error("unknown agent \"{name}\"; available: {available}")]
    UnknownAgent {
        /// The name given.
        name: String,
        /// The profiles there are, comma-separated.
        available: String,
    },
    /// `--agent NAME` named a profile with `mode: subagent`, which only `task` may start.
    #[error(
        "agent \"{name}\" is a sub-agent (mode: subagent), which only the task tool starts; primary agents: {primary}"
    )]
    SubagentOnly {
        /// The name given.
        name: String,
        /// The primary profiles there are, comma-separated.
        primary: String,
    },
}
