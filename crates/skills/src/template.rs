//! A custom command's template filled in, the way opencode and Claude Code fill theirs:
//! `$ARGUMENTS` is everything typed after the name; `$1`…`$9` the words (quotes group:
//! `"two words"`), the highest one used taking the rest; a template with no placeholder
//! gets the arguments appended. Then ``!`cmd` `` snippets (run by the caller, through the
//! bash tool) and `@path` mentions of existing files (attached by the caller) are found.

use std::ops::Range;
use std::path::Path;

/// Splits arguments into words; `"…"` and `'…'` group words (the quotes are dropped).
pub fn split_arguments(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in args.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(word);
    }
    out
}

/// The template with the arguments put in.
pub fn fill_arguments(template: &str, args: &str) -> String {
    let args = args.trim();
    let words = split_arguments(args);
    let highest = (1..=9u8)
        .rev()
        .find(|n| template.contains(&format!("${n}")));
    let has_all = template.contains("$ARGUMENTS");
    if highest.is_none() && !has_all {
        return if args.is_empty() {
            template.to_string()
        } else {
            format!("{}\n\n{args}", template.trim_end())
        };
    }
    let mut out = String::with_capacity(template.len() + args.len());
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            rest = tail;
            continue;
        }
        let digit = after.chars().next().and_then(|c| c.to_digit(10));
        match digit {
            Some(n @ 1..=9) => {
                let i = n as usize - 1;
                let value = if Some(n as u8) == highest {
                    words.get(i..).map(|w| w.join(" ")).unwrap_or_default()
                } else {
                    words.get(i).cloned().unwrap_or_default()
                };
                out.push_str(&value);
                rest = &after[1..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Every ``!`cmd` `` in `text`: where it stands and the command.
pub fn shell_snippets(text: &str) -> Vec<(Range<usize>, String)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("!`") {
        let start = from + at;
        let body = start + 2;
        let Some(len) = text[body..].find('`') else {
            break;
        };
        let cmd = &text[body..body + len];
        if !cmd.trim().is_empty() && !cmd.contains('\n') {
            out.push((start..body + len + 1, cmd.to_string()));
        }
        from = body + len + 1;
    }
    out
}

/// The `@path` mentions in `text` that name an existing file (relative to `cwd`, absolute,
/// or `~/…` under `home`), each once, as written.
pub fn file_mentions(text: &str, cwd: &Path, home: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut prev = ' ';
    for (i, c) in text.char_indices() {
        let starts = c == '@' && (prev.is_whitespace() || "([{\"'".contains(prev));
        prev = c;
        if !starts {
            continue;
        }
        let token: String = text[i + 1..]
            .chars()
            .take_while(|c| !c.is_whitespace() && !",;:)]}\"'`".contains(*c))
            .collect();
        let token = token.trim_end_matches('.').to_string();
        if token.is_empty() || out.contains(&token) {
            continue;
        }
        let path = match token.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => cwd.join(&token),
        };
        if path.is_file() {
            out.push(token);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_fill_the_placeholders_or_follow_the_template() {
        assert_eq!(split_arguments(r#"a "b c" 'd' "#), vec!["a", "b c", "d"]);
        assert_eq!(
            fill_arguments("Review $ARGUMENTS now", " src/a.rs x "),
            "Review src/a.rs x now"
        );
        assert_eq!(
            fill_arguments("Move $1 to $2.", "a.rs b.rs c.rs"),
            "Move a.rs to b.rs c.rs.",
            "the highest placeholder takes the rest"
        );
        assert_eq!(fill_arguments("Only $2 and $1", "x"), "Only  and x");
        assert_eq!(
            fill_arguments("Fix the tests.", "in core"),
            "Fix the tests.\n\nin core"
        );
        assert_eq!(fill_arguments("Fix the tests.", ""), "Fix the tests.");
        assert_eq!(
            fill_arguments("Cost: $5 or $ARGUMENTSX", "y"),
            "Cost:  or yX"
        );
        assert_eq!(fill_arguments("a $ sign $ARGUMENTS", "z"), "a $ sign z");
    }

    #[test]
    fn snippets_and_mentions_are_found() {
        let t = "Last: !`git log -1` and !`` and !`ls`";
        let found: Vec<(&str, String)> = shell_snippets(t)
            .into_iter()
            .map(|(r, c)| (&t[r], c))
            .collect();
        assert_eq!(
            found,
            vec![
                ("!`git log -1`", "git log -1".to_string()),
                ("!`ls`", "ls".to_string())
            ]
        );
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("src")).unwrap();
        std::fs::write(tmp.path().join("src/a.rs"), "x").unwrap();
        std::fs::write(tmp.path().join("notes.md"), "x").unwrap();
        let m = file_mentions(
            "See @src/a.rs, (@notes.md). Not @missing.rs or me@mail.com or @src/a.rs again.",
            tmp.path(),
            tmp.path(),
        );
        assert_eq!(m, vec!["src/a.rs", "notes.md"]);
    }
}
