//! Permission requests and rules. A request names a permission (`edit`, `bash`, a plugin
//! tool's id, …) and the patterns it touches (paths, command text, `*`); rules map
//! `(permission, pattern)` to an action; the user's reply to an ask is a `PermissionReply`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PermissionAction {
    Allow,
    Ask,
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
    pub permission: String,
    pub pattern: String,
    pub action: PermissionAction,
}

impl PermissionRule {
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
    pub permission: String,
    pub patterns: Vec<String>,
    /// Patterns remembered when the user answers "always"; defaults to `patterns`.
    #[serde(default)]
    pub always: Vec<String>,
    #[serde(default)]
    pub metadata: Value,
}

/// The user's answer to an ask.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "lowercase")]
pub enum PermissionReply {
    Once,
    Always,
    Reject {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        feedback: Option<String>,
    },
}
