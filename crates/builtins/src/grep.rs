//! The `grep` built-in: regex search over file contents with the ripgrep crates.
//!
//! Data flow: `{pattern, path?, include?}` → the regex is compiled (`grep-regex`, line
//! oriented so the fast literal paths apply) and the search root resolved and gated
//! (`external_directory` when outside, then `grep` with the root's pattern) → a parallel
//! `ignore` walk hands each file that passes `include` to a per-thread `grep-searcher`
//! (binary files are dropped the moment a NUL byte shows up) → each thread counts every
//! match but keeps lines only for its newest `MAX_MATCHES` matching files, so memory stays
//! bounded → the merged files, newest first, print as `path:` then `  line: text` until
//! `MAX_MATCHES` lines are shown, with a note saying how many were left out. Matches in
//! `.env`-style files are shown only if `read` permission for them is granted; keys and
//! credentials are not searched unless a rule allows them (see `secrets`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use async_trait::async_trait;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};
use podcode_protocol::{PermissionRequest, ToolResult, ToolSpec};
use podcode_tools::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::glob::{Newest, PathGlob, SearchRoot, parse_args};

/// At most this many matching lines are shown.
const MAX_MATCHES: usize = 100;
/// Matching lines longer than this many characters are cut.
const MAX_LINE_CHARS: usize = 500;
/// A file whose lines need more buffer than this is skipped rather than loaded.
const HEAP_LIMIT: usize = 64 * 1024 * 1024;

const DESCRIPTION: &str = "Searches file contents with a regular expression and returns the matching lines with their line numbers, grouped by file, most recently modified files first. glob finds files by name.
- The pattern is a Rust/ripgrep regular expression, matched case-sensitively line by line (never across lines): escape special characters (`\\(`, `\\.`, `\\{`); `(?i)` ignores case.
- `include` filters the files with a glob: `*.rs` matches file names, `src/**/*.ts` paths relative to the search folder.
- Files ignored by .gitignore or .ignore, the .git folder and binary files are skipped.
- At most 100 matching lines are returned; a note says how many more there were. Lines over 500 characters are cut.
Example: {\"pattern\": \"fn\\\\s+parse_\\\\w+\", \"include\": \"*.rs\"}";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct GrepArgs {
    /// The regular expression, e.g. `fn main` or `TODO|FIXME`.
    pattern: String,
    /// The folder or file to search (default: the working directory).
    #[serde(default)]
    path: Option<String>,
    /// Only search files matching this glob, e.g. `*.{ts,tsx}`.
    #[serde(default)]
    include: Option<String>,
}

pub struct GrepTool {
    spec: ToolSpec,
}

impl GrepTool {
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new("grep", DESCRIPTION, crate::params_schema::<GrepArgs>())
                .idempotent(true),
        }
    }
}

impl Default for GrepTool {
    fn default() -> Self {
        Self::new()
    }
}

/// The matching lines of one file: `(line number, text)`, and how many matched in all.
#[derive(Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
struct FileHits {
    lines: Vec<(u64, String)>,
    count: usize,
}

/// What a whole search found.
struct Found {
    files: Vec<(PathBuf, FileHits)>,
    total_matches: usize,
    total_files: usize,
}

#[async_trait]
impl Tool for GrepTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let args: GrepArgs = parse_args("grep", args)?;
        if args.pattern.is_empty() {
            return Err(ToolError::failed(
                "the pattern is empty. Pass the regular expression to search for, e.g. \"fn main\".",
            ));
        }
        let matcher = build_matcher(&args.pattern)?;
        let include = match args.include.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            None => None,
            Some(g) => Some(PathGlob::new(g).map_err(|e| {
                ToolError::failed(format!(
                    "include \"{g}\" is not a valid glob ({e}). Use a glob such as \"*.rs\" or \"src/**/*.{{ts,tsx}}\"."
                ))
            })?),
        };
        let root = SearchRoot::open(&ctx, "grep", args.path.as_deref(), true).await?;
        let abort = ctx.abort().clone();
        let walk_root = root.abs.clone();
        let walk = crate::glob::secret_aware_walk(&walk_root, &root.secrets);
        let found = tokio::task::spawn_blocking(move || {
            search(&walk_root, walk, &matcher, include.as_ref(), &abort)
        })
        .await
        .map_err(|e| ToolError::failed(format!("the search stopped unexpectedly: {e}")))?;
        if ctx.is_aborted() {
            return Err(ToolError::Aborted);
        }
        let (files, withheld) = withhold_secrets(&ctx, &root, found.files).await;
        let (body, shown) = render(&root, &files);
        let mut output = if shown == 0 {
            format!(
                "No matches found for \"{}\" in {}.",
                args.pattern,
                root.place()
            )
        } else {
            body
        };
        let visible_total = found.total_matches - withheld.iter().map(|(_, n)| n).sum::<usize>();
        if shown > 0 && visible_total > shown {
            output.push_str(&format!(
                "\n\n(Showing {shown} of {visible_total} matches in {} files. Use a more specific pattern, path or include to see the others.)",
                found.total_files - withheld.len()
            ));
        }
        if !withheld.is_empty() {
            let names: Vec<&str> = withheld.iter().map(|(n, _)| n.as_str()).collect();
            output.push_str(&format!(
                "\n\n(Matches in {} were not shown because reading those files was not permitted.)",
                names.join(", ")
            ));
        }
        if root.secrets.skipped() > 0 {
            output.push_str("\n\n");
            output.push_str(&crate::secrets::skipped_note(root.secrets.skipped()));
        }
        Ok(ToolResult::text(output)
            .with_title(format!("{} in {}", args.pattern, root.label))
            .with_metadata(json!({ "matches": visible_total, "shown": shown, "truncated": visible_total > shown })))
    }
}

fn build_matcher(pattern: &str) -> Result<RegexMatcher, ToolError> {
    RegexMatcherBuilder::new().line_terminator(Some(b'\n')).build(pattern).map_err(|e| {
        ToolError::failed(format!(
            "\"{pattern}\" is not a valid regular expression: {e}\nThe pattern uses Rust regex syntax (like ripgrep). Escape special characters such as ( ) [ ] {{ }} . * + ? | \\ with a backslash to match them literally."
        ))
    })
}

/// Files whose name looks like an env file (`.env`, `.env.local`, `prod.env`) may hold
/// secrets that `read` would ask about; their matches are shown only if `read` is allowed.
use crate::secrets::looks_like_env;

async fn withhold_secrets(
    ctx: &ToolContext,
    root: &SearchRoot,
    files: Vec<(PathBuf, FileHits)>,
) -> (Vec<(PathBuf, FileHits)>, Vec<(String, usize)>) {
    let env: Vec<String> = files
        .iter()
        .filter(|(p, _)| looks_like_env(p))
        .map(|(p, _)| root.display(p))
        .collect();
    if env.is_empty() {
        return (files, Vec::new());
    }
    let request = PermissionRequest {
        permission: "read".into(),
        patterns: env.clone(),
        always: env,
        metadata: json!({ "reason": "grep found matches in these files" }),
    };
    if ctx.ask(request).await.is_ok() {
        return (files, Vec::new());
    }
    let (secret, open): (Vec<_>, Vec<_>) = files.into_iter().partition(|(p, _)| looks_like_env(p));
    (
        open,
        secret
            .into_iter()
            .map(|(p, h)| (root.display(&p), h.count))
            .collect(),
    )
}

/// `path:` then `  N: text` per line, files in the order given, at most `MAX_MATCHES` lines.
fn render(root: &SearchRoot, files: &[(PathBuf, FileHits)]) -> (String, usize) {
    let mut out = String::new();
    let mut shown = 0;
    for (path, hits) in files {
        if shown >= MAX_MATCHES {
            break;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&root.display(path));
        out.push_str(":\n");
        for (line, text) in hits.lines.iter().take(MAX_MATCHES - shown) {
            out.push_str(&format!("  {line}: {text}\n"));
            shown += 1;
        }
    }
    (out.trim_end().to_string(), shown)
}

fn search(
    root: &Path,
    walk: ignore::WalkBuilder,
    matcher: &RegexMatcher,
    include: Option<&PathGlob>,
    abort: &CancellationToken,
) -> Found {
    let shared = Mutex::new((Newest::new(MAX_MATCHES), 0usize, 0usize));
    let mut builder = GrepBuilder {
        root,
        matcher,
        include,
        abort,
        shared: &shared,
    };
    walk.build_parallel().visit(&mut builder);
    let (newest, total_matches, total_files) =
        shared.into_inner().unwrap_or_else(|p| p.into_inner());
    let files = newest
        .into_sorted()
        .into_iter()
        .map(|(_, p, h)| (p, h))
        .collect();
    Found {
        files,
        total_matches,
        total_files,
    }
}

struct GrepBuilder<'a> {
    root: &'a Path,
    matcher: &'a RegexMatcher,
    include: Option<&'a PathGlob>,
    abort: &'a CancellationToken,
    shared: &'a Mutex<(Newest<FileHits>, usize, usize)>,
}

impl<'s> ParallelVisitorBuilder<'s> for GrepBuilder<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        let searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .line_number(true)
            .heap_limit(Some(HEAP_LIMIT))
            .build();
        Box::new(GrepVisitor {
            root: self.root,
            matcher: self.matcher.clone(),
            include: self.include,
            abort: self.abort,
            shared: self.shared,
            searcher,
            newest: Newest::new(MAX_MATCHES),
            matches: 0,
            files: 0,
        })
    }
}

struct GrepVisitor<'a> {
    root: &'a Path,
    matcher: RegexMatcher,
    include: Option<&'a PathGlob>,
    abort: &'a CancellationToken,
    shared: &'a Mutex<(Newest<FileHits>, usize, usize)>,
    searcher: Searcher,
    newest: Newest<FileHits>,
    matches: usize,
    files: usize,
}

impl ParallelVisitor for GrepVisitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.abort.is_cancelled() {
            return WalkState::Quit;
        }
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return WalkState::Continue;
        }
        if let Some(include) = self.include
            && !include.is_match(self.root, entry.path())
        {
            return WalkState::Continue;
        }
        let mut sink = Collect {
            hits: FileHits::default(),
            binary: false,
            abort: self.abort,
            seen: 0,
        };
        if self
            .searcher
            .search_path(&self.matcher, entry.path(), &mut sink)
            .is_err()
            || sink.binary
        {
            return WalkState::Continue;
        }
        if sink.hits.count > 0 {
            self.matches += sink.hits.count;
            self.files += 1;
            let mtime = entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            self.newest.push(mtime, entry.into_path(), sink.hits);
        }
        WalkState::Continue
    }
}

impl Drop for GrepVisitor<'_> {
    fn drop(&mut self) {
        let newest = std::mem::replace(&mut self.newest, Newest::new(0));
        if let Ok(mut shared) = self.shared.lock() {
            shared.0.merge(newest);
            shared.1 += self.matches;
            shared.2 += self.files;
        }
    }
}

/// Collects one file's matching lines (up to `MAX_MATCHES`) and counts all of them.
struct Collect<'a> {
    hits: FileHits,
    binary: bool,
    abort: &'a CancellationToken,
    seen: usize,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.hits.count += 1;
        self.seen += 1;
        if self.hits.lines.len() < MAX_MATCHES {
            self.hits
                .lines
                .push((mat.line_number().unwrap_or(0), clip_line(mat.bytes())));
        }
        // A pathological file can match millions of times; look at the abort signal now and then.
        Ok(!self.seen.is_multiple_of(4096) || !self.abort.is_cancelled())
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

fn clip_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end_matches(['\n', '\r']);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => format!(
            "{}… [line cut at {MAX_LINE_CHARS} characters]",
            &text[..cut]
        ),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_like_names() {
        for yes in [".env", ".env.local", "config/.env.production", "prod.env"] {
            assert!(looks_like_env(Path::new(yes)), "{yes}");
        }
        for no in [".env.example", "environment.rs", "src/env.rs", "README.md"] {
            assert!(!looks_like_env(Path::new(no)), "{no}");
        }
    }

    #[test]
    fn long_lines_are_cut() {
        let long = "x".repeat(MAX_LINE_CHARS + 10);
        let cut = clip_line(long.as_bytes());
        assert!(cut.ends_with("… [line cut at 500 characters]"));
        assert_eq!(clip_line(b"short\r\n"), "short");
    }
}
