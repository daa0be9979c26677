//! The title of a tool call before it reports its own — what it acts on, in a few words
//! (`Read src/a.rs`, `` `cargo test` ``, `Patch a.rs, b.rs`) — from the tool id and its
//! arguments, and the files an `apply_patch` patch names. Every front end that shows a call
//! as it starts (ACP's tool call, `podcode run`'s start line) uses these; `shown_output`
//! is what a card shows of a call's output.

use std::path::Path;

use serde_json::Value;

use crate::{clip_title, show_hidden_chars};

/// What a patch does to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchOp {
    /// `*** Add File:`
    Add,
    /// `*** Update File:`
    Update,
    /// `*** Delete File:`
    Delete,
    /// `*** Update File:` followed by `*** Move to:` (both paths).
    Move,
}

/// The files a patch names, with what it does to each (a `*** Move to:` turns the
/// preceding update into a move and names the destination too).
pub fn patch_files(patch: &str) -> Vec<(PatchOp, String)> {
    let mut out: Vec<(PatchOp, String)> = Vec::new();
    for line in patch.lines() {
        let line = line.trim_end();
        if let Some(p) = line.strip_prefix("*** Add File: ") {
            out.push((PatchOp::Add, p.trim().to_string()));
        } else if let Some(p) = line.strip_prefix("*** Update File: ") {
            out.push((PatchOp::Update, p.trim().to_string()));
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            out.push((PatchOp::Delete, p.trim().to_string()));
        } else if let Some(p) = line.strip_prefix("*** Move to: ") {
            if let Some(last) = out.last_mut() {
                last.0 = PatchOp::Move;
            }
            out.push((PatchOp::Move, p.trim().to_string()));
        }
    }
    out
}

/// A non-empty string argument.
pub fn str_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// `path` as the user reads it: relative to `dir` when inside it.
fn shown(path: &str, dir: &Path) -> String {
    Path::new(path)
        .strip_prefix(dir)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.to_string())
}

/// The title of a call before it reports its own: what it acts on, in a few words.
pub fn tool_title(tool: &str, args: &Value, dir: &Path) -> String {
    let path = |key: &str| str_arg(args, key).map(|p| shown(p, dir));
    let title = match tool {
        "read" => path("filePath").map(|p| match args.get("offset").and_then(Value::as_u64) {
            Some(line) => format!("Read {p} (from line {line})"),
            None => format!("Read {p}"),
        }),
        "write" => path("filePath").map(|p| format!("Write {p}")),
        "edit" => path("filePath").map(|p| format!("Edit {p}")),
        "list" => Some(format!(
            "List {}",
            path("path").unwrap_or_else(|| ".".into())
        )),
        "glob" => str_arg(args, "pattern").map(|pat| match path("path") {
            Some(p) => format!("Find {pat} in {p}"),
            None => format!("Find {pat}"),
        }),
        "grep" => str_arg(args, "pattern").map(|pat| match path("path") {
            Some(p) => format!("Search \"{pat}\" in {p}"),
            None => format!("Search \"{pat}\""),
        }),
        "symbols" => Some(match str_arg(args, "query") {
            Some(q) => format!("Symbols matching \"{q}\""),
            None => format!("Symbols in {}", path("path").unwrap_or_else(|| ".".into())),
        }),
        "bash" => str_arg(args, "command").map(|c| format!("`{}`", c.trim())),
        "webfetch" => str_arg(args, "url").map(|u| format!("Fetch {u}")),
        "apply_patch" => {
            let files: Vec<String> = patch_files(str_arg(args, "patch").unwrap_or(""))
                .into_iter()
                .map(|(_, f)| f)
                .collect();
            Some(if files.is_empty() {
                "Apply patch".to_string()
            } else {
                format!("Patch {}", files.join(", "))
            })
        }
        "task" => str_arg(args, "description").map(|d| match str_arg(args, "subagent_type") {
            Some(agent) => format!("{d} ({agent} agent)"),
            None => d.to_string(),
        }),
        _ => None,
    };
    // The editor shows the title as it is: invisible and direction-changing characters
    // become `<U+XXXX>` markers so a command cannot read differently from what it runs.
    clip_title(&show_hidden_chars(
        &title.unwrap_or_else(|| tool.to_string()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn titles_name_what_a_call_acts_on() {
        let dir = Path::new("/w");
        let t = |tool: &str, args: Value| tool_title(tool, &args, dir);
        assert_eq!(
            t("read", json!({"filePath": "/w/src/a.rs"})),
            "Read src/a.rs"
        );
        assert_eq!(
            t("read", json!({"filePath": "src/a.rs", "offset": 40})),
            "Read src/a.rs (from line 40)"
        );
        assert_eq!(t("write", json!({"filePath": "/w/n.txt"})), "Write n.txt");
        assert_eq!(
            t("edit", json!({"filePath": "/etc/hosts"})),
            "Edit /etc/hosts"
        );
        assert_eq!(t("list", json!({})), "List .");
        assert_eq!(t("glob", json!({"pattern": "**/*.rs"})), "Find **/*.rs");
        assert_eq!(
            t("grep", json!({"pattern": "fn main", "path": "/w/src"})),
            "Search \"fn main\" in src"
        );
        assert_eq!(
            t("symbols", json!({"query": "Engine"})),
            "Symbols matching \"Engine\""
        );
        assert_eq!(
            t("bash", json!({"command": " cargo test \n"})),
            "`cargo test`"
        );
        assert_eq!(
            t("webfetch", json!({"url": "https://example.org"})),
            "Fetch https://example.org"
        );
        assert_eq!(
            t(
                "apply_patch",
                json!({"patch": "*** Update File: a.rs\n*** Add File: b.rs"})
            ),
            "Patch a.rs, b.rs"
        );
        assert_eq!(t("apply_patch", json!({"patch": ""})), "Apply patch");
        assert_eq!(
            t(
                "task",
                json!({"description": "Find the bug", "subagent_type": "explore"})
            ),
            "Find the bug (explore agent)"
        );
        assert_eq!(t("hello", json!({})), "hello");
        // Missing arguments fall back to the tool id rather than an empty title.
        assert_eq!(t("read", json!({})), "read");
    }
}

/// What a front end shows of a call's output: the model's text, except that a `task`
/// result drops the wrapper the model reads (`task_id: …`, `<task_result>` tags) and keeps
/// the sub-agent's answer and the notes after it (step limit, changed files).
pub fn shown_output<'a>(tool: &str, output: &'a str) -> std::borrow::Cow<'a, str> {
    const OPEN: &str = "<task_result>\n";
    const CLOSE: &str = "\n</task_result>\n";
    if tool != "task" || !output.starts_with("task_id: ") {
        return output.into();
    }
    let Some(start) = output.find(OPEN).map(|i| i + OPEN.len()) else {
        return output.into();
    };
    let Some(end) = output[start..].rfind(CLOSE).map(|i| start + i) else {
        return output.into();
    };
    let rest = output[end + CLOSE.len()..].trim_end();
    let answer = output[start..end].trim_end();
    if rest.is_empty() {
        answer.to_string().into()
    } else {
        format!("{answer}\n{rest}").into()
    }
}

#[cfg(test)]
mod shown_output_tests {
    use super::shown_output;

    #[test]
    fn a_task_result_shows_the_answer_and_its_notes_without_the_wrapper() {
        let out = "task_id: ses_1 (pass it as task_id to continue this sub-agent's session)\n\n<task_result>\nFound 3 notes.\n</task_result>\nThe sub-agent changed 1 file: a.txt\n";
        assert_eq!(
            shown_output("task", out),
            "Found 3 notes.\nThe sub-agent changed 1 file: a.txt"
        );
        assert_eq!(shown_output("bash", out), out);
        assert_eq!(
            shown_output("task", "the sub-agent failed"),
            "the sub-agent failed"
        );
    }
}
