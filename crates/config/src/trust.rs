//! Which workspaces the user trusts to run their own code. Project-local tools and plugins
//! (`.podcode/tools`, `.podcode/plugins`, `.opencode/…`) are code from the repository, so
//! they load only in a workspace listed here. The list is a small JSON file in the data
//! directory (`trusted.json`), one absolute project root per entry.
//!
//! A second list of the same shape (`secrets-allowed.json`, `podcode trust --allow-secrets`)
//! names the trusted workspaces whose opencode config may also read secrets: files outside
//! the project with `{file:}` and secret-named variables with `{env:}` (see `substitute`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::ConfigError;

/// A set of workspace roots the user chose (trusted workspaces, or those allowed to read secrets),
/// kept as a JSON list in the data dir.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustList {
    file: PathBuf,
    roots: BTreeSet<String>,
}

impl TrustList {
    /// Reads `<data_dir>/trusted.json`; a missing file is an empty list.
    pub fn load(data_dir: &Path) -> Result<Self, ConfigError> {
        Self::read(data_dir.join("trusted.json"), "trusted workspaces")
    }

    /// Reads `<data_dir>/secrets-allowed.json`: the workspaces whose config may read
    /// secrets; a missing file is an empty list.
    pub fn load_secrets(data_dir: &Path) -> Result<Self, ConfigError> {
        Self::read(
            data_dir.join("secrets-allowed.json"),
            "workspaces allowed to read secrets",
        )
    }

    /// Reads `<data_dir>/trust-declined.json`: the workspaces whose trust question was
    /// answered no (not asked again); a missing file is an empty list.
    pub fn load_declined(data_dir: &Path) -> Result<Self, ConfigError> {
        Self::read(
            data_dir.join("trust-declined.json"),
            "workspaces not to trust",
        )
    }

    fn read(file: PathBuf, what: &str) -> Result<Self, ConfigError> {
        let roots = match std::fs::read_to_string(&file) {
            Ok(text) => {
                serde_json::from_str::<BTreeSet<String>>(&text).map_err(|e| ConfigError::Parse {
                    file: file.clone(),
                    line: e.line(),
                    column: e.column().max(1),
                    key: None,
                    message: format!("{e} (delete the file to reset the {what})"),
                })?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeSet::new(),
            Err(source) => return Err(ConfigError::Io { file, source }),
        };
        Ok(Self { file, roots })
    }

    /// Whether `root` (canonicalised, so a symlinked path matches) is on the list.
    pub fn is_trusted(&self, root: &Path) -> bool {
        self.roots.contains(&key(root))
    }

    /// The listed roots, sorted, as stored.
    pub fn roots(&self) -> impl Iterator<Item = &str> {
        self.roots.iter().map(String::as_str)
    }

    /// Adds or removes `root` and saves the list (atomically: write then rename).
    pub fn set(&mut self, root: &Path, trusted: bool) -> Result<(), ConfigError> {
        if trusted {
            self.roots.insert(key(root));
        } else {
            self.roots.remove(&key(root));
        }
        let io = |source| ConfigError::Io {
            file: self.file.clone(),
            source,
        };
        if let Some(dir) = self.file.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = self.file.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(&self.roots).unwrap_or_else(|_| "[]".into());
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, &self.file).map_err(io)
    }
}

fn key(root: &Path) -> String {
    root.canonicalize()
        .unwrap_or_else(|_| root.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_survives_a_reload_and_can_be_revoked() {
        let data = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let mut list = TrustList::load(data.path()).unwrap();
        assert!(!list.is_trusted(project.path()));
        list.set(project.path(), true).unwrap();
        assert!(
            TrustList::load(data.path())
                .unwrap()
                .is_trusted(project.path())
        );
        list.set(project.path(), false).unwrap();
        assert!(
            !TrustList::load(data.path())
                .unwrap()
                .is_trusted(project.path())
        );
    }

    #[test]
    fn a_corrupt_list_names_the_file_and_the_fix() {
        let data = tempfile::tempdir().unwrap();
        std::fs::write(data.path().join("trusted.json"), "[nope").unwrap();
        let err = TrustList::load(data.path()).unwrap_err().to_string();
        assert!(err.contains("trusted.json:1:3: expected ident"), "{err}");
        assert!(err.contains("delete the file"), "{err}");
    }
}
