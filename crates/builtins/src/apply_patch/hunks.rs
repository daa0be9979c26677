//! Applying the hunks of one `*** Update File:` to a file's text, in memory.
//!
//! The text is split into lines (a final newline and CRLF endings are remembered and put
//! back). Hunks are located in order, each after the previous one: the `@@` context line
//! first, then the hunk's old lines, matched exactly, then ignoring trailing whitespace, then
//! ignoring surrounding whitespace (hunks marked `*** End of File` try the file's end first).
//! Nothing is written here; a hunk that cannot be placed is reported with what was missing.

use super::parse::Hunk;

/// The new text, and which hunks (1-based) only matched when ignoring whitespace.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Applied {
    pub text: String,
    pub loose: Vec<usize>,
}

/// A hunk that could not be placed: its 1-based number and what was not found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct HunkFailure {
    pub index: usize,
    pub what: String,
}

/// How strictly a line must match, tried in this order.
const PASSES: [fn(&str) -> &str; 3] = [|s| s, str::trim_end, str::trim];

/// Finds `pattern` in `lines` at or after `start`: `(index, matched_only_when_trimmed)`.
fn seek(lines: &[&str], pattern: &[String], start: usize, eof: bool) -> Option<(usize, bool)> {
    if pattern.len() > lines.len() {
        return None;
    }
    let last = lines.len() - pattern.len();
    let fits = |i: usize, pass: fn(&str) -> &str| {
        pattern
            .iter()
            .enumerate()
            .all(|(j, p)| pass(lines[i + j]) == pass(p))
    };
    if eof {
        for (n, pass) in PASSES.iter().enumerate() {
            if last >= start && fits(last, *pass) {
                return Some((last, n == 2));
            }
        }
    }
    for (n, pass) in PASSES.iter().enumerate() {
        if let Some(i) = (start..=last).find(|&i| fits(i, *pass)) {
            return Some((i, n == 2));
        }
    }
    None
}

/// Applies `hunks` to `original`; all of them must match.
pub(crate) fn apply_hunks(original: &str, hunks: &[Hunk]) -> Result<Applied, HunkFailure> {
    let crlf = original.contains("\r\n");
    let trailing_newline = original.ends_with('\n');
    let body = original
        .strip_suffix('\n')
        .map(|b| b.strip_suffix('\r').unwrap_or(b))
        .unwrap_or(original);
    let lines: Vec<&str> = if original.is_empty() {
        Vec::new()
    } else {
        body.split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect()
    };

    let mut replacements: Vec<(usize, usize, Vec<&str>)> = Vec::new();
    let mut loose = Vec::new();
    let mut cursor = 0;
    for (k, hunk) in hunks.iter().enumerate() {
        let index = k + 1;
        let mut context_at = None;
        if let Some(ctx) = &hunk.context {
            let Some((at, fuzzy)) = seek(&lines, std::slice::from_ref(ctx), cursor, false) else {
                return Err(HunkFailure {
                    index,
                    what: format!(
                        "could not find the @@ context line `{ctx}`{}",
                        after(cursor)
                    ),
                });
            };
            if fuzzy {
                loose.push(index);
            }
            context_at = Some(at);
            cursor = at + 1;
        }
        if hunk.old.is_empty() {
            let at = if hunk.context.is_some() && !hunk.eof {
                cursor
            } else {
                lines.len()
            };
            replacements.push((at, 0, hunk.new.iter().map(String::as_str).collect()));
            continue;
        }
        let (mut old, mut new, mut ops) = (&hunk.old[..], &hunk.new[..], &hunk.ops[..]);
        let mut found = seek(&lines, old, cursor, hunk.eof);
        // A trailing empty line often stands for the file's final newline.
        if found.is_none() && ops.last() == Some(&' ') && old.last().is_some_and(String::is_empty) {
            old = &old[..old.len() - 1];
            new = &new[..new.len() - 1];
            ops = &ops[..ops.len() - 1];
            found = if old.is_empty() {
                Some((lines.len(), false))
            } else {
                seek(&lines, old, cursor, hunk.eof)
            };
        }
        // The context line repeated as the hunk's first line.
        if found.is_none()
            && let Some(at) = context_at
        {
            found = seek(&lines, old, at, hunk.eof);
        }
        let Some((at, fuzzy)) = found else {
            let shown: Vec<String> = hunk
                .old
                .iter()
                .take(6)
                .map(|l| format!("    {l}"))
                .collect();
            let more = if hunk.old.len() > 6 {
                format!(
                    "\n    … ({})",
                    podcode_protocol::more_lines(hunk.old.len() - 6)
                )
            } else {
                String::new()
            };
            return Err(HunkFailure {
                index,
                what: format!(
                    "could not find these lines{}:\n{}{more}",
                    after(cursor),
                    shown.join("\n")
                ),
            });
        };
        if fuzzy && !loose.contains(&index) {
            loose.push(index);
        }
        // Context lines keep the file's text (its whitespace may differ from the patch's).
        let mut piece = Vec::with_capacity(new.len());
        let (mut o, mut n) = (0, 0);
        for op in ops {
            match op {
                ' ' => {
                    piece.push(lines[at + o]);
                    (o, n) = (o + 1, n + 1);
                }
                '-' => o += 1,
                _ => {
                    piece.push(new[n].as_str());
                    n += 1;
                }
            }
        }
        replacements.push((at, old.len(), piece));
        cursor = at + old.len();
    }

    replacements.sort_by_key(|r| r.0);
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    let mut copied = 0;
    for (at, len, new) in replacements {
        out.extend_from_slice(&lines[copied.min(at)..at]);
        out.extend(new);
        copied = copied.max(at + len);
    }
    out.extend_from_slice(&lines[copied.min(lines.len())..]);

    let eol = if crlf { "\r\n" } else { "\n" };
    let mut text = out.join(eol);
    if !out.is_empty() && (trailing_newline || original.is_empty()) {
        text.push_str(eol);
    }
    Ok(Applied { text, loose })
}

fn after(cursor: usize) -> String {
    if cursor == 0 {
        String::new()
    } else {
        format!(" after line {cursor}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(context: Option<&str>, lines: &[&str]) -> Hunk {
        let mut h = Hunk {
            context: context.map(str::to_string),
            ..Hunk::default()
        };
        for l in lines {
            let (kind, text) = l.split_at(1);
            h.ops.push(kind.chars().next().unwrap());
            if kind != "+" {
                h.old.push(text.to_string());
            }
            if kind != "-" {
                h.new.push(text.to_string());
            }
        }
        h
    }

    #[test]
    fn hunks_apply_in_order_with_context() {
        let text = "fn a() {\n    x\n}\nfn b() {\n    x\n}\n";
        let hunks = [hunk(Some("fn b() {"), &["-    x", "+    y"])];
        assert_eq!(
            apply_hunks(text, &hunks).unwrap().text,
            "fn a() {\n    x\n}\nfn b() {\n    y\n}\n"
        );
        let hunks = [
            hunk(None, &[" fn a() {", "+    // a"]),
            hunk(Some("fn b() {"), &["+    // b"]),
        ];
        assert_eq!(
            apply_hunks(text, &hunks).unwrap().text,
            "fn a() {\n    // a\n    x\n}\nfn b() {\n    // b\n    x\n}\n"
        );
    }

    #[test]
    fn whitespace_tolerance_and_line_endings() {
        let text = "a  \r\n\tb\r\nc";
        let applied = apply_hunks(text, &[hunk(None, &[" a", "- b", "+B"])]).unwrap();
        assert_eq!(
            applied,
            Applied {
                text: "a  \r\nB\r\nc".into(),
                loose: vec![1]
            }
        );
        let applied = apply_hunks("x\ny\n", &[hunk(None, &[" y", "+z", " "])]).unwrap();
        assert_eq!(applied.text, "x\ny\nz\n");
        let mut eof = hunk(None, &[" x", "+end"]);
        eof.eof = true;
        assert_eq!(
            apply_hunks("x\ny\nx\n", &[eof]).unwrap().text,
            "x\ny\nx\nend\n"
        );
        assert_eq!(
            apply_hunks("", &[hunk(None, &["+new"])]).unwrap().text,
            "new\n"
        );
    }

    #[test]
    fn failures_say_what_was_missing() {
        let err = apply_hunks(
            "a\nb\n",
            &[hunk(None, &["-a", "+A"]), hunk(None, &["-a", "+Z"])],
        )
        .unwrap_err();
        assert_eq!(
            err,
            HunkFailure {
                index: 2,
                what: "could not find these lines after line 1:\n    a".into()
            }
        );
        let err = apply_hunks("a\n", &[hunk(Some("fn zz()"), &["+x"])]).unwrap_err();
        assert_eq!(err.what, "could not find the @@ context line `fn zz()`");
    }
}
