//! MCP servers a client hands over (an editor's `mcpServers` in ACP's `session/new`): the
//! front end names them with this plain type, and the engine adds them to the configured
//! servers before its tools first load. They are the user's own choice, like the global
//! config, so workspace trust does not hold them back.

use std::collections::BTreeMap;

use podcode_config::McpServerConfig;
use serde::Serialize;

/// A stdio server (`command`, `args`, `env`) or a streamable HTTP one (`url`, `headers`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClientMcpServer {
    /// The server's name (its tools are named `<name>_<tool>`).
    pub name: String,
    /// Program to start, for a stdio server.
    pub command: Option<String>,
    /// Arguments for `command`.
    pub args: Vec<String>,
    /// Environment variables for `command`.
    pub env: BTreeMap<String, String>,
    /// Endpoint, for a streamable HTTP server.
    pub url: Option<String>,
    /// HTTP headers sent to `url`.
    pub headers: BTreeMap<String, String>,
}

impl ClientMcpServer {
    pub(crate) fn into_config(self) -> McpServerConfig {
        McpServerConfig {
            command: self.command,
            args: self.args,
            env: self.env,
            url: self.url,
            headers: self.headers,
            ..McpServerConfig::default()
        }
    }
}
