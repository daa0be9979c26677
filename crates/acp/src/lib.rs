//! `podcode acp`: Podcode as an Agent Client Protocol agent, for editors (Zed, JetBrains,
//! Neovim clients) that start it and speak JSON-RPC 2.0 over its stdin/stdout, one JSON
//! message per line. A thin front end like the TUI: it depends on `podcode-core` and
//! `podcode-protocol` only, and the wire types come from the protocol's published schema
//! crate (`agent-client-protocol-schema`).
//!
//! Data flow: `server` reads the client's lines and answers requests, each on its own
//! task, with the sessions of the engine's `SessionRegistry` (each run in its own
//! directory's workspace; the registry holds the one busy state); `session` turns a prompt into `Op::Prompt` and the session's `Event`s into
//! `session/update` notifications (`turn`, with kinds, titles and locations from
//! `translate`); permission asks become `session/request_permission` requests (`ask`) whose
//! answers go back as `Op::PermissionReply`; `replay` sends a stored conversation for
//! `session/load`; `list` answers `session/list` and checks a client's `cwd`. stdout
//! carries protocol messages only (`rpc`); notes go to stderr.

mod ask;
mod error;
mod list;
mod replay;
mod rpc;
mod server;
mod session;
mod translate;
mod turn;

pub use error::AcpError;
pub use podcode_protocol::tool_title;
pub use server::{AcpOptions, serve};
pub use translate::{call_title, stop_reason, tool_kind, tool_locations};
