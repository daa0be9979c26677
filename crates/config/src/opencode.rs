//! opencode's own config files (`opencode.json` / `opencode.jsonc`), read so a repository
//! that works with opencode works unchanged with Podcode.
//!
//! `files` finds them the way opencode does: the global one in its config dir
//! (`$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`), the file `$OPENCODE_CONFIG`
//! names, the one in `$OPENCODE_CONFIG_DIR`, then the project's from the git root down to the
//! working directory and in `<root>/.opencode/`. `translate` parses one (JSONC: comments and
//! trailing commas; `{env:VAR}` and `{file:path}` substituted in strings, within what the
//! workspace's trust lets a project's file read: `substitute`) and maps what has a
//! Podcode meaning onto the shape of `config.toml`, so `load` merges it as one more layer:
//!
//! | opencode | Podcode |
//! |---|---|
//! | `plugin: ["pkg", "@scope/pkg@1.2.3"]` | `plugins` (added to the earlier lists, as opencode does) |
//! | `mcp.NAME {type: local, command: [..], environment}` | `[mcp.NAME] command, args, env` |
//! | `mcp.NAME {type: remote, url, headers}` | `[mcp.NAME] url, headers` |
//! | `tools: {"name": false, "prefix_*": false}` | `tools.disable` (off for every agent, built-ins included) |
//! | `permission: {"bash": "ask", "edit": {"*.md": "allow"}, "*": "ask"}` | `[[permission]]` rules, in file order |
//! | `agent.NAME {prompt, model, tools, permission}` | `[agent.NAME]` |
//! | `command.NAME {template, description, agent, model, subtask}` (also `commands`) | `[commands.NAME]` |
//!
//! Everything else (`instructions`, `theme`, `model`, `provider`, …) is listed as not used,
//! so `podcode plugins` can say what was taken from where.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::dirs::OpencodeDirs;
use crate::error::ConfigError;
use crate::substitute::{Policy, Refused, substitute};

/// What one opencode config file gave: the Podcode-shaped table and a report.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct OpencodeImport {
    /// The opencode file this import came from.
    pub file: PathBuf,
    /// The file is the project's (needs trust to widen anything).
    pub project: bool,
    /// What was taken, one short phrase each (`plugin @scope/pkg@1.2.3`, `mcp github`).
    pub taken: Vec<String>,
    /// Top-level keys with no Podcode meaning, and values that could not be used.
    pub not_used: Vec<String>,
    /// `{file:}`/`{env:}` references left empty because the project's file may not read
    /// them (`key ({reference})`).
    pub refused: Vec<String>,
}

/// The opencode config files for a workspace, lowest precedence first: `(file, project)`.
/// Only existing files are returned.
pub fn files(dirs: &OpencodeDirs, cwd: &Path, project_root: &Path) -> Vec<(PathBuf, bool)> {
    let mut out = Vec::new();
    let push_dir = |dir: &Path, project: bool, out: &mut Vec<(PathBuf, bool)>| {
        for name in ["opencode.json", "opencode.jsonc"] {
            out.push((dir.join(name), project));
        }
    };
    push_dir(&dirs.config_dir, false, &mut out);
    if let Some(file) = &dirs.config_file {
        out.push((file.clone(), false));
    }
    if let Some(dir) = &dirs.custom_dir {
        push_dir(dir, false, &mut out);
    }
    // The root's first, so the file nearest the working directory wins.
    let mut chain: Vec<&Path> = cwd
        .ancestors()
        .take_while(|d| d.starts_with(project_root))
        .collect();
    if chain.is_empty() {
        chain.push(project_root);
    }
    chain.reverse();
    for dir in chain {
        push_dir(dir, true, &mut out);
    }
    push_dir(&project_root.join(".opencode"), true, &mut out);
    let mut seen = std::collections::HashSet::new();
    out.retain(|(f, _)| f.is_file() && seen.insert(f.canonicalize().unwrap_or_else(|_| f.clone())));
    out
}

/// Parses one opencode config file and maps it onto Podcode's config shape.
pub(crate) fn translate(
    file: &Path,
    text: &str,
    policy: &Policy<'_>,
) -> Result<(toml::Table, OpencodeImport, Vec<Refused>), ConfigError> {
    let options = jsonc_parser::ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
    };
    let value: Value =
        jsonc_parser::parse_to_serde_value(text, &options).map_err(|e| ConfigError::Parse {
            file: file.to_path_buf(),
            line: e.line_display(),
            column: e.column_display(),
            key: None,
            message: e.kind().to_string(),
        })?;
    let mut refused = Vec::new();
    let value = substitute(value, file, policy, &mut refused);
    let Value::Object(top) = value else {
        return Err(ConfigError::Parse {
            file: file.to_path_buf(),
            line: 1,
            column: 1,
            key: None,
            message: "an opencode config file must hold one JSON object".into(),
        });
    };
    let mut t = Translation {
        table: toml::Table::new(),
        report: OpencodeImport {
            file: file.to_path_buf(),
            project: policy.project.is_some(),
            refused: refused
                .iter()
                .map(|r| format!("{} ({})", r.key, r.reference))
                .collect(),
            ..OpencodeImport::default()
        },
    };
    for (key, value) in top {
        match key.as_str() {
            "plugin" => t.plugins(&value),
            "mcp" => t.mcp(&value),
            "tools" => {
                let off = t.switches(&value, "tools");
                if !off.is_empty() {
                    t.report
                        .taken
                        .push(format!("tools off: {}", off.join(", ")));
                    let tools = t.table_mut("tools");
                    tools.insert("disable".into(), strings(off));
                }
            }
            "permission" => {
                let rules = t.permission(&value, "permission");
                if !rules.is_empty() {
                    let n = rules.len();
                    let s = if n == 1 { "" } else { "s" };
                    t.report.taken.push(format!("permission ({n} rule{s})"));
                    t.table
                        .insert("permission".into(), toml::Value::Array(rules));
                }
            }
            "agent" => t.agents(&value),
            "command" | "commands" => t.commands(&value),
            "lsp" => t.programs(
                &value,
                "lsp",
                &["command", "extensions", "env", "initialization", "disabled"],
            ),
            "formatter" => t.programs(
                &value,
                "formatter",
                &["command", "extensions", "environment", "disabled"],
            ),
            "$schema" => {}
            _ => t.report.not_used.push(key),
        }
    }
    Ok((t.table, t.report, refused))
}

struct Translation {
    table: toml::Table,
    report: OpencodeImport,
}

impl Translation {
    fn table_mut(&mut self, key: &str) -> &mut toml::Table {
        let entry = self
            .table
            .entry(key.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        match entry {
            toml::Value::Table(t) => t,
            other => {
                *other = toml::Value::Table(toml::Table::new());
                match other {
                    toml::Value::Table(t) => t,
                    _ => unreachable!("just set to a table"),
                }
            }
        }
    }

    /// `lsp` / `formatter`: `false` switches them all off; `{NAME: {command, extensions, …}}`
    /// is `[SECTION.NAME]` (opencode's `environment` is `env`).
    fn programs(&mut self, value: &Value, section: &str, keys: &[&str]) {
        match value {
            Value::Bool(false) => {
                self.table_mut(section)
                    .insert("disabled".into(), toml::Value::Boolean(true));
                self.report.taken.push(format!("{section} off"));
            }
            Value::Object(entries) => {
                for (name, entry) in entries {
                    let Some(entry) = entry.as_object() else {
                        self.report
                            .not_used
                            .push(format!("{section}.{name} (not an object)"));
                        continue;
                    };
                    let mut table = toml::Table::new();
                    for (key, v) in entry {
                        if !keys.contains(&key.as_str()) {
                            self.report.not_used.push(format!("{section}.{name}.{key}"));
                            continue;
                        }
                        let key = if key == "environment" {
                            "env"
                        } else {
                            key.as_str()
                        };
                        if let Ok(v) = toml::Value::try_from(v) {
                            table.insert(key.to_string(), v);
                        }
                    }
                    self.report.taken.push(format!("{section} {name}"));
                    self.table_mut(section)
                        .insert(name.clone(), toml::Value::Table(table));
                }
            }
            _ => self
                .report
                .not_used
                .push(format!("{section} (neither false nor an object)")),
        }
    }

    fn plugins(&mut self, value: &Value) {
        let Some(items) = value.as_array() else {
            self.report.not_used.push("plugin (not a list)".into());
            return;
        };
        let mut specs = Vec::new();
        for item in items {
            match item.as_str() {
                Some(s) if !s.trim().is_empty() => {
                    self.report.taken.push(format!("plugin {s}"));
                    specs.push(s.trim().to_string());
                }
                _ => self
                    .report
                    .not_used
                    .push(format!("plugin entry {item} (not a package name)")),
            }
        }
        self.table.insert("plugins".into(), strings(specs));
    }

    fn mcp(&mut self, value: &Value) {
        let Some(servers) = value.as_object() else {
            self.report.not_used.push("mcp (not an object)".into());
            return;
        };
        for (name, server) in servers {
            match mcp_server(server) {
                Ok(table) => {
                    self.report.taken.push(format!("mcp {name}"));
                    self.table_mut("mcp")
                        .insert(name.clone(), toml::Value::Table(table));
                }
                Err(why) => self.report.not_used.push(format!("mcp {name} ({why})")),
            }
        }
    }

    /// `{"name": false, "prefix_*": false}` → the names switched off. `true` only states
    /// the default.
    fn switches(&mut self, value: &Value, at: &str) -> Vec<String> {
        let Some(map) = value.as_object() else {
            self.report.not_used.push(format!("{at} (not an object)"));
            return Vec::new();
        };
        let mut off = Vec::new();
        for (name, on) in map {
            match on {
                Value::Bool(false) => off.push(name.clone()),
                Value::Bool(true) => {}
                _ => self
                    .report
                    .not_used
                    .push(format!("{at}.{name} (not true or false)")),
            }
        }
        off
    }

    /// opencode's `permission` object → Podcode rules, in file order (last match wins in
    /// both). A value is an action for every pattern, or an object of pattern → action.
    fn permission(&mut self, value: &Value, at: &str) -> Vec<toml::Value> {
        let Some(map) = value.as_object() else {
            self.report.not_used.push(format!("{at} (not an object)"));
            return Vec::new();
        };
        let mut rules = Vec::new();
        for (permission, v) in map {
            let patterns: Vec<(String, &Value)> = match v {
                Value::Object(p) => p.iter().map(|(k, v)| (k.clone(), v)).collect(),
                other => vec![("*".to_string(), other)],
            };
            for (pattern, action) in patterns {
                match action.as_str() {
                    Some(a @ ("allow" | "ask" | "deny")) => {
                        rules.push(rule(permission, &pattern, a))
                    }
                    _ => self.report.not_used.push(format!(
                        "{at}.{permission} {pattern} (not allow, ask or deny)"
                    )),
                }
            }
        }
        rules
    }

    /// The `{NAME: {…}}` entries of `value` (opencode's `agent`, `command`); what is not an
    /// object is reported under `key` and left out.
    fn named_objects<'v>(
        &mut self,
        value: &'v Value,
        key: &str,
    ) -> Vec<(&'v String, &'v serde_json::Map<String, Value>)> {
        let Some(entries) = value.as_object() else {
            self.report.not_used.push(format!("{key} (not an object)"));
            return Vec::new();
        };
        let mut out = Vec::new();
        for (name, entry) in entries {
            match entry.as_object() {
                Some(obj) => out.push((name, obj)),
                None => self
                    .report
                    .not_used
                    .push(format!("{key}.{name} (not an object)")),
            }
        }
        out
    }

    /// opencode's `command: {NAME: {template, description, agent, model, subtask}}`.
    fn commands(&mut self, value: &Value) {
        for (name, command) in self.named_objects(value, "command") {
            let mut out = toml::Table::new();
            for (key, v) in command {
                match (key.as_str(), v) {
                    ("template" | "description" | "agent" | "model", Value::String(s)) => {
                        out.insert(key.clone(), toml::Value::String(s.clone()));
                    }
                    ("subtask", Value::Bool(b)) => {
                        out.insert(key.clone(), toml::Value::Boolean(*b));
                    }
                    _ => self.report.not_used.push(format!("command.{name}.{key}")),
                }
            }
            if !out.contains_key("template") {
                self.report
                    .not_used
                    .push(format!("command.{name} (no template)"));
                continue;
            }
            self.report.taken.push(format!("command {name}"));
            self.table_mut("commands")
                .insert(name.clone(), toml::Value::Table(out));
        }
    }

    fn agents(&mut self, value: &Value) {
        for (name, agent) in self.named_objects(value, "agent") {
            if agent.get("disable") == Some(&Value::Bool(true)) {
                self.report
                    .not_used
                    .push(format!("agent.{name} (disabled)"));
                continue;
            }
            let mut out = toml::Table::new();
            for (key, v) in agent {
                match (key.as_str(), v) {
                    ("prompt" | "model", Value::String(s)) => {
                        out.insert(key.clone(), toml::Value::String(s.clone()));
                    }
                    ("tools", v) => {
                        let off = self.switches(v, &format!("agent.{name}.tools"));
                        if !off.is_empty() {
                            let mut tools = toml::Table::new();
                            tools.insert("deny".into(), strings(off));
                            out.insert("tools".into(), toml::Value::Table(tools));
                        }
                    }
                    ("permission", v) => {
                        let rules = self.permission(v, &format!("agent.{name}.permission"));
                        if !rules.is_empty() {
                            out.insert("permission".into(), toml::Value::Array(rules));
                        }
                    }
                    _ => self.report.not_used.push(format!("agent.{name}.{key}")),
                }
            }
            self.report.taken.push(format!("agent {name}"));
            self.table_mut("agent")
                .insert(name.clone(), toml::Value::Table(out));
        }
    }
}

fn rule(permission: &str, pattern: &str, action: &str) -> toml::Value {
    let mut t = toml::Table::new();
    t.insert("permission".into(), toml::Value::String(permission.into()));
    t.insert("pattern".into(), toml::Value::String(pattern.into()));
    t.insert("action".into(), toml::Value::String(action.into()));
    toml::Value::Table(t)
}

fn strings(items: Vec<String>) -> toml::Value {
    toml::Value::Array(items.into_iter().map(toml::Value::String).collect())
}

fn string_map(value: Option<&Value>) -> Result<toml::Table, String> {
    let mut out = toml::Table::new();
    let Some(value) = value else {
        return Ok(out);
    };
    let map = value.as_object().ok_or("not an object of strings")?;
    for (k, v) in map {
        let s = v.as_str().ok_or_else(|| format!("{k} is not a string"))?;
        out.insert(k.clone(), toml::Value::String(s.into()));
    }
    Ok(out)
}

/// One `mcp` entry: `type: local` (command array, environment) or `type: remote` (url,
/// headers); `enabled` and `timeout` (milliseconds to start and list tools) for both.
fn mcp_server(server: &Value) -> Result<toml::Table, String> {
    let server = server.as_object().ok_or("not an object")?;
    let mut out = toml::Table::new();
    match server.get("type").and_then(Value::as_str) {
        Some("local") => {
            let command: Vec<String> = server
                .get("command")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let Some((program, args)) = command.split_first() else {
                return Err("a local server needs a command list".into());
            };
            out.insert("command".into(), toml::Value::String(program.clone()));
            out.insert("args".into(), strings(args.to_vec()));
            out.insert(
                "env".into(),
                toml::Value::Table(string_map(server.get("environment"))?),
            );
        }
        Some("remote") => {
            let url = server
                .get("url")
                .and_then(Value::as_str)
                .ok_or("a remote server needs a url")?;
            out.insert("url".into(), toml::Value::String(url.into()));
            out.insert(
                "headers".into(),
                toml::Value::Table(string_map(server.get("headers"))?),
            );
        }
        _ => return Err("type is neither local nor remote".into()),
    }
    if let Some(enabled) = server.get("enabled").and_then(Value::as_bool) {
        out.insert("enabled".into(), toml::Value::Boolean(enabled));
    }
    if let Some(ms) = server.get("timeout").and_then(Value::as_u64) {
        let secs = ms.div_ceil(1000).max(1);
        out.insert(
            "startup_timeout".into(),
            toml::Value::Integer(i64::try_from(secs).unwrap_or(i64::MAX)),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    /// The policy of the user's own file: everything is substituted.
    fn users(env: &dyn Fn(&str) -> Option<String>) -> Policy<'_> {
        Policy { env, project: None }
    }

    #[test]
    fn jsonc_with_comments_and_trailing_commas_maps_onto_podcode() {
        let text = r#"{
          // a comment
          "$schema": "https://opencode.ai/config.json",
          "theme": "dark",
          "plugin": ["opencode-wakatime", "@scope/pkg@1.2.3",],
          "mcp": {
            "fs": {"type": "local", "command": ["npx", "-y", "srv"], "environment": {"A": "1"}, "enabled": false, "timeout": 1500},
            "web": {"type": "remote", "url": "https://x.invalid/mcp", "headers": {"Authorization": "Bearer t"}},
            "bad": {"type": "local"},
          },
          "tools": {"write": false, "github_*": false, "read": true},
          "permission": {"edit": "ask", "bash": {"*": "ask", "git status": "allow"}, "*": "deny"},
          /* block */
          "agent": {"review": {"prompt": "Be brief.", "tools": {"bash": false}, "permission": {"edit": "deny"}, "temperature": 0.1}},
        }"#;
        let (table, report, _) =
            translate(Path::new("/p/opencode.jsonc"), text, &users(&no_env)).unwrap();
        let expected: toml::Table = r#"
            plugins = ["opencode-wakatime", "@scope/pkg@1.2.3"]
            permission = [
              { permission = "edit", pattern = "*", action = "ask" },
              { permission = "bash", pattern = "*", action = "ask" },
              { permission = "bash", pattern = "git status", action = "allow" },
              { permission = "*", pattern = "*", action = "deny" },
            ]
            [mcp.fs]
            command = "npx"
            args = ["-y", "srv"]
            env = { A = "1" }
            enabled = false
            startup_timeout = 2
            [mcp.web]
            url = "https://x.invalid/mcp"
            headers = { Authorization = "Bearer t" }
            [tools]
            disable = ["write", "github_*"]
            [agent.review]
            prompt = "Be brief."
            tools = { deny = ["bash"] }
            permission = [{ permission = "edit", pattern = "*", action = "deny" }]
        "#
        .parse()
        .unwrap();
        assert_eq!(table, expected);
        assert_eq!(
            report.taken,
            [
                "plugin opencode-wakatime",
                "plugin @scope/pkg@1.2.3",
                "mcp fs",
                "mcp web",
                "tools off: write, github_*",
                "permission (4 rules)",
                "agent review"
            ]
        );
        assert_eq!(
            report.not_used,
            [
                "theme",
                "mcp bad (a local server needs a command list)",
                "agent.review.temperature"
            ]
        );
    }

    #[test]
    fn lsp_entries_and_lsp_false_map_onto_the_lsp_table() {
        let text = r#"{"lsp": {"typescript": {"disabled": true}, "zls": {"command": ["zls"], "extensions": [".zig"], "env": {"A": "1"}, "port": 3}}}"#;
        let (table, report, _) =
            translate(Path::new("/p/opencode.json"), text, &users(&no_env)).unwrap();
        let config: crate::Config = table.clone().try_into().unwrap();
        assert!(config.lsp.servers["typescript"].disabled);
        let zls = &config.lsp.servers["zls"];
        assert_eq!(zls.command.as_deref(), Some(&["zls".to_string()][..]));
        assert_eq!(zls.extensions.as_deref(), Some(&[".zig".to_string()][..]));
        assert_eq!(zls.env["A"], "1");
        assert!(
            report.not_used.contains(&"lsp.zls.port".to_string()),
            "{report:?}"
        );
        let (table, report, _) = translate(
            Path::new("/p/opencode.json"),
            r#"{"lsp": false}"#,
            &users(&no_env),
        )
        .unwrap();
        let config: crate::Config = table.try_into().unwrap();
        assert!(config.lsp.disabled);
        assert!(report.taken.contains(&"lsp off".to_string()));
    }

    #[test]
    fn syntax_errors_name_the_file_line_and_column() {
        let err = translate(
            Path::new("/p/opencode.json"),
            "{\n  \"plugin\": [\"a\" }\n}",
            &users(&no_env),
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("/p/opencode.json:2:"), "{text}");
    }

    #[test]
    fn env_and_file_references_are_substituted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("prompt.md"), "Review carefully.\n").unwrap();
        let env = |k: &str| (k == "TOKEN").then(|| "t0k".to_string());
        let text = r#"{"mcp": {"w": {"type": "remote", "url": "https://x.invalid", "headers": {"A": "Bearer {env:TOKEN}"}}},
                      "agent": {"r": {"prompt": "{file:./prompt.md}"}}}"#;
        let (table, _, _) =
            translate(&dir.path().join("opencode.json"), text, &users(&env)).unwrap();
        assert_eq!(
            table["mcp"]["w"]["headers"]["A"].as_str(),
            Some("Bearer t0k")
        );
        assert_eq!(
            table["agent"]["r"]["prompt"].as_str(),
            Some("Review carefully.")
        );
    }

    #[test]
    fn files_are_found_from_the_global_dirs_and_the_git_root_down() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        let sub = root.join("pkg");
        std::fs::create_dir_all(sub.join(".opencode")).unwrap();
        std::fs::create_dir_all(root.join(".opencode")).unwrap();
        std::fs::create_dir_all(tmp.path().join("xdg/opencode")).unwrap();
        std::fs::create_dir_all(tmp.path().join("custom")).unwrap();
        for f in [
            "xdg/opencode/opencode.jsonc",
            "custom/opencode.json",
            "repo/opencode.json",
            "repo/pkg/opencode.jsonc",
            "repo/.opencode/opencode.json",
        ] {
            std::fs::write(tmp.path().join(f), "{}").unwrap();
        }
        let dirs = OpencodeDirs::from_vars(|k| match k {
            "HOME" => Some(tmp.path().join("home").display().to_string()),
            "XDG_CONFIG_HOME" => Some(tmp.path().join("xdg").display().to_string()),
            "OPENCODE_CONFIG_DIR" => Some(tmp.path().join("custom").display().to_string()),
            _ => None,
        });
        let found = files(&dirs, &sub, &root);
        let rel: Vec<(String, bool)> = found
            .iter()
            .map(|(f, p)| {
                (
                    f.strip_prefix(tmp.path()).unwrap().display().to_string(),
                    *p,
                )
            })
            .collect();
        assert_eq!(
            rel,
            [
                ("xdg/opencode/opencode.jsonc".to_string(), false),
                ("custom/opencode.json".to_string(), false),
                ("repo/opencode.json".to_string(), true),
                ("repo/pkg/opencode.jsonc".to_string(), true),
                ("repo/.opencode/opencode.json".to_string(), true),
            ]
        );
    }
}
