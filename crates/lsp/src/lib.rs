//! Language servers for the agent: an LSP client over stdio (`client`, message framing in
//! `framing`; protocol types from `lsp-types`), which server handles which file and where it
//! is installed (`servers`), the running servers of a workspace (`manager`: started lazily,
//! restarted once, diagnostics after every edit through `podcode_tools::AfterEdit`) and the
//! read-only `lsp` tool (`tool`); and the project's formatters, run on the files an edit
//! changed (`format`).

mod client;
mod format;
mod framing;
mod manager;
mod servers;
mod tool;

pub use client::{Launch, LspClient};
pub use format::{
    FormatterSpec, Formatters, builtin_formatters, formatter_failed_text, formatters_with,
    reformatted_text,
};
pub use framing::{file_uri, uri_path};
pub use manager::{
    DIAGNOSTICS_HEADER, InUse, LspManager, LspSettings, diagnostic_line, no_answer_text,
    starting_text,
};
pub use servers::{ServerSpec, builtin_servers, find_program, language_id, servers_with};
pub use tool::{LspTool, OPERATIONS, no_server_text};
