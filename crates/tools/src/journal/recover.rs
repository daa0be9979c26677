//! Recovery of writes a crash interrupted. At startup every pending intent batch whose
//! writer is gone is settled so the journal and the disk agree again: when every file of
//! the batch holds its new content the batch is marked done (the crash came after the last
//! rename); otherwise the batch is rolled back: files that already hold their new content
//! get their old content back, and the intents are removed. A file holding neither (someone
//! changed it after the crash) is left alone and reported. Leftover temp files are removed.

use std::path::Path;

use podcode_records::{ChangeJournal, PendingChange};

use super::write::owner_alive;
use crate::fsafe;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnDisk {
    Old,
    New,
    Other,
}

fn on_disk(p: &PendingChange) -> OnDisk {
    let file = Path::new(&p.change.file);
    let holds = |content: &Option<String>| fsafe::holds(file, content.as_deref());
    match (holds(&p.change.new_content), holds(&p.change.old_content)) {
        (Ok(true), _) => OnDisk::New,
        (_, Ok(true)) => OnDisk::Old,
        _ => OnDisk::Other,
    }
}

/// Settles every interrupted write (see the module doc). Returns one line per thing the
/// user should know about: batches completed or rolled back, files left alone, failures.
/// Batches whose writer is still running are not touched.
pub fn recover_interrupted_writes<J: ChangeJournal + ?Sized>(journal: &J) -> Vec<String> {
    let pending = match journal.pending_changes() {
        Ok(p) => p,
        Err(e) => return vec![format!("could not check for interrupted writes: {e}")],
    };
    let mut batches: Vec<(String, Vec<PendingChange>)> = Vec::new();
    for p in pending {
        match batches.iter_mut().find(|(b, _)| *b == p.batch) {
            Some((_, list)) => list.push(p),
            None => batches.push((p.batch.clone(), vec![p])),
        }
    }
    let mut notes = Vec::new();
    for (_, batch) in batches {
        if batch.iter().any(|p| owner_alive(&p.owner)) {
            continue;
        }
        notes.extend(settle(journal, &batch));
    }
    notes
}

fn settle<J: ChangeJournal + ?Sized>(journal: &J, batch: &[PendingChange]) -> Vec<String> {
    for p in batch {
        if let Some(temp) = &p.temp_file {
            fsafe::remove_temp(Path::new(temp));
        }
    }
    let states: Vec<OnDisk> = batch.iter().map(on_disk).collect();
    let files: Vec<&str> = batch.iter().map(|p| p.change.file.as_str()).collect();
    let ids: Vec<String> = batch.iter().map(|p| p.change.id.clone()).collect();
    if states.iter().all(|s| *s == OnDisk::New) {
        return match journal.complete_changes(&ids) {
            Ok(()) => vec![format!(
                "an interrupted write was completed: {} (it reached the disk before Podcode stopped)",
                files.join(", ")
            )],
            Err(e) => vec![format!(
                "could not complete an interrupted write to {}: {e}",
                files.join(", ")
            )],
        };
    }
    let mut notes = Vec::new();
    let mut settled = Vec::new();
    for (p, state) in batch.iter().zip(&states) {
        match state {
            OnDisk::Old => settled.push(p.change.id.clone()),
            OnDisk::New => {
                match fsafe::put(Path::new(&p.change.file), p.change.old_content.as_deref()) {
                    Ok(()) => settled.push(p.change.id.clone()),
                    Err(e) => notes.push(format!(
                        "could not roll back the interrupted write to {}: {e}; it will be tried again on the next start",
                        p.change.file
                    )),
                }
            }
            OnDisk::Other => {
                settled.push(p.change.id.clone());
                notes.push(format!(
                    "{} changed after an interrupted write and was left as it is",
                    p.change.file
                ));
            }
        }
    }
    match journal.discard_intents(&settled) {
        Ok(()) => notes.insert(
            0,
            format!(
                "an interrupted write was rolled back: {} (Podcode stopped before it finished)",
                files.join(", ")
            ),
        ),
        Err(e) => notes.push(format!(
            "could not clear an interrupted write to {}: {e}",
            files.join(", ")
        )),
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use podcode_protocol::{ChangeOp, ChangeRecord};
    use podcode_records::Intent;
    use podcode_store::Store;

    fn intent(file: &Path, old: Option<&str>, new: Option<&str>) -> Intent {
        Intent {
            change: ChangeRecord {
                file: file.to_string_lossy().into_owned(),
                op: ChangeOp::Modify,
                old_content: old.map(str::to_string),
                new_content: new.map(str::to_string),
            },
            reverts: None,
            temp_file: Some(fsafe::temp_path_for(file).to_string_lossy().into_owned()),
        }
    }

    #[test]
    fn a_half_renamed_batch_is_rolled_back_and_a_fully_renamed_one_completed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db/p.db")).unwrap();
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        // Batch 1 crashed between its two renames: a is new, b still old, plus a stray temp.
        std::fs::write(&a, "a1").unwrap();
        std::fs::write(&b, "b0").unwrap();
        let half = [
            intent(&a, Some("a0"), Some("a1")),
            intent(&b, Some("b0"), Some("b1")),
        ];
        std::fs::write(half[1].temp_file.as_ref().unwrap(), "b1").unwrap();
        store
            .begin_changes("s", Some("k1"), &half, "0:dead")
            .unwrap();
        // Batch 2 crashed after its rename: c (created) holds its new text.
        std::fs::write(&c, "c1").unwrap();
        store
            .begin_changes("s", Some("k2"), &[intent(&c, None, Some("c1"))], "0:dead")
            .unwrap();
        // Batch 3 belongs to a live writer (this process) and is left alone.
        store
            .begin_changes(
                "s",
                Some("k3"),
                &[intent(&a, Some("a0"), Some("x"))],
                &crate::journal::write::owner(),
            )
            .unwrap();

        let notes = recover_interrupted_writes(&store);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].starts_with("an interrupted write was rolled back: "),
            "{notes:?}"
        );
        assert!(
            notes[1].starts_with("an interrupted write was completed: "),
            "{notes:?}"
        );
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "a0");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "b0");
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "c1");
        assert!(!Path::new(half[1].temp_file.as_ref().unwrap()).exists());
        let done = store.changes(None, None).unwrap();
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].call_id.as_deref(), Some("k2"));
        let pending = store.pending_changes().unwrap();
        assert_eq!(pending.len(), 1, "the live writer's batch stays");
        assert_eq!(pending[0].change.call_id.as_deref(), Some("k3"));
    }
}
