//! The ways an MCP server or call can fail, worded for the model and the user.

/// Why an MCP server or call could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McpError {
    /// The server is configured with `enabled = false`.
    #[error("MCP server `{0}` is disabled in config (`enabled = false` under [mcp.{0}])")]
    Disabled(String),
    /// The server could not be started or reached, or it stopped.
    #[error("MCP server `{server}` is unavailable: {reason}")]
    Unavailable {
        /// The server's name.
        server: String,
        /// Why, from the start attempt or the transport.
        reason: String,
    },
    /// `podcode mcp serve` could not serve (the transport failed).
    #[error("MCP server mode failed: {0}")]
    Serve(String),
}
