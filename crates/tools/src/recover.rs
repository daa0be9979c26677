//! Recovery of writes a crash interrupted. At startup every pending intent batch whose
//! writer is gone is settled so the journal and the disk agree again: when every file of
//! the batch holds its new content the batch is marked done (the crash came after the last
//! rename); otherwise the batch is rolled back: files that already hold their new content
//! get their old content back, and the intents are removed. A file holding neither (someone
//! changed it after the crash) is left alone and reported. Leftover temp files are removed.

use std::path::Path;

use podcode_store::{PendingChange, Store};

use crate::fsafe;
use crate::journaled::owner_alive;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnDisk {
    Old,
    New,
    Other,
}

fn on_disk(p: &PendingChange) -> OnDisk {
    let now = match fsafe::read_nofollow(Path::new(&p.change.file)) {
        Ok(now) => now,
        Err(_) => return OnDisk::Other,
    };
    let now = now.as_deref();
    if now == p.change.new_content.as_deref().map(str::as_bytes) {
        OnDisk::New
    } else if now == p.change.old_content.as_deref().map(str::as_bytes) {
        OnDisk::Old
    } else {
        OnDisk::Other
    }
}

/// Settles every interrupted write (see the module doc). Returns one line per thing the
/// user should know about: batches completed or rolled back, files left alone, failures.
/// Batches whose writer is still running are not touched.
pub fn recover_interrupted_writes(store: &Store) -> Vec<String> {
    let pending = match store.pending_changes() {
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
        notes.extend(settle(store, &batch));
    }
    notes
}

fn settle(store: &Store, batch: &[PendingChange]) -> Vec<String> {
    for p in batch {
        if let Some(temp) = &p.temp_file {
            fsafe::remove_temp(Path::new(temp));
        }
    }
    let states: Vec<OnDisk> = batch.iter().map(on_disk).collect();
    let files: Vec<&str> = batch.iter().map(|p| p.change.file.as_str()).collect();
    let ids: Vec<String> = batch.iter().map(|p| p.change.id.clone()).collect();
    if states.iter().all(|s| *s == OnDisk::New) {
        return match store.complete_changes(&ids) {
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
                let old = p.change.old_content.as_deref().map(str::as_bytes);
                match fsafe::replace(Path::new(&p.change.file), old) {
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
    match store.discard_intents(&settled) {
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
