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
    value: serde_json::Value,
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
        self.get_value(&path.to_string_lossy(), &stamp(path)?)
            .and_then(|v| serde_json::from_value(v).ok())
    }

    pub fn put(&mut self, path: &Path, specs: Vec<ToolSpec>) {
        if let (Some(stamp), Ok(value)) = (stamp(path), serde_json::to_value(specs)) {
            self.put_value(&path.to_string_lossy(), stamp, value);
        }
    }

    /// Any cached value under `key`, valid while the caller's `stamp` is unchanged.
    pub fn get_value(&self, key: &str, stamp: &str) -> Option<serde_json::Value> {
        let entry = self.entries.get(key)?;
        (entry.stamp == stamp).then(|| entry.value.clone())
    }

    pub fn put_value(&mut self, key: &str, stamp: String, value: serde_json::Value) {
        self.entries.insert(key.to_string(), Entry { stamp, value });
        self.dirty = true;
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
