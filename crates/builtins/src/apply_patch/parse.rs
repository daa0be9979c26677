//! Parsing the Codex patch format into file operations, touching no file.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path          then the content, every line prefixed with `+`
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path       (optional)
//! @@ optional context line    then lines prefixed ' ' (context), '-' (remove), '+' (add)
//! *** End of File             (optional: the hunk's lines end the file)
//! *** End Patch
//! ```
//!
//! Leniencies, because models write patches: markers may carry surrounding whitespace, a
//! heredoc (`<<'EOF'` … `EOF`) or Markdown fence around the patch is dropped, the first hunk
//! of an update may omit its `@@`, a unified-diff range (`@@ -3,4 +3,5 @@ fn x`) keeps only
//! its trailing context, and empty patch lines are empty context lines (trailing ones are
//! dropped). Every error names the 1-based line of the patch text it is about.

/// One operation of a patch, in patch order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FileOp {
    Add {
        path: String,
        content: String,
        line: usize,
    },
    Delete {
        path: String,
        line: usize,
    },
    Update {
        path: String,
        move_to: Option<String>,
        hunks: Vec<Hunk>,
        line: usize,
    },
}

/// One `@@` hunk of an update.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Hunk {
    /// The text after `@@`, a line the hunk's lines come after.
    pub context: Option<String>,
    /// The patch line the hunk starts on (its `@@`, or its first line when `@@` was left out).
    pub line: usize,
    pub old: Vec<String>,
    pub new: Vec<String>,
    /// Each hunk line's kind in order: ' ' (in `old` and `new`), '-' (`old`), '+' (`new`).
    pub ops: Vec<char>,
    /// `*** End of File`: the old lines end the file.
    pub eof: bool,
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const EOF: &str = "*** End of File";

/// A parse failure: the patch line and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    pub line: usize,
    pub message: String,
}

fn fail<T>(line: usize, message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        line,
        message: message.into(),
    })
}

/// Parses a whole patch; a patch with no operations is an error.
pub(crate) fn parse(patch: &str) -> Result<Vec<FileOp>, ParseError> {
    let all: Vec<(usize, &str)> = patch.lines().enumerate().map(|(i, l)| (i + 1, l)).collect();
    let mut lines: &[(usize, &str)] = &all;
    while let [(_, first), rest @ ..] = lines
        && first.trim().is_empty()
    {
        lines = rest;
    }
    while let [rest @ .., (_, last)] = lines
        && last.trim().is_empty()
    {
        lines = rest;
    }
    if lines.is_empty() {
        return fail(1, "the patch is empty");
    }
    // A heredoc or Markdown fence around the patch.
    if let ([(_, first), inner @ .., (_, last)], true) = (lines, lines.len() >= 3) {
        let (first, last) = (first.trim(), last.trim());
        if (first.starts_with("<<") && last.ends_with("EOF"))
            || (first.starts_with("```") && last == "```")
        {
            lines = inner;
        }
    }
    let (first_no, first) = lines[0];
    if first.trim() != BEGIN {
        return fail(
            first_no,
            format!(
                "the patch must start with '{BEGIN}', found '{}'",
                first.trim()
            ),
        );
    }
    let (last_no, last) = lines[lines.len() - 1];
    if lines.len() < 2 || last.trim() != END {
        return fail(
            last_no,
            format!(
                "the patch must end with '{END}', found '{}' (was the patch cut short?)",
                last.trim()
            ),
        );
    }
    let mut body = &lines[1..lines.len() - 1];
    let mut ops = Vec::new();
    while let Some(&(no, line)) = body.first() {
        let header = line.trim();
        if header.is_empty() {
            body = &body[1..];
            continue;
        }
        let (op, used) = if let Some(path) = header.strip_prefix(ADD) {
            parse_add(path_of(path, no)?, no, &body[1..])
        } else if let Some(path) = header.strip_prefix(DELETE) {
            (
                FileOp::Delete {
                    path: path_of(path, no)?,
                    line: no,
                },
                1,
            )
        } else if let Some(path) = header.strip_prefix(UPDATE) {
            parse_update(path_of(path, no)?, no, &body[1..])?
        } else if header == END {
            return fail(no, format!("'{END}' appears before the end of the patch"));
        } else {
            return fail(
                no,
                format!(
                    "expected a file header ('{ADD} path', '{DELETE} path' or '{UPDATE} path'), found '{header}'"
                ),
            );
        };
        ops.push(op);
        body = &body[used..];
    }
    if ops.is_empty() {
        return fail(last_no, "the patch contains no file operations");
    }
    Ok(ops)
}

fn path_of(rest: &str, line: usize) -> Result<String, ParseError> {
    let path = rest.trim();
    if path.is_empty() {
        return fail(line, "the file header names no path");
    }
    Ok(path.to_string())
}

fn is_file_header(line: &str) -> bool {
    let t = line.trim();
    [ADD, DELETE, UPDATE].iter().any(|h| t.starts_with(h)) || t == END
}

/// `*** Add File:` content; returns the op and how many body lines it used (with header).
fn parse_add(path: String, line: usize, rest: &[(usize, &str)]) -> (FileOp, usize) {
    let mut content = String::new();
    let mut used = 1;
    for (i, &(_, l)) in rest.iter().enumerate() {
        if let Some(text) = l.strip_prefix('+') {
            content.push_str(text);
            content.push('\n');
        } else if l.trim().is_empty()
            && rest[i + 1..]
                .iter()
                .find(|(_, n)| !n.trim().is_empty())
                .is_some_and(|(_, n)| n.starts_with('+'))
        {
            // A blank line the model forgot to prefix, inside the content.
            content.push('\n');
        } else {
            break;
        }
        used += 1;
    }
    (
        FileOp::Add {
            path,
            content,
            line,
        },
        used,
    )
}

/// `*** Update File:` with its optional move and hunks.
fn parse_update(
    path: String,
    line: usize,
    rest: &[(usize, &str)],
) -> Result<(FileOp, usize), ParseError> {
    let mut used = 1;
    let mut move_to = None;
    if let Some(&(no, l)) = rest.first()
        && let Some(target) = l.trim().strip_prefix(MOVE)
    {
        move_to = Some(path_of(target, no)?);
        used += 1;
    }
    let mut hunks: Vec<Hunk> = Vec::new();
    // Per hunk: whether each old/new line came from a bare empty patch line.
    let mut bare_tail = 0usize;
    let mut current: Option<Hunk> = None;
    for &(no, l) in &rest[used - 1..] {
        if is_file_header(l) {
            break;
        }
        used += 1;
        if l.trim() == EOF {
            match current.as_mut() {
                Some(h) if !h.old.is_empty() || !h.new.is_empty() => h.eof = true,
                _ => return fail(no, format!("'{EOF}' must follow the lines of a hunk")),
            }
            continue;
        }
        if let Some(ctx) = l.strip_prefix("@@") {
            if let Some(done) = current.take() {
                hunks.push(finish(done, bare_tail, &path)?);
            }
            bare_tail = 0;
            current = Some(Hunk {
                context: context_of(ctx),
                line: no,
                ..Hunk::default()
            });
            continue;
        }
        if current.as_ref().is_some_and(|h| h.eof) {
            return fail(
                no,
                format!("unexpected line after '{EOF}': '{l}'; start a new hunk with '@@'"),
            );
        }
        // Only the first hunk may leave out its `@@` (later ones always start with one).
        let hunk = current.get_or_insert_with(|| Hunk {
            line: no,
            ..Hunk::default()
        });
        let (kind, text) = l.split_at(l.chars().next().map_or(0, char::len_utf8));
        match kind {
            "" => {
                hunk.old.push(String::new());
                hunk.new.push(String::new());
                hunk.ops.push(' ');
                bare_tail += 1;
                continue;
            }
            " " => {
                hunk.old.push(text.to_string());
                hunk.new.push(text.to_string());
                hunk.ops.push(' ');
            }
            "-" => {
                hunk.old.push(text.to_string());
                hunk.ops.push('-');
            }
            "+" => {
                hunk.new.push(text.to_string());
                hunk.ops.push('+');
            }
            _ => {
                return fail(
                    no,
                    format!(
                        "unexpected line in the hunk for {path}: '{l}'. Every hunk line starts with ' ' (context), '-' (removed) or '+' (added), and a new hunk starts with '@@'"
                    ),
                );
            }
        }
        bare_tail = 0;
    }
    if let Some(done) = current {
        hunks.push(finish(done, bare_tail, &path)?);
    }
    if hunks.is_empty() && move_to.is_none() {
        return fail(
            line,
            format!("'{UPDATE} {path}' has no hunks; add '@@' hunks with the lines to change"),
        );
    }
    Ok((
        FileOp::Update {
            path,
            move_to,
            hunks,
            line,
        },
        used,
    ))
}

/// Drops trailing empty context lines that came from blank patch lines (separators, not
/// content), then refuses a hunk with nothing in it.
fn finish(mut hunk: Hunk, bare_tail: usize, path: &str) -> Result<Hunk, ParseError> {
    for _ in 0..bare_tail {
        hunk.old.pop();
        hunk.new.pop();
        hunk.ops.pop();
    }
    if hunk.old.is_empty() && hunk.new.is_empty() {
        return fail(
            hunk.line,
            format!("a hunk for {path} has no lines ('-', '+' or ' ')"),
        );
    }
    Ok(hunk)
}

/// The context after `@@`: none when empty; a unified-diff range keeps only what follows it.
fn context_of(after: &str) -> Option<String> {
    let mut ctx = after.trim();
    if ctx.starts_with('-')
        && let Some(end) = ctx.find(" @@")
        && ctx[..end].split_whitespace().all(|r| {
            r.trim_start_matches(['-', '+'])
                .split(',')
                .all(|n| n.parse::<u64>().is_ok())
        })
    {
        ctx = ctx[end + 3..].trim();
    }
    let ctx = ctx.strip_suffix("@@").map(str::trim_end).unwrap_or(ctx);
    (!ctx.is_empty()).then(|| ctx.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(patch: &str) -> (usize, String) {
        let e = parse(patch).unwrap_err();
        (e.line, e.message)
    }

    #[test]
    fn parses_every_operation() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+one\n\n+two\n*** Delete File: b.txt\n*** Update File: c.rs\n*** Move to: d.rs\n@@ fn main()\n-    old\n+    new\n     same\n\n@@ -10,2 +10,2 @@\n x\n*** End of File\n*** Update File: e.rs\n*** Move to: f.rs\n*** End Patch\n";
        let ops = parse(patch).unwrap();
        assert_eq!(
            ops[0],
            FileOp::Add {
                path: "a.txt".into(),
                content: "one\n\ntwo\n".into(),
                line: 2
            }
        );
        assert_eq!(
            ops[1],
            FileOp::Delete {
                path: "b.txt".into(),
                line: 6
            }
        );
        let FileOp::Update {
            path,
            move_to,
            hunks,
            line,
        } = &ops[2]
        else {
            panic!()
        };
        assert_eq!(
            (path.as_str(), move_to.as_deref(), *line),
            ("c.rs", Some("d.rs"), 7)
        );
        assert_eq!(hunks[0].context.as_deref(), Some("fn main()"));
        assert_eq!(hunks[0].old, vec!["    old", "    same"]);
        assert_eq!(hunks[0].new, vec!["    new", "    same"]);
        assert_eq!(
            (hunks[1].context.clone(), hunks[1].line, hunks[1].eof),
            (None, 14, true)
        );
        assert!(matches!(&ops[3], FileOp::Update { hunks, .. } if hunks.is_empty()));
    }

    #[test]
    fn lenient_wrappers_and_diff_ranges() {
        let ops = parse(
            "<<'EOF'\n*** Begin Patch\n*** Update File: x\n line\n+added\n*** End Patch\nEOF",
        )
        .unwrap();
        let FileOp::Update { hunks, .. } = &ops[0] else {
            panic!()
        };
        assert_eq!(
            (hunks[0].line, hunks[0].old.len(), hunks[0].new.len()),
            (4, 1, 2)
        );
        assert_eq!(
            context_of(" -1,3 +1,4 @@ impl Foo"),
            Some("impl Foo".into())
        );
        assert_eq!(context_of(" -1 +1 @@"), None);
        assert_eq!(context_of(" fn x() @@"), Some("fn x()".into()));
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(err("  \n"), (1, "the patch is empty".into()));
        assert_eq!(
            err("hello\n*** End Patch"),
            (
                1,
                "the patch must start with '*** Begin Patch', found 'hello'".into()
            )
        );
        assert_eq!(
            err("*** Begin Patch\n*** Add File: a\n+x"),
            (
                3,
                "the patch must end with '*** End Patch', found '+x' (was the patch cut short?)"
                    .into()
            )
        );
        assert_eq!(
            err("*** Begin Patch\n*** End Patch"),
            (2, "the patch contains no file operations".into())
        );
        assert_eq!(
            err("*** Begin Patch\n*** Update File: a\n*** End Patch").0,
            2
        );
        let (line, msg) = err("*** Begin Patch\n*** Update File: a\n@@\n-x\n@@ y\n*** End Patch");
        assert_eq!(
            (line, msg.as_str()),
            (5, "a hunk for a has no lines ('-', '+' or ' ')")
        );
        let (line, msg) = err("*** Begin Patch\n*** Update File: a\n@@\n-x\n?x\n*** End Patch");
        assert_eq!(line, 5);
        assert!(
            msg.starts_with("unexpected line in the hunk for a: '?x'."),
            "{msg}"
        );
        assert_eq!(
            err("*** Begin Patch\n*** Frobnicate: a\n*** End Patch").0,
            2
        );
        assert_eq!(
            err("*** Begin Patch\n*** Add File:   \n*** End Patch"),
            (2, "the file header names no path".into())
        );
    }
}
