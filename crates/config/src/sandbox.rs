//! `[sandbox]` and `[agent.<name>.sandbox]`: how much the processes tools start may do
//! (see the `podcode-sandbox` crate for how it is enforced). Defaults: `workspace-write`,
//! network off for commands and executable tools, on for the plugin host, provider API
//! keys hidden. An agent profile may override `mode` and `network` for its sessions.
//! An untrusted project's file may only tighten these (`narrow`).

use serde::{Deserialize, Serialize};

/// `mode = "read-only" | "workspace-write" | "full"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Processes may read everything and write nothing (`/dev/null` and the like excepted).
    ReadOnly,
    /// Processes may write the project, the session's own directories and the `writable`
    /// roots; `.git`, `.podcode` and `.opencode` stay read-only.
    #[default]
    WorkspaceWrite,
    /// No sandbox: processes run with the user's full rights.
    Full,
}

impl SandboxMode {
    /// Higher is stricter.
    fn strictness(self) -> u8 {
        match self {
            SandboxMode::Full => 0,
            SandboxMode::WorkspaceWrite => 1,
            SandboxMode::ReadOnly => 2,
        }
    }
}

/// `[sandbox]`: the limits for processes tools start (bash, executable tools, the plugin host).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct SandboxConfig {
    /// What `bash`, executable tools and the plugin host may write.
    pub mode: SandboxMode,
    /// Whether `bash` commands and executable tools may open network connections.
    pub network: bool,
    /// Whether the plugin host (JS/TS plugins) may open network connections.
    pub plugin_network: bool,
    /// More directories sandboxed processes may write (e.g. `~/.cache`); `~/` is expanded.
    pub writable: Vec<String>,
    /// Provider API key variables passed to sandboxed processes anyway (their values are
    /// still masked in tool output).
    pub allow_env: Vec<String>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            mode: SandboxMode::WorkspaceWrite,
            network: false,
            plugin_network: true,
            writable: Vec::new(),
            allow_env: Vec::new(),
        }
    }
}

/// `[agent.<name>.sandbox]`: what this profile changes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct SandboxOverride {
    /// The profile's mode; unset keeps `[sandbox]`'s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<SandboxMode>,
    /// The profile's network setting for commands; unset keeps `[sandbox]`'s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
}

/// An untrusted project's `sandbox` table (top level or an agent's): a mode looser than
/// `base_mode` goes, networks may only be switched off, extra roots and passed keys go.
pub(crate) fn narrow(
    prefix: &str,
    table: &mut toml::Table,
    base_mode: SandboxMode,
    dropped: &mut Vec<String>,
) {
    if let Some(mode) = table.get("mode") {
        let parsed: Option<SandboxMode> = mode.clone().try_into().ok();
        if parsed.is_none_or(|m| m.strictness() < base_mode.strictness()) {
            dropped.push(format!("{prefix}sandbox.mode {mode}"));
            table.remove("mode");
        }
    }
    for key in ["network", "plugin_network"] {
        if table.get(key).and_then(toml::Value::as_bool) == Some(true) {
            dropped.push(format!("{prefix}sandbox.{key} = true"));
            table.remove(key);
        }
    }
    for key in ["writable", "allow_env"] {
        if table.remove(key).is_some() {
            dropped.push(format!("{prefix}sandbox.{key}"));
        }
    }
}

/// The mode the already-merged (global) table sets, or the default.
pub(crate) fn base_mode(base: &toml::Table) -> SandboxMode {
    base.get("sandbox")
        .and_then(|s| s.get("mode"))
        .and_then(|m| m.clone().try_into().ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_spelling() {
        let c: SandboxConfig = toml::from_str("").unwrap();
        assert_eq!(c, SandboxConfig::default());
        assert_eq!(c.mode, SandboxMode::WorkspaceWrite);
        assert!(!c.network && c.plugin_network);
        let c: SandboxConfig = toml::from_str("mode = \"read-only\"\nnetwork = true").unwrap();
        assert_eq!((c.mode, c.network), (SandboxMode::ReadOnly, true));
        assert!(toml::from_str::<SandboxConfig>("mode = \"none\"").is_err());
    }

    #[test]
    fn an_untrusted_project_may_only_tighten() {
        let mut t: toml::Table = toml::from_str(
            "mode = \"full\"\nnetwork = true\nplugin_network = false\nwritable = [\"/\"]",
        )
        .unwrap();
        let mut dropped = Vec::new();
        narrow("", &mut t, SandboxMode::WorkspaceWrite, &mut dropped);
        assert_eq!(
            dropped,
            vec![
                "sandbox.mode \"full\"",
                "sandbox.network = true",
                "sandbox.writable"
            ]
        );
        assert_eq!(
            t.get("plugin_network").and_then(toml::Value::as_bool),
            Some(false)
        );
        let mut t: toml::Table = toml::from_str("mode = \"read-only\"").unwrap();
        narrow("", &mut t, SandboxMode::WorkspaceWrite, &mut dropped);
        assert!(t.contains_key("mode"));
    }
}
