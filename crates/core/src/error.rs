//! What can stop the engine from doing what a front end asked, in words the user can act on.

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// No usable model: the message lists the ways to configure one (front ends exit 2).
    #[error("{0}")]
    NoModel(String),
    #[error("{0}")]
    Config(#[from] podcode_config::ConfigError),
    #[error("cannot open the store at {path}: {source}")]
    OpenStore {
        path: String,
        source: podcode_store::StoreError,
    },
    #[error("{0}")]
    Store(#[from] podcode_store::StoreError),
    #[error("{0}")]
    Agent(#[from] podcode_agent::AgentError),
    #[error("{0}")]
    Model(#[from] podcode_providers::ProviderError),
    #[error("no session with id {0} (see `podcode sessions`)")]
    UnknownSession(String),
    #[error("no session to continue in {0}; start one with `podcode run \"…\"`")]
    NothingToContinue(String),
    #[error("{0}")]
    Io(String),
    /// A worktree session could not be created, inspected or removed.
    #[error("{0}")]
    Worktree(String),
}
