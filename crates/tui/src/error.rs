//! Errors of the terminal UI.

/// Why the TUI stopped.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// The terminal could not be read or drawn to.
    #[error("terminal: {0}")]
    Io(#[from] std::io::Error),
}
