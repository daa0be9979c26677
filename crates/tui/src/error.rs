//! Errors of the terminal UI.

/// Why the TUI stopped.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// The terminal could not be read or drawn to.
    #[error("terminal: {0}")]
    Io(#[from] std::io::Error),
    /// The engine could not open the session or read what the UI shows.
    #[error(transparent)]
    Engine(#[from] podcode_core::EngineError),
}
