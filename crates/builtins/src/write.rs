//! The `write` tool, and the file plumbing `write`, `edit` and `apply_patch` share.
//!
//! Data flow of a write: the model's `filePath` is resolved against the session directory
//! (`Workspace::resolve`), paths outside the workspace ask `external_directory`, `.git` is
//! refused, the current text is loaded (`load_text`: missing, directory, too big, not UTF-8
//! and OS errors each get a model-facing message), `FileTimes` refuses a file that changed
//! since the model read it, the user is asked for `edit` with the exact diff, and only then
//! is the file committed (`commit`): re-read to be sure it still holds what the diff was
//! made from, journaled with old and new text, and replaced atomically (temp file, fsync,
//! rename; no symbolic link followed), then marked as seen.

use std::io::ErrorKind;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use podcode_protocol::{PermissionRequest, ToolResult, ToolSpec};
use podcode_tools::{FileWrite, Tool, ToolContext, ToolError, WriteError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::workspace::{FileTimes, ResolvedPath, Workspace, stale_text};

/// Unified diff with `a/<file>` and `b/<file>` headers and 3 lines of context.
pub(crate) use podcode_tools::unified_diff;

/// Files larger than this are not loaded for editing (and their old text not journaled).
pub(crate) const MAX_EDIT_BYTES: u64 = 16 * 1024 * 1024;

pub(crate) const WRITE_DESCRIPTION: &str = "\
Writes a file: creates it (and missing parent folders) or replaces its whole content. For a \
new file or a rewrite; a small change is an `edit`, changes across files an `apply_patch`.
- `content` is the complete new text; nothing of the old file is kept.
- If you read the file and it changed on disk since, the write is refused: read it again. \
Writing inside `.git/` is refused.
- The user may be asked to approve the change; they see the diff.
Example: {\"filePath\": \"src/util/math.rs\", \"content\": \"pub fn add(a: i32, b: i32) -> i32 {\\n    a + b\\n}\\n\"}";

/// Arguments of `write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WriteArgs {
    /// The file to write, relative to the session directory or absolute.
    pub file_path: String,
    /// The complete content of the file after the write.
    pub content: String,
}

pub struct WriteTool {
    spec: ToolSpec,
    times: Arc<FileTimes>,
}

impl WriteTool {
    pub fn new(times: Arc<FileTimes>) -> Self {
        let spec = ToolSpec::new(
            "write",
            WRITE_DESCRIPTION,
            crate::params_schema::<WriteArgs>(),
        );
        Self { spec, times }
    }
}

#[async_trait]
impl Tool for WriteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let args: WriteArgs = parse_args(args)?;
        let path = prepare(&ctx, &args.file_path).await?;
        let old = load_text(&path)?;
        self.times.check_unchanged(ctx.session_id(), &path.abs)?;
        let rel = path.pattern.clone();
        let lines = count_lines(&args.content);
        if old.as_deref() == Some(args.content.as_str()) {
            self.times.mark(ctx.session_id(), &path.abs);
            return Ok(ToolResult::text(format!(
                "{rel} already has exactly this content ({lines}); nothing changed."
            ))
            .with_title(rel));
        }
        let diff = unified_diff(&rel, old.as_deref().unwrap_or(""), &args.content);
        ask_edit(&ctx, &path, &diff).await?;
        commit(&ctx, &path, old.clone(), Some(args.content.clone()))?;
        self.times.mark(ctx.session_id(), &path.abs);
        let created = old.is_none();
        let (additions, deletions) = diff_stats(old.as_deref().unwrap_or(""), &args.content);
        let output = match &old {
            None => format!("Wrote {lines} to {rel} (new file)."),
            Some(before) => format!(
                "Wrote {lines} to {rel} (replaced the previous {}).",
                count_lines(before)
            ),
        };
        Ok(ToolResult::text(output)
            .with_title(rel)
            .with_metadata(json!({
                "filePath": path.abs,
                "created": created,
                "diff": diff,
                "additions": additions,
                "deletions": deletions,
            })))
    }
}

/// Deserializes validated arguments; a failure here is a bug in the schema, not the call.
pub(crate) fn parse_args<T: serde::de::DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args)
        .map_err(|e| ToolError::failed(format!("the arguments could not be read: {e}")))
}

/// Resolves a model path for writing: `.git` refused, outside paths ask `external_directory`.
pub(crate) async fn prepare(ctx: &ToolContext, raw: &str) -> Result<ResolvedPath, ToolError> {
    if raw.trim().is_empty() {
        return Err(ToolError::failed(
            "filePath is empty. Give the path of the file, relative to the session directory.",
        ));
    }
    let path = Workspace::resolve(ctx, raw);
    Workspace::refuse_git_dir(&path)?;
    Workspace::ensure_access(ctx, &path, false).await?;
    Ok(path)
}

/// The file's text: `None` when it does not exist. Directories, files over
/// `MAX_EDIT_BYTES`, non-UTF-8 content and OS errors are refused with a message for the model.
pub(crate) fn load_text(path: &ResolvedPath) -> Result<Option<String>, ToolError> {
    let shown = &path.pattern;
    let meta = match std::fs::metadata(&path.abs) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_failure("read", shown, &e)),
    };
    if meta.is_dir() {
        return Err(ToolError::failed(format!(
            "{shown} is a directory, not a file. Give the path of a file inside it."
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::failed(format!(
            "{shown} is not a regular file (a device, socket or pipe), so it cannot be edited."
        )));
    }
    if meta.len() > MAX_EDIT_BYTES {
        return Err(ToolError::failed(format!(
            "{shown} is too large to edit ({} MiB; the limit is {} MiB). Change it with a command through bash instead (for example sed).",
            meta.len() / (1024 * 1024),
            MAX_EDIT_BYTES / (1024 * 1024)
        )));
    }
    let bytes = std::fs::read(&path.abs).map_err(|e| io_failure("read", shown, &e))?;
    String::from_utf8(bytes).map(Some).map_err(|_| {
        ToolError::failed(format!(
            "{shown} is not UTF-8 text (a binary file or another encoding), so it cannot be edited safely as text. Leave it alone, or change it with a command through bash."
        ))
    })
}

/// "1 line", "3 lines".
pub(crate) fn count_lines(text: &str) -> String {
    match text.lines().count() {
        1 => "1 line".to_string(),
        n => format!("{n} lines"),
    }
}

/// A model-facing text for an OS error while doing `verb` to `path`.
pub(crate) fn io_failure(verb: &str, path: &str, e: &std::io::Error) -> ToolError {
    let why = match e.kind() {
        ErrorKind::PermissionDenied => {
            "permission denied by the operating system. The file's permissions do not allow it; do not retry, ask the user if the change is needed".to_string()
        }
        ErrorKind::NotFound => "it does not exist".to_string(),
        _ => e.to_string(),
    };
    ToolError::failed(format!("could not {verb} {path}: {why}."))
}

/// Asks `edit` for one file, showing the diff that will be written.
pub(crate) async fn ask_edit(
    ctx: &ToolContext,
    path: &ResolvedPath,
    diff: &str,
) -> Result<(), ToolError> {
    ctx.ask(PermissionRequest {
        permission: "edit".into(),
        patterns: vec![path.pattern.clone()],
        always: vec![path.pattern.clone()],
        metadata: json!({ "filePath": path.abs, "diff": diff }),
    })
    .await
}

/// Writes one file the safe way (`ToolContext::apply_changes`): the file must still hold
/// `old` (else the stale-read error), the change is journaled before the file is touched,
/// and the new text replaces the file atomically without following symbolic links.
pub(crate) fn commit(
    ctx: &ToolContext,
    path: &ResolvedPath,
    old: Option<String>,
    new: Option<String>,
) -> Result<(), ToolError> {
    let write = FileWrite {
        file: path.abs.clone(),
        old,
        new,
        reverts: None,
    };
    ctx.apply_changes(&[write]).map(|_| ()).map_err(|e| {
        let io = matches!(&e, WriteError::Io { unrestored, .. } if unrestored.is_empty());
        let err = write_failure(e, &|_| path.pattern.clone());
        if io {
            ToolError::failed(format!("{err} The file was not changed."))
        } else {
            err
        }
    })
}

/// The model-facing text for a failed journaled write; `shown` maps an absolute path to
/// the name the model used for it.
pub(crate) fn write_failure(e: WriteError, shown: &dyn Fn(&Path) -> String) -> ToolError {
    match e {
        WriteError::Changed { file } => ToolError::failed(stale_text(&file)),
        WriteError::Symlink { file } => ToolError::failed(format!(
            "{} was not written: a folder on its path (or the file itself) became a symbolic link after the change was approved, so the write could land somewhere else. Nothing was changed. Check the path with list, then try again.",
            shown(&file)
        )),
        WriteError::Journal { file, source } => ToolError::failed(format!(
            "could not journal the change to {} ({source}), so the file was not touched. Podcode's data folder may be full or read-only; tell the user.",
            shown(&file)
        )),
        WriteError::Io {
            file,
            source,
            unrestored,
        } => {
            let mut message = io_failure("write", &shown(&file), &source).to_string();
            for (f, why) in unrestored {
                message.push_str(&format!(" Restoring {} failed too: {why}.", shown(&f)));
            }
            ToolError::failed(message)
        }
    }
}

pub(crate) use podcode_tools::diff_stats;

/// Cuts a diff shown to the model to `max` lines, saying how much was left out.
pub(crate) fn clip_diff(diff: &str, max: usize) -> String {
    let total = diff.lines().count();
    if total <= max {
        return diff.to_string();
    }
    let mut out: String = diff.lines().take(max).flat_map(|l| [l, "\n"]).collect();
    out.push_str(&format!(
        "[diff cut: {}]\n",
        podcode_protocol::more_lines(total - max)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_errors_and_long_diffs_read_well() {
        let denied = std::io::Error::from(ErrorKind::PermissionDenied);
        assert_eq!(
            io_failure("write", "src/a.rs", &denied).to_string(),
            "could not write src/a.rs: permission denied by the operating system. The file's permissions do not allow it; do not retry, ask the user if the change is needed."
        );
        let diff: String = (0..5).map(|i| format!("+{i}\n")).collect();
        assert_eq!(clip_diff(&diff, 2), "+0\n+1\n[diff cut: 3 more lines]\n");
        assert_eq!(
            clip_diff(&diff, 4),
            "+0\n+1\n+2\n+3\n[diff cut: 1 more line]\n"
        );
        assert_eq!(clip_diff(&diff, 5), diff);
        assert_eq!(
            (count_lines("a\nb\n"), count_lines("a"), count_lines("")),
            ("2 lines".into(), "1 line".into(), "0 lines".into())
        );
    }
}
