//! The parsed-file cache: a file's symbols are reused while its modification time and size
//! are unchanged.
//!
//! Two layers. In memory, one process-wide map from absolute path to `(stamp, symbols)`
//! serves every later query in the same process (the agent, a server). On disk, one JSON
//! file per project under `<data dir>/symbols-cache/` (beside the spill folder, which is
//! cleaned on its own schedule) lets the next process start warm: it is read into memory
//! the first time a process walks that project, and rewritten (to a temporary file, then
//! renamed, so readers never see half a file) after a walk that parsed anything or noticed
//! deleted files. Entries for files that disappeared from a walked folder are dropped.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use super::lang::Symbol;

/// Bumped whenever the queries or `Symbol` change, so old cache files are ignored.
const FORMAT_VERSION: u32 = 1;

/// When a file was last seen as it is: modification time (ns since the epoch) and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    mtime_ns: u64,
    size: u64,
}

impl Stamp {
    pub(crate) fn of(meta: &fs::Metadata) -> Option<Self> {
        let mtime = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
        Some(Self {
            mtime_ns: u64::try_from(mtime.as_nanos()).ok()?,
            size: meta.len(),
        })
    }
}

struct Cached {
    stamp: Stamp,
    symbols: Arc<Vec<Symbol>>,
}

#[derive(Default)]
pub(crate) struct SymbolCache {
    files: Mutex<HashMap<PathBuf, Cached>>,
    /// Cache files already read by this process.
    loaded: Mutex<HashSet<PathBuf>>,
}

/// The process-wide cache.
pub(crate) fn global() -> &'static SymbolCache {
    static CACHE: OnceLock<SymbolCache> = OnceLock::new();
    CACHE.get_or_init(SymbolCache::default)
}

/// Where one project's symbols are kept on disk.
#[derive(Debug, Clone)]
pub(crate) struct DiskCache {
    pub(crate) file: PathBuf,
    pub(crate) project: PathBuf,
}

impl DiskCache {
    /// `<folder>/<hash of project>.json`.
    pub(crate) fn new(folder: &Path, project: &Path) -> Self {
        let hash = project
            .to_string_lossy()
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
        Self {
            file: folder.join(format!("{hash:016x}.json")),
            project: project.to_path_buf(),
        }
    }
}

#[derive(Serialize)]
struct FileOut<'a> {
    p: &'a Path,
    m: u64,
    z: u64,
    s: &'a [Symbol],
}

#[derive(Serialize)]
struct DiskOut<'a> {
    version: u32,
    project: &'a Path,
    files: Vec<FileOut<'a>>,
}

#[derive(Deserialize)]
struct FileIn {
    p: PathBuf,
    m: u64,
    z: u64,
    s: Vec<Symbol>,
}

#[derive(Deserialize)]
struct DiskIn {
    version: u32,
    project: PathBuf,
    files: Vec<FileIn>,
}

impl SymbolCache {
    pub(crate) fn get(&self, path: &Path, stamp: Stamp) -> Option<Arc<Vec<Symbol>>> {
        let files = self.files.lock().ok()?;
        files
            .get(path)
            .filter(|c| c.stamp == stamp)
            .map(|c| c.symbols.clone())
    }

    pub(crate) fn put(&self, path: PathBuf, stamp: Stamp, symbols: Arc<Vec<Symbol>>) {
        if let Ok(mut files) = self.files.lock() {
            files.insert(path, Cached { stamp, symbols });
        }
    }

    /// Reads the project's cache file into memory, once per process. Entries already in
    /// memory are newer and win. A missing, unreadable or outdated file is ignored.
    pub(crate) fn load(&self, disk: &DiskCache) {
        let first = self
            .loaded
            .lock()
            .is_ok_and(|mut loaded| loaded.insert(disk.file.clone()));
        if !first {
            return;
        }
        let Ok(bytes) = fs::read(&disk.file) else {
            return;
        };
        let Ok(data) = serde_json::from_slice::<DiskIn>(&bytes) else {
            return;
        };
        if data.version != FORMAT_VERSION || data.project != disk.project {
            return;
        }
        let Ok(mut files) = self.files.lock() else {
            return;
        };
        for f in data.files {
            files.entry(f.p).or_insert_with(|| Cached {
                stamp: Stamp {
                    mtime_ns: f.m,
                    size: f.z,
                },
                symbols: Arc::new(f.s),
            });
        }
    }

    /// Drops the entries under `root` that a complete walk of it did not see (deleted or
    /// now ignored files). Returns how many went.
    pub(crate) fn prune(&self, root: &Path, seen: &HashSet<PathBuf>) -> usize {
        let Ok(mut files) = self.files.lock() else {
            return 0;
        };
        let before = files.len();
        files.retain(|p, _| !p.starts_with(root) || seen.contains(p));
        before - files.len()
    }

    /// Writes every entry under the project to its cache file.
    pub(crate) fn save(&self, disk: &DiskCache) -> std::io::Result<()> {
        let bytes = {
            let files = self
                .files
                .lock()
                .map_err(|_| std::io::Error::other("symbols cache lock poisoned"))?;
            let mut out: Vec<FileOut<'_>> = files
                .iter()
                .filter(|(p, _)| p.starts_with(&disk.project))
                .map(|(p, c)| FileOut {
                    p,
                    m: c.stamp.mtime_ns,
                    z: c.stamp.size,
                    s: &c.symbols,
                })
                .collect();
            out.sort_by(|a, b| a.p.cmp(b.p));
            serde_json::to_vec(&DiskOut {
                version: FORMAT_VERSION,
                project: &disk.project,
                files: out,
            })?
        };
        let folder = disk.file.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(folder)?;
        let tmp = folder.join(format!(
            ".{}.{}.tmp",
            disk.file
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default(),
            std::process::id()
        ));
        let mut f = fs::File::create(&tmp)?;
        f.write_all(&bytes)?;
        drop(f);
        fs::rename(&tmp, &disk.file)
    }
}

#[cfg(test)]
mod tests {
    use super::super::lang::Kind;
    use super::*;

    fn sym(name: &str) -> Symbol {
        Symbol {
            name: name.into(),
            kind: Kind::Function,
            line: 1,
            signature: format!("fn {name}()"),
            parent: None,
        }
    }

    #[test]
    fn entries_survive_a_round_trip_through_disk_and_go_stale_on_change() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("proj");
        let disk = DiskCache::new(&dir.path().join("cache"), &project);
        let a = project.join("a.rs");
        let stamp = Stamp {
            mtime_ns: 5,
            size: 10,
        };
        let first = SymbolCache::default();
        first.put(a.clone(), stamp, Arc::new(vec![sym("a")]));
        first.put(
            dir.path().join("elsewhere.rs"),
            stamp,
            Arc::new(vec![sym("x")]),
        );
        first.save(&disk).unwrap();

        let second = SymbolCache::default();
        second.load(&disk);
        assert_eq!(second.get(&a, stamp).unwrap()[0].name, "a");
        assert!(
            second
                .get(
                    &a,
                    Stamp {
                        mtime_ns: 6,
                        size: 10
                    }
                )
                .is_none()
        );
        assert!(
            second
                .get(&dir.path().join("elsewhere.rs"), stamp)
                .is_none()
        );
        assert_eq!(second.prune(&project, &HashSet::new()), 1);
        assert!(second.get(&a, stamp).is_none());
    }
}
