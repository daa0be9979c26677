//! What can stop the engine from doing what a front end asked, in words the user can act on.

/// Why the engine could not do what a front end asked, for the user.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// No usable model: the message lists the ways to configure one (front ends exit 2).
    #[error("{0}")]
    NoModel(String),
    /// A config file could not be read or parsed.
    #[error(transparent)]
    Config(#[from] podcode_config::ConfigError),
    /// The store's database could not be opened.
    #[error("cannot open the store at {path}: {source}")]
    OpenStore {
        /// Where the database is.
        path: String,
        /// The store's error.
        source: podcode_store::StoreError,
    },
    /// A store operation failed.
    #[error(transparent)]
    Store(#[from] podcode_store::StoreError),
    /// The agent loop could not run.
    #[error(transparent)]
    Agent(#[from] podcode_agent::AgentError),
    /// The model provider failed (its configuration, or an error from its API).
    #[error(transparent)]
    Model(#[from] podcode_providers::ProviderError),
    /// The session id is not in the store.
    #[error("no session with id {0} (see `podcode sessions`)")]
    UnknownSession(String),
    /// The message id is not in the store (forking a session at it).
    #[error("no message with id {0}")]
    UnknownMessage(String),
    /// A session cannot be forked at that message (the text says why).
    #[error("{0}")]
    NotForkable(String),
    /// `--continue` found no session in this directory.
    #[error("no session to continue in {0}; start one with `podcode run \"…\"`")]
    NothingToContinue(String),
    /// A file or process operation failed (the text says which).
    #[error("{0}")]
    Io(String),
    /// The session's turn still runs (`session::BUSY_TEXT`): HTTP 409, a JSON-RPC error.
    #[error("{0}")]
    Busy(String),
    /// The session belongs to another project: opened from this engine it would run in the
    /// wrong directory under the wrong rules (`SessionRegistry` opens it in its own).
    #[error("session {id} belongs to {home}, not to {here}: run podcode in {home} to continue it")]
    OtherProject {
        /// The session.
        id: String,
        /// The directory it was started in.
        home: String,
        /// The project this engine serves.
        here: String,
    },
    /// The directory a stored session works in no longer exists.
    #[error("session {id} works in {dir}, which no longer exists: it cannot run")]
    DirectoryGone {
        /// The session.
        id: String,
        /// The directory it was started in.
        dir: String,
    },
    /// A worktree session could not be created, inspected or removed.
    #[error("{0}")]
    Worktree(String),
    /// A login (`podcode auth login`) that did not store anything, and why.
    #[error("{0}")]
    Login(String),
}
