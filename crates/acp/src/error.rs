//! Errors that end `podcode acp` (a request's failure is answered to the client instead).

#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    #[error("cannot read from the client: {0}")]
    Io(#[from] std::io::Error),
}
