//! What a plugin file's load depended on, turned into paths to watch and their stamps. The
//! sidecar reports the local modules a plugin imports (transitively) and the package.json
//! of each package they resolved to (`host::Dependencies`); to those this adds, for every
//! one of those modules, each `node_modules` folder and `package.json` on its resolution
//! path (its folder and every folder above), so installing a missing package — or any
//! npm install beside the plugin — invalidates the entry. The manifest cache stores each
//! path with its stamp; `fingerprint` (in-session reloads) hashes the stamps of every path
//! a load watches (`PluginTools::watched`, kept by the load's owner: one per engine, never
//! process-wide, so engines of different workspaces in one process reload on their own).

use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use crate::host::Dependencies;

/// Source files bigger than this are stamped by size and mtime instead of content.
const HASH_LIMIT: u64 = 4 * 1024 * 1024;

/// A path's state: a regular file by content (an edit that keeps size and mtime still
/// counts), a folder (a `node_modules`) by its modification time, a missing path as absent.
pub fn stamp(path: &Path) -> String {
    let Ok(meta) = std::fs::metadata(path) else {
        return "absent".into();
    };
    if meta.is_file()
        && meta.len() <= HASH_LIMIT
        && let Ok(bytes) = std::fs::read(path)
    {
        let mut h = DefaultHasher::new();
        bytes.hash(&mut h);
        return format!("h{:016x}", h.finish());
    }
    format!("m{}", crate::host::file_stamp(path))
}

/// The paths a load of `main` depends on, deduplicated and sorted.
pub fn watch_list(main: &Path, deps: Option<&Dependencies>) -> Vec<PathBuf> {
    let mut out = BTreeSet::new();
    let mut modules = vec![main.to_path_buf()];
    if let Some(d) = deps {
        modules.extend(d.files.iter().cloned());
        out.extend(d.packages.iter().map(|p| p.package_json.clone()));
    }
    for module in modules {
        let mut dir = module.parent();
        while let Some(d) = dir {
            out.insert(d.join("node_modules"));
            out.insert(d.join("package.json"));
            dir = d.parent();
        }
        out.insert(module);
    }
    out.into_iter().collect()
}

/// Adds the stamps of every path in `watched` to `h` (for `fingerprint`).
pub fn hash_watched(watched: &BTreeSet<PathBuf>, h: &mut impl Hasher) {
    for p in watched {
        p.hash(h);
        stamp(p).hash(h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watch_list_covers_imports_and_every_resolution_folder() {
        let deps = Dependencies {
            files: vec![PathBuf::from("/w/p/main.ts"), PathBuf::from("/w/lib/a.ts")],
            packages: vec![crate::host::PackageDep {
                name: "zod".into(),
                version: Some("3.25.76".into()),
                package_json: PathBuf::from("/w/node_modules/zod/package.json"),
            }],
        };
        let list = watch_list(Path::new("/w/p/main.ts"), Some(&deps));
        for want in [
            "/w/p/main.ts",
            "/w/lib/a.ts",
            "/w/node_modules/zod/package.json",
            "/w/p/node_modules",
            "/w/p/package.json",
            "/w/lib/node_modules",
            "/w/node_modules",
            "/node_modules",
        ] {
            assert!(list.contains(&PathBuf::from(want)), "{want} in {list:?}");
        }
    }

    #[test]
    fn a_file_is_stamped_by_content_and_a_missing_one_as_absent() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.mjs");
        assert_eq!(stamp(&f), "absent");
        std::fs::write(&f, "one").unwrap();
        let first = stamp(&f);
        std::fs::write(&f, "two").unwrap();
        assert_ne!(stamp(&f), first);
        std::fs::write(&f, "one").unwrap();
        assert_eq!(stamp(&f), first);
    }
}
