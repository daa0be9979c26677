//! The ways an MCP server or call can fail, worded for the model and the user.

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    #[error("MCP server `{0}` is disabled in config (`enabled = false` under [mcp.{0}])")]
    Disabled(String),
    #[error("MCP server `{server}` is unavailable: {reason}")]
    Unavailable { server: String, reason: String },
    #[error("MCP server mode failed: {0}")]
    Serve(String),
}
