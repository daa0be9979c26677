//! The `edit` tool: replace `oldString` with `newString` in one file.
//!
//! Data flow: the path goes through the same preparation as `write` (resolve, `.git`
//! refusal, `external_directory`, load as UTF-8, stale-read check). `replace` is pure: it
//! finds `oldString` exactly, or else line by line ignoring indentation and trailing
//! whitespace (re-indenting `newString` to the file), and refuses ambiguous matches with
//! their line numbers. The new text is shown to the user as a diff in the `edit` ask, then
//! committed like `write` does (re-checked, journaled first, replaced atomically) and
//! marked as seen; the model gets a short diff back.

use std::sync::Arc;

use async_trait::async_trait;
use podcode_protocol::{ToolResult, ToolSpec};
use podcode_tools::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::workspace::FileTimes;
use crate::write::{
    ask_edit, clip_diff, commit, count_lines, diff_stats, load_text, parse_args, prepare,
    unified_diff,
};

pub(crate) const EDIT_DESCRIPTION: &str = "\
Replaces text in an existing file: finds `oldString` and puts `newString` in its place. For \
small, targeted changes to one file; `write` creates or rewrites a file, `apply_patch` changes \
several files.
- `oldString` must match exactly one place: copy it from the file (read it first) with its \
indentation, without the line numbers `read` shows. If it matches several places the edit is \
refused with their line numbers: add surrounding lines, or set `replaceAll: true` to change \
every occurrence.
- If nothing matches exactly, whole lines are matched ignoring indentation and trailing \
whitespace, and `newString` is re-indented to fit.
- An empty `oldString` creates a file that does not exist yet.
- If the file changed on disk since you read it, the edit is refused: read it again.
Example: {\"filePath\": \"src/main.rs\", \"oldString\": \"let retries = 3;\", \"newString\": \"let retries = 5;\"}";

/// The longest diff (in lines) returned to the model; the user's prompt shows all of it.
const MAX_DIFF_LINES: usize = 80;

/// Arguments of `edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EditArgs {
    /// The file to change, relative to the session directory or absolute.
    pub file_path: String,
    /// The exact text to replace, copied from the file with its indentation (empty to create a new file).
    pub old_string: String,
    /// The text to put in its place; must differ from oldString.
    pub new_string: String,
    /// Replace every occurrence of oldString instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

pub struct EditTool {
    spec: ToolSpec,
    times: Arc<FileTimes>,
}

impl EditTool {
    pub fn new(times: Arc<FileTimes>) -> Self {
        let spec = ToolSpec::new("edit", EDIT_DESCRIPTION, crate::params_schema::<EditArgs>());
        Self { spec, times }
    }
}

#[async_trait]
impl Tool for EditTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let args: EditArgs = parse_args(args)?;
        if args.old_string == args.new_string {
            return Err(ToolError::failed(NOOP_TEXT));
        }
        let path = prepare(&ctx, &args.file_path).await?;
        let rel = path.pattern.clone();
        let existing = load_text(&path)?;
        self.times.check_unchanged(ctx.session_id(), &path.abs)?;

        let (old_text, new_text, summary) = match existing {
            None if args.old_string.is_empty() => {
                let lines = count_lines(&args.new_string);
                (
                    None,
                    args.new_string.clone(),
                    format!("Created {rel} with {lines}."),
                )
            }
            Some(_) if args.old_string.is_empty() => {
                return Err(ToolError::failed(exists_text(&rel)));
            }
            None => return Err(ToolError::failed(missing_text(&rel))),
            Some(text) => {
                let done = replace(
                    &text,
                    &args.old_string,
                    &args.new_string,
                    args.replace_all,
                    &rel,
                )?;
                if done.text == text {
                    return Err(ToolError::failed(format!(
                        "this edit would leave {rel} unchanged: the matched text already reads like newString once indentation is adjusted. Read the file to check whether the change is already there."
                    )));
                }
                let (a, d) = diff_stats(&text, &done.text);
                let plural = if done.count == 1 {
                    "replacement"
                } else {
                    "replacements"
                };
                let mut summary =
                    format!("Edited {rel} ({} {plural}, +{a} -{d} lines).", done.count);
                if done.tolerant {
                    summary.push_str(
                        " oldString matched only when ignoring indentation and trailing whitespace",
                    );
                    summary.push_str(if done.reindented {
                        "; newString was re-indented to fit."
                    } else {
                        "."
                    });
                }
                (Some(text), done.text, summary)
            }
        };

        let diff = unified_diff(&rel, old_text.as_deref().unwrap_or(""), &new_text);
        ask_edit(&ctx, &path, &diff).await?;
        let (additions, deletions) = diff_stats(old_text.as_deref().unwrap_or(""), &new_text);
        commit(&ctx, &path, old_text, Some(new_text))?;
        self.times.mark(ctx.session_id(), &path.abs);
        let output = format!("{summary}\n\n{}", clip_diff(&diff, MAX_DIFF_LINES));
        Ok(ToolResult::text(output.trim_end())
            .with_title(rel)
            .with_metadata(json!({
                "filePath": path.abs,
                "diff": diff,
                "additions": additions,
                "deletions": deletions,
            })))
    }
}

pub(crate) const NOOP_TEXT: &str = "oldString and newString are identical, so this edit would change nothing. Put the text to replace in oldString and the different text you want in newString.";

pub(crate) fn exists_text(rel: &str) -> String {
    format!(
        "oldString is empty, which only creates a new file, but {rel} already exists. To change it, put the exact text to replace in oldString (read the file first); to replace the whole file, use the write tool."
    )
}

pub(crate) fn missing_text(rel: &str) -> String {
    format!(
        "{rel} does not exist. Check the path (the list and glob tools find files); to create a new file, use the write tool."
    )
}

/// The outcome of a successful `replace`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Replaced {
    pub text: String,
    pub count: usize,
    /// Matched line by line ignoring indentation and trailing whitespace.
    pub tolerant: bool,
    pub reindented: bool,
}

/// Replaces `old` with `new` in `text`: exactly first (also with `old` converted to the
/// file's CRLF line endings), else line-based ignoring indentation and trailing whitespace.
pub(crate) fn replace(
    text: &str,
    old: &str,
    new: &str,
    all: bool,
    rel: &str,
) -> Result<Replaced, ToolError> {
    let mut candidates = vec![(old.to_string(), new.to_string())];
    if text.contains("\r\n") && old.contains('\n') {
        candidates.push((to_crlf(old), to_crlf(new)));
    }
    for (old, new) in &candidates {
        let starts: Vec<usize> = text.match_indices(old.as_str()).map(|(i, _)| i).collect();
        match starts.len() {
            0 => continue,
            n if n > 1 && !all => {
                return Err(ToolError::failed(ambiguous_text(
                    rel,
                    &line_numbers(text, &starts),
                    false,
                )));
            }
            n => {
                let text = if all {
                    text.replace(old.as_str(), new)
                } else {
                    text.replacen(old.as_str(), new, 1)
                };
                return Ok(Replaced {
                    text,
                    count: n,
                    tolerant: false,
                    reindented: false,
                });
            }
        }
    }
    replace_tolerant(text, old, new, all, rel)
}

fn to_crlf(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// 1-based line numbers of byte offsets (ascending) in `text`.
fn line_numbers(text: &str, offsets: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(offsets.len());
    let (mut line, mut at) = (1, 0);
    for &o in offsets {
        line += text.as_bytes()[at..o]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        at = o;
        out.push(line);
    }
    out
}

pub(crate) fn ambiguous_text(rel: &str, lines: &[usize], tolerant: bool) -> String {
    let shown: Vec<String> = lines.iter().take(10).map(|l| l.to_string()).collect();
    let more = if lines.len() > 10 {
        format!(" and {} more", lines.len() - 10)
    } else {
        String::new()
    };
    let how = if tolerant {
        " when ignoring indentation and trailing whitespace"
    } else {
        ""
    };
    format!(
        "oldString matches {} places in {rel}{how} (at lines {}{more}). Include more surrounding lines in oldString so it matches exactly one place, or set replaceAll to true to change every match.",
        lines.len(),
        shown.join(", ")
    )
}

/// One line of the file: where its content starts and ends, and where its terminator ends.
struct Line {
    start: usize,
    end: usize,
    next: usize,
}

fn split_lines(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut start = 0;
    for piece in text.split_inclusive('\n') {
        let next = start + piece.len();
        let content = piece
            .strip_suffix('\n')
            .map(|p| p.strip_suffix('\r').unwrap_or(p))
            .unwrap_or(piece);
        out.push(Line {
            start,
            end: start + content.len(),
            next,
        });
        start = next;
    }
    out
}

fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

fn replace_tolerant(
    text: &str,
    old: &str,
    new: &str,
    all: bool,
    rel: &str,
) -> Result<Replaced, ToolError> {
    let lines = split_lines(text);
    let line_text = |l: &Line| &text[l.start..l.end];
    let wanted: Vec<&str> = old.lines().map(str::trim).collect();
    let Some(first_real) = wanted.iter().position(|w| !w.is_empty()) else {
        return Err(ToolError::failed(not_found_text(
            rel,
            "oldString contains only whitespace.",
        )));
    };

    let mut windows = Vec::new();
    let mut i = 0;
    while i + wanted.len() <= lines.len() {
        if wanted
            .iter()
            .enumerate()
            .all(|(j, w)| line_text(&lines[i + j]).trim() == *w)
        {
            windows.push(i);
            i += wanted.len();
        } else {
            i += 1;
        }
    }
    match windows.len() {
        0 => {
            let first = wanted[first_real];
            let at: Vec<String> = lines
                .iter()
                .enumerate()
                .filter(|(_, l)| line_text(l).trim() == first)
                .map(|(n, _)| (n + 1).to_string())
                .take(5)
                .collect();
            let hint = if at.is_empty() {
                "Its first line does not appear in the file either.".to_string()
            } else {
                format!(
                    "Its first line `{first}` appears at line {}, but the lines after it differ from oldString.",
                    at.join(", ")
                )
            };
            return Err(ToolError::failed(not_found_text(rel, &hint)));
        }
        n if n > 1 && !all => {
            let at: Vec<usize> = windows.iter().map(|w| w + 1).collect();
            return Err(ToolError::failed(ambiguous_text(rel, &at, true)));
        }
        _ => {}
    }

    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let old_indent = old.lines().nth(first_real).map(indent_of).unwrap_or("");
    let body = if old.ends_with('\n') {
        new.strip_suffix('\n')
            .map(|n| n.strip_suffix('\r').unwrap_or(n))
            .unwrap_or(new)
    } else {
        new
    };
    let new_lines: Vec<&str> = body
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut reindented = false;
    let mut out = String::with_capacity(text.len() + new.len());
    let mut copied = 0;
    for &w in &windows {
        let file_indent = indent_of(line_text(&lines[w + first_real]));
        let fits = new_lines
            .iter()
            .all(|l| l.trim().is_empty() || l.starts_with(old_indent));
        let replacement: Vec<String> = new_lines
            .iter()
            .map(|l| {
                if file_indent != old_indent && fits && !l.trim().is_empty() {
                    reindented = true;
                    format!("{file_indent}{}", &l[old_indent.len()..])
                } else {
                    l.to_string()
                }
            })
            .collect();
        let last = &lines[w + wanted.len() - 1];
        let (mut start, mut end) = (lines[w].start, last.end);
        if body.is_empty() {
            // Deleting whole lines: take a line terminator with them.
            if last.next > last.end {
                end = last.next;
            } else if w > 0 {
                start = lines[w - 1].end;
            }
        }
        out.push_str(&text[copied..start.max(copied)]);
        if !body.is_empty() {
            out.push_str(&replacement.join(eol));
        }
        copied = end;
    }
    out.push_str(&text[copied..]);
    Ok(Replaced {
        text: out,
        count: windows.len(),
        tolerant: true,
        reindented,
    })
}

pub(crate) fn not_found_text(rel: &str, hint: &str) -> String {
    format!(
        "could not find oldString in {rel}, not even when ignoring indentation and trailing whitespace. {hint} Read the file again and copy the exact lines you want to change into oldString."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str, old: &str, new: &str, all: bool) -> Replaced {
        replace(text, old, new, all, "f.rs").unwrap()
    }

    fn err(text: &str, old: &str, new: &str, all: bool) -> String {
        replace(text, old, new, all, "f.rs")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn exact_single_and_all() {
        assert_eq!(ok("a b a", "b", "c", false).text, "a c a");
        let r = ok("x\ny\nx\n", "x", "z", true);
        assert_eq!((r.text.as_str(), r.count), ("z\ny\nz\n", 2));
        assert_eq!(
            err("x\ny\nx\n", "x", "z", false),
            "oldString matches 2 places in f.rs (at lines 1, 3). Include more surrounding lines in oldString so it matches exactly one place, or set replaceAll to true to change every match."
        );
    }

    #[test]
    fn tolerant_match_reindents_and_keeps_line_endings() {
        let text = "fn f() {\n        let a = 1;   \n        let b = 2;\n}\n";
        let r = ok(
            text,
            "let a = 1;\nlet b = 2;",
            "let a = 10;\n  let b = 20;",
            false,
        );
        assert!(r.tolerant && r.reindented);
        assert_eq!(
            r.text,
            "fn f() {\n        let a = 10;\n          let b = 20;\n}\n"
        );

        let crlf = "a\r\n    b\r\nc\r\n";
        // Indentation follows the first line: `B` keeps its place relative to `a`.
        assert_eq!(ok(crlf, "a\nb\n", "a\nB\n", false).text, "a\r\nB\r\nc\r\n");
        assert_eq!(
            ok(crlf, "  b  \n", "  B\n", false).text,
            "a\r\n    B\r\nc\r\n"
        );
    }

    #[test]
    fn crlf_exact_and_deleting_lines() {
        assert_eq!(
            ok("a\r\nb\r\nc\r\n", "a\nb", "x\ny", false).text,
            "x\r\ny\r\nc\r\n"
        );
        assert_eq!(
            ok("a\n  b\nc\n", "b\n", "", false).text,
            "a\n  c\n",
            "exact is a substring match"
        );
        assert_eq!(ok("a\n  b\nc\n", "b  \n", "", false).text, "a\nc\n");
        assert_eq!(ok("a\n  b", "b \n", "", false).text, "a");
    }

    #[test]
    fn not_found_hints_at_the_first_line() {
        assert_eq!(
            err("one\ntwo\nthree\n", "two\nfour", "x", false),
            "could not find oldString in f.rs, not even when ignoring indentation and trailing whitespace. Its first line `two` appears at line 2, but the lines after it differ from oldString. Read the file again and copy the exact lines you want to change into oldString."
        );
        assert!(
            err("one\n", "zzz", "x", false)
                .contains("Its first line does not appear in the file either.")
        );
        assert!(err("one\n", "   \n", "x", false).contains("oldString contains only whitespace."));
    }
}
