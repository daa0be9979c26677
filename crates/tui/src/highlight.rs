//! Syntax highlighting of code blocks with tree-sitter. `markdown` hands a fenced block's
//! info string and text here; `lang_for` picks a grammar, `highlight` returns one list of
//! styled spans per source line. Each grammar's `HighlightConfiguration` is built once per
//! process (`OnceLock`) and each thread keeps one `Highlighter`; unknown languages, grammars
//! whose queries fail to load and highlighting errors all fall back to plain text.

use std::cell::RefCell;
use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use tree_sitter_highlight::{HighlightConfiguration, HighlightEvent, Highlighter};

/// The grammars Podcode ships.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    C,
    Cpp,
    Java,
}

const LANGS: usize = 9;

/// The capture names we colour; tree-sitter matches `function.method` to `function` etc.
const NAMES: [&str; 20] = [
    "keyword",
    "string",
    "string.special",
    "escape",
    "character",
    "comment",
    "function",
    "constructor",
    "type",
    "number",
    "constant",
    "boolean",
    "attribute",
    "label",
    "tag",
    "module",
    "property",
    "variable.builtin",
    "variable.parameter",
    "operator",
];

/// The language of a fence info string (`rust`, `rs`, `py`, `tsx`, `c++`…); only its first
/// word counts, so `rust,ignore` and `python title="x"` work too.
pub(crate) fn lang_for(info: &str) -> Option<Lang> {
    let word = info
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .unwrap_or("")
        .trim_start_matches('.')
        .to_ascii_lowercase();
    Some(match word.as_str() {
        "rust" | "rs" => Lang::Rust,
        "python" | "py" | "python3" => Lang::Python,
        "javascript" | "js" | "jsx" | "mjs" | "cjs" | "node" => Lang::JavaScript,
        "typescript" | "ts" | "mts" | "cts" => Lang::TypeScript,
        "tsx" => Lang::Tsx,
        "go" | "golang" => Lang::Go,
        "c" | "h" => Lang::C,
        "cpp" | "c++" | "cc" | "cxx" | "hpp" | "hh" => Lang::Cpp,
        "java" => Lang::Java,
        _ => return None,
    })
}

fn build(lang: Lang) -> Option<HighlightConfiguration> {
    // TypeScript's and C++'s queries only add to the JavaScript and C ones they inherit.
    let ts_query = || {
        format!(
            "{}\n{}",
            tree_sitter_typescript::HIGHLIGHTS_QUERY,
            tree_sitter_javascript::HIGHLIGHT_QUERY
        )
    };
    let (language, name, query): (tree_sitter::Language, &str, String) = match lang {
        Lang::Rust => (
            tree_sitter_rust::LANGUAGE.into(),
            "rust",
            tree_sitter_rust::HIGHLIGHTS_QUERY.into(),
        ),
        Lang::Python => (
            tree_sitter_python::LANGUAGE.into(),
            "python",
            tree_sitter_python::HIGHLIGHTS_QUERY.into(),
        ),
        Lang::JavaScript => (
            tree_sitter_javascript::LANGUAGE.into(),
            "javascript",
            format!(
                "{}\n{}",
                tree_sitter_javascript::JSX_HIGHLIGHT_QUERY,
                tree_sitter_javascript::HIGHLIGHT_QUERY
            ),
        ),
        Lang::TypeScript => (
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            "typescript",
            ts_query(),
        ),
        Lang::Tsx => (
            tree_sitter_typescript::LANGUAGE_TSX.into(),
            "tsx",
            ts_query(),
        ),
        Lang::Go => (
            tree_sitter_go::LANGUAGE.into(),
            "go",
            tree_sitter_go::HIGHLIGHTS_QUERY.into(),
        ),
        Lang::C => (
            tree_sitter_c::LANGUAGE.into(),
            "c",
            tree_sitter_c::HIGHLIGHT_QUERY.into(),
        ),
        Lang::Cpp => (
            tree_sitter_cpp::LANGUAGE.into(),
            "cpp",
            format!(
                "{}\n{}",
                tree_sitter_cpp::HIGHLIGHT_QUERY,
                tree_sitter_c::HIGHLIGHT_QUERY
            ),
        ),
        Lang::Java => (
            tree_sitter_java::LANGUAGE.into(),
            "java",
            tree_sitter_java::HIGHLIGHTS_QUERY.into(),
        ),
    };
    let mut config = HighlightConfiguration::new(language, name, &query, "", "").ok()?;
    config.configure(&NAMES);
    Some(config)
}

fn config(lang: Lang) -> Option<&'static HighlightConfiguration> {
    static CONFIGS: [OnceLock<Option<HighlightConfiguration>>; LANGS] =
        [const { OnceLock::new() }; LANGS];
    CONFIGS[lang as usize].get_or_init(|| build(lang)).as_ref()
}

thread_local! {
    static HIGHLIGHTER: RefCell<Highlighter> = RefCell::new(Highlighter::new());
}

/// The style of capture `NAMES[index]`; under `no_color` only keywords stand out (bold).
fn capture_style(index: usize, no_color: bool) -> Style {
    let name = NAMES.get(index).copied().unwrap_or("");
    if no_color {
        return if name == "keyword" {
            Style::default().add_modifier(Modifier::BOLD)
        } else {
            Style::default()
        };
    }
    let color = match name {
        "keyword" => return Style::default().fg(Color::Magenta),
        "string" | "string.special" | "escape" | "character" => Color::Green,
        "comment" => {
            return Style::default()
                .fg(Color::DarkGray)
                .add_modifier(Modifier::ITALIC);
        }
        "function" | "constructor" => Color::Blue,
        "type" | "module" => Color::Yellow,
        "number" | "constant" | "boolean" => Color::Cyan,
        "attribute" | "label" | "tag" => Color::LightRed,
        "variable.builtin" => Color::LightMagenta,
        _ => return Style::default(),
    };
    Style::default().fg(color)
}

/// `code` split into lines of plain spans.
pub(crate) fn plain(code: &str) -> Vec<Vec<Span<'static>>> {
    code.lines()
        .map(|l| vec![Span::raw(l.replace('\t', "    "))])
        .collect()
}

/// `code` as one list of styled spans per line (`code.lines()` many), highlighted when
/// `lang` is known and its grammar loads, plain otherwise.
pub(crate) fn highlight(code: &str, lang: Option<Lang>, no_color: bool) -> Vec<Vec<Span<'static>>> {
    let Some(config) = lang.and_then(config) else {
        return plain(code);
    };
    let result = HIGHLIGHTER.with(|h| {
        let Ok(mut highlighter) = h.try_borrow_mut() else {
            return None;
        };
        let events = highlighter
            .highlight(config, code.as_bytes(), None, None, |_| None)
            .ok()?;
        let mut lines: Vec<Vec<Span<'static>>> = vec![Vec::new()];
        let mut stack: Vec<Style> = Vec::new();
        for event in events {
            match event.ok()? {
                HighlightEvent::HighlightStart(h) => stack.push(capture_style(h.0, no_color)),
                HighlightEvent::HighlightEnd => {
                    stack.pop();
                }
                HighlightEvent::Source { start, end } => {
                    let style = stack.last().copied().unwrap_or_default();
                    let text = code.get(start..end)?;
                    for (i, piece) in text.split('\n').enumerate() {
                        if i > 0 {
                            lines.push(Vec::new());
                        }
                        let piece = piece.trim_end_matches('\r');
                        if !piece.is_empty()
                            && let Some(line) = lines.last_mut()
                        {
                            line.push(Span::styled(piece.replace('\t', "    "), style));
                        }
                    }
                }
            }
        }
        Some(lines)
    });
    match result {
        Some(mut lines) => {
            // `str::lines` drops one trailing empty line; match it.
            if code.ends_with('\n') || code.is_empty() {
                lines.pop();
            }
            lines
        }
        None => plain(code),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Vec<Span<'static>>]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn info_strings_map_to_languages() {
        assert_eq!(lang_for("rust"), Some(Lang::Rust));
        assert_eq!(lang_for("rs"), Some(Lang::Rust));
        assert_eq!(lang_for("rust,ignore"), Some(Lang::Rust));
        assert_eq!(lang_for("Python title=\"x\""), Some(Lang::Python));
        assert_eq!(lang_for("tsx"), Some(Lang::Tsx));
        assert_eq!(lang_for("c++"), Some(Lang::Cpp));
        assert_eq!(lang_for("brainfuck"), None);
        assert_eq!(lang_for(""), None);
    }

    #[test]
    fn every_grammar_loads_its_queries() {
        for lang in [
            Lang::Rust,
            Lang::Python,
            Lang::JavaScript,
            Lang::TypeScript,
            Lang::Tsx,
            Lang::Go,
            Lang::C,
            Lang::Cpp,
            Lang::Java,
        ] {
            assert!(config(lang).is_some(), "{lang:?}");
        }
    }

    #[test]
    fn rust_keywords_strings_and_comments_get_colours() {
        let code = "fn main() {\n    let s = \"hi\"; // note\n}\n";
        let lines = highlight(code, Some(Lang::Rust), false);
        assert_eq!(
            text(&lines),
            ["fn main() {", "    let s = \"hi\"; // note", "}"]
        );
        let style_of = |word: &str| {
            lines
                .iter()
                .flatten()
                .find(|s| s.content == word)
                .map(|s| s.style)
        };
        assert_eq!(style_of("fn").and_then(|s| s.fg), Some(Color::Magenta));
        assert_eq!(style_of("let").and_then(|s| s.fg), Some(Color::Magenta));
        assert_eq!(style_of("\"hi\"").and_then(|s| s.fg), Some(Color::Green));
        assert_eq!(
            style_of("// note").and_then(|s| s.fg),
            Some(Color::DarkGray)
        );
    }

    #[test]
    fn no_color_keeps_only_bold_keywords() {
        let lines = highlight("def f():\n    return 1\n", Some(Lang::Python), true);
        for span in lines.iter().flatten() {
            assert_eq!(span.style.fg, None, "{span:?}");
        }
        let def = lines.iter().flatten().find(|s| s.content == "def");
        assert!(def.is_some_and(|s| s.style.add_modifier.contains(Modifier::BOLD)));
    }

    #[test]
    fn unknown_languages_and_broken_code_stay_readable() {
        assert_eq!(text(&highlight("a\nb", None, false)), ["a", "b"]);
        let broken = "fn (((\n\"unterminated\n";
        assert_eq!(
            text(&highlight(broken, Some(Lang::Rust), false)),
            ["fn (((", "\"unterminated"]
        );
        assert!(highlight("", Some(Lang::Go), false).is_empty());
    }
}
