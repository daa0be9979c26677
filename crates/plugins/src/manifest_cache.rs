//! Tool manifests (id, description, schema) cached per source file, so `podcode tools` and
//! agent startup never run plugin code for files that have not changed. An entry is valid
//! while the caller's stamp is unchanged and, for plugin files, while every dependency it
//! recorded (`plugin_deps`: imported modules, package.json files, node_modules folders on
//! the resolution path) still has the stamp it had at load time. One JSON file in the data
//! directory; `podcode plugins --refresh` deletes it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use podcode_protocol::ToolSpec;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Entry {
    stamp: String,
    value: serde_json::Value,
    /// `(path, stamp)` of everything else the value depended on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    deps: Vec<(PathBuf, String)>,
    /// How long producing the value took (for `podcode plugins`).
    #[serde(default)]
    load_ms: u64,
}

/// A valid cached value with the dependencies it was recorded with.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedEntry {
    /// The cached value.
    pub value: serde_json::Value,
    /// Files whose change invalidates it.
    pub deps: Vec<PathBuf>,
    /// How long producing it took, in milliseconds.
    pub load_ms: u64,
}

/// A JSON file of tool manifests keyed by file, each valid while the file's stamp (and its
/// dependencies') is unchanged, so unchanged tools load without running anything.
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

    /// Caches the specs of `path` under its current stamp.
    pub fn put(&mut self, path: &Path, specs: Vec<ToolSpec>) {
        if let (Some(stamp), Ok(value)) = (stamp(path), serde_json::to_value(specs)) {
            self.put_value(&path.to_string_lossy(), stamp, value);
        }
    }

    /// Any cached value under `key`, valid while the caller's `stamp` is unchanged.
    pub fn get_value(&self, key: &str, stamp: &str) -> Option<serde_json::Value> {
        self.get_entry(key, stamp).map(|e| e.value)
    }

    /// Caches `value` under `key`, valid while `stamp` is unchanged.
    pub fn put_value(&mut self, key: &str, stamp: String, value: serde_json::Value) {
        self.put_entry(key, stamp, Vec::new(), 0, value);
    }

    /// The entry under `key` if the caller's `stamp` and every recorded dependency's stamp
    /// (recomputed now with `crate::plugin_deps::stamp`) are unchanged.
    pub fn get_entry(&self, key: &str, stamp: &str) -> Option<CachedEntry> {
        let entry = self.entries.get(key)?;
        if entry.stamp != stamp
            || entry
                .deps
                .iter()
                .any(|(path, at)| crate::plugin_deps::stamp(path) != *at)
        {
            return None;
        }
        Some(CachedEntry {
            value: entry.value.clone(),
            deps: entry.deps.iter().map(|(p, _)| p.clone()).collect(),
            load_ms: entry.load_ms,
        })
    }

    /// Caches `value` with the current stamps of `deps`.
    pub fn put_entry(
        &mut self,
        key: &str,
        stamp: String,
        deps: Vec<PathBuf>,
        load_ms: u64,
        value: serde_json::Value,
    ) {
        let deps = deps
            .into_iter()
            .map(|p| {
                let at = crate::plugin_deps::stamp(&p);
                (p, at)
            })
            .collect();
        self.entries.insert(
            key.to_string(),
            Entry {
                stamp,
                value,
                deps,
                load_ms,
            },
        );
        self.dirty = true;
    }

    /// Forgets the entry under `key` (a load that must be retried next time).
    pub fn remove(&mut self, key: &str) {
        if self.entries.remove(key).is_some() {
            self.dirty = true;
        }
    }

    /// Deletes every manifest cache file in `dir` (`podcode plugins --refresh`): plugin and
    /// executable manifests are built again on the next load.
    pub fn drop_all(dir: &Path) {
        for name in ["manifests.json", "executables.json"] {
            let _ = std::fs::remove_file(dir.join(name));
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
