//! The `glob` built-in, plus the search plumbing `list` and `grep` share with it.
//!
//! Data flow: the model's `{pattern, path?}` → the search root is resolved against the
//! session directory and gated (`external_directory` when outside, then `glob` with the
//! root's pattern) → a parallel `ignore` walk (honouring `.gitignore`/`.ignore`, never
//! entering `.git`) matches every file against the pattern → each thread keeps only the
//! newest `MAX_RESULTS` files by mtime, so memory stays bounded however big the tree is →
//! the merged list, newest first, with a note when more files matched.
//!
//! Shared helpers (`PathGlob`, `walk_builder`, `SearchRoot`, `Newest`, `parse_args`,
//! `path_error`) live here because `glob` is the simplest user of each; `list`, `grep` and
//! `read` reach them as `crate::glob::…`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use async_trait::async_trait;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use podcode_protocol::{PermissionRequest, ToolResult, ToolSpec};
use podcode_tools::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::workspace::{ResolvedPath, Workspace};

/// At most this many paths are returned.
pub(crate) const MAX_RESULTS: usize = 100;

const DESCRIPTION: &str = "Finds files by name with a glob pattern and returns their paths, most recently modified first; grep searches file contents.
- A pattern without `/` matches file names at any depth (`*.rs`, `Cargo.toml`); one with `/` matches the path relative to the search folder (`src/**/*.ts`), where `*` stays within one folder and `**` crosses folders. `{a,b}` and `[abc]` work.
- Files ignored by .gitignore or .ignore and the .git folder are skipped; hidden files are included.
- At most 100 paths are returned; a note says how many more matched.
Example: {\"pattern\": \"src/**/*.test.ts\"}";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct GlobArgs {
    /// The glob to match, e.g. `*.rs` or `src/**/*.ts`.
    pattern: String,
    /// The folder to search (default: the working directory).
    #[serde(default)]
    path: Option<String>,
}

pub struct GlobTool {
    spec: ToolSpec,
}

impl GlobTool {
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new("glob", DESCRIPTION, crate::params_schema::<GlobArgs>())
                .idempotent(true),
        }
    }
}

impl Default for GlobTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Tool for GlobTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let args: GlobArgs = parse_args("glob", args)?;
        if args.pattern.trim().is_empty() {
            return Err(ToolError::failed(
                "the pattern is empty. Pass a glob such as \"*.rs\" or \"src/**/*.ts\".",
            ));
        }
        let (pattern, path) = split_absolute(args.pattern.trim(), args.path.as_deref());
        let glob = PathGlob::new(&pattern).map_err(|e| {
            ToolError::failed(format!(
                "\"{}\" is not a valid glob ({e}). Use `*`, `**`, `?`, `[abc]` and `{{a,b}}`, e.g. \"src/**/*.rs\".",
                args.pattern
            ))
        })?;
        let root = SearchRoot::open(&ctx, "glob", path.as_deref(), false).await?;
        let abort = ctx.abort().clone();
        let walk_root = root.abs.clone();
        let walk = secret_aware_walk(&walk_root, &root.secrets);
        let found =
            tokio::task::spawn_blocking(move || find_files(&walk_root, walk, &glob, &abort))
                .await
                .map_err(|e| {
                    ToolError::failed(format!("the file search stopped unexpectedly: {e}"))
                })?;
        if ctx.is_aborted() {
            return Err(ToolError::Aborted);
        }
        let shown: Vec<String> = found.newest.iter().map(|(_, p)| root.display(p)).collect();
        let mut output = if shown.is_empty() {
            format!(
                "No files found matching \"{}\" in {}. Files ignored by .gitignore or .ignore are not searched.",
                args.pattern,
                root.place()
            )
        } else {
            shown.join("\n")
        };
        if found.total > shown.len() {
            output.push_str(&format!(
                "\n\n(Showing the {} most recently modified of {} matching files. Use a more specific pattern or path to see the others.)",
                shown.len(),
                found.total
            ));
        }
        if root.secrets.skipped() > 0 {
            output.push_str("\n\n");
            output.push_str(&crate::secrets::skipped_note(root.secrets.skipped()));
        }
        Ok(ToolResult::text(output)
            .with_title(format!("{} in {}", args.pattern, root.label))
            .with_metadata(json!({ "count": found.total, "shown": shown.len(), "truncated": found.total > shown.len() })))
    }
}

/// An absolute pattern (`/repo/src/**/*.rs`) given without `path` is split at its first
/// wildcard into a search folder (`/repo/src`) and a relative pattern (`**/*.rs`).
fn split_absolute(pattern: &str, path: Option<&str>) -> (String, Option<String>) {
    if path.is_some() || !pattern.starts_with('/') {
        return (pattern.to_string(), path.map(String::from));
    }
    let parts: Vec<&str> = pattern.split('/').collect();
    let wild = parts.iter().position(|p| p.contains(['*', '?', '[', '{']));
    let split = wild.unwrap_or(parts.len() - 1);
    let dir = parts[..split].join("/");
    let dir = if dir.is_empty() { "/".to_string() } else { dir };
    (parts[split..].join("/"), Some(dir))
}

/// Deserializes validated arguments; a failure here means the schema and struct disagree.
pub(crate) fn parse_args<T: serde::de::DeserializeOwned>(
    tool: &str,
    args: Value,
) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| {
        ToolError::failed(format!(
            "the {tool} arguments could not be read ({e}). Check them against the schema."
        ))
    })
}

/// What `find_files` returns: the newest matches (newest first) and how many matched.
struct Found {
    newest: Vec<(SystemTime, PathBuf)>,
    total: usize,
}

/// Keeps the `cap` newest `(mtime, path)` pairs; ties go to the smaller path.
pub(crate) struct Newest<T> {
    cap: usize,
    heap: BinaryHeap<Reverse<(SystemTime, Reverse<PathBuf>, T)>>,
}

impl<T: Ord> Newest<T> {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            heap: BinaryHeap::new(),
        }
    }

    pub(crate) fn push(&mut self, mtime: SystemTime, path: PathBuf, item: T) {
        self.heap.push(Reverse((mtime, Reverse(path), item)));
        if self.heap.len() > self.cap {
            self.heap.pop();
        }
    }

    pub(crate) fn merge(&mut self, other: Newest<T>) {
        for Reverse((m, Reverse(p), t)) in other.heap {
            self.push(m, p, t);
        }
    }

    /// Newest first.
    pub(crate) fn into_sorted(self) -> Vec<(SystemTime, PathBuf, T)> {
        let mut all: Vec<_> = self
            .heap
            .into_iter()
            .map(|Reverse((m, Reverse(p), t))| (m, p, t))
            .collect();
        all.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        all
    }
}

struct GlobShared {
    out: Mutex<(Newest<()>, usize)>,
}

struct GlobVisitor<'a> {
    root: &'a Path,
    glob: &'a PathGlob,
    abort: &'a CancellationToken,
    shared: &'a GlobShared,
    newest: Newest<()>,
    total: usize,
}

impl ParallelVisitor for GlobVisitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.abort.is_cancelled() {
            return WalkState::Quit;
        }
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file())
            || !self.glob.is_match(self.root, entry.path())
        {
            return WalkState::Continue;
        }
        self.total += 1;
        let mtime = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        self.newest.push(mtime, entry.into_path(), ());
        WalkState::Continue
    }
}

impl Drop for GlobVisitor<'_> {
    fn drop(&mut self) {
        let newest = std::mem::replace(&mut self.newest, Newest::new(0));
        if let Ok(mut out) = self.shared.out.lock() {
            out.0.merge(newest);
            out.1 += self.total;
        }
    }
}

struct GlobBuilderState<'a> {
    root: &'a Path,
    glob: &'a PathGlob,
    abort: &'a CancellationToken,
    shared: &'a GlobShared,
}

impl<'s> ParallelVisitorBuilder<'s> for GlobBuilderState<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(GlobVisitor {
            root: self.root,
            glob: self.glob,
            abort: self.abort,
            shared: self.shared,
            newest: Newest::new(MAX_RESULTS),
            total: 0,
        })
    }
}

fn find_files(root: &Path, walk: WalkBuilder, glob: &PathGlob, abort: &CancellationToken) -> Found {
    let shared = GlobShared {
        out: Mutex::new((Newest::new(MAX_RESULTS), 0)),
    };
    let mut state = GlobBuilderState {
        root,
        glob,
        abort,
        shared: &shared,
    };
    walk.build_parallel().visit(&mut state);
    let (newest, total) = shared.out.into_inner().unwrap_or_else(|p| p.into_inner());
    Found {
        newest: newest
            .into_sorted()
            .into_iter()
            .map(|(m, p, ())| (m, p))
            .collect(),
        total,
    }
}

/// A glob with gitignore-like anchoring: without `/` it matches the file name at any
/// depth; with `/` it matches the whole path relative to the search root, `*` staying
/// within one folder and `**` crossing folders.
/// A one-glob `GlobSet` rather than a `GlobMatcher`: the set picks fast strategies
/// (`*.rs` becomes an extension lookup instead of a regex).
pub(crate) struct PathGlob {
    matcher: GlobSet,
    by_name: bool,
}

impl PathGlob {
    pub(crate) fn new(pattern: &str) -> Result<Self, globset::Error> {
        let trimmed = pattern.trim();
        let trimmed = trimmed.strip_prefix("./").unwrap_or(trimmed);
        let trimmed = trimmed.strip_prefix('/').unwrap_or(trimmed);
        let by_name = !trimmed.contains('/');
        let glob = GlobBuilder::new(trimmed)
            .literal_separator(true)
            .backslash_escape(true)
            .build()?;
        let matcher = GlobSetBuilder::new().add(glob).build()?;
        Ok(Self { matcher, by_name })
    }

    /// Matches `path` (found under `root`).
    pub(crate) fn is_match(&self, root: &Path, path: &Path) -> bool {
        if self.by_name {
            return path.file_name().is_some_and(|n| self.matcher.is_match(n));
        }
        match path.strip_prefix(root) {
            Ok(rel) => self.matcher.is_match(rel),
            Err(_) => self.matcher.is_match(path),
        }
    }
}

/// The walker all search tools use: ignore files are honoured even outside a git
/// repository, hidden files are included, symlinks are not followed, and `.git` is never
/// entered.
pub(crate) fn walk_builder(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git");
    builder
}

/// `walk_builder` that also leaves out (and counts) the secret files and folders `secrets`
/// hides.
pub(crate) fn secret_aware_walk(
    root: &Path,
    secrets: &std::sync::Arc<crate::secrets::SecretFilter>,
) -> WalkBuilder {
    let mut builder = walk_builder(root);
    let secrets = secrets.clone();
    builder.filter_entry(move |e| {
        e.file_name() != ".git" && (e.depth() == 0 || !secrets.skips(e.path()))
    });
    builder
}

/// A resolved and permitted place to search: a folder, or (for grep) a single file.
pub(crate) struct SearchRoot {
    pub(crate) abs: PathBuf,
    /// Leaves secret files out of the walk (see `secrets`).
    pub(crate) secrets: std::sync::Arc<crate::secrets::SecretFilter>,
    /// How the root is named to the model: relative to the session directory, or absolute.
    pub(crate) label: String,
    /// The session directory, canonical, to show found paths relative to it.
    base: PathBuf,
}

impl SearchRoot {
    /// Resolves `path` (default: the session directory), asks `external_directory` when it is
    /// outside the workspace and then `permission` with its pattern, and checks it exists.
    pub(crate) async fn open(
        ctx: &ToolContext,
        permission: &str,
        path: Option<&str>,
        allow_file: bool,
    ) -> Result<Self, ToolError> {
        let raw = path.map(str::trim).filter(|p| !p.is_empty()).unwrap_or(".");
        let resolved: ResolvedPath = Workspace::resolve(ctx, raw);
        Workspace::ensure_access(ctx, &resolved, false).await?;
        ctx.ask(PermissionRequest {
            permission: permission.into(),
            patterns: vec![resolved.pattern.clone()],
            always: vec![resolved.pattern.clone()],
            metadata: json!({ "path": resolved.abs }),
        })
        .await?;
        // A root that is itself secret (`~/.ssh`) asks; once allowed, nothing under it is
        // left out of the walk.
        crate::secrets::ensure_allowed(ctx, &resolved).await?;
        let approved = (crate::secrets::classify(&resolved.abs)
            == Some(crate::secrets::Secret::Credential))
        .then(|| resolved.abs.clone());
        let secrets = crate::secrets::SecretFilter::new(ctx, permission != "grep", approved);
        let base = ctx
            .directory()
            .canonicalize()
            .unwrap_or_else(|_| ctx.directory().to_path_buf());
        let label = if resolved.abs == base {
            ".".to_string()
        } else {
            resolved.pattern.clone()
        };
        let meta = std::fs::metadata(&resolved.abs).map_err(|e| path_error(&label, &e))?;
        if !(meta.is_dir() || allow_file && meta.is_file()) {
            return Err(ToolError::failed(format!(
                "{label} is a file, not a folder. Pass a folder as path (or read the file with the read tool)."
            )));
        }
        Ok(Self {
            abs: resolved.abs,
            secrets,
            label,
            base,
        })
    }

    /// The root as a sentence names it.
    pub(crate) fn place(&self) -> String {
        if self.label == "." {
            "the working directory".to_string()
        } else {
            self.label.clone()
        }
    }

    /// A found path as the model should see it: relative to the session directory when
    /// inside it (so it can be passed straight to `read`), absolute otherwise.
    pub(crate) fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.base) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
            _ => path.to_string_lossy().into_owned(),
        }
    }
}

/// The model-facing text for a path that could not be opened.
pub(crate) fn path_error(label: &str, e: &std::io::Error) -> ToolError {
    match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::failed(format!(
            "{label} does not exist. Check the path, or use list or glob to find the right one."
        )),
        std::io::ErrorKind::PermissionDenied => ToolError::failed(format!(
            "the operating system denied access to {label} (permission denied). Podcode cannot open it; ask the user if you need it."
        )),
        _ => ToolError::failed(format!("{label} could not be opened: {e}.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_globs_match_at_any_depth_and_path_globs_are_anchored() {
        let root = Path::new("/r");
        let g = PathGlob::new("*.rs").unwrap();
        assert!(g.is_match(root, Path::new("/r/a.rs")));
        assert!(g.is_match(root, Path::new("/r/src/deep/b.rs")));
        assert!(!g.is_match(root, Path::new("/r/b.rsx")));
        let g = PathGlob::new("src/*.rs").unwrap();
        assert!(g.is_match(root, Path::new("/r/src/a.rs")));
        assert!(!g.is_match(root, Path::new("/r/src/x/a.rs")));
        assert!(!g.is_match(root, Path::new("/r/lib/src/a.rs")));
        let g = PathGlob::new("src/**/*.{ts,tsx}").unwrap();
        assert!(g.is_match(root, Path::new("/r/src/a.ts")));
        assert!(g.is_match(root, Path::new("/r/src/x/y/a.tsx")));
        let g = PathGlob::new("**/*.md").unwrap();
        assert!(g.is_match(root, Path::new("/r/README.md")));
        assert!(g.is_match(root, Path::new("/r/docs/a/b.md")));
    }

    #[test]
    fn absolute_patterns_are_split_at_the_first_wildcard() {
        let split = |p: &str| split_absolute(p, None);
        assert_eq!(
            split("/r/src/**/*.rs"),
            ("**/*.rs".into(), Some("/r/src".into()))
        );
        assert_eq!(
            split("/r/Cargo.toml"),
            ("Cargo.toml".into(), Some("/r".into()))
        );
        assert_eq!(split("/*.rs"), ("*.rs".into(), Some("/".into())));
        assert_eq!(split("src/*.rs"), ("src/*.rs".into(), None));
        assert_eq!(
            split_absolute("/x/*.rs", Some("a")),
            ("/x/*.rs".into(), Some("a".into()))
        );
    }

    #[test]
    fn newest_keeps_the_most_recent() {
        let t = |s| SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(s);
        let mut n = Newest::new(2);
        n.push(t(1), "a".into(), ());
        n.push(t(3), "c".into(), ());
        n.push(t(2), "b".into(), ());
        let got: Vec<_> = n.into_sorted().into_iter().map(|(_, p, _)| p).collect();
        assert_eq!(got, vec![PathBuf::from("c"), PathBuf::from("b")]);
    }
}
