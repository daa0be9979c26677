//! A turn's file diffs for plugins' `session.diff` events, read from the change journal.
//!
//! The event translator (`podcode_plugins::OpencodeEvents`) keeps the ids of the changes a
//! turn journaled; `lookup` turns them into opencode's `FileDiff`s: one per file, from its
//! content before the turn's first change of it to after the last (a file changed and changed
//! back is left out), named relative to the project root as opencode names them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use podcode_protocol::{RecordedChange, display_text};
use podcode_store::Store;
use serde_json::{Value, json};

/// The engine's store slot: the journal is read only once a change was recorded, and a
/// change is recorded only through an open store.
pub(crate) type StoreSlot = Arc<Mutex<Option<Arc<Store>>>>;

/// The `DiffLookup` of an engine whose store is `store` and project root `root`.
pub(crate) fn lookup(store: StoreSlot, root: PathBuf) -> podcode_plugins::DiffLookup {
    Arc::new(move |ids: &[String]| {
        let store = match store.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        };
        let Some(store) = store else {
            return Vec::new();
        };
        let changes: Vec<RecordedChange> = ids
            .iter()
            .filter_map(|id| store.change(id).ok().flatten())
            .collect();
        file_diffs(&changes, &root)
    })
}

/// One `FileDiff` per file of `changes` (oldest first), in first-change order.
fn file_diffs(changes: &[RecordedChange], root: &Path) -> Vec<Value> {
    let mut files: Vec<(&str, Option<&str>, Option<&str>)> = Vec::new();
    for c in changes {
        match files.iter_mut().find(|(f, ..)| *f == c.file) {
            Some(entry) => entry.2 = c.new_content.as_deref(),
            None => files.push((&c.file, c.old_content.as_deref(), c.new_content.as_deref())),
        }
    }
    files
        .into_iter()
        .filter(|(_, before, after)| before != after)
        .map(|(file, before, after)| {
            let name = Path::new(file)
                .strip_prefix(root)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| file.to_string());
            let (old, new) = (display_text(before), display_text(after));
            let (additions, deletions) = podcode_tools::diff_stats(&old, &new);
            let status = match (before, after) {
                (None, _) => "added",
                (_, None) => "deleted",
                _ => "modified",
            };
            json!({
                "file": name,
                "patch": podcode_tools::unified_diff(&name, &old, &new),
                "additions": additions,
                "deletions": deletions,
                "status": status,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use podcode_protocol::ChangeOp;

    fn change(file: &str, old: Option<&str>, new: Option<&str>) -> RecordedChange {
        RecordedChange {
            id: "c".into(),
            session_id: "s".into(),
            call_id: Some("call".into()),
            file: file.into(),
            op: ChangeOp::Modify,
            old_content: old.map(Into::into),
            new_content: new.map(Into::into),
            time: 0,
            reverts: None,
        }
    }

    #[test]
    fn a_file_changed_twice_is_one_diff_from_before_the_first_to_after_the_last() {
        let root = Path::new("/repo");
        let diffs = file_diffs(
            &[
                change("/repo/src/a.rs", Some("one\ntwo\n"), Some("one\n2\n")),
                change("/repo/new.txt", None, Some("hi\n")),
                change("/repo/src/a.rs", Some("one\n2\n"), Some("one\n2\nthree\n")),
                change("/repo/back.txt", Some("x\n"), Some("y\n")),
                change("/repo/back.txt", Some("y\n"), Some("x\n")),
                change("/elsewhere/gone.txt", Some("bye\n"), None),
            ],
            root,
        );
        let outline: Vec<_> = diffs
            .iter()
            .map(|d| {
                format!(
                    "{} {} +{} -{}",
                    d["file"].as_str().unwrap(),
                    d["status"].as_str().unwrap(),
                    d["additions"],
                    d["deletions"]
                )
            })
            .collect();
        assert_eq!(
            outline,
            [
                "src/a.rs modified +2 -1",
                "new.txt added +1 -0",
                "/elsewhere/gone.txt deleted +0 -1",
            ]
        );
        assert!(diffs[0]["patch"].as_str().unwrap().contains("+three"));
    }
}
