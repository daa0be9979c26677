//! `McpTool`: one tool of one MCP server, offered to the model as `<server>_<tool>` with the
//! server's input schema (the pipeline validates against it: `validate` stays `None`, and as
//! a non-built-in it is gated by its id). A call sends `tools/call` with a progress token;
//! progress notifications become live metadata, the abort signal becomes a
//! `notifications/cancelled`, and the per-call timeout (config `timeout`, default 120 s)
//! cancels the request too. A server that dies mid-call fails the call with the reason and
//! is restarted on the next use. A large text result arrives as a file (`streamed`) and is
//! streamed into the call's output, so truncation and the spill file see all of it.

use std::sync::Arc;

use async_trait::async_trait;
use futures_util::StreamExt;
use podcode_protocol::{ToolResult, ToolSpec};
use podcode_tools::{Tool, ToolContext, ToolError};
use rmcp::model::{
    CallToolRequestParams, CancelledNotification, CancelledNotificationParam, ClientRequest,
    Request, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{Value, json};

use crate::server::McpServer;

/// One MCP server tool as a Podcode `Tool`: a call goes to the server (started on demand) and its
/// content comes back as a `ToolResult`.
pub struct McpTool {
    spec: ToolSpec,
    server: Arc<McpServer>,
    name: String,
}

impl McpTool {
    /// The tool `name` of `server`, offered to the model as `spec`.
    pub fn new(spec: ToolSpec, server: Arc<McpServer>, name: String) -> Self {
        Self { spec, server, name }
    }
}

/// The text a call fails with when the server stops while the call runs.
pub fn died_text(server: &str, why: &str) -> String {
    format!(
        "MCP server `{server}` stopped during the call ({why}); it will be restarted on the next call"
    )
}

/// The text a call fails with when the server does not answer within `timeout`.
pub fn timeout_text(server: &str, secs: u64) -> String {
    format!(
        "MCP server `{server}` did not answer within {secs} s; the call was cancelled (raise `timeout` under [mcp.{server}] if it needs longer)"
    )
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let client = self
            .server
            .client()
            .await
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let mut params = CallToolRequestParams::new(self.name.clone());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        let timeout = self.server.call_timeout();
        // Forget an over-limit message an earlier call left behind.
        let _ = self.server.take_unmatched_oversize();
        let handle = client
            .send_cancellable_request(
                ClientRequest::CallToolRequest(Request::new(params)),
                PeerRequestOptions::with_timeout(timeout),
            )
            .await
            .map_err(|e| self.lost(&client, e))?;
        let request_id = handle.id.clone();
        let peer = handle.peer.clone();
        let mut progress = client
            .service()
            .progress
            .subscribe(handle.progress_token.clone())
            .await;
        let response = handle.await_response();
        tokio::pin!(response);
        let result = loop {
            tokio::select! {
                r = &mut response => break r,
                Some(p) = progress.next() => {
                    ctx.metadata(
                        p.message.clone(),
                        Some(json!({"progress": p.progress, "total": p.total, "message": p.message})),
                    );
                }
                _ = ctx.abort().cancelled() => {
                    let note = CancelledNotification::new(CancelledNotificationParam::new(
                        Some(request_id),
                        Some("aborted by the user".into()),
                    ));
                    let _ = peer.send_notification(note.into()).await;
                    return Err(ToolError::Aborted);
                }
            }
        };
        let result = match result {
            Ok(ServerResult::CallToolResult(r)) => r,
            Ok(other) => {
                return Err(ToolError::failed(format!(
                    "MCP server `{}` answered tools/call with an unexpected result: {}",
                    self.server.name,
                    serde_json::to_string(&other).unwrap_or_default()
                )));
            }
            Err(ServiceError::Timeout { timeout }) => {
                // The answer came but was over the limit with no id to fail this call by.
                if let Some(bytes) = self.server.take_unmatched_oversize() {
                    return Err(ToolError::failed(crate::capped::oversized_text(
                        &self.server.name,
                        bytes,
                        self.server.max_message_bytes(),
                    )));
                }
                let server = self.server.clone();
                // A server that no longer answers even a ping is hung: restart it next time.
                tokio::spawn(async move {
                    let ping = tokio::time::timeout(
                        std::time::Duration::from_secs(5),
                        client.send_request(ClientRequest::PingRequest(Default::default())),
                    )
                    .await;
                    if !matches!(ping, Ok(Ok(_))) {
                        server
                            .mark_failed(&client, "it stopped responding (a ping timed out)".into())
                            .await;
                    }
                });
                return Err(ToolError::failed(timeout_text(
                    &self.server.name,
                    timeout.as_secs(),
                )));
            }
            // The server answered, but over the size limit (see `capped`): the call fails
            // at once with the size, and the server stays up.
            Err(ServiceError::McpError(e)) if crate::capped::is_oversized(&e) => {
                return Err(ToolError::failed(e.message.to_string()));
            }
            Err(e) => return Err(self.lost(&client, e)),
        };
        let value = serde_json::to_value(&result).unwrap_or_default();
        // A large result's texts were streamed to disk on the way in (see `streamed`).
        if let Some(out) =
            crate::streamed::deliver(&value, self.server.spills(), &self.server.name, &ctx)
        {
            return out;
        }
        crate::content::convert(&value).map_err(ToolError::failed)
    }
}

impl McpTool {
    fn lost(&self, client: &Arc<crate::server::Client>, e: ServiceError) -> ToolError {
        let why = match e {
            ServiceError::TransportClosed => self.server.exit_reason("the connection closed"),
            other => self.server.exit_reason(&other.to_string()),
        };
        let server = self.server.clone();
        let reason = why.clone();
        let client = client.clone();
        tokio::spawn(async move { server.mark_failed(&client, reason).await });
        ToolError::failed(died_text(&self.server.name, &why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_facing_texts_are_pinned() {
        assert_eq!(
            died_text("fs", "the connection closed"),
            "MCP server `fs` stopped during the call (the connection closed); it will be restarted on the next call"
        );
        assert_eq!(
            timeout_text("fs", 120),
            "MCP server `fs` did not answer within 120 s; the call was cancelled (raise `timeout` under [mcp.fs] if it needs longer)"
        );
        assert_eq!(
            crate::McpError::Unavailable {
                server: "fs".into(),
                reason: "did not start within 30 s (startup_timeout)".into()
            }
            .to_string(),
            "MCP server `fs` is unavailable: did not start within 30 s (startup_timeout)"
        );
        assert_eq!(
            crate::McpError::Disabled("fs".into()).to_string(),
            "MCP server `fs` is disabled in config (`enabled = false` under [mcp.fs])"
        );
        assert_eq!(
            crate::unavailable_text("fs", "boom"),
            "MCP server `fs` is unavailable: boom; its tools fail until it starts again (it is restarted on the next call)"
        );
    }
}
