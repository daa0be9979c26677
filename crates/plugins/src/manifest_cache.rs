//! Tool manifests (id, description, schema) cached per source file, keyed by the file's
//! size and modification time, so `podcode tools` and agent startup never run plugin code
//! for files that have not changed. One JSON file in the data directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use podcode_protocol::ToolSpec;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Entry {
    stamp: String,
    specs: Vec<ToolSpec>,
}

#[derive(Debug, Default)]
pub struct ManifestCache {
    file: Option<PathBuf>,
    entries: BTreeMap<String, Entry>,
    dirty: bool,
}

impl ManifestCache {
    /// Loads the cache; an unreadable or corrupt cache is simply empty (it is rebuilt).
    pub fn load(file: PathBuf) -> Self {
        let entries = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        Self {
            file: Some(file),
            entries,
            dirty: false,
        }
    }

    /// The cached specs for `path` if the file is unchanged since they were cached.
    pub fn get(&self, path: &Path) -> Option<Vec<ToolSpec>> {
        let stamp = stamp(path)?;
        let entry = self.entries.get(&path.to_string_lossy().into_owned())?;
        (entry.stamp == stamp).then(|| entry.specs.clone())
    }

    pub fn put(&mut self, path: &Path, specs: Vec<ToolSpec>) {
        if let Some(stamp) = stamp(path) {
            self.entries
                .insert(path.to_string_lossy().into_owned(), Entry { stamp, specs });
            self.dirty = true;
        }
    }

    /// Writes the cache back if anything changed; failures only cost a re-describe later.
    pub fn save(&mut self) {
        let Some(file) = &self.file else { return };
        if !self.dirty {
            return;
        }
        if let Some(dir) = file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let tmp = file.with_extension("tmp");
        if let Ok(text) = serde_json::to_string(&self.entries)
            && std::fs::write(&tmp, text).is_ok()
            && std::fs::rename(&tmp, file).is_ok()
        {
            self.dirty = false;
        }
    }
}

fn stamp(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let mtime = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some(format!("{}:{}", meta.len(), mtime.as_nanos()))
}
