//! Whether a worktree session's work has reached the user's checkout. The sync base says
//! what the last `sync_to_main` carried; but a sync can be undone afterwards (`podcode
//! revert` of its changes), and then the worktree holds work the checkout no longer has
//! although nothing is "unsynced" since the base. Those files are found in the journal
//! (the session's own changes under the checkout whose newest write is reverted) and count
//! as unsynced while the worktree's copy differs from the checkout's.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use podcode_protocol::RecordedChange;
use podcode_store::{Store, StoreError, WorktreeRow};

/// Paths (relative to the checkout root) a sync of this session wrote into the checkout
/// and a revert took back, whose work the worktree still holds.
pub(crate) fn reverted_syncs(
    store: &Store,
    row: &WorktreeRow,
) -> Result<BTreeSet<String>, StoreError> {
    let main = Path::new(&row.main_root);
    let worktree = Path::new(&row.path);
    // Each checkout file's newest write by a tool (a revert is no write of the session's).
    let mut newest: Vec<RecordedChange> = Vec::new();
    for change in store.changes(Some(&row.session_id), None)? {
        if change.reverts.is_some() {
            continue;
        }
        let path = Path::new(&change.file);
        if path.starts_with(worktree) || !path.starts_with(main) {
            continue;
        }
        newest.retain(|c| c.file != change.file);
        newest.push(change);
    }
    let mut out = BTreeSet::new();
    for change in newest {
        if !is_reverted(store, &change.id)? {
            continue;
        }
        let Ok(rel) = Path::new(&change.file).strip_prefix(main) else {
            continue;
        };
        // The user undid both sides (the worktree too): nothing of it is left to lose.
        if read(&worktree.join(rel)) != read(&main.join(rel)) {
            out.insert(rel.to_string_lossy().into_owned());
        }
    }
    Ok(out)
}

fn read(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

/// In effect reverted: the chain of reverts hanging off the change (each the newest revert
/// of the one before) is odd — reverted, or reverted, redone and reverted again.
fn is_reverted(store: &Store, id: &str) -> Result<bool, StoreError> {
    let mut seen = HashSet::new();
    let mut current = id.to_string();
    while let Some(next) = store.reverted_by(&current)? {
        if !seen.insert(next.clone()) {
            break;
        }
        current = next;
    }
    Ok(seen.len() % 2 == 1)
}

/// Why reverted syncs count as unsynced, for the listing and prune: `a.txt was synced, then
/// reverted in your checkout` (at most three names, then how many more).
pub(crate) fn reverted_text(paths: &[String]) -> Option<String> {
    const SHOWN: usize = 3;
    let (first, rest) = paths.split_at(paths.len().min(SHOWN));
    let names = match rest.len() {
        0 => first.join(", "),
        n => format!("{} and {n} more", first.join(", ")),
    };
    let verb = if paths.len() == 1 { "was" } else { "were" };
    (!paths.is_empty()).then(|| format!("{names} {verb} synced, then reverted in your checkout"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_names_the_reverted_files() {
        let names = |n: usize| (1..=n).map(|i| format!("f{i}")).collect::<Vec<_>>();
        assert_eq!(reverted_text(&[]), None);
        assert_eq!(
            reverted_text(&names(1)).unwrap(),
            "f1 was synced, then reverted in your checkout"
        );
        assert_eq!(
            reverted_text(&names(5)).unwrap(),
            "f1, f2, f3 and 2 more were synced, then reverted in your checkout"
        );
    }
}
