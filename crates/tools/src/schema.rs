//! Argument validation against a tool's JSON Schema, with `default`s filled in first so a
//! tool's `execute` sees the same arguments a Zod-validated plugin would. Validators are
//! compiled once per tool (`CompiledSchema`) and reused for every call.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One problem with the arguments: where (`path`, `(root)` for the whole object) and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArgIssue {
    /// Where in the arguments: a JSON pointer-like path, `(root)` for the whole object.
    pub path: String,
    /// What is wrong there.
    pub message: String,
}

impl ArgIssue {
    /// An issue at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// A tool's parameter schema, compiled once.
pub struct CompiledSchema {
    schema: Value,
    validator: Result<jsonschema::Validator, String>,
}

impl CompiledSchema {
    pub fn compile(schema: &Value) -> Self {
        Self {
            schema: schema.clone(),
            validator: jsonschema::validator_for(schema).map_err(|e| e.to_string()),
        }
    }

    /// Fills defaults, then validates. Returns the arguments `execute` should see.
    pub fn validate(&self, mut args: Value) -> Result<Value, Vec<ArgIssue>> {
        apply_defaults(&self.schema, &mut args);
        match &self.validator {
            Ok(v) => {
                let issues: Vec<ArgIssue> = v
                    .iter_errors(&args)
                    .map(|e| {
                        ArgIssue::new(pointer_to_path(e.instance_path().as_str()), e.to_string())
                    })
                    .collect();
                let mut issues = issues;
                // Whole-object problems first, then by path, so the text is stable.
                issues.sort_by(|a, b| {
                    (a.path != "(root)", &a.path).cmp(&(b.path != "(root)", &b.path))
                });
                if issues.is_empty() {
                    Ok(args)
                } else {
                    Err(issues)
                }
            }
            Err(e) => Err(vec![ArgIssue::new(
                "(schema)",
                format!(
                    "the tool's own parameter schema is invalid ({e}); this is a bug in the tool, not in your call"
                ),
            )]),
        }
    }
}

/// Builds, on a thread of its own and once per process, what compiling any schema needs
/// first: the JSON Schema meta-schema's own validator (~5 million instructions, 2 ms here).
/// Called while the first model request is out, so the first tool call does not pay for it.
pub fn warm_validation() {
    static WARM: std::sync::Once = std::sync::Once::new();
    WARM.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("podcode-schema-warm".into())
            .spawn(|| drop(jsonschema::validator_for(&Value::Object(Map::new()))));
        // Without a thread the first call builds it, as before.
        drop(spawned);
    });
}

/// One-shot validation (compiles the schema each time; the pipeline caches instead).
pub fn validate_args(schema: &Value, args: Value) -> Result<Value, Vec<ArgIssue>> {
    CompiledSchema::compile(schema).validate(args)
}

/// Inserts `default` values for missing object properties, recursing into nested objects
/// and array items, as Zod's `.default()` does for plugins.
pub fn apply_defaults(schema: &Value, value: &mut Value) {
    match value {
        Value::Object(obj) => {
            if let Some(Value::Object(props)) = schema.get("properties") {
                fill_object(props, obj);
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
                for item in items {
                    apply_defaults(item_schema, item);
                }
            }
        }
        _ => {}
    }
}

fn fill_object(props: &Map<String, Value>, obj: &mut Map<String, Value>) {
    for (key, prop_schema) in props {
        match obj.get_mut(key) {
            Some(v) => apply_defaults(prop_schema, v),
            None => {
                if let Some(default) = prop_schema.get("default") {
                    obj.insert(key.clone(), default.clone());
                }
            }
        }
    }
}

/// `/a/0/b` → `a[0].b`; the empty pointer is the whole arguments object.
fn pointer_to_path(pointer: &str) -> String {
    if pointer.is_empty() {
        return "(root)".to_string();
    }
    let mut out = String::new();
    for seg in pointer.trim_start_matches('/').split('/') {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "service": {"type": "string"},
                "limit": {"type": "integer", "default": 5, "minimum": 1},
                "tags": {"type": "array", "items": {"type": "object", "properties": {
                    "name": {"type": "string"}, "weight": {"type": "number", "default": 1}
                }, "required": ["name"]}}
            },
            "required": ["service"],
            "additionalProperties": false
        })
    }

    #[test]
    fn defaults_are_filled_before_validation() {
        let out = validate_args(
            &schema(),
            json!({"service": "api", "tags": [{"name": "a"}]}),
        )
        .unwrap();
        assert_eq!(
            out,
            json!({"service": "api", "limit": 5, "tags": [{"name": "a", "weight": 1}]})
        );
    }

    #[test]
    fn every_failing_path_is_named() {
        let issues = validate_args(
            &schema(),
            json!({"limit": 0, "tags": [{"weight": "x"}], "extra": 1}),
        )
        .unwrap_err();
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert!(paths.contains(&"(root)"), "{issues:?}");
        assert!(paths.contains(&"limit"), "{issues:?}");
        assert!(paths.contains(&"tags[0]"), "{issues:?}");
        assert!(paths.contains(&"tags[0].weight"), "{issues:?}");
        let required = issues
            .iter()
            .find(|i| i.message.contains("service"))
            .unwrap();
        assert_eq!(required.path, "(root)");
    }

    #[test]
    fn non_object_arguments_fail_at_the_root() {
        let issues = validate_args(&schema(), json!([1, 2])).unwrap_err();
        assert_eq!(issues[0].path, "(root)");
        assert!(issues[0].message.contains("object"), "{issues:?}");
    }

    #[test]
    fn a_broken_schema_is_reported_as_the_tools_bug() {
        let issues = validate_args(&json!({"type": 12}), json!({})).unwrap_err();
        assert_eq!(issues[0].path, "(schema)");
        assert!(issues[0].message.contains("bug in the tool"));
    }
}
