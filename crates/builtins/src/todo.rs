//! The session's todo list: `todowrite` replaces it, `todoread` returns it. The model keeps a
//! checklist of multi-step work that the user sees (front ends show the `todos` metadata of
//! each `todowrite` as a checklist; plugins get opencode's `todo.updated`).
//!
//! Data flow: `todowrite {todos}` → every item is checked (content, one of the four
//! statuses, one of the three priorities; a bad item fails the call naming it and nothing
//! changes) → the answer is the list as JSON, titled with the number of open items, with
//! `{todos}` as metadata. The list *is* the last completed `todowrite` call's arguments in the
//! session's call log, so it lives with the session: a resumed session or one whose
//! conversation was compacted reads the same list (`todoread`). `todowrite`'s parameter
//! schema is opencode's, byte for byte, so tools and plugins written for it see the same.

use async_trait::async_trait;
use podcode_protocol::{PermissionRequest, ToolResult, ToolSpec};
use podcode_tools::{Tool, ToolContext, ToolError};
use serde_json::{Value, json};

/// The statuses an item may have.
pub const STATUSES: [&str; 4] = ["pending", "in_progress", "completed", "cancelled"];
/// The priorities an item may have.
pub const PRIORITIES: [&str; 3] = ["high", "medium", "low"];

const WRITE_DESCRIPTION: &str = "Replaces the session's todo list: a checklist of the current multi-step work that the user sees as you work.
Use it when a task needs three or more steps, or when the user gives several things to do: write the whole list at the start, mark one item `in_progress` before working on it, and `completed` as soon as it is done (not in batches). Add items you discover; mark items that no longer apply `cancelled`.
Skip it for a single, simple step or a question.
Each item: `content` (what to do, imperative), `status` (pending, in_progress, completed or cancelled), `priority` (high, medium or low). Send the whole list every time.";

const READ_DESCRIPTION: &str = "Returns the session's todo list as last written with todowrite (an empty list if none). Use it to check what is left before continuing multi-step work, e.g. after the conversation was summarised.";

/// opencode's `todowrite` parameter schema, as its JSON text.
const WRITE_SCHEMA: &str = r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"todos":{"type":"array","items":{"type":"object","properties":{"content":{"type":"string","description":"Brief description of the task"},"status":{"type":"string","description":"Current status of the task: pending, in_progress, completed, cancelled"},"priority":{"type":"string","description":"Priority level of the task: high, medium, low"}},"required":["content","status","priority"]},"description":"The updated todo list"}},"required":["todos"]}"#;

/// The error for an item the list cannot hold.
pub fn bad_item_text(index: usize, problem: &str) -> String {
    format!(
        "todo item {index} {problem}; the list was not changed. Send the whole list again with every item fixed."
    )
}

fn check(todos: &[Value]) -> Result<(), ToolError> {
    for (i, item) in todos.iter().enumerate() {
        let field = |k: &str| item.get(k).and_then(Value::as_str).unwrap_or("");
        let n = i + 1;
        if field("content").trim().is_empty() {
            return Err(ToolError::failed(bad_item_text(n, "has no content")));
        }
        for (key, allowed) in [("status", &STATUSES[..]), ("priority", &PRIORITIES[..])] {
            if !allowed.contains(&field(key)) {
                let problem = format!(
                    "has {key} {:?}: use one of {}",
                    field(key),
                    allowed.join(", ")
                );
                return Err(ToolError::failed(bad_item_text(n, &problem)));
            }
        }
    }
    Ok(())
}

/// The result both tools give: the list as JSON, titled by what is left to do.
fn listing(todos: Vec<Value>) -> ToolResult {
    let open = todos
        .iter()
        .filter(|t| !matches!(t["status"].as_str(), Some("completed" | "cancelled")))
        .count();
    let output = serde_json::to_string_pretty(&todos).unwrap_or_else(|_| "[]".into());
    ToolResult::text(output)
        .with_title(format!("{open} todos"))
        .with_metadata(json!({ "todos": todos }))
}

pub struct TodoWriteTool {
    spec: ToolSpec,
}

impl TodoWriteTool {
    pub fn new() -> Self {
        let schema = serde_json::from_str(WRITE_SCHEMA).unwrap_or_default();
        Self {
            spec: ToolSpec::new("todowrite", WRITE_DESCRIPTION, schema),
        }
    }
}

#[async_trait]
impl Tool for TodoWriteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let todos = args["todos"].as_array().cloned().unwrap_or_default();
        check(&todos)?;
        ctx.ask(PermissionRequest {
            permission: "todowrite".into(),
            patterns: vec!["*".into()],
            always: vec!["*".into()],
            metadata: json!({}),
        })
        .await?;
        Ok(listing(todos))
    }
}

pub struct TodoReadTool {
    spec: ToolSpec,
}

impl TodoReadTool {
    pub fn new() -> Self {
        let schema = json!({"type": "object", "properties": {}});
        Self {
            spec: ToolSpec::new("todoread", READ_DESCRIPTION, schema).idempotent(true),
        }
    }
}

#[async_trait]
impl Tool for TodoReadTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, _args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        ctx.ask(PermissionRequest {
            permission: "todoread".into(),
            patterns: vec!["*".into()],
            always: vec!["*".into()],
            metadata: json!({}),
        })
        .await?;
        let last = ctx.last_args_of("todowrite")?;
        let todos = last
            .and_then(|a| a["todos"].as_array().cloned())
            .unwrap_or_default();
        Ok(listing(todos))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_facing_texts_are_pinned() {
        assert_eq!(
            bad_item_text(2, "has no content"),
            "todo item 2 has no content; the list was not changed. Send the whole list again with every item fixed."
        );
        let spec = TodoWriteTool::new().spec;
        assert_eq!(spec.parameters.to_string(), WRITE_SCHEMA);
        assert!(
            spec.description
                .starts_with("Replaces the session's todo list")
        );
        assert!(
            TodoReadTool::new()
                .spec
                .description
                .starts_with("Returns the session's todo list")
        );
    }

    #[test]
    fn items_are_checked_and_the_title_counts_what_is_left() {
        let ok = json!([
            {"content": "a", "status": "completed", "priority": "high"},
            {"content": "b", "status": "in_progress", "priority": "low"},
            {"content": "c", "status": "cancelled", "priority": "low"},
        ]);
        let items = ok.as_array().unwrap();
        assert!(check(items).is_ok());
        assert_eq!(listing(items.clone()).title, "1 todos");
        let bad = json!([{"content": "a", "status": "done", "priority": "high"}]);
        let Err(ToolError::Failed { message, .. }) = check(bad.as_array().unwrap()) else {
            panic!("a bad status passed");
        };
        assert_eq!(
            message,
            bad_item_text(
                1,
                "has status \"done\": use one of pending, in_progress, completed, cancelled"
            )
        );
    }
}
