//! Files that hold secrets, wherever the workspace is: SSH and GPG keys, cloud and cluster
//! credentials (AWS, gcloud, Azure, kube config, docker config), keychains and keyrings,
//! `.netrc`, `.npmrc`/`.pypirc` tokens, git credentials, and `.env` files.
//!
//! A session started in `~` has `~/.ssh` inside its workspace, so `external_directory`
//! never asks for it. These files ask on their own instead:
//! - credentials ask the `sensitive` permission (pattern: the absolute path) in `read`,
//!   in the search tools when the search root is one, and for `bash` commands naming one;
//! - `.env` files keep asking through the `read` rules (`read *.env` asks by default);
//! - searches (`glob`, `grep`, `list`, `symbols`) walking a tree skip such files and
//!   folders unless a rule already allows them (`grep` still asks for `.env` matches), and
//!   say how many they skipped ([`skipped_note`]).
//!
//! Classification is by path components, so it needs no home directory and also catches a
//! key copied into a repository.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use podcode_protocol::{PermissionAction, PermissionRequest};
use podcode_tools::{ToolContext, ToolError};
use serde_json::json;

use crate::workspace::{ResolvedPath, Workspace};

/// What kind of secret a path may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Secret {
    /// A `.env`-style file, gated by the `read` rules.
    Env,
    /// Keys, credentials and tokens, gated by the `sensitive` permission.
    Credential,
}

/// Folders whose whole content is secret.
const SECRET_DIRS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".password-store",
];
/// Folders given as consecutive components (`.config/gcloud`).
const SECRET_DIR_PATHS: &[&[&str]] = &[
    &[".config", "gcloud"],
    &["Library", "Keychains"],
    &[".local", "share", "keyrings"],
    &[".docker", "config.json"],
    &[".config", "gh", "hosts.yml"],
];
/// File names that are secret wherever they are.
const SECRET_FILES: &[&str] = &[
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".pgpass",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
];

/// Whether `path` (absolute or relative) may hold a secret, and which kind.
pub fn classify(path: &Path) -> Option<Secret> {
    let parts: Vec<&str> = path
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .collect();
    let name = parts.last().copied().unwrap_or_default();
    let credential = parts.iter().any(|p| SECRET_DIRS.contains(p))
        || SECRET_DIR_PATHS
            .iter()
            .any(|seq| parts.windows(seq.len()).any(|w| w == *seq))
        || SECRET_FILES.contains(&name)
        || name.ends_with(".keychain")
        || name.ends_with(".keychain-db");
    if credential {
        Some(Secret::Credential)
    } else if looks_like_env(path) {
        Some(Secret::Env)
    } else {
        None
    }
}

/// Files whose name looks like an env file (`.env`, `.env.local`, `prod.env`), except the
/// `.env.example` template.
pub fn looks_like_env(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    name.ends_with(".env") || (name.contains(".env.") && !name.ends_with(".env.example"))
}

/// The `sensitive` ask for credential files.
pub fn request(paths: &[String], reason: &str) -> PermissionRequest {
    PermissionRequest {
        permission: "sensitive".into(),
        patterns: paths.to_vec(),
        always: paths.to_vec(),
        metadata: json!({ "paths": paths, "reason": reason }),
    }
}

/// Asks `sensitive` when `path` is a credential. `.env` files are left to the `read` rules.
pub async fn ensure_allowed(ctx: &ToolContext, path: &ResolvedPath) -> Result<(), ToolError> {
    if classify(&path.abs) != Some(Secret::Credential) {
        return Ok(());
    }
    let abs = path.abs.to_string_lossy().into_owned();
    ctx.ask(request(&[abs], "this file may hold keys or credentials"))
        .await
}

/// The note a search adds when it skipped `n` secret files or folders.
pub fn skipped_note(n: usize) -> String {
    let what = if n == 1 {
        "1 file or folder".to_string()
    } else {
        format!("{n} files or folders")
    };
    format!(
        "({what} that may hold secrets (keys, credentials, tokens, .env files) left out. Read a file by its path to ask the user for it.)"
    )
}

/// Decides, during a walk, which secret entries a search leaves out, and counts them.
/// Rules are consulted (an `allow` shows them) but nobody is asked.
pub struct SecretFilter {
    ctx: ToolContext,
    /// Whether `.env` files are left out too (`grep` asks about their matches instead).
    env: bool,
    /// A root the user already approved (a search inside `~/.ssh`): nothing under it is
    /// left out.
    approved: Option<std::path::PathBuf>,
    skipped: AtomicUsize,
}

impl SecretFilter {
    pub fn new(ctx: &ToolContext, env: bool, approved: Option<std::path::PathBuf>) -> Arc<Self> {
        Arc::new(Self {
            ctx: ctx.clone(),
            env,
            approved,
            skipped: AtomicUsize::new(0),
        })
    }

    /// True (and counted) when the walk should leave `path` out.
    pub fn skips(&self, path: &Path) -> bool {
        if self
            .approved
            .as_deref()
            .is_some_and(|a| path.starts_with(a))
        {
            return false;
        }
        let hide = match classify(path) {
            None => false,
            Some(Secret::Credential) => {
                self.ctx.rule_action("sensitive", &path.to_string_lossy())
                    != PermissionAction::Allow
            }
            Some(Secret::Env) => {
                self.env
                    && self.ctx.rule_action(
                        "read",
                        &Workspace::resolve(&self.ctx, &path.to_string_lossy()).pattern,
                    ) != PermissionAction::Allow
            }
        };
        if hide {
            self.skipped.fetch_add(1, Ordering::Relaxed);
        }
        hide
    }

    pub fn skipped(&self) -> usize {
        self.skipped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_paths_are_recognised_wherever_they_are() {
        for yes in [
            "/home/u/.ssh/id_ed25519",
            "/home/u/.ssh",
            ".ssh/config",
            "/home/u/.gnupg/private-keys-v1.d/x.key",
            "/home/u/.aws/credentials",
            "/home/u/.config/gcloud/application_default_credentials.json",
            "/home/u/.azure/msal_token_cache.json",
            "/home/u/.kube/config",
            "/home/u/.docker/config.json",
            "/Users/u/Library/Keychains/login.keychain-db",
            "/home/u/.local/share/keyrings/login.keyring",
            "/home/u/.netrc",
            "/home/u/.npmrc",
            "repo/.pypirc",
            "/home/u/.git-credentials",
            "/home/u/.config/gh/hosts.yml",
            "backup/id_rsa",
        ] {
            assert_eq!(classify(Path::new(yes)), Some(Secret::Credential), "{yes}");
        }
        for env in [
            ".env",
            "app/.env.local",
            "prod.env",
            "/srv/x/.env.production",
        ] {
            assert_eq!(classify(Path::new(env)), Some(Secret::Env), "{env}");
        }
        for no in [
            ".env.example",
            "src/env.rs",
            "/home/u/.config/nvim/init.lua",
            "/home/u/.docker/cli-plugins",
            "docs/ssh.md",
            "id_rsa.pub.md",
            "/home/u/.bashrc",
        ] {
            assert_eq!(classify(Path::new(no)), None, "{no}");
        }
    }

    #[test]
    fn the_skipped_note_is_pinned() {
        assert_eq!(
            skipped_note(1),
            "(1 file or folder that may hold secrets (keys, credentials, tokens, .env files) left out. Read a file by its path to ask the user for it.)"
        );
        assert_eq!(
            skipped_note(3),
            "(3 files or folders that may hold secrets (keys, credentials, tokens, .env files) left out. Read a file by its path to ask the user for it.)"
        );
    }
}
