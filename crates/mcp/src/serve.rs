//! `podcode mcp serve`: Podcode's merged tool set (built-ins, plugin tools, executables)
//! served over MCP, so any MCP client can use them. Every call runs through the same
//! pipeline as in the agent (validation, permission, truncation, change journal) under one
//! session per client connection; the runtime's `Asker` decides what asks do (the CLI
//! rejects every ask that no `--allow` rule opened).

use std::sync::Arc;

use podcode_tools::{CallIdentity, CallRequest, CallStatus, RawArgs, ToolRuntime};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as McpToolDef,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::error::McpError;

/// The MCP server side of `podcode mcp serve`: lists the runtime's tools and runs each call through
/// the runtime's pipeline as one caller.
pub struct ToolServer {
    runtime: Arc<ToolRuntime>,
    identity: CallIdentity,
}

impl ToolServer {
    /// `identity` names the session this connection's calls are journaled under.
    pub fn new(runtime: Arc<ToolRuntime>, identity: CallIdentity) -> Self {
        Self { runtime, identity }
    }

    /// Serves on stdin/stdout until the client disconnects.
    pub async fn serve_stdio(self) -> Result<(), McpError> {
        let service = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| McpError::Serve(e.to_string()))?;
        service
            .waiting()
            .await
            .map_err(|e| McpError::Serve(e.to_string()))?;
        Ok(())
    }

    /// Serves on any transport (tests use an in-memory duplex).
    pub async fn serve_on<T>(self, io: T) -> Result<(), McpError>
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let service = self
            .serve(io)
            .await
            .map_err(|e| McpError::Serve(e.to_string()))?;
        service
            .waiting()
            .await
            .map_err(|e| McpError::Serve(e.to_string()))?;
        Ok(())
    }
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("podcode", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let registry = self.runtime.registry();
        let tools = registry
            .tools()
            .iter()
            .map(|t| {
                let spec = t.tool.spec();
                let schema = match &spec.parameters {
                    Value::Object(m) => m.clone(),
                    _ => serde_json::Map::new(),
                };
                McpToolDef::new(spec.id.clone(), spec.description.clone(), Arc::new(schema))
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request
            .arguments
            .map(Value::Object)
            .unwrap_or_else(|| Value::Object(Default::default()));
        let out = self
            .runtime
            .call(CallRequest {
                identity: self.identity.clone(),
                tool: request.name.to_string(),
                args: RawArgs::Json(args),
                abort: context.ct.clone(),
            })
            .await;
        let mut content = vec![ContentBlock::text(out.model_text)];
        for a in &out.result.attachments {
            if let Some(data) = a.url.strip_prefix(&format!("data:{};base64,", a.mime)) {
                content.push(ContentBlock::image(data, a.mime.clone()));
            }
        }
        Ok(if out.status == CallStatus::Completed {
            CallToolResult::success(content)
        } else {
            CallToolResult::error(content)
        }
        .into())
    }
}
