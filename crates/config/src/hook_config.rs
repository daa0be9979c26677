//! The config a plugin's `config` hook sees, and what the hook adds. opencode hands its
//! `config` hook the live opencode config object, and a plugin that mutates it adds an MCP
//! server, a permission rule or a command for the rest of the run (a popular plugin pack adds
//! its MCP server this way). `opencode_view` shows Podcode's config in that shape (`model`,
//! `mcp`, `permission`, `command`, `agent`, `plugin`); `hook_additions` compares the object
//! before and after the hooks and maps what was added onto Podcode's config the way an
//! `opencode.json` is mapped (`opencode::translate`): new `mcp` entries become MCP servers,
//! new or changed `permission` entries become rules after the config's own. Anything else
//! the hooks changed is named in `ignored`, so `podcode plugins` can say it was not applied.

use std::collections::BTreeMap;
use std::path::Path;

use podcode_protocol::{PermissionAction, PermissionRule};
use serde_json::{Map, Value, json};

use crate::model::{Config, McpServerConfig};

/// What the `config` hooks added, in Podcode's terms.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookAdditions {
    /// Permission rules, after the config's own (later rules win).
    pub rules: Vec<PermissionRule>,
    /// MCP servers the config did not have.
    pub mcp: BTreeMap<String, McpServerConfig>,
    /// What the hooks changed that Podcode does not apply, one phrase each.
    pub ignored: Vec<String>,
}

fn action(a: PermissionAction) -> &'static str {
    match a {
        PermissionAction::Allow => "allow",
        PermissionAction::Ask => "ask",
        PermissionAction::Deny => "deny",
    }
}

/// `config` in opencode's config shape, as far as Podcode has the values.
pub fn opencode_view(config: &Config) -> Value {
    let mut permission = Map::new();
    for r in &config.permission {
        let entry = permission
            .entry(r.permission.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(patterns) = entry {
            patterns.insert(r.pattern.clone(), json!(action(r.action)));
        }
    }
    // A permission with only a `*` pattern is written as opencode writes it: its action.
    for value in permission.values_mut() {
        if let Value::Object(p) = value
            && p.len() == 1
            && let Some(a) = p.get("*")
        {
            *value = a.clone();
        }
    }
    let mcp: Map<String, Value> = config
        .mcp
        .iter()
        .map(|(name, s)| {
            let v = match (&s.url, &s.command) {
                (Some(url), _) => {
                    json!({"type": "remote", "url": url, "headers": s.headers, "enabled": s.enabled})
                }
                (None, command) => {
                    let cmd: Vec<&str> = command
                        .iter()
                        .map(String::as_str)
                        .chain(s.args.iter().map(String::as_str))
                        .collect();
                    json!({"type": "local", "command": cmd, "environment": s.env, "enabled": s.enabled})
                }
            };
            (name.clone(), v)
        })
        .collect();
    let mut view = json!({
        "$schema": "https://opencode.ai/config.json",
        "mcp": mcp,
        "permission": permission,
        "command": {},
        "agent": {},
        "plugin": config.plugins,
    });
    if let Some(model) = &config.model {
        view["model"] = json!(model);
    }
    view
}

/// What the hooks added between `before` (the `opencode_view`) and `after`.
pub fn hook_additions(before: &Value, after: &Value) -> HookAdditions {
    let mut out = HookAdditions::default();
    let empty = Map::new();
    let obj = |v: &Value, k: &str| v.get(k).and_then(Value::as_object).cloned();
    let mut added = Map::new();
    let mut mcp = Map::new();
    let was_mcp = obj(before, "mcp").unwrap_or_default();
    for (name, server) in obj(after, "mcp").unwrap_or_default() {
        match was_mcp.get(&name) {
            None => {
                mcp.insert(name, server);
            }
            Some(old) if *old != server => out
                .ignored
                .push(format!("mcp.{name} (changes to a configured server)")),
            Some(_) => {}
        }
    }
    if !mcp.is_empty() {
        added.insert("mcp".into(), Value::Object(mcp));
    }
    let mut permission = Map::new();
    let was_permission = obj(before, "permission").unwrap_or_default();
    for (name, value) in obj(after, "permission").unwrap_or_default() {
        if was_permission.get(&name) != Some(&value) {
            permission.insert(name, value);
        }
    }
    if !permission.is_empty() {
        added.insert("permission".into(), Value::Object(permission));
    }
    let was_commands = obj(before, "command").unwrap_or_default();
    for name in obj(after, "command").unwrap_or_default().keys() {
        if !was_commands.contains_key(name) {
            out.ignored.push(format!(
                "command.{name} (Podcode has no custom commands yet)"
            ));
        }
    }
    for (key, value) in after.as_object().unwrap_or(&empty) {
        if !matches!(key.as_str(), "mcp" | "permission" | "command")
            && before.get(key) != Some(value)
        {
            out.ignored.push(key.clone());
        }
    }
    if added.is_empty() {
        return out;
    }
    let file = Path::new("(plugin config hook)");
    let policy = crate::substitute::Policy {
        env: &|_| None,
        project: None,
    };
    let text = Value::Object(added).to_string();
    match crate::opencode::translate(file, &text, &policy) {
        Ok((table, report, _)) => {
            out.ignored.extend(report.not_used);
            match <Config as serde::Deserialize>::deserialize(toml::Value::Table(table)) {
                Ok(config) => {
                    out.rules = config.permission;
                    out.mcp = config.mcp;
                }
                Err(e) => out.ignored.push(format!("what the hooks added ({e})")),
            }
        }
        Err(e) => out.ignored.push(format!("what the hooks added ({e})")),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        let mut c = Config {
            model: Some("openai/gpt-5".into()),
            ..Config::default()
        };
        c.permission = vec![
            PermissionRule::new("bash", "*", PermissionAction::Ask),
            PermissionRule::new("edit", "*.md", PermissionAction::Allow),
        ];
        c.mcp.insert(
            "docs".into(),
            McpServerConfig {
                command: Some("npx".into()),
                args: vec!["-y".into(), "docs-mcp".into()],
                ..McpServerConfig::default()
            },
        );
        c
    }

    #[test]
    fn the_view_has_opencode_s_shape() {
        let v = opencode_view(&config());
        assert_eq!(v["model"], "openai/gpt-5");
        assert_eq!(
            v["permission"],
            json!({"bash": "ask", "edit": {"*.md": "allow"}})
        );
        assert_eq!(v["mcp"]["docs"]["type"], "local");
        assert_eq!(
            v["mcp"]["docs"]["command"],
            json!(["npx", "-y", "docs-mcp"])
        );
        assert_eq!(v["command"], json!({}));
    }

    #[test]
    fn added_servers_and_rules_are_taken_and_the_rest_is_named() {
        let before = opencode_view(&config());
        let mut after = before.clone();
        after["mcp"]["search"] =
            json!({"type": "remote", "url": "http://127.0.0.1:9/mcp", "headers": {}});
        after["permission"]["webfetch"] = json!("deny");
        after["command"]["review"] = json!({"template": "Review $ARGUMENTS"});
        after["theme"] = json!("dark");
        let a = hook_additions(&before, &after);
        assert_eq!(
            a.rules,
            vec![PermissionRule::new("webfetch", "*", PermissionAction::Deny)]
        );
        assert_eq!(
            a.mcp["search"].url.as_deref(),
            Some("http://127.0.0.1:9/mcp")
        );
        assert_eq!(
            a.ignored,
            [
                "command.review (Podcode has no custom commands yet)",
                "theme"
            ]
        );
        assert_eq!(hook_additions(&before, &before), HookAdditions::default());
    }
}
