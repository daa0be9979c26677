//! Journal-first file writes (through `ChangeJournal`), shared by the built-in editing tools and `revert`.
//!
//! `apply_journaled` takes every file one call changes and: (1) re-reads each file without
//! following links and refuses when it no longer holds the text the caller based the change
//! on (an editor save while the prompt was open); (2) journals all of them as one pending
//! batch, synced to disk, so the old content is safe before anything is touched; (3) stages
//! each new content as a synced temp file beside its target; (4) renames them all into
//! place; (5) marks the batch done. A failure in (2) or (3) leaves every file as it was; a
//! failure in (4) puts back the files already renamed. A crash anywhere leaves a pending
//! batch that `recover_interrupted_writes` completes or rolls back on the next start.

use std::io;
use std::path::PathBuf;

use podcode_protocol::{ChangeOp, ChangeRecord, RecordedChange};
use podcode_records::{ChangeJournal, Intent, RecordError};

use crate::fsafe::{self, Staged};

/// One file to change: what it must hold now (`old`) and what it will hold (`new`; `None`
/// deletes it), as journal content (plain text, or a `FileContent` envelope for binary
/// bytes and permission bits). `file` is absolute; no symbolic link on its path is followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWrite {
    /// The file to change (absolute).
    pub file: PathBuf,
    /// What it must hold now; `None`: it must not exist.
    pub old: Option<String>,
    /// What it will hold; `None` deletes it.
    pub new: Option<String>,
    /// The change this write undoes (for a revert).
    pub reverts: Option<String>,
}

/// Why a journaled write did not happen (or only partly), for the model.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The file no longer holds `old`: someone changed it since it was read.
    #[error("{} changed on disk since it was read", file.display())]
    Changed {
        /// The file.
        file: PathBuf,
    },
    /// A folder on the path, or the file itself, is now a symbolic link.
    #[error("{} is reached through a symbolic link now; the write was stopped", file.display())]
    Symlink {
        /// The file.
        file: PathBuf,
    },
    /// The journal could not be written; no file was touched.
    #[error("could not journal the change to {}: {source}", file.display())]
    Journal {
        /// The file whose change could not be journaled.
        file: PathBuf,
        /// The journal's error.
        #[source]
        source: RecordError,
    },
    /// Staging or renaming failed; the files are as they were, except where `unrestored`
    /// names a file whose old content could not be put back (its intent stays pending for
    /// recovery on the next start).
    #[error("could not write {}: {source}", file.display())]
    Io {
        /// The file that failed.
        file: PathBuf,
        /// The filesystem error.
        #[source]
        source: io::Error,
        /// Files whose old content could not be put back, with the reason each.
        unrestored: Vec<(PathBuf, String)>,
    },
}

/// What a successful batch journaled. `pending_error` is set when the files are in place
/// but marking the batch done failed: the next start completes it.
#[derive(Debug)]
pub struct Applied {
    /// The journaled changes, in the order given.
    pub records: Vec<RecordedChange>,
    /// Set when the batch could not be marked done (the next start completes it).
    pub pending_error: Option<RecordError>,
}

fn op_of(old: &Option<String>, new: &Option<String>) -> ChangeOp {
    match (old, new) {
        (None, _) => ChangeOp::Create,
        (Some(_), None) => ChangeOp::Delete,
        (Some(_), Some(_)) => ChangeOp::Modify,
    }
}

fn io_error(file: &std::path::Path, source: io::Error) -> WriteError {
    if fsafe::is_symlink_error(&source) {
        WriteError::Symlink {
            file: file.to_path_buf(),
        }
    } else {
        WriteError::Io {
            file: file.to_path_buf(),
            source,
            unrestored: Vec::new(),
        }
    }
}

/// Applies `writes` all or nothing, journaled under `session`/`call` (see the module doc).
pub fn apply_journaled<J: ChangeJournal + ?Sized>(
    journal: &J,
    session: &str,
    call: Option<&str>,
    writes: &[FileWrite],
) -> Result<Applied, WriteError> {
    for w in writes {
        let holds = fsafe::holds(&w.file, w.old.as_deref()).map_err(|e| io_error(&w.file, e))?;
        if !holds {
            return Err(WriteError::Changed {
                file: w.file.clone(),
            });
        }
    }

    let temps: Vec<Option<PathBuf>> = writes
        .iter()
        .map(|w| w.new.as_ref().map(|_| fsafe::temp_path_for(&w.file)))
        .collect();
    let intents: Vec<Intent> = writes
        .iter()
        .zip(&temps)
        .map(|(w, temp)| Intent {
            change: ChangeRecord {
                file: w.file.to_string_lossy().into_owned(),
                op: op_of(&w.old, &w.new),
                old_content: w.old.clone(),
                new_content: w.new.clone(),
            },
            reverts: w.reverts.clone(),
            temp_file: temp.as_ref().map(|t| t.to_string_lossy().into_owned()),
        })
        .collect();
    let records = journal
        .begin_changes(session, call, &intents, &owner())
        .map_err(|source| WriteError::Journal {
            file: writes.first().map(|w| w.file.clone()).unwrap_or_default(),
            source,
        })?;
    let ids: Vec<String> = records.iter().map(|r| r.id.clone()).collect();

    let mut created = Vec::new();
    let mut staged: Vec<Staged> = Vec::with_capacity(writes.len());
    for (w, temp) in writes.iter().zip(&temps) {
        let temp = temp.clone().unwrap_or_default();
        let content = fsafe::decoded(w.new.as_deref());
        match fsafe::stage(
            &w.file,
            &temp,
            content.as_ref().map(|c| c.bytes.as_slice()),
            content.as_ref().and_then(|c| c.mode),
            &mut created,
        ) {
            Ok(s) => staged.push(s),
            Err(e) => {
                staged.iter().for_each(Staged::discard);
                fsafe::remove_created(&created);
                let _ = journal.discard_intents(&ids);
                return Err(io_error(&w.file, e));
            }
        }
    }

    for (i, s) in staged.iter().enumerate() {
        if let Err(e) = s.commit() {
            staged[i..].iter().for_each(Staged::discard);
            let mut unrestored = Vec::new();
            for w in writes[..i].iter().rev() {
                if let Err(x) = fsafe::put(&w.file, w.old.as_deref()) {
                    unrestored.push((w.file.clone(), x.to_string()));
                }
            }
            fsafe::remove_created(&created);
            if unrestored.is_empty() {
                let _ = journal.discard_intents(&ids);
            }
            return Err(match io_error(&writes[i].file, e) {
                WriteError::Io { file, source, .. } => WriteError::Io {
                    file,
                    source,
                    unrestored,
                },
                other => other,
            });
        }
    }

    let pending_error = journal.complete_changes(&ids).err();
    Ok(Applied {
        records,
        pending_error,
    })
}

/// This process as an intent's owner: its pid and, on Linux, its start time (so a reused
/// pid is not mistaken for the writer).
pub(crate) fn owner() -> String {
    let pid = std::process::id();
    let start = proc_stat(pid).map(|(_, start)| start).unwrap_or_default();
    format!("{pid}:{start}")
}

/// State letter and start time of `pid` from `/proc` (Linux).
fn proc_stat(pid: u32) -> Option<(String, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields 3 and 22, counted after the command name, which is in parentheses and may
    // hold spaces.
    let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = rest.next()?.to_string();
    let start = rest.nth(18)?.to_string();
    Some((state, start))
}

/// Whether the process that wrote an intent is still running (and so still writing).
pub(crate) fn owner_alive(owner: &str) -> bool {
    let Some((pid, start)) = owner.split_once(':') else {
        return false;
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    // Pid 0 would ask about our own process group, not a process.
    let raw = match libc::pid_t::try_from(pid) {
        Ok(p) if p > 0 => p,
        _ => return false,
    };
    // SAFETY: signal 0 only checks that the process exists.
    let exists = unsafe { libc::kill(raw, 0) } == 0
        || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    if !exists {
        return false;
    }
    match proc_stat(pid) {
        // A killed writer nobody has reaped yet is a zombie: it writes nothing any more.
        Some((state, _)) if state == "Z" || state == "X" => false,
        Some((_, now)) if !start.is_empty() => now == start,
        _ => true,
    }
}
