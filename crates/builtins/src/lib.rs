//! The protected built-in tools: read list write edit apply_patch glob grep bash symbols
//! webfetch sync_to_main todowrite todoread. Each one
//! carries its own permission gate inside `execute` (that is why plugins may not replace
//! them) and journals every file it changes. `register_all` puts them into a registry;
//! `default_rules` are the permission defaults that make read-only tools quiet.

mod apply_patch;
mod bash;
mod edit;
mod glob;
mod grep;
mod list;
mod read;
mod secrets;
mod symbols;
pub mod sync_to_main;
mod todo;
mod webfetch;
mod workspace;
mod write;

use std::sync::Arc;

use podcode_protocol::{PermissionAction, PermissionRule};
use podcode_tools::ToolRegistry;

pub use secrets::{Secret, classify as classify_secret};
pub use todo::{PRIORITIES as TODO_PRIORITIES, STATUSES as TODO_STATUSES};
/// Whether an address is internal (loopback, private, link-local, …): shared with the
/// browser tools, which gate navigations the way webfetch gates downloads.
pub use webfetch::is_private as is_private_address;
pub use workspace::{FileTimes, ResolvedPath, Workspace};

/// Registers every built-in, sharing one `FileTimes` so `write`/`edit` know what `read` saw.
pub fn register_all(registry: &mut ToolRegistry) {
    let times = Arc::new(FileTimes::default());
    registry.register_builtin(Arc::new(read::ReadTool::new(times.clone())));
    registry.register_builtin(Arc::new(list::ListTool::new()));
    registry.register_builtin(Arc::new(glob::GlobTool::new()));
    registry.register_builtin(Arc::new(grep::GrepTool::new()));
    registry.register_builtin(Arc::new(write::WriteTool::new(times.clone())));
    registry.register_builtin(Arc::new(edit::EditTool::new(times.clone())));
    registry.register_builtin(Arc::new(apply_patch::ApplyPatchTool::new(times)));
    registry.register_builtin(Arc::new(bash::BashTool::new()));
    registry.register_builtin(Arc::new(symbols::SymbolsTool::new()));
    registry.register_builtin(Arc::new(webfetch::WebfetchTool::new()));
    registry.register_builtin(Arc::new(sync_to_main::SyncToMainTool::new()));
    registry.register_builtin(Arc::new(todo::TodoWriteTool::new()));
    registry.register_builtin(Arc::new(todo::TodoReadTool::new()));
}

/// The JSON Schema of a built-in's arguments, from its `schemars`-derived struct. Doc
/// comments on the fields become the `description`s the model reads; what only costs it
/// tokens is left out (it is sent with every request): the struct's own doc comment
/// ("Arguments of `write`.") and its enums', `"default": null` on optional fields (absent
/// says the same) and the number `format`s schemars adds (`uint64`, `double`: the `type`
/// says enough).
pub fn params_schema<T: schemars::JsonSchema>() -> serde_json::Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        obj.remove("description");
        // An enum's doc comment says what the type is; the field using it says that already.
        if let Some(defs) = obj.get_mut("$defs").and_then(|d| d.as_object_mut()) {
            defs.values_mut()
                .filter_map(serde_json::Value::as_object_mut)
                .for_each(|d| drop(d.remove("description")));
        }
    }
    trim_schema(&mut schema);
    schema
}

fn trim_schema(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            if m.get("default").is_some_and(Value::is_null) {
                m.remove("default");
            }
            if m.get("format").and_then(Value::as_str).is_some_and(|f| {
                f.starts_with("uint") || f.starts_with("int") || f == "double" || f == "float"
            }) {
                m.remove("format");
            }
            m.values_mut().for_each(trim_schema);
        }
        Value::Array(a) => a.iter_mut().for_each(trim_schema),
        _ => {}
    }
}

/// Permission defaults, lowest precedence (config and agent rules come after them).
pub fn default_rules() -> Vec<PermissionRule> {
    use PermissionAction::*;
    [
        ("read", "*", Allow),
        ("read", "*.env", Ask),
        ("read", "*.env.*", Ask),
        ("read", "*.env.example", Allow),
        ("list", "*", Allow),
        ("glob", "*", Allow),
        ("grep", "*", Allow),
        ("symbols", "*", Allow),
        ("todowrite", "*", Allow),
        ("todoread", "*", Allow),
        ("webfetch", "*", Ask),
        ("browser", "*", Ask),
        ("edit", "*", Ask),
        ("bash", "*", Ask),
        ("sync_to_main", "*", Ask),
        ("external_directory", "*", Ask),
        ("sensitive", "*", Ask),
    ]
    .into_iter()
    .map(|(p, pat, a)| PermissionRule::new(p, pat, a))
    .collect()
}
