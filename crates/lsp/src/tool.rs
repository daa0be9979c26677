//! The `lsp` tool: what the workspace's language servers know, for the model — a file's
//! diagnostics, where a symbol is defined or implemented, its references, its hover text,
//! a file's symbols and the workspace's. Operation names are opencode's (`goToDefinition`,
//! `findReferences`, …) plus `diagnostics`; positions are 1-based as editors show them.
//! Read-only: it asks `lsp` permission for the file (allowed by default).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use podcode_protocol::{PermissionRequest, ToolResult, ToolSpec};
use podcode_tools::{Tool, ToolContext, ToolError};
use serde_json::{Value, json};

use crate::framing::{file_uri, uri_path};
use crate::manager::{LspManager, diagnostic_line};

/// The operations, in the order the description lists them.
pub const OPERATIONS: [&str; 7] = [
    "diagnostics",
    "goToDefinition",
    "findReferences",
    "hover",
    "documentSymbol",
    "workspaceSymbol",
    "goToImplementation",
];

const DESCRIPTION: &str = "Asks the project's language servers (type checkers) about code. Operations:
- diagnostics: the errors and warnings in filePath as the language server sees them now
- goToDefinition / goToImplementation: where the symbol at filePath:line:character is defined / implemented
- findReferences: every use of the symbol at filePath:line:character
- hover: its type and documentation
- documentSymbol: the functions, types and variables in filePath
- workspaceSymbol: symbols across the project matching query (filePath picks the language server)
line and character are 1-based, as editors show them. Edits already report new errors in their result: use this to look things up.";

/// What the model reads when no server handles a file.
pub fn no_server_text(file: &str) -> String {
    format!(
        "no language server handles {file}: none is configured for its type or its program is not installed (`podcode lsp` lists them)"
    )
}

/// The `lsp` tool over a workspace's servers.
pub struct LspTool {
    spec: ToolSpec,
    manager: Arc<LspManager>,
}

impl LspTool {
    /// The tool over `manager`'s servers.
    pub fn new(manager: Arc<LspManager>) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "operation": {"type": "string", "enum": OPERATIONS, "description": "The LSP operation to perform"},
                "filePath": {"type": "string", "description": "The absolute or relative path to the file"},
                "line": {"type": "integer", "minimum": 1, "description": "The line number (1-based, as shown in editors)"},
                "character": {"type": "integer", "minimum": 1, "description": "The character offset (1-based, as shown in editors)"},
                "query": {"type": "string", "description": "Search query for workspaceSymbol. Empty string requests all symbols."},
            },
            "required": ["operation", "filePath"],
        });
        Self {
            spec: ToolSpec::new("lsp", DESCRIPTION, parameters).idempotent(true),
            manager,
        }
    }
}

fn position(args: &Value) -> Result<Value, ToolError> {
    let get = |k: &str| args.get(k).and_then(Value::as_u64).filter(|n| *n >= 1);
    match (get("line"), get("character")) {
        (Some(line), Some(character)) => Ok(json!({"line": line - 1, "character": character - 1})),
        _ => Err(ToolError::failed(format!(
            "{} needs line and character (1-based, as editors show them)",
            args["operation"].as_str().unwrap_or("this operation")
        ))),
    }
}

#[async_trait]
impl Tool for LspTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let operation = args["operation"].as_str().unwrap_or("").to_string();
        let given = args["filePath"].as_str().unwrap_or("");
        let file: PathBuf = ctx.directory().join(given);
        let shown = self.manager.shown(&file);
        ctx.ask(PermissionRequest {
            permission: "lsp".into(),
            patterns: vec![file.display().to_string()],
            always: vec!["*".into()],
            metadata: json!({"operation": operation, "filePath": file}),
        })
        .await?;
        if !file.is_file() {
            return Err(ToolError::failed(format!("file not found: {shown}")));
        }
        let wait = self.manager.settings().wait.max(Duration::from_secs(10));
        let deadline = tokio::time::Instant::now() + wait;
        let title = format!("{operation} {shown}");
        if operation == "diagnostics" {
            let diags = match self.manager.check(&file, deadline).await {
                None => return Err(ToolError::failed(no_server_text(&shown))),
                Some(Err(note)) => return Err(ToolError::failed(note)),
                Some(Ok(d)) => d,
            };
            let lines: Vec<String> = diags.iter().map(|d| diagnostic_line(&shown, d)).collect();
            let output = if lines.is_empty() {
                format!("no diagnostics in {shown}")
            } else {
                lines.join("\n")
            };
            return Ok(ToolResult::text(output).with_title(title));
        }
        let (_, client, _in_use) = match self.manager.client_for(&file, deadline).await {
            None => return Err(ToolError::failed(no_server_text(&shown))),
            Some(Err(note)) => return Err(ToolError::failed(note)),
            Some(Ok(c)) => c,
        };
        let text = std::fs::read_to_string(&file)
            .map_err(|e| ToolError::failed(format!("could not read {shown}: {e}")))?;
        let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
        client
            .sync(&file, crate::servers::language_id(ext), &text)
            .await;
        let doc = json!({"uri": file_uri(&file)});
        let (method, params) = match operation.as_str() {
            "goToDefinition" => (
                "textDocument/definition",
                json!({"textDocument": doc, "position": position(&args)?}),
            ),
            "goToImplementation" => (
                "textDocument/implementation",
                json!({"textDocument": doc, "position": position(&args)?}),
            ),
            "findReferences" => (
                "textDocument/references",
                json!({"textDocument": doc, "position": position(&args)?, "context": {"includeDeclaration": true}}),
            ),
            "hover" => (
                "textDocument/hover",
                json!({"textDocument": doc, "position": position(&args)?}),
            ),
            "documentSymbol" => ("textDocument/documentSymbol", json!({"textDocument": doc})),
            "workspaceSymbol" => (
                "workspace/symbol",
                json!({"query": args["query"].as_str().unwrap_or("")}),
            ),
            other => {
                return Err(ToolError::failed(format!(
                    "unknown operation {other:?}: use one of {}",
                    OPERATIONS.join(", ")
                )));
            }
        };
        let wait = deadline.saturating_duration_since(tokio::time::Instant::now());
        let reply = client
            .request(method, params, wait)
            .await
            .map_err(ToolError::failed)?;
        let output = match operation.as_str() {
            "hover" => hover_text(&reply),
            "documentSymbol" | "workspaceSymbol" => symbols_text(&reply, &self.manager),
            _ => locations_text(&reply, &self.manager),
        };
        let output = if output.trim().is_empty() {
            format!("{operation}: nothing found")
        } else {
            output
        };
        Ok(ToolResult::text(output).with_title(title))
    }
}

/// `path:line:col` and the line's text, for each location (`Location`, `LocationLink`).
fn locations_text(reply: &Value, manager: &LspManager) -> String {
    let items: Vec<Value> = match reply {
        Value::Array(a) => a.clone(),
        Value::Null => Vec::new(),
        one => vec![one.clone()],
    };
    items
        .iter()
        .filter_map(|loc| {
            let uri = loc.get("uri").or_else(|| loc.get("targetUri"))?.as_str()?;
            let range = loc
                .get("range")
                .or_else(|| loc.get("targetSelectionRange"))?;
            let path = uri_path(uri)?;
            let line = range["start"]["line"].as_u64()?;
            let col = range["start"]["character"].as_u64()?;
            let source = line_of(&path, line as usize);
            Some(format!(
                "{}:{}:{}  {}",
                manager.shown(&path),
                line + 1,
                col + 1,
                source.trim()
            ))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn line_of(path: &Path, index: usize) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| t.lines().nth(index).map(str::to_string))
        .unwrap_or_default()
}

fn hover_text(reply: &Value) -> String {
    fn piece(v: &Value) -> String {
        match v {
            Value::String(s) => s.clone(),
            Value::Array(a) => a.iter().map(piece).collect::<Vec<_>>().join("\n\n"),
            Value::Object(o) => o
                .get("value")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            _ => String::new(),
        }
    }
    piece(&reply["contents"])
}

const SYMBOL_KINDS: [&str; 26] = [
    "file",
    "module",
    "namespace",
    "package",
    "class",
    "method",
    "property",
    "field",
    "constructor",
    "enum",
    "interface",
    "function",
    "variable",
    "constant",
    "string",
    "number",
    "boolean",
    "array",
    "object",
    "key",
    "null",
    "enum member",
    "struct",
    "event",
    "operator",
    "type parameter",
];

fn symbols_text(reply: &Value, manager: &LspManager) -> String {
    let mut out = Vec::new();
    fn walk(items: &[Value], depth: usize, manager: &LspManager, out: &mut Vec<String>) {
        for s in items {
            let kind = s["kind"]
                .as_u64()
                .and_then(|k| SYMBOL_KINDS.get((k as usize).saturating_sub(1)))
                .unwrap_or(&"symbol");
            let name = s["name"].as_str().unwrap_or("?");
            let (place, line) = match (s.get("location"), s.get("selectionRange")) {
                (Some(loc), _) => {
                    let path = loc["uri"].as_str().and_then(uri_path);
                    let line = loc["range"]["start"]["line"].as_u64();
                    (path.map(|p| manager.shown(&p)), line)
                }
                (None, Some(r)) => (None, r["start"]["line"].as_u64()),
                _ => (None, None),
            };
            let at = match (place, line) {
                (Some(p), Some(l)) => format!(" {p}:{}", l + 1),
                (Some(p), None) => format!(" {p}"),
                (None, Some(l)) => format!(" line {}", l + 1),
                (None, None) => String::new(),
            };
            out.push(format!("{}{kind} {name}{at}", "  ".repeat(depth)));
            if let Some(children) = s["children"].as_array() {
                walk(children, depth + 1, manager, out);
            }
        }
    }
    walk(
        reply.as_array().map_or(&[][..], Vec::as_slice),
        0,
        manager,
        &mut out,
    );
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LspSettings;

    #[test]
    fn model_facing_texts_are_pinned() {
        let manager = LspManager::new(LspSettings {
            project: "/p".into(),
            servers: vec![],
            wait: Duration::from_secs(3),
            warnings: false,
            per_file: 20,
            sandbox: None,
            project_programs: false,
            idle: Duration::from_secs(600),
        });
        let tool = LspTool::new(manager);
        assert_eq!(tool.spec().description, DESCRIPTION);
        assert!(DESCRIPTION.starts_with("Asks the project's language servers (type checkers) about code. Operations:\n- diagnostics: the errors and warnings in filePath"));
        assert_eq!(
            no_server_text("a.zig"),
            "no language server handles a.zig: none is configured for its type or its program is not installed (`podcode lsp` lists them)"
        );
        assert_eq!(
            crate::no_answer_text("typescript", "a.ts", Duration::from_secs(3)),
            "(typescript reported no diagnostics for a.ts within 3000 ms; they are not checked)"
        );
        assert_eq!(
            crate::starting_text("pyright"),
            "(pyright is still starting: diagnostics come with a later edit, or ask the lsp tool in a moment)"
        );
        assert_eq!(
            crate::DIAGNOSTICS_HEADER,
            "Language server diagnostics for the changed files:"
        );
    }
}
