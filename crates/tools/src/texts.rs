//! Every model-facing text the pipeline produces. Each one is read by a model deciding what
//! to do next, so each says what happened and what to do about it; tests pin them verbatim.

use crate::schema::ArgIssue;

/// The model-facing error for a tool name that resolves to nothing, with the closest ids.
pub fn unknown_tool_text(name: &str, closest: &[String]) -> String {
    if closest.is_empty() {
        format!("Unknown tool \"{name}\". No tools are available in this session.")
    } else {
        format!(
            "Unknown tool \"{name}\". The closest available tools are: {}. Call one of them by its exact id.",
            closest.join(", ")
        )
    }
}

/// The model-facing error for a call of a tool the config switched off (`by`: the config's
/// tools entry).
pub fn switched_off_text(name: &str, by: &str) -> String {
    format!(
        "The {name} tool is switched off by the user's config (tools entry \"{by}\"): it cannot be called in this session. Do the task with the tools you were given."
    )
}

/// The model-facing error for a name that matches several ids case-insensitively.
pub fn ambiguous_tool_text(name: &str, matches: &[String]) -> String {
    format!(
        "Unknown tool \"{name}\": it matches several tools when case is ignored ({}). Call one of them by its exact id.",
        matches.join(", ")
    )
}

/// The model-facing error for arguments that are not valid JSON.
pub fn invalid_json_text(id: &str, error: &str) -> String {
    format!(
        "The {id} tool was called with arguments that are not valid JSON ({error}). Send the arguments as a single JSON object that matches the tool's schema."
    )
}

/// The model-facing error for arguments the schema refuses, one line per issue.
pub fn invalid_arguments_text(id: &str, issues: &[ArgIssue]) -> String {
    let list: Vec<String> = issues
        .iter()
        .map(|i| format!("`{}`: {}", i.path, i.message))
        .collect();
    format!(
        "The {id} tool was called with invalid arguments: {}. Please rewrite the input so it satisfies the expected schema.",
        list.join("; ")
    )
}

/// A call stopped at its time limit: names the limit and the setting it comes from (the
/// tool's own `timeout`, else `[tool] timeout` in the config), so it reads unlike an abort.
pub fn timeout_text(id: &str, secs: f64, tool_own_limit: bool) -> String {
    let setting = if tool_own_limit {
        format!("the {id} tool's own `timeout` setting")
    } else {
        "`[tool] timeout` in the podcode config".to_string()
    };
    format!(
        "The {id} tool timed out: it did not finish within its limit of {} (set by {setting}) and was stopped. If the work needs longer, split it into smaller steps or ask the user to raise the limit.",
        format_secs(secs)
    )
}

/// The model-facing text for a call the user aborted.
pub fn aborted_text(id: &str) -> String {
    format!(
        "The {id} tool call was aborted by the user before it finished. Do not run it again unless the user asks you to."
    )
}

/// The model-facing text for a call whose tool returned an error.
pub fn failed_text(id: &str, message: &str) -> String {
    format!("The {id} tool failed: {message}")
}

/// The model-facing text for a call whose tool panicked.
pub fn panicked_text(id: &str, message: &str) -> String {
    format!(
        "The {id} tool crashed ({message}). This is a bug in the tool, not in your call; try another approach."
    )
}

/// The model-facing text for a call a `tool.execute.before` hook blocked.
pub fn blocked_by_hook_text(id: &str, reason: &str) -> String {
    format!("The {id} tool call was blocked before it ran: {reason}")
}

/// The model-facing text for a call a permission rule denied.
pub fn denied_text(permission: &str, patterns: &[String]) -> String {
    format!(
        "Permission denied: a rule in the user's configuration denies {permission} for {}. Do not retry this call; find another way or ask the user to change the rule.",
        quote_list(patterns)
    )
}

/// The model-facing text for a call the user rejected.
pub fn rejected_text(permission: &str, patterns: &[String]) -> String {
    format!(
        "The user rejected the {permission} permission for {}. Do not retry this call; stop and ask the user how they would like to proceed.",
        quote_list(patterns)
    )
}

/// The model-facing text for a call the user rejected with feedback for the model.
pub fn rejected_with_feedback_text(
    permission: &str,
    patterns: &[String],
    feedback: &str,
) -> String {
    format!(
        "The user rejected the {permission} permission for {} and said: {feedback}",
        quote_list(patterns)
    )
}

/// The config rules `(permission, text)` that would allow a refused request, as the
/// `[[permission]]` TOML the user pastes into their config.toml. Shared by the gates that
/// name them (webfetch, the browser), so a refusal reads the same whichever tool gave it.
/// Each text is the exact thing refused (an origin, a host, a URL): its glob characters are
/// escaped, so the pasted rule matches it — `http://[::1]:5173` is not a character class.
pub fn allow_rules(rules: &[(&str, &str)]) -> String {
    rules
        .iter()
        .map(|(permission, text)| {
            format!(
                "\n[[permission]]\npermission = {}\npattern = {}\naction = \"allow\"\n",
                toml_string(permission),
                toml_string(&glob_literal(text))
            )
        })
        .collect()
}

/// A rule pattern matching exactly `text` (a backslash escapes a glob character): what a
/// gate asking about an origin or a host offers to remember, so "always" for
/// `http://[::1]:5173` matches it again rather than a character class.
pub fn glob_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A TOML basic string: a pattern is pasted as printed, so quotes, backslashes and control
/// characters must not end or break it.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The note appended to (head) or put before (tail) a truncated output.
pub fn truncation_note(
    t: &crate::truncate::Truncated,
    head: bool,
    has_read: bool,
    has_grep: bool,
) -> String {
    let path = t.spill_path.display();
    let what = if head {
        format!(
            "{} more lines ({} bytes) were cut",
            t.cut_lines, t.cut_bytes
        )
    } else {
        format!(
            "the first {} lines ({} bytes) were cut",
            t.cut_lines, t.cut_bytes
        )
    };
    let how = match (has_read, has_grep) {
        (true, grep) => {
            let (offset, which) = if head {
                (t.kept_lines + 1, "the rest")
            } else {
                (1, "the beginning")
            };
            let grep = if grep { ", or search it with grep" } else { "" };
            format!(
                "Read {which} with the read tool: {{\"filePath\": \"{path}\", \"offset\": {offset}, \"limit\": 2000}}{grep}."
            )
        }
        (false, true) => "Search it with the grep tool.".to_string(),
        (false, false) => {
            "No tool in this session can read it; ask the user if you need it.".to_string()
        }
    };
    if let Some(why) = &t.spill_error {
        return format!(
            "[output truncated: {what}. The full output ({} lines, {} bytes) could not be saved ({why}), so only the part shown here is available. If you need the rest, narrow the command's output.]",
            t.total_lines, t.total_bytes
        );
    }
    format!(
        "[output truncated: {what}. The full output ({} lines, {} bytes) is saved in {path}. {how}]",
        t.total_lines, t.total_bytes
    )
}

fn quote_list(patterns: &[String]) -> String {
    let quoted: Vec<String> = patterns.iter().map(|p| format!("\"{p}\"")).collect();
    quoted.join(", ")
}

fn format_secs(secs: f64) -> String {
    if secs >= 1.0 && secs.fract() == 0.0 {
        let s = secs as u64;
        if s == 1 {
            "1 second".into()
        } else {
            format!("{s} seconds")
        }
    } else {
        format!("{secs:.1} seconds")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_rules_are_toml_to_paste() {
        assert_eq!(
            allow_rules(&[
                ("webfetch_private", "http://localhost:5173"),
                ("webfetch", "localhost")
            ]),
            "\n[[permission]]\npermission = \"webfetch_private\"\npattern = \"http://localhost:5173\"\naction = \"allow\"\n\n[[permission]]\npermission = \"webfetch\"\npattern = \"localhost\"\naction = \"allow\"\n"
        );
        assert_eq!(toml_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000A\"");
        // An IPv6 origin: its brackets escaped in the pattern, the backslashes in the TOML.
        assert_eq!(
            allow_rules(&[("webfetch_private", "http://[::1]:9")]),
            "\n[[permission]]\npermission = \"webfetch_private\"\npattern = \"http://\\\\[::1\\\\]:9\"\naction = \"allow\"\n"
        );
        let pattern = glob_literal("http://[::1]:9/a?b=*");
        assert!(crate::wildcard_match(&pattern, "http://[::1]:9/a?b=*"));
        assert!(!crate::wildcard_match(&pattern, "http://[::1]:9/aXb=c"));
    }
}
