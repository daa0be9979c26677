//! Languages `symbols` reads, and the extraction of definitions from one file's source.
//!
//! A file's language comes from its extension. Its source is parsed with the grammar's
//! tree-sitter parser (one per language per thread, reused) and the language's query
//! (compiled once per process) picks out the definitions. Each definition becomes a
//! `Symbol`: its name, kind, 1-based line (the line of its name, so annotations and
//! decorators above it do not count), the trimmed text of that line as its signature, and
//! for methods the type or class they belong to. Definitions inside a function body (local
//! helpers, closures) are left out: they are not part of the code's map.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tree_sitter::{Language, Node, Parser, Query, QueryCursor, StreamingIterator};

use super::queries;

/// Signatures longer than this many characters are cut.
pub(crate) const MAX_SIGNATURE_CHARS: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Lang {
    Rust,
    TypeScript,
    Tsx,
    JavaScript,
    Python,
    Go,
    Java,
    C,
    Cpp,
}

#[cfg(test)]
const ALL: [Lang; 9] = [
    Lang::Rust,
    Lang::TypeScript,
    Lang::Tsx,
    Lang::JavaScript,
    Lang::Python,
    Lang::Go,
    Lang::Java,
    Lang::C,
    Lang::Cpp,
];

impl Lang {
    /// By extension; `None` for files `symbols` does not read. `.h` is parsed as C++, whose
    /// grammar also reads C headers.
    pub(crate) fn from_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "rs" => Self::Rust,
            "ts" | "mts" | "cts" => Self::TypeScript,
            "tsx" => Self::Tsx,
            "js" | "mjs" | "cjs" | "jsx" => Self::JavaScript,
            "py" | "pyi" => Self::Python,
            "go" => Self::Go,
            "java" => Self::Java,
            "c" => Self::C,
            "h" | "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "inl" => {
                Self::Cpp
            }
            _ => return None,
        })
    }

    fn index(self) -> usize {
        self as usize
    }

    fn language(self) -> Language {
        match self {
            Self::Rust => tree_sitter_rust::LANGUAGE.into(),
            Self::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Self::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Self::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Self::Python => tree_sitter_python::LANGUAGE.into(),
            Self::Go => tree_sitter_go::LANGUAGE.into(),
            Self::Java => tree_sitter_java::LANGUAGE.into(),
            Self::C => tree_sitter_c::LANGUAGE.into(),
            Self::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        }
    }

    fn query_source(self) -> String {
        match self {
            Self::Rust => queries::RUST.to_string(),
            Self::TypeScript | Self::Tsx => queries::typescript(),
            Self::JavaScript => queries::javascript(),
            Self::Python => queries::PYTHON.to_string(),
            Self::Go => queries::GO.to_string(),
            Self::Java => queries::JAVA.to_string(),
            Self::C => queries::c(),
            Self::Cpp => queries::cpp(),
        }
    }

    /// Node kinds whose body is code: definitions inside them are local and left out.
    fn function_bodies(self) -> &'static [&'static str] {
        match self {
            Self::Rust => &["function_item", "closure_expression"],
            Self::TypeScript | Self::Tsx | Self::JavaScript => &[
                "function_declaration",
                "generator_function_declaration",
                "function_expression",
                "arrow_function",
                "method_definition",
            ],
            Self::Python => &["function_definition", "lambda"],
            Self::Go => &["function_declaration", "method_declaration", "func_literal"],
            Self::Java => &[
                "method_declaration",
                "constructor_declaration",
                "lambda_expression",
            ],
            Self::C | Self::Cpp => &["function_definition", "lambda_expression"],
        }
    }

    /// The compiled query, or `None` if it does not compile (a unit test makes sure each does).
    fn query(self) -> Option<&'static Query> {
        static QUERIES: [OnceLock<Option<Query>>; 9] = [const { OnceLock::new() }; 9];
        QUERIES[self.index()]
            .get_or_init(|| Query::new(&self.language(), &self.query_source()).ok())
            .as_ref()
    }
}

/// What kind of definition a symbol is; also the values of the `kind` argument.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Kind {
    Function,
    Method,
    Class,
    Struct,
    Enum,
    Trait,
    Interface,
    Type,
    Constant,
    Module,
    Macro,
}

impl Kind {
    fn from_capture(name: &str) -> Option<Self> {
        Some(match name {
            "function" => Self::Function,
            "method" => Self::Method,
            "class" => Self::Class,
            "struct" => Self::Struct,
            "enum" => Self::Enum,
            "trait" => Self::Trait,
            "interface" => Self::Interface,
            "type" => Self::Type,
            "constant" => Self::Constant,
            "module" => Self::Module,
            "macro" => Self::Macro,
            _ => return None,
        })
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Function => "function",
            Self::Method => "method",
            Self::Class => "class",
            Self::Struct => "struct",
            Self::Enum => "enum",
            Self::Trait => "trait",
            Self::Interface => "interface",
            Self::Type => "type",
            Self::Constant => "constant",
            Self::Module => "module",
            Self::Macro => "macro",
        }
    }
}

/// One definition. Serialized compactly for the on-disk cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Symbol {
    #[serde(rename = "n")]
    pub(crate) name: String,
    #[serde(rename = "k")]
    pub(crate) kind: Kind,
    #[serde(rename = "l")]
    pub(crate) line: u32,
    #[serde(rename = "s")]
    pub(crate) signature: String,
    /// For methods: the type, class, trait or interface they belong to.
    #[serde(rename = "p", default, skip_serializing_if = "Option::is_none")]
    pub(crate) parent: Option<String>,
}

/// One thread's parsers (one per language, created on first use) and query cursor.
#[derive(Default)]
pub(crate) struct Parsers {
    parsers: HashMap<Lang, Parser>,
    cursor: Option<QueryCursor>,
}

impl Parsers {
    /// The definitions in `source`, in source order. `None` when the language could not be
    /// set up (which the unit tests rule out).
    pub(crate) fn extract(&mut self, lang: Lang, source: &[u8]) -> Option<Vec<Symbol>> {
        let query = lang.query()?;
        let parser = match self.parsers.entry(lang) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let mut parser = Parser::new();
                parser.set_language(&lang.language()).ok()?;
                v.insert(parser)
            }
        };
        let tree = parser.parse(source, None)?;
        let cursor = self.cursor.get_or_insert_with(QueryCursor::new);
        let names = query.capture_names();
        let name_index = query.capture_index_for_name("name")?;
        // (definition node, name) → (pattern index, kind, nodes): the first pattern wins.
        let mut found: HashMap<(usize, usize), (usize, Kind, Node, Node)> = HashMap::new();
        let mut matches = cursor.matches(query, tree.root_node(), source);
        while let Some(m) = matches.next() {
            let Some(name) = m.captures().iter().find(|c| c.index == name_index) else {
                continue;
            };
            let Some((def, kind)) = m.captures().iter().find_map(|c| {
                Kind::from_capture(names.get(c.index as usize)?).map(|k| (c.node, k))
            }) else {
                continue;
            };
            let key = (def.id(), name.node.start_byte());
            match found.get(&key) {
                Some((pattern, ..)) if *pattern <= m.pattern_index => {}
                _ => {
                    found.insert(key, (m.pattern_index, kind, def, name.node));
                }
            }
        }
        let bodies = lang.function_bodies();
        let mut out: Vec<(usize, Symbol)> = Vec::with_capacity(found.len());
        for (_, kind, def, name_node) in found.into_values() {
            if inside_function(def, bodies) || is_import(kind, def, source) {
                continue;
            }
            let mut name = text(name_node, source);
            let mut kind = kind;
            let mut parent = None;
            if let Some((scope, last)) = name.rsplit_once("::") {
                // `Foo::bar` defined outside its class (C++).
                parent = Some(scope.to_string());
                name = last.to_string();
                kind = Kind::Method;
            } else if kind == Kind::Method {
                parent = owner(lang, def, source);
            }
            if name.is_empty() {
                continue;
            }
            // The name's line, unless the name closes a body (`} Size;` in a C typedef).
            let mut at = name_node;
            if line_text(source, at.start_byte()).starts_with('}') {
                at = def;
            }
            out.push((
                name_node.start_byte(),
                Symbol {
                    name,
                    kind,
                    line: at.start_position().row as u32 + 1,
                    signature: clip(&line_text(source, at.start_byte())),
                    parent,
                },
            ));
        }
        out.sort_by_key(|(at, _)| *at);
        Some(out.into_iter().map(|(_, s)| s).collect())
    }
}

/// `const fs = require("fs")` and `const m = await import("m")` are imports, not constants.
fn is_import(kind: Kind, def: Node<'_>, source: &[u8]) -> bool {
    if kind != Kind::Constant || def.kind() != "variable_declarator" {
        return false;
    }
    def.child_by_field_name("value").is_some_and(|v| {
        let end = v.end_byte().min(v.start_byte() + 64);
        let value = String::from_utf8_lossy(&source[v.start_byte()..end]);
        let value = value.trim_start_matches("await").trim_start();
        value.starts_with("require(") || value.starts_with("import(")
    })
}

fn inside_function(def: Node<'_>, bodies: &[&str]) -> bool {
    let mut node = def.parent();
    while let Some(n) = node {
        if bodies.contains(&n.kind()) {
            return true;
        }
        node = n.parent();
    }
    false
}

/// The type, class, trait or interface a method belongs to.
fn owner(lang: Lang, def: Node<'_>, source: &[u8]) -> Option<String> {
    if lang == Lang::Go {
        // `func (s *Server) Start()`: the receiver's type, without `*` and type arguments.
        if def.kind() == "method_declaration" {
            let receiver = def.child_by_field_name("receiver")?;
            let param = receiver.named_child(0)?;
            let ty = text(param.child_by_field_name("type")?, source);
            let ty = ty.trim_start_matches('*');
            return Some(ty.split('[').next().unwrap_or(ty).to_string());
        }
    }
    let mut node = def.parent();
    while let Some(n) = node {
        let field = match n.kind() {
            "impl_item" => Some("type"),
            "trait_item"
            | "class_declaration"
            | "abstract_class_declaration"
            | "interface_declaration"
            | "class_definition"
            | "class_specifier"
            | "struct_specifier"
            | "record_declaration"
            | "enum_declaration"
            | "class" => Some("name"),
            "type_spec" => Some("name"),
            _ => None,
        };
        if let Some(field) = field {
            return n.child_by_field_name(field).map(|f| text(f, source));
        }
        node = n.parent();
    }
    None
}

fn text(node: Node<'_>, source: &[u8]) -> String {
    String::from_utf8_lossy(&source[node.start_byte()..node.end_byte()]).into_owned()
}

/// The line holding byte `at`, trimmed. On a very long line (minified code) only a window
/// around `at` is taken, so a file with thousands of symbols on one line stays linear.
fn line_text(source: &[u8], at: usize) -> String {
    const BEFORE: usize = 400;
    let from = at.saturating_sub(BEFORE);
    let mut start = match memchr::memrchr(b'\n', &source[from..at]) {
        Some(i) => from + i + 1,
        None if from == 0 => 0,
        None => at.saturating_sub(80),
    };
    while start < at && (source[start] & 0xc0) == 0x80 {
        start += 1; // not in the middle of a UTF-8 character
    }
    let limit = source.len().min(at + MAX_SIGNATURE_CHARS * 4);
    let end = memchr::memchr(b'\n', &source[at..limit]).map_or(limit, |i| at + i);
    String::from_utf8_lossy(&source[start..end])
        .trim()
        .to_string()
}

pub(crate) fn clip(line: &str) -> String {
    match line.char_indices().nth(MAX_SIGNATURE_CHARS) {
        Some((cut, _)) => format!("{}…", line[..cut].trim_end()),
        None => line.to_string(),
    }
}

/// Every language's query compiles (checked by the unit tests).
#[cfg(test)]
pub(crate) fn all_queries_compile() -> Vec<(Lang, Result<(), String>)> {
    ALL.iter()
        .map(|l| {
            (
                *l,
                Query::new(&l.language(), &l.query_source())
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles() {
        for (lang, result) in all_queries_compile() {
            assert!(result.is_ok(), "{lang:?}: {result:?}");
        }
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(Lang::from_path(Path::new("a/b.rs")), Some(Lang::Rust));
        assert_eq!(Lang::from_path(Path::new("x.TSX")), Some(Lang::Tsx));
        assert_eq!(Lang::from_path(Path::new("x.h")), Some(Lang::Cpp));
        assert_eq!(Lang::from_path(Path::new("README.md")), None);
        assert_eq!(Lang::from_path(Path::new("Makefile")), None);
    }

    #[test]
    fn long_signatures_are_cut() {
        let long = "x".repeat(MAX_SIGNATURE_CHARS + 5);
        assert_eq!(clip(&long).chars().count(), MAX_SIGNATURE_CHARS + 1);
        assert!(clip(&long).ends_with('…'));
        let src = b"a\n   fn  foo()  \nb";
        assert_eq!(line_text(src, 7), "fn  foo()");
    }

    #[test]
    fn minified_lines_give_a_window_around_the_name() {
        let mut src = "x".repeat(10_000).into_bytes();
        src.extend_from_slice(b"function foo(){}");
        let sig = line_text(&src, 10_009);
        assert_eq!(sig, format!("{}function foo(){{}}", "x".repeat(71)));
    }

    #[test]
    fn local_definitions_are_left_out() {
        let src = b"fn outer() {\n    fn inner() {}\n    const X: u8 = 1;\n}\nstruct S;\n";
        let syms = Parsers::default().extract(Lang::Rust, src).unwrap();
        let names: Vec<&str> = syms.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["outer", "S"]);
    }
}
