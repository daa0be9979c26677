//! Locating things in a config file's text for error and warning messages: byte offsets to
//! 1-based line and column, spans to the dotted key of the value there, and key paths rendered
//! in one style (`agent.build.tools.allow`, `permission[0].action`, `plugin_config."a.b"`).

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |nl| nl + 1);
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    // Count characters, not bytes: skip UTF-8 continuation bytes.
    let column = before[line_start..]
        .iter()
        .filter(|b| (**b & 0xC0) != 0x80)
        .count()
        + 1;
    (line, column)
}

/// Appends one key segment to a dotted path, quoting it when it is not a bare TOML key.
pub(crate) fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        path.push_str(key);
    } else {
        path.push_str(&format!("{key:?}"));
    }
}

/// Appends an array index to a path: `permission[0]`.
fn push_index(path: &mut String, index: usize) {
    path.push_str(&format!("[{index}]"));
}

/// Renders a `serde_ignored` path in our style.
pub(crate) fn ignored_path(path: &serde_ignored::Path<'_>) -> String {
    let mut out = String::new();
    write_ignored(path, &mut out);
    out
}

fn write_ignored(path: &serde_ignored::Path<'_>, out: &mut String) {
    use serde_ignored::Path;
    match path {
        Path::Root => {}
        Path::Seq { parent, index } => {
            write_ignored(parent, out);
            push_index(out, *index);
        }
        Path::Map { parent, key } => {
            write_ignored(parent, out);
            push_key(out, key);
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => write_ignored(parent, out),
    }
}

/// The dotted key whose value (or key) most tightly encloses `span`, if any.
///
/// Table spans in TOML documents are not always meaningful (a `[header]` table, or an
/// implicit parent table, may not cover its body), so this searches the whole tree for the
/// smallest enclosing span instead of descending only through enclosing parents.
pub(crate) fn key_at(doc: &Spanned<DeTable<'_>>, span: &Range<usize>) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    let mut path = String::new();
    search_table(doc.get_ref(), span, &mut path, &mut best);
    best.map(|(_, key)| key)
}

type Best = Option<(usize, String)>;

fn consider(candidate: Range<usize>, target: &Range<usize>, path: &str, best: &mut Best) {
    let encloses = candidate.start <= target.start && target.end <= candidate.end;
    if !encloses || path.is_empty() {
        return;
    }
    let len = candidate.end - candidate.start;
    // `<=` so that, on a tie, the deeper path (visited later) wins.
    if best.as_ref().is_none_or(|(best_len, _)| len <= *best_len) {
        *best = Some((len, path.to_string()));
    }
}

fn search_table(table: &DeTable<'_>, target: &Range<usize>, path: &mut String, best: &mut Best) {
    for (key, value) in table {
        let len = path.len();
        push_key(path, key.get_ref());
        consider(key.span(), target, path, best);
        search_value(value, target, path, best);
        path.truncate(len);
    }
}

fn search_value(
    value: &Spanned<DeValue<'_>>,
    target: &Range<usize>,
    path: &mut String,
    best: &mut Best,
) {
    consider(value.span(), target, path, best);
    match value.get_ref() {
        DeValue::Table(table) => search_table(table, target, path, best),
        DeValue::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                let len = path.len();
                push_index(path, index);
                search_value(item, target, path, best);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one_in_chars() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 6), (2, 1));
        // `=` after "bé " is the third character of line 2 (é is two bytes).
        assert_eq!(line_col(text, 10), (2, 4));
        assert_eq!(line_col(text, 999), (3, 1));
    }

    #[test]
    fn keys_are_quoted_when_not_bare() {
        let mut p = String::new();
        push_key(&mut p, "plugin_config");
        push_key(&mut p, "deploy-status");
        push_key(&mut p, "a.b");
        assert_eq!(p, r#"plugin_config.deploy-status."a.b""#);
    }

    #[test]
    fn key_at_finds_deepest_value() {
        let text = "[agent.build]\ntools = { allow = [\"read\", 5] }\n";
        let doc = DeTable::parse(text).unwrap();
        let offset = text.find('5').unwrap();
        assert_eq!(
            key_at(&doc, &(offset..offset + 1)).as_deref(),
            Some("agent.build.tools.allow[1]")
        );
    }
}
