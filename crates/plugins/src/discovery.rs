//! Finding tools on disk. Global folders (`~/.config/podcode/tools`) always load;
//! project folders (`<project>/.podcode/tools`) only in a trusted workspace, otherwise they
//! are reported as skipped with the way to trust it. Manifests come from the cache when the
//! file is unchanged; only new or changed executables are described, in parallel.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use podcode_tools::{LoadProblem, ProblemLevel, SourceKind, Tool, ToolOrigin};

use crate::executable::{DescribeSandbox, ExecutableTool, describe_executable_in};
use crate::manifest_cache::ManifestCache;

/// Where to look for executable tools, and how to run their `describe`.
pub struct DiscoveryOptions {
    /// Global tool folders, lowest precedence first.
    pub global_dirs: Vec<PathBuf>,
    /// Project tool folders; loaded only when `trusted`.
    pub project_dirs: Vec<PathBuf>,
    /// The workspace is trusted: project folders are loaded.
    pub trusted: bool,
    /// Where `describe` manifests are cached between starts.
    pub cache_file: PathBuf,
    /// The sandbox `describe` runs in (`None`: unconfined).
    pub sandbox: Option<DescribeSandbox>,
}

/// One source's tools, in precedence order (later wins on a collision).
pub struct Discovered {
    /// One entry per executable: its origin label and its tools.
    pub sources: Vec<(ToolOrigin, Vec<Arc<dyn Tool>>)>,
    /// Executables that could not be described, for the user.
    pub problems: Vec<LoadProblem>,
}

/// JS/TS files belong to the plugin host, not to the executable source.
fn is_script_module(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("js" | "mjs" | "cjs" | "ts" | "mts" | "cts" | "tsx" | "jsx" | "json" | "md" | "d.ts")
    )
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

fn executables_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| !is_script_module(p) && is_executable(p))
        .collect();
    files.sort();
    files
}

/// Finds every executable in the tool folders and describes it (from the cache when the file is
/// unchanged); later folders win an id collision.
pub async fn discover(opts: &DiscoveryOptions) -> Discovered {
    let mut problems = Vec::new();
    let mut files = Vec::new();
    for dir in &opts.global_dirs {
        files.extend(executables_in(dir));
    }
    for dir in &opts.project_dirs {
        let found = executables_in(dir);
        if found.is_empty() {
            continue;
        }
        if opts.trusted {
            files.extend(found);
        } else {
            problems.push(LoadProblem {
                source: dir.display().to_string(),
                level: ProblemLevel::Warning,
                message: format!(
                    "skipped {} project tool(s) in {}: this workspace is not trusted to run its own code (run `podcode trust` to allow it)",
                    found.len(),
                    dir.display()
                ),
            });
        }
    }

    let mut cache = ManifestCache::load(opts.cache_file.clone());
    let mut pending = Vec::new();
    let mut described: Vec<Option<Result<Vec<podcode_protocol::ToolSpec>, String>>> = Vec::new();
    for (i, file) in files.iter().enumerate() {
        match cache.get(file) {
            Some(specs) => described.push(Some(Ok(specs))),
            None => {
                described.push(None);
                let file = file.clone();
                let sandbox = opts.sandbox.clone();
                pending.push((
                    i,
                    tokio::spawn(
                        async move { describe_executable_in(&file, sandbox.as_ref()).await },
                    ),
                ));
            }
        }
    }
    for (i, task) in pending {
        let res = task
            .await
            .unwrap_or_else(|e| Err(format!("describe task failed: {e}")));
        if let Ok(specs) = &res {
            cache.put(&files[i], specs.clone());
        }
        described[i] = Some(res);
    }
    cache.save();

    let mut sources = Vec::new();
    for (file, res) in files.iter().zip(described) {
        let name = file.display().to_string();
        match res {
            Some(Ok(specs)) => {
                let tools: Vec<Arc<dyn Tool>> = specs
                    .into_iter()
                    .map(|s| Arc::new(ExecutableTool::new(s, file.clone())) as Arc<dyn Tool>)
                    .collect();
                sources.push((ToolOrigin::new(SourceKind::Executable, name), tools));
            }
            Some(Err(message)) => problems.push(LoadProblem {
                source: name,
                level: ProblemLevel::Error,
                message,
            }),
            None => {}
        }
    }
    Discovered { sources, problems }
}
