//! The credentials `podcode auth login` and auth plugins store: `<data>/auth.json`, one entry
//! per provider in opencode's shapes (`{"type": "api", "key"}`, `{"type": "oauth", "refresh",
//! "access", "expires", …}`, `{"type": "wellknown", "key", "token"}`), fields Podcode does not
//! know kept as written. The file is the user's only (mode 0600) and replaced whole on each
//! change (write, then rename), so a crash never leaves half a file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::ConfigError;

/// `<data>/auth.json`: stored provider credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthStore {
    file: PathBuf,
}

impl AuthStore {
    /// The store under data directory `data_dir`.
    pub fn in_data_dir(data_dir: &Path) -> Self {
        Self {
            file: data_dir.join("auth.json"),
        }
    }

    /// The file's path.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Every stored entry by provider; a missing file is empty, an unreadable one an error
    /// naming it.
    pub fn all(&self) -> Result<BTreeMap<String, Value>, ConfigError> {
        let text = match std::fs::read_to_string(&self.file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(self.error(e.to_string())),
        };
        if text.trim().is_empty() {
            return Ok(BTreeMap::new());
        }
        serde_json::from_str(&text).map_err(|e| {
            self.error(format!(
                "{e}; it must be a JSON object of providers (`podcode auth logout PROVIDER` rewrites it)"
            ))
        })
    }

    /// The entry for `provider`, when one is stored (an unreadable file counts as none).
    pub fn get(&self, provider: &str) -> Option<Value> {
        self.all().ok()?.remove(provider)
    }

    /// The stored API key of `provider` (an entry `{"type": "api", "key"}`).
    pub fn api_key(&self, provider: &str) -> Option<String> {
        let entry = self.get(provider)?;
        (entry.get("type")?.as_str()? == "api")
            .then(|| entry.get("key")?.as_str().map(str::to_string))
            .flatten()
            .filter(|k| !k.is_empty())
    }

    /// Stores `entry` for `provider` (it must be an object with a `type`).
    pub fn set(&self, provider: &str, entry: Value) -> Result<(), ConfigError> {
        if provider.trim().is_empty() {
            return Err(self.error("a provider name is needed".into()));
        }
        if !entry.get("type").is_some_and(Value::is_string) {
            return Err(self.error(format!(
                "credentials for {provider} must be an object with a `type` (\"api\", \"oauth\" or \"wellknown\")"
            )));
        }
        let mut all = self.all()?;
        all.insert(provider.to_string(), entry);
        self.save(&all)
    }

    /// Removes `provider`'s entry; false when there was none.
    pub fn remove(&self, provider: &str) -> Result<bool, ConfigError> {
        let mut all = self.all()?;
        let had = all.remove(provider).is_some();
        if had {
            self.save(&all)?;
        }
        Ok(had)
    }

    fn save(&self, all: &BTreeMap<String, Value>) -> Result<(), ConfigError> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let io = |e: std::io::Error| self.error(e.to_string());
        if let Some(dir) = self.file.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = self
            .file
            .with_extension(format!("json.{}.tmp", std::process::id()));
        let text = serde_json::to_string_pretty(all).map_err(|e| self.error(e.to_string()))?;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io)?;
        f.write_all(text.as_bytes()).map_err(io)?;
        f.sync_all().map_err(io)?;
        std::fs::rename(&tmp, &self.file).map_err(io)
    }

    fn error(&self, message: String) -> ConfigError {
        ConfigError::Invalid {
            file: self.file.clone(),
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_round_trip_privately_and_keep_unknown_fields() {
        let dir = tempfile::tempdir().unwrap();
        let store = AuthStore::in_data_dir(dir.path());
        assert!(store.all().unwrap().is_empty());
        store
            .set("anthropic", json!({"type": "oauth", "refresh": "r", "access": "a", "expires": 5, "accountId": "x"}))
            .unwrap();
        store
            .set("openai", json!({"type": "api", "key": "sk-1"}))
            .unwrap();
        assert_eq!(store.api_key("openai").as_deref(), Some("sk-1"));
        assert_eq!(store.api_key("anthropic"), None);
        assert_eq!(store.get("anthropic").unwrap()["accountId"], "x");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(store.file())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(store.remove("openai").unwrap());
        assert!(!store.remove("openai").unwrap());
        assert_eq!(store.all().unwrap().len(), 1);
        let err = store.set("x", json!({"key": "k"})).unwrap_err().to_string();
        assert!(err.contains("must be an object with a `type`"), "{err}");
        std::fs::write(store.file(), "{not json").unwrap();
        let err = store.all().unwrap_err().to_string();
        assert!(
            err.contains("auth.json") && err.contains("podcode auth logout"),
            "{err}"
        );
    }
}
