//! Permission requests and rules. A request names a permission (`edit`, `bash`, a plugin
//! tool's id, …) and the patterns it touches (paths, command text, `*`); rules map
//! `(permission, pattern)` to an action; the user's reply to an ask is a `PermissionReply`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a matching rule decides for a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PermissionAction {
    /// Run without asking.
    Allow,
    /// Ask the user (through the front end) before running.
    Ask,
    /// Refuse; the model is told the call was denied.
    Deny,
}

impl std::fmt::Display for PermissionAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        })
    }
}

/// `{permission, pattern, action}`; both strings take `*`, `?` and `**` wildcards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionRule {
    /// Permission name the rule applies to (`edit`, `bash`, a tool id; wildcards allowed).
    pub permission: String,
    /// Pattern the request's patterns are matched against (a path, command text, `*`).
    pub pattern: String,
    /// What happens when both match (the last matching rule wins).
    pub action: PermissionAction,
}

impl PermissionRule {
    /// A rule from borrowed strings, as config and agent profiles spell them.
    pub fn new(permission: &str, pattern: &str, action: PermissionAction) -> Self {
        Self {
            permission: permission.to_string(),
            pattern: pattern.to_string(),
            action,
        }
    }
}

/// What `ctx.ask()` sends: the same shape for built-ins, plugins, MCP and executables.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PermissionRequest {
    /// Permission asked for (`edit`, `bash`, `webfetch`, a plugin tool's id, …).
    pub permission: String,
    /// What the call touches: paths, command text or `*`; each is checked against the rules.
    pub patterns: Vec<String>,
    /// Patterns remembered when the user answers "always"; defaults to `patterns`.
    #[serde(default)]
    pub always: Vec<String>,
    /// Extra detail for the prompt (a diff, the command, the arguments); never used to decide.
    #[serde(default)]
    pub metadata: Value,
}

/// The user's answer to an ask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "lowercase")]
pub enum PermissionReply {
    /// Allow this call only.
    Once,
    /// Allow this call and remember the request's `always` patterns for the session.
    Always,
    /// Refuse the call.
    Reject {
        /// What the user wants instead; given to the model with the refusal.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        feedback: Option<String>,
    },
}
