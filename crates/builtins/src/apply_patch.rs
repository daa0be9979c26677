//! The `apply_patch` tool: the multi-file Codex patch format, applied all or nothing.
//!
//! Data flow: `parse` turns the text into file operations (no file touched). Every path is
//! resolved and checked (`.git` refused, one `external_directory` ask per folder outside the
//! workspace). The operations then run against an in-memory overlay of the files they touch
//! (each loaded once as UTF-8 and checked against `FileTimes`), with `hunks` placing every
//! update hunk; any failure ends the call before a byte is written. The user gets one `edit`
//! ask with every path and the combined diff; then all files go through one journaled batch
//! (re-checked, journaled, every file staged, then all renamed; a failure leaves every file
//! as it was) and are marked as seen. A move is a delete of the old path and a create of the
//! new one, so reverting restores the original state.

#[path = "apply_patch/hunks.rs"]
mod hunks;
#[path = "apply_patch/parse.rs"]
mod parse;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use podcode_protocol::{ChangeOp, PermissionRequest, ToolResult, ToolSpec};
use podcode_tools::{FileWrite, Tool, ToolContext, ToolError, WriteError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::workspace::{FileTimes, ResolvedPath, Workspace};
use crate::write::{diff_stats, load_text, parse_args, unified_diff, write_failure};
use parse::FileOp;

pub(crate) const APPLY_PATCH_DESCRIPTION: &str = "\
Applies a patch that adds, updates, deletes or moves files in one step. Every hunk is checked \
against the current files first; either the whole patch is applied or nothing is. For \
changes across files or at several places in one; one small change is an `edit`.

Format (paths relative to the session directory):
*** Begin Patch
*** Add File: path        then every line of the new file, each prefixed with +
*** Delete File: path
*** Update File: path
*** Move to: new/path     (optional: renames the updated file)
@@ a line above the change, e.g. the function signature (or just @@)
 context line (starts with a space; give about 3 lines above and below each change)
-removed line
+added line
*** End Patch

Copy context and - lines exactly from the file (without the line numbers read shows); keep \
a file's hunks in file order. If a hunk does not match, nothing changes and the error names \
it: read that file again and fix the hunk.
Example:
*** Begin Patch
*** Update File: src/config.rs
@@ fn default_port() -> u16 {
-    8080
+    3000
*** Add File: docs/port.md
+The default port is 3000.
*** End Patch";

/// Arguments of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ApplyPatchArgs {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`.
    pub patch: String,
}

pub struct ApplyPatchTool {
    spec: ToolSpec,
    times: Arc<FileTimes>,
}

impl ApplyPatchTool {
    pub fn new(times: Arc<FileTimes>) -> Self {
        let spec = ToolSpec::new(
            "apply_patch",
            APPLY_PATCH_DESCRIPTION,
            crate::params_schema::<ApplyPatchArgs>(),
        );
        Self { spec, times }
    }
}

const NOTHING_CHANGED: &str = "No file was changed.";

pub(crate) fn parse_error_text(line: usize, message: &str) -> String {
    format!(
        "the patch could not be parsed: line {line}: {message}. {NOTHING_CHANGED} A patch looks like:\n*** Begin Patch\n*** Update File: path/to/file\n@@ a line above the change\n context line\n-old line\n+new line\n*** End Patch"
    )
}

pub(crate) fn hunk_error_text(
    rel: &str,
    index: usize,
    line: usize,
    context: Option<&str>,
    what: &str,
) -> String {
    let header = context.map(|c| format!(", `@@ {c}`")).unwrap_or_default();
    format!(
        "hunk {index} of {rel} (patch line {line}{header}) did not match the file: {what}\n{NOTHING_CHANGED} Read {rel} again and rewrite this hunk with context and '-' lines copied exactly from the file."
    )
}

/// A file the patch touches: what is on disk, and what the patch makes of it so far.
struct Entry {
    path: ResolvedPath,
    original: Option<String>,
    current: Option<String>,
    moved_from: Option<String>,
    moved_to: Option<String>,
}

/// The overlay the operations run against; entries in the order the patch first names them.
struct Plan<'a> {
    session: &'a str,
    times: &'a FileTimes,
    resolved: HashMap<String, ResolvedPath>,
    entries: Vec<Entry>,
    index: HashMap<PathBuf, usize>,
}

impl Plan<'_> {
    /// The entry for a patch path, loading the file the first time it is named.
    fn entry(&mut self, raw: &str) -> Result<usize, ToolError> {
        let path = self.resolved.get(raw).cloned().ok_or_else(|| {
            ToolError::failed(format!("internal error: {raw} was not resolved before use"))
        })?;
        if let Some(&i) = self.index.get(&path.abs) {
            return Ok(i);
        }
        let original = load_text(&path)?;
        self.times.check_unchanged(self.session, &path.abs)?;
        self.index.insert(path.abs.clone(), self.entries.len());
        let current = original.clone();
        self.entries.push(Entry {
            path,
            original,
            current,
            moved_from: None,
            moved_to: None,
        });
        Ok(self.entries.len() - 1)
    }

    /// Runs one operation against the overlay; returns hunks that matched only loosely.
    fn run(&mut self, op: &FileOp) -> Result<Vec<String>, ToolError> {
        let refuse = |header: &str, line: usize, why: String| {
            ToolError::failed(format!(
                "'*** {header}' (patch line {line}): {why} {NOTHING_CHANGED}"
            ))
        };
        match op {
            FileOp::Add {
                path,
                content,
                line,
            } => {
                let e = self.entry(path)?;
                let rel = self.entries[e].path.pattern.clone();
                if self.entries[e].current.is_some() {
                    let why = format!(
                        "{rel} already exists. Change it with '*** Update File:', or delete it first."
                    );
                    return Err(refuse(&format!("Add File: {path}"), *line, why));
                }
                self.entries[e].current = Some(content.clone());
            }
            FileOp::Delete { path, line } => {
                let e = self.entry(path)?;
                let rel = self.entries[e].path.pattern.clone();
                if self.entries[e].current.take().is_none() {
                    return Err(refuse(
                        &format!("Delete File: {path}"),
                        *line,
                        format!("{rel} does not exist."),
                    ));
                }
            }
            FileOp::Update {
                path,
                move_to,
                hunks,
                line,
            } => {
                let e = self.entry(path)?;
                let rel = self.entries[e].path.pattern.clone();
                let Some(current) = self.entries[e].current.as_deref() else {
                    let why =
                        format!("{rel} does not exist. Create new files with '*** Add File:'.");
                    return Err(refuse(&format!("Update File: {path}"), *line, why));
                };
                let applied = hunks::apply_hunks(current, hunks).map_err(|f| {
                    let hunk = &hunks[f.index - 1];
                    ToolError::failed(hunk_error_text(
                        &rel,
                        f.index,
                        hunk.line,
                        hunk.context.as_deref(),
                        &f.what,
                    ))
                })?;
                let notes = applied
                    .loose
                    .iter()
                    .map(|i| format!("hunk {i} of {rel}"))
                    .collect();
                let target = match move_to {
                    Some(to) => self.entry(to)?,
                    None => e,
                };
                if target != e {
                    let to_rel = self.entries[target].path.pattern.clone();
                    if self.entries[target].current.is_some() {
                        let why = format!(
                            "{to_rel} already exists; move to a new path, or delete it first."
                        );
                        return Err(refuse(
                            &format!("Move to: {}", move_to.as_deref().unwrap_or("")),
                            *line,
                            why,
                        ));
                    }
                    self.entries[e].current = None;
                    self.entries[e].moved_to = Some(to_rel);
                    self.entries[target].moved_from = Some(rel);
                }
                self.entries[target].current = Some(applied.text);
                return Ok(notes);
            }
        }
        Ok(Vec::new())
    }
}

#[async_trait]
impl Tool for ApplyPatchTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let args: ApplyPatchArgs = parse_args(args)?;
        let ops = parse::parse(&args.patch)
            .map_err(|e| ToolError::failed(parse_error_text(e.line, &e.message)))?;

        // Paths first: `.git` refused, one external_directory ask per outside folder.
        let mut resolved = HashMap::new();
        let mut asked = Vec::new();
        for raw in ops.iter().flat_map(op_paths) {
            let path = Workspace::resolve(&ctx, raw);
            Workspace::refuse_git_dir(&path)?;
            let parent = path.abs.parent().map(Path::to_path_buf);
            if !path.inside && !asked.contains(&parent) {
                Workspace::ensure_access(&ctx, &path, false).await?;
                asked.push(parent);
            }
            resolved.insert(raw.to_string(), path);
        }

        let mut plan = Plan {
            session: ctx.session_id(),
            times: &self.times,
            resolved,
            entries: Vec::new(),
            index: HashMap::new(),
        };
        let mut loose = Vec::new();
        for op in &ops {
            loose.extend(plan.run(op)?);
        }
        let changed: Vec<&Entry> = plan
            .entries
            .iter()
            .filter(|e| e.original != e.current)
            .collect();
        if changed.is_empty() {
            return Err(ToolError::failed(format!(
                "the patch applies but changes nothing: every file would keep its current content. {NOTHING_CHANGED} Check whether the change is already there."
            )));
        }

        let diff: String = changed
            .iter()
            .map(|e| {
                unified_diff(
                    &e.path.pattern,
                    e.original.as_deref().unwrap_or(""),
                    e.current.as_deref().unwrap_or(""),
                )
            })
            .collect();
        let patterns: Vec<String> = changed.iter().map(|e| e.path.pattern.clone()).collect();
        ctx.ask(PermissionRequest {
            permission: "edit".into(),
            patterns: patterns.clone(),
            always: patterns.clone(),
            metadata: json!({ "files": patterns, "diff": diff }),
        })
        .await?;
        if ctx.is_aborted() {
            return Err(ToolError::Aborted);
        }

        // One journaled batch: every file staged first, then all renamed; on any failure the
        // files are as they were (see `podcode_tools::apply_journaled`).
        let writes: Vec<FileWrite> = changed
            .iter()
            .map(|e| FileWrite {
                file: e.path.abs.clone(),
                old: e.original.clone(),
                new: e.current.clone(),
                reverts: None,
            })
            .collect();
        let shown = |file: &Path| {
            changed
                .iter()
                .find(|e| e.path.abs == file)
                .map_or_else(|| file.display().to_string(), |e| e.path.pattern.clone())
        };
        ctx.apply_changes(&writes).map_err(|e| {
            let io = matches!(e, WriteError::Io { .. });
            let err = write_failure(e, &shown);
            if io {
                ToolError::failed(format!(
                    "{err} The files the patch had already changed were restored, so nothing was applied."
                ))
            } else {
                err
            }
        })?;
        let mut lines = Vec::new();
        let mut files = Vec::new();
        for e in &changed {
            if e.current.is_some() {
                self.times.mark(ctx.session_id(), &e.path.abs);
            }
            let (add, del) = diff_stats(
                e.original.as_deref().unwrap_or(""),
                e.current.as_deref().unwrap_or(""),
            );
            let op = op_of(e);
            let note = match (&e.moved_from, &e.moved_to) {
                (Some(from), _) if op == ChangeOp::Create => format!(" (moved from {from})"),
                (_, Some(to)) if op == ChangeOp::Delete => format!(" (moved to {to})"),
                _ => String::new(),
            };
            let letter = match op {
                ChangeOp::Create => 'A',
                ChangeOp::Modify => 'M',
                ChangeOp::Delete => 'D',
            };
            lines.push(format!("{letter} {}{note} +{add} -{del}", e.path.pattern));
            files.push(json!({ "filePath": e.path.abs, "relativePath": e.path.pattern, "op": op.as_str(), "additions": add, "deletions": del }));
        }

        let count = changed.len();
        let mut output = format!(
            "Applied the patch: {count} {} changed.\n{}",
            if count == 1 { "file" } else { "files" },
            lines.join("\n")
        );
        if !loose.is_empty() {
            output.push_str(&format!(
                "\nNote: {} matched only when ignoring whitespace; check that the result is what you meant.",
                loose.join(", ")
            ));
        }
        let title = if count == 1 {
            patterns[0].clone()
        } else {
            format!("{count} files")
        };
        Ok(ToolResult::text(output)
            .with_title(title)
            .with_metadata(json!({ "diff": diff, "files": files })))
    }
}

fn op_paths(op: &FileOp) -> Vec<&str> {
    match op {
        FileOp::Add { path, .. } | FileOp::Delete { path, .. } => vec![path.as_str()],
        FileOp::Update { path, move_to, .. } => std::iter::once(path.as_str())
            .chain(move_to.as_deref())
            .collect(),
    }
}

fn op_of(e: &Entry) -> ChangeOp {
    match (&e.original, &e.current) {
        (None, _) => ChangeOp::Create,
        (Some(_), None) => ChangeOp::Delete,
        (Some(_), Some(_)) => ChangeOp::Modify,
    }
}
