//! The questions a front end on a terminal asks before loading a workspace's own code: trust
//! an untrusted workspace that ships tool or plugin files, and let a trusted workspace's
//! opencode config read the secrets it names. `None`: nothing to ask.

use crate::engine::Engine;

/// Said when the user declines to trust the workspace.
pub const NOT_TRUSTED_TEXT: &str =
    "Not trusted: they stay skipped (run `podcode trust` later to load them).";

/// Said when the user declines to let the config read secrets.
pub const SECRETS_REFUSED_TEXT: &str =
    "Not allowed: they stay empty (run `podcode trust --allow-secrets` later to allow them).";

impl Engine {
    /// The trust question, when the workspace is untrusted and ships its own tool or plugin
    /// files.
    pub fn trust_question(&self) -> Option<String> {
        let count = self.project_tool_files();
        if self.is_trusted() || count == 0 || self.trust_declined() {
            return None;
        }
        Some(format!(
            "{} has {count} tool/plugin file(s) of its own (.podcode/, .opencode/). They run code from the repository.\n\
             Trust this workspace and load them? [y/N] ",
            self.project().display()
        ))
    }

    /// What a front end says when it loads an untrusted workspace without asking (no
    /// terminal, or the question was answered no before): its own code stays skipped.
    pub fn untrusted_note(&self) -> Option<String> {
        let count = self.project_tool_files();
        if self.is_trusted() || count == 0 {
            return None;
        }
        Some(format!(
            "note: {} is not trusted: its {count} tool/plugin file(s) (.podcode/, .opencode/) are skipped; run `podcode trust` to load them.",
            self.project().display()
        ))
    }

    /// The secrets question, when the workspace's opencode config names secrets it was not
    /// allowed to read.
    pub fn secrets_question(&self) -> Option<String> {
        let refused = self.refused_references();
        if refused.is_empty() {
            return None;
        }
        Some(format!(
            "{}'s opencode config reads files outside the project or secret environment variables: {}.\n\
             What it reads can reach the model and its servers. Let this workspace's config read them? [y/N] ",
            self.project().display(),
            refused.join(", ")
        ))
    }
}
