//! The `symbols` built-in: a map of the code's definitions, from tree-sitter parses.
//!
//! Data flow: `{path?, query?, kind?}` → the path (default: the session directory) is
//! resolved and gated like the search tools (`external_directory` when outside, then
//! `symbols` with its pattern, allowed by default) → on a blocking thread, a file is parsed
//! alone, a folder is walked in parallel (`walk`), every file's symbols coming from the
//! parsed-file cache while its mtime and size are unchanged (`cache`: process-wide in
//! memory, persisted per project beside the spill folder) → `kind` filters, `query` ranks
//! names (exact > prefix > substring > subsequence, case-insensitive) → at most
//! `MAX_SYMBOLS` definitions, grouped by file as `path:` then `  line  signature  [kind]`,
//! with notes for the cap and for files that were skipped.

mod cache;
mod lang;
mod queries;
mod walk;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use podcode_protocol::{ToolResult, ToolSpec};
use podcode_tools::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::glob::{SearchRoot, parse_args};
use cache::DiskCache;
use lang::{Kind, Parsers, Symbol};
use walk::{FileOutcome, Scan};

/// At most this many definitions are shown.
const MAX_SYMBOLS: usize = 200;

const LANGUAGES: &str = "Rust, TypeScript/TSX, JavaScript, Python, Go, Java, C and C++";

const DESCRIPTION: &str = "Lists the definitions in source code (functions, methods, classes, structs, enums, traits, interfaces, types, constants, modules, macros) with file, line and signature.
Use it to map a file or folder before reading it, or to find where something is defined; use grep for other text.
- `path` a file: its definitions in order; a folder (default: the working directory): every definition under it, by file.
- `query` matches names case-insensitively and fuzzily, best matches first; `kind` keeps one kind.
- Reads Rust, TypeScript/TSX, JavaScript, Python, Go, Java, C and C++; other files (a note counts them), ignored files and files over 1 MiB are skipped.
- At most 200 definitions are returned; a note says how many more there were.
Example: {\"query\": \"parse_config\", \"kind\": \"function\"}";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct SymbolsArgs {
    /// A file, or a folder to list or search (default: the working directory).
    #[serde(default)]
    path: Option<String>,
    /// Find definitions by name (case-insensitive, fuzzy), e.g. `parse_config` or `UserServ`.
    #[serde(default)]
    query: Option<String>,
    /// Only definitions of this kind.
    #[serde(default)]
    kind: Option<Kind>,
}

pub struct SymbolsTool {
    spec: ToolSpec,
}

impl SymbolsTool {
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new(
                "symbols",
                DESCRIPTION,
                crate::params_schema::<SymbolsArgs>(),
            )
            .idempotent(true),
        }
    }
}

impl Default for SymbolsTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Tool for SymbolsTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let args: SymbolsArgs = parse_args("symbols", args)?;
        let query = args
            .query
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty())
            .map(str::to_string);
        let root = SearchRoot::open(&ctx, "symbols", args.path.as_deref(), true).await?;
        let disk = DiskCache::new(&cache_folder(ctx.spill_dir()), &project(&ctx, &root.abs));
        let abort = ctx.abort().clone();
        let walk_root = root.abs.clone();
        let label = root.label.clone();
        let walk = crate::glob::secret_aware_walk(&walk_root, &root.secrets);
        let (scan, save_error) =
            tokio::task::spawn_blocking(move || collect(&walk_root, walk, &label, &disk, &abort))
                .await
                .map_err(|e| {
                    ToolError::failed(format!("the symbol scan stopped unexpectedly: {e}"))
                })??;
        if ctx.is_aborted() {
            return Err(ToolError::Aborted);
        }
        if let Some(e) = save_error {
            ctx.warn(format!("symbols: could not save the symbol cache: {e}"));
        }
        let hits = select(&scan.files, query.as_deref(), args.kind);
        let total = hits.len();
        let shown_hits = &hits[..total.min(MAX_SYMBOLS)];
        let mut output = if hits.is_empty() {
            nothing_found(&root, query.as_deref(), args.kind)
        } else {
            render(&root, &scan.files, shown_hits)
        };
        if total > shown_hits.len() {
            let files = match count_files(&hits) {
                1 => "1 file".to_string(),
                n => format!("{n} files"),
            };
            output.push_str(&match query {
                Some(_) => format!(
                    "\n\n(Showing the {} best of {total} matching definitions in {files}. Use a more specific query, a kind or a narrower path to see the others.)",
                    shown_hits.len()
                ),
                None => format!(
                    "\n\n(Showing {} of {total} definitions in {files}. Pass a narrower path, a kind or a query to see the others.)",
                    shown_hits.len()
                ),
            });
        }
        output.push_str(&skipped_note(scan.unsupported, scan.too_large));
        let title = match &query {
            Some(q) => format!("{q} in {}", root.label),
            None => root.label.clone(),
        };
        Ok(ToolResult::text(output)
            .with_title(title)
            .with_metadata(json!({
                "count": total, "shown": shown_hits.len(), "truncated": total > shown_hits.len(),
                "parsed": scan.parsed, "skipped": scan.unsupported + scan.too_large,
            })))
    }
}

/// `<data dir>/symbols-cache`, beside the spill folder.
fn cache_folder(spill_dir: &Path) -> PathBuf {
    match spill_dir.parent() {
        Some(parent) => parent.join("symbols-cache"),
        None => spill_dir.join("symbols-cache"),
    }
}

/// The project a walk's cache belongs to: the session directory when the root is inside
/// it, else the root itself.
fn project(ctx: &ToolContext, root: &Path) -> PathBuf {
    let dir = ctx
        .directory()
        .canonicalize()
        .unwrap_or_else(|_| ctx.directory().to_path_buf());
    if root.starts_with(&dir) {
        dir
    } else {
        root.to_path_buf()
    }
}

/// Symbols of one file or of a whole folder; the second value is a cache write failure,
/// for the user.
fn collect(
    root: &Path,
    walk: ignore::WalkBuilder,
    label: &str,
    disk: &DiskCache,
    abort: &tokio_util::sync::CancellationToken,
) -> Result<(Scan, Option<String>), ToolError> {
    let meta = std::fs::metadata(root).map_err(|e| crate::glob::path_error(label, &e))?;
    let cache = cache::global();
    if meta.is_file() {
        let mut scan = Scan::default();
        match walk::file_symbols(root, &meta, &mut Parsers::default(), cache) {
            FileOutcome::Symbols { symbols, parsed } => {
                scan.parsed = usize::from(parsed);
                scan.files.push((root.to_path_buf(), symbols));
            }
            FileOutcome::Unsupported => {
                return Err(ToolError::failed(format!(
                    "{label} is not in a language symbols reads (it reads {LANGUAGES}). Use read or grep to look at it."
                )));
            }
            FileOutcome::TooLarge => {
                return Err(ToolError::failed(format!(
                    "{label} is larger than 1 MiB (likely generated or minified code), so symbols does not parse it. Use grep to search it."
                )));
            }
            FileOutcome::Unreadable => {
                return Err(ToolError::failed(format!(
                    "{label} could not be read. Check that it is a readable text file."
                )));
            }
        }
        return Ok((scan, None));
    }
    cache.load(disk);
    let scan = walk::scan_folder(walk, cache, abort);
    if abort.is_cancelled() {
        return Ok((scan, None));
    }
    let pruned = cache.prune(root, &scan.seen);
    let save_error = if scan.parsed + pruned > 0 {
        cache.save(disk).err().map(|e| e.to_string())
    } else {
        None
    };
    Ok((scan, save_error))
}

/// One shown definition: which file (index into the scan), which symbol, its rank.
#[derive(Debug, Clone, Copy)]
struct Hit {
    file: usize,
    symbol: usize,
    rank: u8,
}

/// The definitions that pass `kind` and match `query`, best first (or in path and line
/// order without a query).
fn select(
    files: &[(PathBuf, Arc<Vec<Symbol>>)],
    query: Option<&str>,
    kind: Option<Kind>,
) -> Vec<Hit> {
    let query = query.map(str::to_lowercase);
    let mut hits = Vec::new();
    for (fi, (_, symbols)) in files.iter().enumerate() {
        for (si, s) in symbols.iter().enumerate() {
            if kind.is_some_and(|k| k != s.kind) {
                continue;
            }
            let rank = match &query {
                None => 0,
                Some(q) => match rank(&s.name, q) {
                    Some(r) => r,
                    None => continue,
                },
            };
            hits.push(Hit {
                file: fi,
                symbol: si,
                rank,
            });
        }
    }
    if query.is_some() {
        hits.sort_by(|a, b| {
            let (na, nb) = (
                &files[a.file].1[a.symbol].name,
                &files[b.file].1[b.symbol].name,
            );
            (a.rank, na.len(), a.file, a.symbol).cmp(&(b.rank, nb.len(), b.file, b.symbol))
        });
    }
    hits
}

/// 0 exact, 1 prefix, 2 substring, 3 subsequence (all case-insensitive); `None` otherwise.
/// `query` is already lower case.
fn rank(name: &str, query: &str) -> Option<u8> {
    let name = name.to_lowercase();
    if name == query {
        Some(0)
    } else if name.starts_with(query) {
        Some(1)
    } else if name.contains(query) {
        Some(2)
    } else {
        let mut letters = name.chars();
        query.chars().all(|q| letters.any(|c| c == q)).then_some(3)
    }
}

fn count_files(hits: &[Hit]) -> usize {
    let mut files: Vec<usize> = hits.iter().map(|h| h.file).collect();
    files.sort_unstable();
    files.dedup();
    files.len()
}

/// Grouped by file in the order the files first appear among `hits`; lines in order
/// within a file.
fn render(root: &SearchRoot, files: &[(PathBuf, Arc<Vec<Symbol>>)], hits: &[Hit]) -> String {
    let mut order: Vec<usize> = Vec::new();
    let mut groups: std::collections::HashMap<usize, Vec<usize>> = Default::default();
    for h in hits {
        groups
            .entry(h.file)
            .or_insert_with(|| {
                order.push(h.file);
                Vec::new()
            })
            .push(h.symbol);
    }
    let mut out = String::new();
    for fi in order {
        let (path, symbols) = &files[fi];
        let mut idx = groups.remove(&fi).unwrap_or_default();
        idx.sort_unstable();
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&root.display(path));
        out.push_str(":\n");
        for si in idx {
            let s = &symbols[si];
            let kind = match &s.parent {
                Some(p) => format!("{} of {p}", s.kind.as_str()),
                None => s.kind.as_str().to_string(),
            };
            out.push_str(&format!("  {}  {}  [{kind}]\n", s.line, s.signature));
        }
    }
    out.trim_end().to_string()
}

fn nothing_found(root: &SearchRoot, query: Option<&str>, kind: Option<Kind>) -> String {
    let what = match kind {
        Some(k) => format!("{} definitions", k.as_str()),
        None => "definitions".to_string(),
    };
    match query {
        Some(q) => format!("No {what} matching \"{q}\" found in {}.", root.place()),
        None => format!("No {what} found in {}.", root.place()),
    }
}

fn skipped_note(unsupported: usize, too_large: usize) -> String {
    let mut note = String::new();
    if unsupported > 0 {
        let files = if unsupported == 1 {
            "1 file was".to_string()
        } else {
            format!("{unsupported} files were")
        };
        note.push_str(&format!(
            "\n\n({files} skipped because symbols does not read their language; it reads {LANGUAGES}.)"
        ));
    }
    if too_large > 0 {
        let files = if too_large == 1 {
            "1 file".to_string()
        } else {
            format!("{too_large} files")
        };
        note.push_str(&format!("\n\n({files} over 1 MiB skipped.)"));
    }
    note
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_exact_prefix_substring_subsequence() {
        assert_eq!(rank("Parse", "parse"), Some(0));
        assert_eq!(rank("parse_config", "parse"), Some(1));
        assert_eq!(rank("do_parse", "parse"), Some(2));
        assert_eq!(rank("ParserState", "pst"), Some(3));
        assert_eq!(rank("render", "parse"), None);
    }

    #[test]
    fn skipped_notes_count_files() {
        assert_eq!(skipped_note(0, 0), "");
        assert_eq!(
            skipped_note(1, 2),
            "\n\n(1 file was skipped because symbols does not read their language; it reads Rust, TypeScript/TSX, JavaScript, Python, Go, Java, C and C++.)\n\n(2 files over 1 MiB skipped.)"
        );
    }
}
