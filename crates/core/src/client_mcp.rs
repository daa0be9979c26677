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
    pub name: String,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub url: Option<String>,
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
