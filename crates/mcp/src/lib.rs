//! MCP for Podcode. The client side makes every `[mcp.<name>]` server (a stdio child
//! process or a streamable HTTP endpoint) a tool source whose tools pass through the same
//! pipeline as the built-ins (`McpSource`, `McpTool`). The server side (`ToolServer`)
//! serves Podcode's own merged tool set over MCP. Servers with resources add the three
//! resource tools (`resources`). Built on the official `rmcp` SDK.

mod capped;
mod confine;
mod content;
mod error;
mod names;
mod resources;
mod serve;
mod server;
mod source;
mod streamed;
mod tool;

pub use capped::{DEFAULT_MAX_MESSAGE_BYTES, oversized_text};
pub use confine::StdioSandbox;
pub use content::{EMPTY_ERROR_TEXT, convert as convert_result};
pub use error::McpError;
pub use names::IdAllocator;
pub use resources::{
    LIST as LIST_RESOURCES, LIST_TEMPLATES as LIST_RESOURCE_TEMPLATES, READ as READ_RESOURCE,
    no_resources_text,
};
pub use serve::ToolServer;
pub use server::{McpServer, RemoteTool, ServerState};
pub use source::{McpSource, ServerStatus, SourceTools, starting_text, unavailable_text};
pub use streamed::{spill_failed_text, streamed_error_text};
pub use tool::{McpTool, died_text, timeout_text};
