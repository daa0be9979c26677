//! Reverting journaled changes: undo one change, every change of a tool call, everything
//! since a message, or every change of a session. Files are checked before any is touched,
//! so a revert either refuses (with a diff of what changed since Podcode wrote the file) or
//! restores every file; each restore is itself journaled as a change whose `reverts` names
//! the change it undid, which makes a revert of a revert (a redo) work the same way. Files
//! are written journal-first and atomically, like the tools' own writes.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use std::os::unix::fs::PermissionsExt;

use podcode_protocol::{FileContent, RecordedChange, display_text};
use podcode_records::{ChangeJournal, RecordError};
use similar::TextDiff;

use super::write::{FileWrite, WriteError, apply_journaled};

/// What to revert (the protocol's type, so front ends name targets the same way).
pub use podcode_protocol::RevertTarget;

/// How a revert runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RevertOptions {
    /// Overwrite files that changed since Podcode wrote them instead of refusing.
    pub force: bool,
    /// The session the revert records are journaled under.
    pub session_id: String,
}

/// What a revert did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RevertOutcome {
    /// The new revert records, in the order they were applied (newest change first).
    pub reverted: Vec<RecordedChange>,
    /// Ids of selected changes that were already reverted and were left alone.
    pub skipped: Vec<String>,
}

/// Why a revert did not happen, for the user.
#[derive(Debug, thiserror::Error)]
pub enum RevertError {
    /// The target id names nothing in the journal.
    #[error("no change, call, message or session with id {0}")]
    NotFound(String),
    #[error(
        "revert refused: {file} changed since Podcode wrote it (use --force to overwrite)\n{diff}"
    )]
    /// A file changed since Podcode wrote it; nothing was reverted.
    Conflict {
        /// The file.
        file: String,
        /// How it differs from what Podcode wrote.
        diff: String,
    },
    /// The journal could not be read or written.
    #[error("revert failed: {0}")]
    Journal(#[from] RecordError),
    /// A file could not be restored.
    #[error("revert failed on {file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The filesystem error.
        #[source]
        source: std::io::Error,
    },
}

/// Reverts `target`: restores each selected change's old content, newest change first.
pub fn revert<J: ChangeJournal + ?Sized>(
    journal: &J,
    target: &RevertTarget,
    opts: &RevertOptions,
) -> Result<RevertOutcome, RevertError> {
    let not_found = |id: &String| RevertError::NotFound(id.clone());
    let (candidates, whole) = match target {
        RevertTarget::Change(id) => (
            vec![journal.change(id)?.ok_or_else(|| not_found(id))?],
            false,
        ),
        RevertTarget::Call(id) => (
            journal.changes_of_call(id)?.ok_or_else(|| not_found(id))?,
            true,
        ),
        RevertTarget::Session(id) => (
            journal.changes_of_tree(id)?.ok_or_else(|| not_found(id))?,
            true,
        ),
        RevertTarget::SinceMessage(id) => (
            journal
                .changes_since_message(id)?
                .ok_or_else(|| not_found(id))?,
            true,
        ),
    };

    let mut outcome = RevertOutcome::default();
    let mut selected = Vec::new();
    // Newest first: the order changes are undone in.
    for change in candidates.into_iter().rev() {
        if whole && change.reverts.is_some() {
            continue;
        }
        if is_reverted(journal, &change.id)? {
            outcome.skipped.push(change.id);
        } else {
            selected.push(change);
        }
    }
    outcome.skipped.reverse();

    if !opts.force {
        check_unchanged(&selected)?;
    }

    for change in &selected {
        let on_disk = journal_current(change)?;
        // Journal first, then an atomic replace (see `journaled`): a crash mid-revert leaves
        // every file old or new and the journal in step with it after recovery.
        let write = FileWrite {
            file: real_parent(&change.file),
            old: on_disk,
            new: change.old_content.clone(),
            reverts: Some(change.id.clone()),
        };
        let applied = apply_journaled(journal, &opts.session_id, None, &[write])
            .map_err(|e| write_error(&change.file, e))?;
        if let Some(e) = applied.pending_error {
            return Err(RevertError::Journal(e));
        }
        outcome.reverted.extend(applied.records);
    }
    Ok(outcome)
}

/// Lines added and deleted between two texts (the `+`/`-` counts of their diff).
pub fn diff_stats(old: &str, new: &str) -> (usize, usize) {
    similar::TextDiff::from_lines(old, new)
        .iter_all_changes()
        .fold((0, 0), |(a, d), c| match c.tag() {
            similar::ChangeTag::Insert => (a + 1, d),
            similar::ChangeTag::Delete => (a, d + 1),
            similar::ChangeTag::Equal => (a, d),
        })
}

/// Unified diff with headers `a/<file>` and `b/<file>` (an absolute path is shown as it
/// is, not as `a//…`) and 3 lines of context; empty when the texts are equal.
pub fn unified_diff(file: &str, old: &str, new: &str) -> String {
    if file.starts_with('/') {
        return labeled_diff(file, file, old, new);
    }
    labeled_diff(&format!("a/{file}"), &format!("b/{file}"), old, new)
}

fn labeled_diff(old_label: &str, new_label: &str, old: &str, new: &str) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_label, new_label)
        .to_string()
}

/// A change is in effect reverted when the chain of reverts hanging off it (each step the
/// newest revert of the previous one) has odd length: reverted, or reverted-redone-reverted.
pub fn is_reverted<J: ChangeJournal + ?Sized>(journal: &J, id: &str) -> Result<bool, RecordError> {
    let mut seen = HashSet::new();
    let mut current = id.to_string();
    while let Some(next) = journal.reverted_by(&current)? {
        if !seen.insert(next.clone()) {
            break;
        }
        current = next;
    }
    Ok(seen.len() % 2 == 1)
}

/// Refuses unless every file still holds what its newest selected change wrote.
fn check_unchanged(newest_first: &[RecordedChange]) -> Result<(), RevertError> {
    let mut checked = HashSet::new();
    for change in newest_first {
        if !checked.insert(change.file.as_str()) {
            continue;
        }
        let holds = crate::fsafe::holds(&real_parent(&change.file), change.new_content.as_deref())
            .unwrap_or(false);
        if !holds {
            let on_disk = journal_current(change)?;
            return Err(RevertError::Conflict {
                file: change.file.clone(),
                diff: labeled_diff(
                    &format!("{} (as Podcode wrote it)", change.file),
                    &format!("{} (on disk now)", change.file),
                    &display_text(change.new_content.as_deref()),
                    &display_text(on_disk.as_deref()),
                ),
            });
        }
    }
    Ok(())
}

/// The changed file as it is now, as journal content (`None` when it does not exist):
/// plain text, or an envelope with its bytes and permission bits when the file is binary
/// or the change recorded permission bits (so a revert of the revert restores them too).
fn journal_current(change: &RecordedChange) -> Result<Option<String>, RevertError> {
    let file = change.file.as_str();
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(io_error(file, source)),
    };
    let has_mode = |c: &Option<String>| {
        c.as_deref()
            .is_some_and(|c| FileContent::decode(c).mode.is_some())
    };
    let mode = if has_mode(&change.old_content) || has_mode(&change.new_content) {
        let meta = std::fs::metadata(file).map_err(|e| io_error(file, e))?;
        Some(meta.permissions().mode() & 0o7777)
    } else {
        None
    };
    Ok(Some(FileContent::encode(&bytes, mode)))
}

/// `file` with its folder's symbolic links resolved: journal rows hold the path as it was
/// written, and a revert is not racing an approval, so links the user made are followed.
fn real_parent(file: &str) -> PathBuf {
    let path = Path::new(file);
    match (path.parent().map(Path::canonicalize), path.file_name()) {
        (Some(Ok(parent)), Some(name)) => parent.join(name),
        _ => path.to_path_buf(),
    }
}

fn write_error(file: &str, e: WriteError) -> RevertError {
    match e {
        WriteError::Journal { source, .. } => RevertError::Journal(source),
        WriteError::Io { source, .. } => io_error(file, source),
        other => io_error(file, std::io::Error::other(other.to_string())),
    }
}

/// Puts `content` on disk (creating parent dirs), or removes the file for `None`.
#[cfg(test)]
fn restore(file: &str, content: Option<&str>) -> Result<(), RevertError> {
    match content {
        None => match std::fs::remove_file(file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_error(file, e)),
            _ => Ok(()),
        },
        Some(text) => {
            if let Some(parent) = Path::new(file).parent() {
                std::fs::create_dir_all(parent).map_err(|e| io_error(file, e))?;
            }
            std::fs::write(file, text).map_err(|e| io_error(file, e))
        }
    }
}

fn io_error(file: &str, source: std::io::Error) -> RevertError {
    RevertError::Io {
        file: file.to_string(),
        source,
    }
}

#[cfg(test)]
mod tests;
