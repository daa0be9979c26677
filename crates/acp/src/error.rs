//! Errors that end `podcode acp` (a request's failure is answered to the client instead).

/// Why the ACP server stopped.
#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    /// Reading stdin or writing stdout failed.
    #[error("cannot read from the client: {0}")]
    Io(#[from] std::io::Error),
}
