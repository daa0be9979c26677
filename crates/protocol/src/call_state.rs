//! Where a tool call is — running, or how it ended — as the call log stores it, the live
//! stream reports it (`Event::ToolFailed::state`) and a conversation item shows it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Where a tool call is: running, or how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCallState {
    /// Started, not finished (or the process died while it ran).
    Running,
    /// Returned a result.
    Completed,
    /// Returned an error (bad arguments, the tool's own failure).
    Failed,
    /// Refused by a permission rule or the user.
    Denied,
    /// Aborted (the user stopped the turn, or the session closed).
    Interrupted,
    /// Stopped at its time limit (not by the user).
    #[serde(rename = "timed_out")]
    TimedOut,
}

impl ToolCallState {
    /// The stored value (`timed_out` for `TimedOut`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Denied => "denied",
            Self::Interrupted => "interrupted",
            Self::TimedOut => "timed_out",
        }
    }

    /// Reads a stored value back; `None` for a value this version never writes.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "running" => Some(Self::Running),
            "completed" => Some(Self::Completed),
            "failed" => Some(Self::Failed),
            "denied" => Some(Self::Denied),
            "interrupted" => Some(Self::Interrupted),
            "timed_out" => Some(Self::TimedOut),
            _ => None,
        }
    }

    /// `Failed`: what an `Event::ToolFailed` logged before it carried a state means.
    pub(crate) fn failed() -> Self {
        Self::Failed
    }
}

impl fmt::Display for ToolCallState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TimedOut => f.write_str("timed out"),
            other => f.write_str(other.as_str()),
        }
    }
}
