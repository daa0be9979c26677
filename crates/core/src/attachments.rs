//! Files a front end uploads for a prompt (the web page's paperclip, drop or paste): stored
//! under `<data_dir>/attachments/<session id>/`, then attached by path like `@path`. The
//! `read` tool opens them without an `external_directory` ask (the engine's rules allow that
//! folder, see `attachment_rule`), so an image goes to a model that takes images as an image.

use std::path::{Path, PathBuf};

use podcode_protocol::{PermissionAction, PermissionRule, new_id};

use crate::engine::Engine;
use crate::error::EngineError;

/// The largest file a front end may upload as an attachment (10 MiB).
pub const MAX_ATTACHMENT_BYTES: usize = 10 * 1024 * 1024;

/// The longest file name kept (in characters, before the id prefix).
const MAX_NAME_CHARS: usize = 80;

/// `name` as a safe file name: its last path component, with characters other than letters,
/// digits, `.`, `-` and `_` replaced by `_`, no leading dot, at most 80 characters.
pub fn attachment_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or_default();
    let clean: String = last
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let clean = clean.trim_start_matches('.');
    let kept: String = clean.chars().rev().take(MAX_NAME_CHARS).collect();
    let kept: String = kept.chars().rev().collect();
    if kept.is_empty() {
        "attachment".into()
    } else {
        kept
    }
}

impl Engine {
    /// Where every session's uploaded attachments are kept.
    pub fn attachments_root(&self) -> PathBuf {
        self.dirs().data_dir.join("attachments")
    }

    /// Where session `session_id`'s uploaded attachments are kept.
    pub fn attachments_dir(&self, session_id: &str) -> PathBuf {
        self.attachments_root().join(session_id)
    }

    /// Stores `bytes` as an attachment of `session_id` named after `name` (made safe, with a
    /// unique prefix); returns its absolute path, for a prompt's `files`. `UnknownSession`
    /// when there is no such session; `Io` when it cannot be written.
    pub fn save_attachment(
        &self,
        session_id: &str,
        name: &str,
        bytes: &[u8],
    ) -> Result<PathBuf, EngineError> {
        self.session(session_id)?;
        let dir = self.attachments_dir(session_id);
        std::fs::create_dir_all(&dir)
            .map_err(|e| EngineError::Io(format!("cannot create {}: {e}", dir.display())))?;
        let unique = new_id("att");
        let path = dir.join(format!("{unique}-{}", attachment_name(name)));
        std::fs::write(&path, bytes)
            .map_err(|e| EngineError::Io(format!("cannot write {}: {e}", path.display())))?;
        Ok(path.canonicalize().unwrap_or(path))
    }

    /// The stored attachment `file` (a name `save_attachment` gave) of `session_id`, when it
    /// exists; `None` for anything else (a path, `..`, another session's file).
    pub fn attachment_path(&self, session_id: &str, file: &str) -> Option<PathBuf> {
        if file.is_empty() || file != attachment_name(file) || session_id.contains(['/', '\\']) {
            return None;
        }
        let path = self.attachments_dir(session_id).join(file);
        path.is_file().then_some(path)
    }

    /// Removes a session's uploaded attachments (a deleted session's).
    pub(crate) fn remove_attachments(&self, session_id: &str) {
        if !session_id.is_empty() && !session_id.contains(['/', '\\', '.']) {
            let _ = std::fs::remove_dir_all(self.attachments_dir(session_id));
        }
    }

    /// The rule that lets tools read uploaded attachments without an `external_directory`
    /// ask (config rules come after it and may still refuse them).
    pub(crate) fn attachment_rule(&self) -> PermissionRule {
        let root = canonical(&self.attachments_root());
        let pattern = format!("{}/*", root.to_string_lossy().trim_end_matches('/'));
        PermissionRule::new("external_directory", &pattern, PermissionAction::Allow)
    }
}

/// `path` with symlinks resolved as far as it exists (the tools compare resolved paths).
fn canonical(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = existing.canonicalize() {
            return rest
                .iter()
                .rev()
                .fold(c, |p, part: &std::ffi::OsString| p.join(part));
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_safe() {
        assert_eq!(attachment_name("shot.png"), "shot.png");
        assert_eq!(attachment_name("../../etc/passwd"), "passwd");
        assert_eq!(attachment_name("C:\\a\\b c.txt"), "b_c.txt");
        assert_eq!(attachment_name(".env"), "env");
        assert_eq!(attachment_name(""), "attachment");
        assert_eq!(attachment_name("..."), "attachment");
        assert_eq!(attachment_name(&"x".repeat(200)).len(), 80);
    }
}
