//! Agent profiles: which tools the model is offered, extra instructions, a model override
//! and permission rules. Two are built in — `build` (every tool) and `plan` (read-only
//! tools, edits and shell denied) — and `[agent.NAME]` in config overrides a built-in's
//! fields or defines a new profile.

use std::collections::HashSet;

use podcode_config::{AgentConfig, Config, ToolFilter};
use podcode_protocol::{PermissionAction, PermissionRule};
use podcode_tools::{SourceKind, ToolRegistry, ToolSource};

use crate::error::AgentError;

/// The tools the `plan` profile is offered (those present in the registry).
pub const PLAN_TOOLS: &[&str] = &["read", "list", "glob", "grep", "webfetch", "symbols"];

const PLAN_PROMPT: &str = "You are in plan mode: you may read and search the workspace, but you cannot edit files or run commands. Investigate, then answer with a concrete plan (files, changes, order, risks) the user can approve.";

#[derive(Debug, Clone, PartialEq)]
pub struct AgentProfile {
    pub name: String,
    /// Instructions added to the base prompt (a config `prompt` replaces a built-in's).
    pub prompt: Option<String>,
    /// `provider/model`; overrides the config's `model` (the command line overrides this).
    pub model: Option<String>,
    pub tools: ToolFilter,
    /// Appended after the config's rules, so they refine them for this agent.
    pub permission: Vec<PermissionRule>,
}

impl AgentProfile {
    pub fn build() -> Self {
        Self {
            name: "build".into(),
            prompt: None,
            model: None,
            tools: ToolFilter::default(),
            permission: Vec::new(),
        }
    }

    pub fn plan() -> Self {
        Self {
            name: "plan".into(),
            prompt: Some(PLAN_PROMPT.into()),
            model: None,
            tools: ToolFilter {
                allow: Some(PLAN_TOOLS.iter().map(|s| s.to_string()).collect()),
                deny: Vec::new(),
            },
            permission: vec![
                PermissionRule::new("edit", "*", PermissionAction::Deny),
                PermissionRule::new("bash", "*", PermissionAction::Deny),
            ],
        }
    }

    /// Whether the profile offers tool `id`.
    pub fn offers(&self, id: &str) -> bool {
        let allowed = match &self.tools.allow {
            Some(list) => list.iter().any(|a| a == id),
            None => true,
        };
        allowed && !self.tools.deny.iter().any(|d| d == id)
    }

    fn apply(&mut self, c: &AgentConfig) {
        if c.prompt.is_some() {
            self.prompt = c.prompt.clone();
        }
        if c.model.is_some() {
            self.model = c.model.clone();
        }
        if let Some(t) = &c.tools {
            self.tools = t.clone();
        }
        self.permission.extend(c.permission.iter().cloned());
    }
}

/// The profile `name`: a built-in with its `[agent.NAME]` overrides, or a profile defined
/// only in config (which starts from `build`: every tool, no extra rules).
pub fn resolve_profile(config: &Config, name: &str) -> Result<AgentProfile, AgentError> {
    let mut profile = match name {
        "build" => AgentProfile::build(),
        "plan" => AgentProfile::plan(),
        other if config.agent.contains_key(other) => AgentProfile {
            name: other.to_string(),
            ..AgentProfile::build()
        },
        other => {
            let mut names: Vec<String> = vec!["build".into(), "plan".into()];
            let extra: Vec<String> = config
                .agent
                .keys()
                .filter(|k| !names.contains(k))
                .cloned()
                .collect();
            names.extend(extra);
            return Err(AgentError::UnknownAgent {
                name: other.to_string(),
                available: names.join(", "),
            });
        }
    };
    if let Some(c) = config.agent.get(name) {
        profile.apply(c);
    }
    Ok(profile)
}

/// A registry holding only the tools `profile` offers, so a call to any other tool fails
/// in the pipeline exactly like an unknown one (naming the closest offered tools).
pub fn filter_registry(full: &ToolRegistry, profile: &AgentProfile) -> ToolRegistry {
    let mut out = ToolRegistry::new();
    let mut seen = HashSet::new();
    for t in full.tools() {
        if !profile.offers(t.id()) || !seen.insert(t.id().to_string()) {
            continue;
        }
        if t.source.kind == SourceKind::Builtin {
            out.register_builtin(t.tool.clone());
        } else {
            let source = ToolSource::new(t.source.kind, t.source.name.clone());
            out.merge(source, vec![t.tool.clone()]);
        }
    }
    for p in full.problems() {
        out.add_problem(&p.source, p.level, p.message.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_offers_read_only_tools_and_denies_edits_and_shell() {
        let plan = AgentProfile::plan();
        for id in ["read", "list", "glob", "grep"] {
            assert!(plan.offers(id), "{id}");
        }
        for id in ["write", "edit", "apply_patch", "bash", "deploy"] {
            assert!(!plan.offers(id), "{id}");
        }
        let rules: Vec<_> = plan
            .permission
            .iter()
            .map(|r| (r.permission.as_str(), r.action))
            .collect();
        assert_eq!(
            rules,
            vec![
                ("edit", PermissionAction::Deny),
                ("bash", PermissionAction::Deny)
            ]
        );
    }

    #[test]
    fn config_overrides_built_ins_and_defines_new_profiles() {
        let config: Config = toml_like(
            r#"{"agent": {"plan": {"model": "x/y"},
                "review": {"prompt": "Review only.", "tools": {"deny": ["bash"]},
                           "permission": [{"permission": "edit", "pattern": "*", "action": "deny"}]}}}"#,
        );
        let plan = resolve_profile(&config, "plan").unwrap();
        assert_eq!(plan.model.as_deref(), Some("x/y"));
        assert_eq!(plan.prompt.as_deref(), Some(PLAN_PROMPT));
        let review = resolve_profile(&config, "review").unwrap();
        assert_eq!(review.prompt.as_deref(), Some("Review only."));
        assert!(review.offers("read") && !review.offers("bash"));
        assert_eq!(review.permission.len(), 1);
        let err = resolve_profile(&config, "nope").unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown agent \"nope\"; available: build, plan, review"
        );
    }

    fn toml_like(json: &str) -> Config {
        serde_json::from_str(json).unwrap()
    }
}
