//! What a permission prompt says, as plain lines, for every front end (the TUI modal, the
//! CLI prompt, `mcp serve`'s rejection text): who asks for what, the details the tool
//! attached (command, what a sandbox denied, description, path, diff, preview) or else the call's arguments —
//! pretty, bounded, and with the values of secret-looking keys masked —, and what "always"
//! will remember, one rule per line. Invisible and direction-changing characters in any of
//! it are shown as `<U+XXXX>` markers and the ask carries a warning (`invisible`), so a
//! command cannot read differently from what it runs. Pure: front ends only style and
//! print the lines.

use std::borrow::Cow;

use crate::PermissionRequest;
use crate::invisible::{HIDDEN_CHARS_WARNING, has_hidden_chars, show_hidden_chars};
use serde_json::Value;

/// Metadata keys a tool attaches to explain an ask, shown in this order.
const DETAIL_KEYS: [&str; 6] = [
    "command",
    "denied",
    "description",
    "path",
    "diff",
    "preview",
];
/// At most this many lines per detail (the arguments included), and characters per line.
const MAX_LINES: usize = 30;
const MAX_LINE_CHARS: usize = 160;
/// A key whose lowercased name contains one of these has its value masked.
const SECRET_KEYS: [&str; 12] = [
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "authorization",
    "credential",
    "private_key",
    "privatekey",
    "cookie",
];
const MASK: &str = "********";

/// One labelled block of the prompt (`diff`, `arguments`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSection {
    /// Heading of the block (`diff`, `command`, `arguments`, …).
    pub label: String,
    /// The block's lines, already sanitised and with secret-looking values masked.
    pub lines: Vec<String>,
}

/// A permission prompt laid out once for every front end: title, sections, what "always" remembers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptText {
    /// "deploy_status asks for deploy_status: *" style first line.
    pub title: String,
    /// The request's details, one labelled block each.
    pub sections: Vec<PromptSection>,
    /// What answering "always" remembers: the first line says it, each further line is one
    /// remembered rule.
    pub always: Vec<String>,
    /// [`HIDDEN_CHARS_WARNING`](crate::HIDDEN_CHARS_WARNING) when anything in the request
    /// holds invisible or direction-changing characters; front ends show it right below
    /// the title.
    pub warning: Option<String>,
}

/// How much of each detail a prompt keeps.
#[derive(Debug, Clone, Copy)]
struct Bound {
    lines: usize,
    line_chars: usize,
}

const SHORT: Bound = Bound {
    lines: MAX_LINES,
    line_chars: MAX_LINE_CHARS,
};
const WHOLE: Bound = Bound {
    lines: usize::MAX,
    line_chars: usize::MAX,
};

/// The prompt for `tool` asking `request`, each detail cut to 30 lines of 160 characters
/// (a printed prompt must fit a screen).
pub fn prompt_text(tool: &str, request: &PermissionRequest) -> PromptText {
    layout(tool, request, SHORT)
}

/// The prompt with every line of every detail, for a front end that scrolls (the TUI's
/// modal): the whole change must be readable before it is approved.
pub fn prompt_text_whole(tool: &str, request: &PermissionRequest) -> PromptText {
    layout(tool, request, WHOLE)
}

fn layout(tool: &str, request: &PermissionRequest, bound: Bound) -> PromptText {
    let meta = &request.metadata;
    let generic = request.permission == tool && request.patterns == ["*"];
    // A compound command's further patterns are its parts, which the remembered rules
    // list: the title names the command once.
    let command = meta.get("command").and_then(Value::as_str);
    let patterns = match request.patterns.first() {
        Some(first) if command == Some(first.as_str()) => std::slice::from_ref(first),
        _ => request.patterns.as_slice(),
    };
    let title = if generic {
        format!("{tool} asks to run")
    } else {
        format!(
            "{tool} asks for {}: {}",
            request.permission,
            patterns.join("  ")
        )
    };
    // An ask from a sub-agent names it first: the user answers it in the parent's front end.
    let title = match meta.get("subagent").and_then(Value::as_str) {
        Some(who) => format!("sub-agent {who}: {title}"),
        None => title,
    };
    let mut sections: Vec<PromptSection> = DETAIL_KEYS
        .iter()
        .filter_map(|key| {
            let text = meta.get(*key)?.as_str()?;
            Some(PromptSection {
                label: (*key).to_string(),
                lines: bounded(text.lines().map(str::to_string), bound),
            })
        })
        .collect();
    if sections.is_empty()
        && let Some(args) = meta.get("args")
    {
        sections.push(PromptSection {
            label: "arguments".into(),
            lines: bounded(pretty_masked(args).lines().map(str::to_string), bound),
        });
    }
    let visible = |line: String| match show_hidden_chars(&line) {
        Cow::Owned(shown) => shown,
        Cow::Borrowed(_) => line,
    };
    // Anything in the request counts, also what the bounded lines leave out.
    let hidden = has_hidden_chars(tool)
        || has_hidden_chars(&serde_json::to_string(request).unwrap_or_default());
    PromptText {
        title: visible(title),
        sections: sections
            .into_iter()
            .map(|s| PromptSection {
                label: s.label,
                lines: s.lines.into_iter().map(visible).collect(),
            })
            .collect(),
        always: always_lines(tool, request)
            .into_iter()
            .map(visible)
            .collect(),
        warning: hidden.then(|| HIDDEN_CHARS_WARNING.to_string()),
    }
}

/// The arguments as pretty JSON with secret-looking values masked, bounded.
pub fn argument_lines(args: &Value) -> Vec<String> {
    bounded(pretty_masked(args).lines().map(str::to_string), SHORT)
}

fn pretty_masked(args: &Value) -> String {
    let masked = mask(args);
    serde_json::to_string_pretty(&masked).unwrap_or_else(|_| masked.to_string())
}

fn always_lines(tool: &str, request: &PermissionRequest) -> Vec<String> {
    let rules = if request.always.is_empty() {
        &request.patterns
    } else {
        &request.always
    };
    let permission = &request.permission;
    match rules.as_slice() {
        [only] if only == "*" && permission == tool => {
            vec![format!("always allow {tool} in this project")]
        }
        [only] if only == "*" => vec![format!(
            "always allow {permission} (anything) in this project"
        )],
        [only] => vec![format!(
            "always allow {permission} `{only}` in this project"
        )],
        many => {
            let mut out = vec![format!(
                "always allow in this project ({permission}, each rule remembered):"
            )];
            out.extend(many.iter().map(|r| format!("  `{r}`")));
            out
        }
    }
}

fn is_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    SECRET_KEYS.iter().any(|s| k.contains(s))
}

fn mask(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if is_secret(k) && !v.is_null() {
                        Value::String(MASK.into())
                    } else {
                        mask(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(mask).collect()),
        other => other.clone(),
    }
}

fn bounded(lines: impl Iterator<Item = String>, bound: Bound) -> Vec<String> {
    let mut out = Vec::new();
    let mut more = 0usize;
    for line in lines {
        if out.len() == bound.lines {
            more += 1;
            continue;
        }
        out.push(clip(&line, bound.line_chars));
    }
    if more > 0 {
        out.push(format!("… ({})", more_lines(more)));
    }
    out
}

fn clip(line: &str, max_chars: usize) -> String {
    match line.char_indices().nth(max_chars) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

/// `"1 more line"`, `"3 more lines"`: what a cut list says it left out.
pub fn more_lines(n: usize) -> String {
    if n == 1 {
        "1 more line".to_string()
    } else {
        format!("{n} more lines")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn req(
        permission: &str,
        patterns: &[&str],
        always: &[&str],
        metadata: Value,
    ) -> PermissionRequest {
        PermissionRequest {
            permission: permission.into(),
            patterns: patterns.iter().map(|s| s.to_string()).collect(),
            always: always.iter().map(|s| s.to_string()).collect(),
            metadata,
        }
    }

    #[test]
    fn invisible_characters_are_shown_everywhere_and_the_ask_is_flagged() {
        let r = req(
            "bash",
            &["echo safe # \u{202E} ; rm -rf ~ \u{202C}"],
            &["echo\u{200B} *"],
            json!({"command": "echo safe # \u{202E} ; rm -rf ~ \u{202C}"}),
        );
        let p = prompt_text("bash", &r);
        assert_eq!(
            p.title,
            "bash asks for bash: echo safe # <U+202E> ; rm -rf ~ <U+202C>"
        );
        assert_eq!(
            p.sections[0].lines,
            ["echo safe # <U+202E> ; rm -rf ~ <U+202C>"]
        );
        assert_eq!(
            p.always,
            ["always allow bash `echo<U+200B> *` in this project"]
        );
        assert_eq!(p.warning.as_deref(), Some(HIDDEN_CHARS_WARNING));
        let plain = req(
            "bash",
            &["ls"],
            &["ls *"],
            json!({"command": "ls 👨\u{200D}👩"}),
        );
        assert_eq!(prompt_text("bash", &plain).warning, None);
    }

    #[test]
    fn an_ask_from_a_sub_agent_names_it_first() {
        let r = req(
            "bash",
            &["ls"],
            &["ls *"],
            json!({"command": "ls", "subagent": "general · Find callers"}),
        );
        assert_eq!(
            prompt_text("bash", &r).title,
            "sub-agent general · Find callers: bash asks for bash: ls"
        );
    }

    #[test]
    fn a_plugin_tool_shows_its_arguments_with_secrets_masked_and_what_always_remembers() {
        let r = req(
            "deploy_status",
            &["*"],
            &["*"],
            json!({"args": {"apiKey": "sk-123", "auth": {"token": "t"}, "service": "api"}}),
        );
        let p = prompt_text("deploy_status", &r);
        assert_eq!(p.title, "deploy_status asks to run");
        assert_eq!(p.sections.len(), 1);
        assert_eq!(p.sections[0].label, "arguments");
        assert_eq!(
            p.sections[0].lines,
            [
                "{",
                "  \"apiKey\": \"********\",",
                "  \"auth\": {",
                "    \"token\": \"********\"",
                "  },",
                "  \"service\": \"api\"",
                "}",
            ]
        );
        assert_eq!(p.always, ["always allow deploy_status in this project"]);
    }

    #[test]
    fn a_compound_bash_command_lists_each_remembered_rule_on_its_own_line() {
        let r = req(
            "bash",
            &["ls -la && echo done", "ls -la", "echo done"],
            &["ls *", "echo *"],
            json!({"command": "ls -la && echo done", "description": "list"}),
        );
        let p = prompt_text("bash", &r);
        assert_eq!(p.title, "bash asks for bash: ls -la && echo done");
        assert_eq!(p.sections[0].label, "command");
        assert_eq!(p.sections[0].lines, ["ls -la && echo done"]);
        assert_eq!(
            p.always,
            [
                "always allow in this project (bash, each rule remembered):",
                "  `ls *`",
                "  `echo *`",
            ]
        );
        let simple = req(
            "bash",
            &["git status"],
            &["git status *"],
            json!({"command": "git status"}),
        );
        assert_eq!(
            prompt_text("bash", &simple).always,
            ["always allow bash `git status *` in this project"]
        );
    }

    #[test]
    fn long_arguments_are_bounded() {
        let long: Vec<Value> = (0..100).map(|i| json!(i)).collect();
        let lines = argument_lines(&json!({"items": long, "text": "x".repeat(500)}));
        assert_eq!(lines.len(), MAX_LINES + 1);
        assert_eq!(lines[MAX_LINES], "… (75 more lines)");
        assert_eq!(more_lines(1), "1 more line");
        assert!(
            lines
                .iter()
                .all(|l| l.chars().count() <= MAX_LINE_CHARS + 1)
        );
    }

    #[test]
    fn the_whole_prompt_keeps_every_line_of_a_long_diff() {
        let diff: String = (0..400)
            .map(|i| format!("+line {i} {}\n", "x".repeat(200)))
            .collect();
        let r = req(
            "edit",
            &["big.txt"],
            &[],
            json!({"path": "big.txt", "diff": diff}),
        );
        let short = prompt_text("write", &r);
        assert_eq!(short.sections[1].lines.len(), MAX_LINES + 1);
        let whole = prompt_text_whole("write", &r);
        assert_eq!(whole.sections[1].label, "diff");
        assert_eq!(whole.sections[1].lines.len(), 400);
        assert_eq!(whole.sections[1].lines[399].chars().count(), 210);
        assert_eq!(whole.title, short.title);
    }
}
