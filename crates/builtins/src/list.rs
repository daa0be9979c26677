//! The `list` built-in: a tree of a folder, breadth first, so the top of the tree is always
//! visible however large its subfolders are.
//!
//! Data flow: `{path?, ignore?}` → the folder is resolved and gated (`external_directory`
//! when outside, then `list` with the folder's pattern) → one `ignore` walk (honouring
//! `.gitignore`/`.ignore` and the `ignore` globs, never entering `.git`) counts every entry
//! and each folder's children, while a bounded heap keeps the `MAX_ENTRIES` shallowest
//! entries (depth, then path) → those are rendered as an indented tree, folders first with
//! a trailing `/`, each folder saying how many of its entries were left out. The walk stops
//! after `SCAN_LIMIT` entries or when the call is aborted. `flat_listing` is the one-level
//! listing `read` returns for a folder path.

use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use ignore::overrides::OverrideBuilder;
use podcode_protocol::{ToolResult, ToolSpec};
use podcode_tools::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::glob::{SearchRoot, parse_args, path_error, secret_aware_walk};

/// At most this many entries are shown.
const MAX_ENTRIES: usize = 1000;
/// The walk stops counting after this many entries.
const SCAN_LIMIT: usize = 200_000;

const DESCRIPTION: &str = "Lists a folder as an indented tree (folders first, marked with a trailing `/`), walking into subfolders.
Use it for an overview of a project or folder; glob finds files by name, grep searches their contents.
- Files ignored by .gitignore or .ignore and the .git folder are left out; hidden files are shown.
- At most 1000 entries are shown, shallowest first; folders whose entries were left out say how many.
Example: {\"path\": \"src\", \"ignore\": [\"*.snap\"]}";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ListArgs {
    /// The folder to list (default: the working directory).
    #[serde(default)]
    path: Option<String>,
    /// Globs to leave out too (gitignore syntax), e.g. `["dist", "*.log"]`.
    #[serde(default)]
    ignore: Vec<String>,
}

pub struct ListTool {
    spec: ToolSpec,
}

impl ListTool {
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new("list", DESCRIPTION, crate::params_schema::<ListArgs>())
                .idempotent(true),
        }
    }
}

impl Default for ListTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Tool for ListTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let args: ListArgs = parse_args("list", args)?;
        let root = SearchRoot::open(&ctx, "list", args.path.as_deref(), false).await?;
        let mut overrides = OverrideBuilder::new(&root.abs);
        for glob in args
            .ignore
            .iter()
            .map(|g| g.trim())
            .filter(|g| !g.is_empty())
        {
            let glob = glob.strip_prefix('!').unwrap_or(glob);
            overrides.add(&format!("!{glob}")).map_err(|e| {
                ToolError::failed(format!(
                    "ignore glob \"{glob}\" is not valid ({e}). Use gitignore-style globs such as \"node_modules\" or \"*.log\"."
                ))
            })?;
        }
        let overrides = overrides
            .build()
            .map_err(|e| ToolError::failed(format!("the ignore globs are not valid ({e}).")))?;
        let abort = ctx.abort().clone();
        let walk_root = root.abs.clone();
        let secrets = root.secrets.clone();
        let scan = tokio::task::spawn_blocking(move || {
            let mut builder = secret_aware_walk(&walk_root, &secrets);
            builder
                .overrides(overrides)
                .sort_by_file_name(|a, b| a.cmp(b));
            scan(&walk_root, builder, &abort)
        })
        .await
        .map_err(|e| ToolError::failed(format!("listing stopped unexpectedly: {e}")))?;
        if ctx.is_aborted() {
            return Err(ToolError::Aborted);
        }
        let shown = scan.kept.len();
        let mut output = format!(
            "{}/\n",
            root.abs.display().to_string().trim_end_matches('/')
        );
        output.push_str(&render(&root.abs, scan.kept, &scan.children));
        if shown == 0 {
            output.push_str("  (empty: no entries, or all of them are ignored)\n");
        }
        if scan.complete && scan.total > shown {
            output.push_str(&format!(
                "\n({} of {} entries shown; {} were left out. List a subfolder to see more, or use glob to find specific files.)\n",
                shown,
                scan.total,
                scan.total - shown
            ));
        } else if !scan.complete {
            output.push_str(&format!(
                "\n({shown} entries shown; the folder has more than {} entries and the rest were not counted. List a subfolder to see more, or use glob to find specific files.)\n",
                scan.total
            ));
        }
        if root.secrets.skipped() > 0 {
            output.push('\n');
            output.push_str(&crate::secrets::skipped_note(root.secrets.skipped()));
        }
        Ok(ToolResult::text(output.trim_end().to_string())
            .with_title(root.label.clone())
            .with_metadata(
                json!({ "count": scan.total, "shown": shown, "truncated": scan.total > shown }),
            ))
    }
}

/// One walked entry; ordered by depth, then path (the order entries are kept in).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    depth: usize,
    path: PathBuf,
    is_dir: bool,
}

struct Scan {
    kept: Vec<Entry>,
    /// Folder → how many entries it holds (after ignore rules).
    children: HashMap<PathBuf, usize>,
    total: usize,
    complete: bool,
}

fn scan(root: &Path, builder: ignore::WalkBuilder, abort: &CancellationToken) -> Scan {
    let mut heap: BinaryHeap<Entry> = BinaryHeap::new();
    let mut children: HashMap<PathBuf, usize> = HashMap::new();
    let mut total = 0;
    let mut complete = true;
    for entry in builder.build() {
        if abort.is_cancelled() {
            break;
        }
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 || entry.path() == root {
            continue;
        }
        if total >= SCAN_LIMIT {
            complete = false;
            break;
        }
        total += 1;
        if let Some(parent) = entry.path().parent() {
            *children.entry(parent.to_path_buf()).or_default() += 1;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let candidate = Entry {
            depth: entry.depth(),
            path: entry.into_path(),
            is_dir,
        };
        if heap.len() < MAX_ENTRIES {
            heap.push(candidate);
        } else if heap.peek().is_some_and(|worst| candidate < *worst) {
            heap.pop();
            heap.push(candidate);
        }
    }
    Scan {
        kept: heap.into_sorted_vec(),
        children,
        total,
        complete,
    }
}

#[derive(Default)]
struct Node {
    is_dir: bool,
    path: PathBuf,
    /// Keyed by (is a file, name) so folders sort first.
    children: BTreeMap<(bool, String), Node>,
}

/// Renders kept entries (sorted by depth, so parents come before children) as a tree.
fn render(root: &Path, kept: Vec<Entry>, counts: &HashMap<PathBuf, usize>) -> String {
    let mut tree = Node {
        is_dir: true,
        path: root.to_path_buf(),
        children: BTreeMap::new(),
    };
    for entry in kept {
        let Ok(rel) = entry.path.strip_prefix(root) else {
            continue;
        };
        let parts: Vec<String> = rel
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        let Some((last, dirs)) = parts.split_last() else {
            continue;
        };
        let mut node = &mut tree;
        for dir in dirs {
            node = node.children.entry((false, dir.clone())).or_default();
        }
        node.children.insert(
            (!entry.is_dir, last.clone()),
            Node {
                is_dir: entry.is_dir,
                path: entry.path,
                children: BTreeMap::new(),
            },
        );
    }
    let mut out = String::new();
    render_children(&tree, counts, 1, &mut out);
    if let Some(hidden) = hidden_count(&tree, counts).filter(|_| !tree.children.is_empty()) {
        out.push_str(&format!("  … {hidden} more entries\n"));
    }
    out
}

fn hidden_count(node: &Node, counts: &HashMap<PathBuf, usize>) -> Option<usize> {
    let total = counts.get(&node.path).copied().unwrap_or(0);
    (total > node.children.len()).then(|| total - node.children.len())
}

fn render_children(node: &Node, counts: &HashMap<PathBuf, usize>, depth: usize, out: &mut String) {
    let indent = "  ".repeat(depth);
    for ((_, name), child) in &node.children {
        if !child.is_dir {
            out.push_str(&format!("{indent}{name}\n"));
            continue;
        }
        match hidden_count(child, counts) {
            Some(hidden) if child.children.is_empty() => {
                let noun = if hidden == 1 { "entry" } else { "entries" };
                out.push_str(&format!("{indent}{name}/ ({hidden} {noun} not shown)\n"));
            }
            hidden => {
                out.push_str(&format!("{indent}{name}/\n"));
                render_children(child, counts, depth + 1, out);
                if let Some(hidden) = hidden {
                    out.push_str(&format!("{indent}  … {hidden} more entries\n"));
                }
            }
        }
    }
}

/// One folder's own entries, sorted, folders marked with `/`, windowed by a 1-based
/// `offset` and `limit` (at most `max` shown): what `read` shows for a folder path.
pub(crate) fn flat_listing(
    abs: &Path,
    label: &str,
    offset: u64,
    limit: u64,
    max: usize,
    secrets: &crate::secrets::SecretFilter,
) -> Result<String, ToolError> {
    let mut names: Vec<String> = std::fs::read_dir(abs)
        .map_err(|e| path_error(label, &e))?
        .filter_map(|e| e.ok())
        .filter(|e| !secrets.skips(&e.path()))
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let dir = e.file_type().is_ok_and(|t| t.is_dir());
            if dir { format!("{name}/") } else { name }
        })
        .collect();
    names.sort();
    let total = names.len();
    let start = usize::try_from(offset.saturating_sub(1))
        .unwrap_or(usize::MAX)
        .min(total);
    let count = usize::try_from(limit).unwrap_or(usize::MAX).min(max);
    let window: Vec<&String> = names.iter().skip(start).take(count).collect();
    let mut output = format!("{label} is a folder; its entries ({total}):\n");
    for name in &window {
        output.push_str(name);
        output.push('\n');
    }
    let end = start + window.len();
    if end < total {
        let (first, next) = (start + 1, end + 1);
        output.push_str(&format!(
            "\n(Showing entries {first}-{end} of {total}. Use offset={next} to see more.)"
        ));
    } else {
        output.push_str("\n(Use the list tool for a recursive tree, or read a file by its path.)");
    }
    if secrets.skipped() > 0 {
        output.push_str("\n\n");
        output.push_str(&crate::secrets::skipped_note(secrets.skipped()));
    }
    Ok(output)
}
