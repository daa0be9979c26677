//! The MCP resource tools, offered when a connected server declares the `resources`
//! capability (opencode offers the same three under the same names and arguments):
//! `list_mcp_resources` and `list_mcp_resource_templates` list what the servers offer, each
//! entry carrying its `server`; `read_mcp_resource` reads one URI and turns its contents into
//! text the model reads (text contents verbatim, images and PDFs attached, other binaries
//! named and left out). They gate themselves with the `read` permission and the pattern
//! `mcp:<server>:<uri>` (listing: `mcp:<server>:*`), so `read` rules and a tool's own id rule
//! both apply; a server that fails is named in the answer and the others still list.

use std::sync::Arc;

use async_trait::async_trait;
use podcode_protocol::{Attachment, PermissionRequest, ToolResult, ToolSpec};
use podcode_tools::{Tool, ToolContext, ToolError};
use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::{Map, Value, json};

use crate::server::McpServer;

/// The tool source the resource tools are listed under.
pub const SOURCE: &str = "mcp:resources";
/// Tool ids, as opencode names them.
pub const LIST: &str = "list_mcp_resources";
/// See [`LIST`].
pub const LIST_TEMPLATES: &str = "list_mcp_resource_templates";
/// See [`LIST`].
pub const READ: &str = "read_mcp_resource";

/// Binary contents larger than this are named, not attached.
const MAX_ATTACHMENT_BYTES: usize = 10 * 1024 * 1024;
/// Binary types a model can take as an attachment.
const ATTACHABLE: [&str; 5] = [
    "application/pdf",
    "image/gif",
    "image/jpeg",
    "image/png",
    "image/webp",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    List,
    Templates,
    Read,
}

/// The three resource tools over `servers` (those that declared resources).
pub fn tools(servers: &[Arc<McpServer>]) -> Vec<Arc<dyn Tool>> {
    [Kind::List, Kind::Templates, Kind::Read]
        .into_iter()
        .map(|kind| {
            Arc::new(ResourceTool {
                spec: spec(kind),
                kind,
                servers: servers.to_vec(),
            }) as Arc<dyn Tool>
        })
        .collect()
}

fn spec(kind: Kind) -> ToolSpec {
    let server_filter = |what: &str| {
        json!({"type": "object", "properties": {"server": {"type": "string",
            "description": format!("Optional MCP server name. When omitted, lists {what} from every connected server.")}},
            "additionalProperties": false})
    };
    let mut spec = match kind {
        Kind::List => ToolSpec::new(
            LIST,
            "Lists the resources connected MCP servers offer (files, database schemas, documents and other context), with each one's server, URI, name and type. Read one with read_mcp_resource.",
            server_filter("resources"),
        ),
        Kind::Templates => ToolSpec::new(
            LIST_TEMPLATES,
            "Lists the resource templates connected MCP servers offer: URI templates with {placeholders}; fill them in and read the resulting URI with read_mcp_resource.",
            server_filter("resource templates"),
        ),
        Kind::Read => ToolSpec::new(
            READ,
            "Reads one resource from an MCP server by its server name and URI. The URI is the server's identifier (as list_mcp_resources gives it, or a filled-in template) and need not be a file URL.",
            json!({"type": "object", "properties": {
                "server": {"type": "string", "description": "MCP server name exactly as returned by list_mcp_resources."},
                "uri": {"type": "string", "description": "Resource URI to read. Use the exact URI string returned by list_mcp_resources."}},
                "required": ["server", "uri"], "additionalProperties": false}),
        ),
    };
    spec.idempotent = true;
    spec
}

/// The error for a `server` argument that names no server with resources.
pub fn no_resources_text(server: &str, available: &[String]) -> String {
    if available.is_empty() {
        format!("MCP server `{server}` offers no resources")
    } else {
        format!(
            "MCP server `{server}` offers no resources; servers with resources: {}",
            available.join(", ")
        )
    }
}

struct ResourceTool {
    spec: ToolSpec,
    kind: Kind,
    servers: Vec<Arc<McpServer>>,
}

#[async_trait]
impl Tool for ResourceTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let server = args.get("server").and_then(Value::as_str).unwrap_or("");
        let targets = self.targets(server)?;
        let names: Vec<String> = targets.iter().map(|s| s.name.clone()).collect();
        let run = async {
            match self.kind {
                Kind::Read => {
                    let uri = args.get("uri").and_then(Value::as_str).unwrap_or("");
                    ctx.ask(ask(
                        vec![format!("mcp:{server}:{uri}")],
                        vec![format!("mcp:{server}:*")],
                        json!({"server": server, "uri": uri}),
                    ))
                    .await?;
                    read(&targets[0], uri, &ctx).await
                }
                Kind::List | Kind::Templates => {
                    let patterns: Vec<String> =
                        names.iter().map(|n| format!("mcp:{n}:*")).collect();
                    let meta = if server.is_empty() {
                        json!({})
                    } else {
                        json!({"server": server})
                    };
                    ctx.ask(ask(patterns.clone(), patterns, meta)).await?;
                    Ok(self.list(&targets, server).await)
                }
            }
        };
        tokio::select! {
            r = run => r,
            _ = ctx.abort().cancelled() => Err(ToolError::Aborted),
        }
    }
}

fn ask(patterns: Vec<String>, always: Vec<String>, metadata: Value) -> PermissionRequest {
    PermissionRequest {
        permission: "read".into(),
        patterns,
        always,
        metadata,
    }
}

impl ResourceTool {
    /// The servers a call covers: the one named, or (listing) every one with resources.
    fn targets(&self, server: &str) -> Result<Vec<Arc<McpServer>>, ToolError> {
        let mut available: Vec<String> = self.servers.iter().map(|s| s.name.clone()).collect();
        available.sort();
        if server.is_empty() {
            let mut all = self.servers.clone();
            all.sort_by(|a, b| a.name.cmp(&b.name));
            return Ok(all);
        }
        match self.servers.iter().find(|s| s.name == server) {
            Some(s) => Ok(vec![s.clone()]),
            None => Err(ToolError::failed(no_resources_text(server, &available))),
        }
    }

    async fn list(&self, targets: &[Arc<McpServer>], server: &str) -> ToolResult {
        let (key, title) = match self.kind {
            Kind::Templates => ("resourceTemplates", "MCP resource templates"),
            _ => ("resources", "MCP resources"),
        };
        let mut entries: Vec<Value> = Vec::new();
        let mut unavailable = Vec::new();
        for s in targets {
            match self.list_one(s).await {
                Ok(items) => entries.extend(items.into_iter().map(|mut v| {
                    if let Value::Object(map) = &mut v {
                        map.insert("server".into(), Value::String(s.name.clone()));
                    }
                    v
                })),
                Err(e) => unavailable.push(json!({"server": s.name, "error": e})),
            }
        }
        let sort_key = |v: &Value| {
            let f = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            (f("server"), f("name"), f("uri"), f("uriTemplate"))
        };
        entries.sort_by_key(sort_key);
        let count = entries.len();
        let mut body = Map::new();
        body.insert(key.into(), Value::Array(entries));
        if !unavailable.is_empty() {
            body.insert("unavailable".into(), Value::Array(unavailable));
        }
        let output = serde_json::to_string_pretty(&body).unwrap_or_default();
        let title = if server.is_empty() {
            title.to_string()
        } else {
            format!("{title}: {server}")
        };
        let servers: Vec<&str> = targets.iter().map(|s| s.name.as_str()).collect();
        ToolResult::text(output)
            .with_title(title)
            .with_metadata(json!({"count": count, "servers": servers}))
    }

    async fn list_one(&self, server: &McpServer) -> Result<Vec<Value>, String> {
        let client = server.client().await.map_err(|e| e.to_string())?;
        let listed = match self.kind {
            Kind::Templates => timed(server, client.list_all_resource_templates())
                .await
                .map(|v| serde_json::to_value(v).unwrap_or_default()),
            _ => timed(server, client.list_all_resources())
                .await
                .map(|v| serde_json::to_value(v).unwrap_or_default()),
        }?;
        Ok(match listed {
            Value::Array(items) => items,
            _ => Vec::new(),
        })
    }
}

/// Runs one request within the server's call timeout.
async fn timed<T>(
    server: &McpServer,
    request: impl std::future::Future<Output = Result<T, rmcp::service::ServiceError>>,
) -> Result<T, String> {
    let limit = server.call_timeout();
    match tokio::time::timeout(limit, request).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(format!("MCP server `{}` refused: {e}", server.name)),
        Err(_) => Err(crate::tool::timeout_text(&server.name, limit.as_secs())),
    }
}

async fn read(server: &McpServer, uri: &str, ctx: &ToolContext) -> Result<ToolResult, ToolError> {
    let client = server
        .client()
        .await
        .map_err(|e| ToolError::failed(e.to_string()))?;
    let result = timed(
        server,
        client.read_resource(ReadResourceRequestParams::new(uri)),
    )
    .await
    .map_err(ToolError::failed)?;
    let (text, attachments) = contents_text(&server.name, uri, &result.contents);
    let mut out = ToolResult::text(text)
        .with_title(format!("MCP resource: {uri}"))
        .with_metadata(json!({"server": server.name, "uri": uri,
            "contents": result.contents.len(), "attachments": attachments.len()}));
    if ctx.model_takes_images() {
        out.attachments = attachments;
    }
    Ok(out)
}

/// The model's text for a read's contents, and the binaries to attach.
pub fn contents_text(
    server: &str,
    uri: &str,
    contents: &[ResourceContents],
) -> (String, Vec<Attachment>) {
    let mut parts = Vec::new();
    let mut attachments = Vec::new();
    for c in contents {
        match c {
            ResourceContents::TextResourceContents {
                uri: at,
                mime_type,
                text,
                ..
            } => {
                let mime = mime_type.as_deref().unwrap_or("text/plain");
                parts.push(format!("Resource: {at}\nMIME: {mime}\n{text}"));
            }
            ResourceContents::BlobResourceContents {
                uri: at,
                mime_type,
                blob,
                ..
            } => {
                let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
                let bytes = base64_len(blob);
                let size = human_size(bytes);
                if !ATTACHABLE.contains(&mime) {
                    parts.push(format!(
                        "[binary resource left out: {at} ({mime}, {size}) is not a type a model can read]"
                    ));
                } else if bytes > MAX_ATTACHMENT_BYTES {
                    parts.push(format!(
                        "[binary resource left out: {at} ({mime}, {size}) is over the {} attachment limit]",
                        human_size(MAX_ATTACHMENT_BYTES)
                    ));
                } else {
                    parts.push(format!("[binary resource attached: {at} ({mime})]"));
                    attachments.push(Attachment {
                        url: format!("data:{mime};base64,{blob}"),
                        mime: mime.to_string(),
                        filename: Some(at.clone()),
                    });
                }
            }
            // A content kind newer than this client: say so rather than drop it unseen.
            _ => parts.push(format!(
                "[resource content of a kind Podcode cannot show: {uri}]"
            )),
        }
    }
    if parts.is_empty() {
        parts.push(format!(
            "MCP server `{server}` returned no contents for {uri}"
        ));
    }
    (parts.join("\n\n"), attachments)
}

/// The decoded size of base64 text.
fn base64_len(b64: &str) -> usize {
    let chars = b64.bytes().filter(|c| !c.is_ascii_whitespace()).count();
    let pad = b64
        .trim_end()
        .bytes()
        .rev()
        .take_while(|&c| c == b'=')
        .count();
    (chars * 3 / 4).saturating_sub(pad)
}

fn human_size(bytes: usize) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{} KB", b.div_ceil(1024)),
        b => format!("{} MB", b.div_ceil(1024 * 1024)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_facing_texts_and_specs_are_pinned() {
        assert_eq!(
            no_resources_text("fs", &["docs".into(), "everything".into()]),
            "MCP server `fs` offers no resources; servers with resources: docs, everything"
        );
        assert_eq!(
            no_resources_text("fs", &[]),
            "MCP server `fs` offers no resources"
        );
        let read = spec(Kind::Read);
        assert_eq!(read.parameters["required"], json!(["server", "uri"]));
        assert_eq!(
            read.description,
            "Reads one resource from an MCP server by its server name and URI. The URI is the server's identifier (as list_mcp_resources gives it, or a filled-in template) and need not be a file URL."
        );
        assert_eq!(
            spec(Kind::List).description,
            "Lists the resources connected MCP servers offer (files, database schemas, documents and other context), with each one's server, URI, name and type. Read one with read_mcp_resource."
        );
        assert_eq!(
            spec(Kind::Templates).description,
            "Lists the resource templates connected MCP servers offer: URI templates with {placeholders}; fill them in and read the resulting URI with read_mcp_resource."
        );
    }

    #[test]
    fn contents_become_text_attachments_or_a_note() {
        let contents = vec![
            ResourceContents::TextResourceContents {
                uri: "db://schema".into(),
                mime_type: Some("text/sql".into()),
                text: "CREATE TABLE t (x int);".into(),
                meta: None,
            },
            ResourceContents::BlobResourceContents {
                uri: "img://dot".into(),
                mime_type: Some("image/png".into()),
                blob: "iVBORw0KGgo=".into(),
                meta: None,
            },
            ResourceContents::BlobResourceContents {
                uri: "bin://x".into(),
                mime_type: Some("application/zip".into()),
                blob: "AAAA".into(),
                meta: None,
            },
        ];
        let (text, attachments) = contents_text("s", "db://schema", &contents);
        assert_eq!(
            text,
            "Resource: db://schema\nMIME: text/sql\nCREATE TABLE t (x int);\n\n[binary resource attached: img://dot (image/png)]\n\n[binary resource left out: bin://x (application/zip, 3 B) is not a type a model can read]"
        );
        assert_eq!(attachments.len(), 1);
        assert_eq!(attachments[0].url, "data:image/png;base64,iVBORw0KGgo=");
        assert_eq!(
            contents_text("s", "x://y", &[]).0,
            "MCP server `s` returned no contents for x://y"
        );
    }
}
