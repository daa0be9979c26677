//! Stage 1, resolve + parse: the called name becomes one registered tool and the raw
//! arguments one JSON value, each exactly once per call. The result, a `PreparedCall`, is
//! what the later stages run. A caller that looks at a call before running it (the agent:
//! is it idempotent, is it the third identical call in a row?) prepares it with
//! `ToolRuntime::prepare` and hands the same `PreparedCall` to `call_prepared`.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{RawArgs, ToolRuntime};
use crate::registry::{RegisteredTool, ToolRegistry};
use crate::texts;

/// A call resolved and parsed, not yet run.
pub struct PreparedCall {
    /// The name the model used.
    name: String,
    /// The tool the name resolved to, or the model-facing text naming the closest ids.
    tool: Result<ResolvedTool, String>,
    /// The parsed arguments; when they are not JSON, the raw text as a JSON string.
    args: Value,
    /// Why the arguments are not JSON, when they are not.
    parse_error: Option<String>,
}

/// One entry of the registry a name resolved in. Holding the registry keeps the call on
/// the tool it resolved even when a reload swaps in a new registry meanwhile.
pub(super) struct ResolvedTool {
    registry: Arc<ToolRegistry>,
    index: usize,
}

impl ResolvedTool {
    pub fn entry(&self) -> &RegisteredTool {
        // The index came from this registry, which never changes behind its `Arc`.
        &self.registry.tools()[self.index]
    }

    /// Whether the runtime can tell the model to page a spill file with this tool.
    pub fn registry_has(&self, id: &str) -> bool {
        self.registry.contains(id)
    }
}

/// Why a call ended before it started, and what its record shows.
pub(super) struct Unstarted {
    pub tool: String,
    pub args: Value,
    pub text: String,
}

impl PreparedCall {
    /// The name the model used.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The resolved tool's id, or the name the model used when it resolved to nothing.
    pub fn tool_id(&self) -> &str {
        match &self.tool {
            Ok(t) => t.entry().id(),
            Err(_) => &self.name,
        }
    }

    /// True when the name resolved to a tool marked idempotent (safe to run in parallel
    /// and to retry).
    pub fn is_idempotent(&self) -> bool {
        self.tool
            .as_ref()
            .is_ok_and(|t| t.entry().tool.spec().idempotent)
    }

    /// The arguments as parsed: empty text is `{}`; text that is not JSON is kept as a JSON
    /// string (the call will fail with the invalid-JSON text when it runs).
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// Splits into what the later stages need, or what to record for a call that cannot
    /// start. An unknown name wins over bad JSON: without a tool there is no id to name.
    pub(super) fn into_resolved(self) -> Result<(ResolvedTool, Value), Unstarted> {
        let tool = match self.tool {
            Ok(t) => t,
            Err(text) => {
                return Err(Unstarted {
                    tool: self.name,
                    args: Value::Null,
                    text,
                });
            }
        };
        match self.parse_error {
            None => Ok((tool, self.args)),
            Some(e) => {
                let id = tool.entry().id().to_string();
                Err(Unstarted {
                    text: texts::invalid_json_text(&id, &e),
                    tool: id,
                    args: self.args,
                })
            }
        }
    }
}

impl ToolRuntime {
    /// Stage 1: resolves `name` in the current registry and parses `args`, once.
    pub fn prepare(&self, name: &str, args: RawArgs) -> PreparedCall {
        let registry = self.registry();
        let tool = registry
            .resolve_index(name)
            .map(|index| ResolvedTool { registry, index });
        let (args, parse_error) = match args {
            RawArgs::Json(v) => (v, None),
            RawArgs::Text(t) if t.trim().is_empty() => (json!({}), None),
            RawArgs::Text(t) => match serde_json::from_str::<Value>(&t) {
                Ok(v) => (v, None),
                Err(e) => (Value::String(t), Some(e.to_string())),
            },
        };
        PreparedCall {
            name: name.to_string(),
            tool,
            args,
            parse_error,
        }
    }
}
