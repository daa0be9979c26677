//! Paths as the built-ins see them: every path a model gives is resolved against the
//! session directory; anything that ends up outside the workspace (through `..`, an
//! absolute path or a symlink) needs the `external_directory` permission, except the spill
//! folder, which `read` may always open. `FileTimes` remembers when the model last read each
//! file in a session, so a write to a file that changed on disk since is refused.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use podcode_protocol::PermissionRequest;
use podcode_tools::{ToolContext, ToolError};
use serde_json::json;

/// A model-supplied path after resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// Absolute, lexically normalised (symlinks in the existing prefix resolved).
    pub abs: PathBuf,
    /// The path as permission patterns see it: relative to the session directory when
    /// inside the workspace, absolute otherwise.
    pub pattern: String,
    /// Whether `abs` lies inside the workspace.
    pub inside: bool,
}

/// Path resolution for the built-in tools: relative to the session directory, `..` and symlinks in
/// the existing prefix resolved, outside-workspace paths marked.
pub struct Workspace;

impl Workspace {
    /// Resolves `raw` (absolute or relative to the session directory).
    pub fn resolve(ctx: &ToolContext, raw: &str) -> ResolvedPath {
        let dir = ctx.directory();
        let joined = if Path::new(raw).is_absolute() {
            PathBuf::from(raw)
        } else {
            dir.join(raw)
        };
        let abs = canonical_prefix(&normalize(&joined));
        // Not `main_cwd`: in a worktree session that is the user's checkout, which only
        // `sync_to_main` writes (elsewhere it equals the session directory).
        let roots = [canonical_prefix(dir), canonical_prefix(ctx.worktree())];
        let inside = roots
            .iter()
            .any(|r| !r.as_os_str().is_empty() && abs.starts_with(r));
        let base = canonical_prefix(dir);
        let pattern = match abs.strip_prefix(&base) {
            Ok(rel) if inside && !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
            _ => abs.to_string_lossy().into_owned(),
        };
        ResolvedPath {
            abs,
            pattern,
            inside,
        }
    }

    /// Asks `external_directory` (pattern: the parent folder with `/*`) for paths outside
    /// the workspace. `allow_spill` lets `read` open the spill folder without a prompt.
    pub async fn ensure_access(
        ctx: &ToolContext,
        path: &ResolvedPath,
        allow_spill: bool,
    ) -> Result<(), ToolError> {
        if path.inside {
            return Ok(());
        }
        if allow_spill && path.abs.starts_with(canonical_prefix(ctx.spill_dir())) {
            return Ok(());
        }
        let parent = path
            .abs
            .parent()
            .unwrap_or(Path::new("/"))
            .to_string_lossy()
            .into_owned();
        let pattern = format!("{}/*", parent.trim_end_matches('/'));
        ctx.ask(PermissionRequest {
            permission: "external_directory".into(),
            patterns: vec![pattern.clone()],
            always: vec![pattern],
            metadata: json!({ "path": path.abs }),
        })
        .await
    }

    /// Writing inside a `.git` folder is never allowed: it corrupts repositories.
    pub fn refuse_git_dir(path: &ResolvedPath) -> Result<(), ToolError> {
        if path.abs.components().any(|c| c.as_os_str() == ".git") {
            return Err(ToolError::failed(format!(
                "refusing to write inside a .git directory ({}). Use git commands through bash instead.",
                path.abs.display()
            )));
        }
        Ok(())
    }
}

/// Removes `.` and folds `..` without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Canonicalises the longest existing prefix (so symlinks that leave the workspace are
/// seen for what they are) and appends the rest unchanged.
fn canonical_prefix(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = existing.canonicalize() {
            let mut out = c;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (
            existing.file_name().map(|f| f.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// The stale-read error: the file changed since the model read it (or since the diff the
/// user approved was made).
pub(crate) fn stale_text(path: &Path) -> String {
    format!(
        "{} was modified on disk since you last read it. Read it again with the read tool, then redo your change.",
        path.display()
    )
}

/// When the model last read each file, per session: `(session, path) → mtime seen`.
#[derive(Default)]
pub struct FileTimes {
    seen: Mutex<HashMap<(String, PathBuf), SystemTime>>,
}

impl FileTimes {
    /// Call after the model read (or wrote) `path` in `session`.
    pub fn mark(&self, session: &str, path: &Path) {
        if let Ok(mtime) = std::fs::metadata(path).and_then(|m| m.modified())
            && let Ok(mut seen) = self.seen.lock()
        {
            seen.insert((session.to_string(), path.to_path_buf()), mtime);
        }
    }

    /// Refuses when the file was read in this session and has changed on disk since.
    /// Files the model never read are not checked.
    pub fn check_unchanged(&self, session: &str, path: &Path) -> Result<(), ToolError> {
        let Ok(seen) = self.seen.lock() else {
            return Ok(());
        };
        let Some(at) = seen.get(&(session.to_string(), path.to_path_buf())) else {
            return Ok(());
        };
        let now = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        if now.is_some_and(|n| n != *at) {
            return Err(ToolError::failed(stale_text(path)));
        }
        Ok(())
    }
}
