//! Agent profiles: which tools the model is offered, extra instructions, a model override,
//! sampling temperature, a step limit and permission rules. Four are built in — `build`
//! (every tool), `plan` (read-only tools plus a shell that always asks), `explore` (read-only
//! search, a sub-agent) and `general` (a sub-agent with the build tools). More come from
//! Markdown files (`agent_files`) and `[agent.NAME]` in config; `catalog` puts them together.

use podcode_config::{AgentConfig, AgentMode, Config, ToolFilter};
use podcode_protocol::{PermissionAction, PermissionRule};
use podcode_tools::ToolRegistry;

use crate::error::AgentError;

/// The tools the `plan` profile is offered (those present in the registry).
pub const PLAN_TOOLS: &[&str] = &[
    "read", "list", "glob", "grep", "webfetch", "symbols", "bash",
];

/// The tools the `explore` profile is offered.
pub const EXPLORE_TOOLS: &[&str] = &["read", "list", "glob", "grep", "symbols", "webfetch"];

const PLAN_PROMPT: &str = "You are in plan mode: you may read and search the workspace, but you cannot edit files, and every shell command needs the user's approval. Investigate, then answer with a concrete plan (files, changes, order, risks) the user can approve.";

const EXPLORE_PROMPT: &str = "You are a read-only explorer working for another agent. Find files by pattern, search the code and read what matters to answer the question you were given; you cannot edit files or run commands. Answer with what you found, citing file paths and line numbers, so the agent that asked does not have to search again.";

const GENERAL_PROMPT: &str = "You are a sub-agent working for another agent on one well-defined task. Do the task completely, then answer with a short report: what you found or changed (file paths), and anything left open. Your answer is all the other agent sees of your work.";

/// An agent profile: its prompt, model, tools and permission rules, as the loop uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentProfile {
    /// The name users and the `task` tool pick it by.
    pub name: String,
    /// One line saying what the agent is for; the `task` tool lists sub-agents with it.
    pub description: Option<String>,
    /// Who may use it: the user (`primary`), the `task` tool (`subagent`), or both.
    pub mode: AgentMode,
    /// Instructions added to the base prompt (a config `prompt` replaces a built-in's).
    pub prompt: Option<String>,
    /// `provider/model`; overrides the config's `model` (the command line overrides this).
    pub model: Option<String>,
    /// Sampling temperature; `None`: the provider's default.
    pub temperature: Option<f64>,
    /// Model requests with tools per turn; `None` keeps the session's limit.
    pub steps: Option<u32>,
    /// Which tools it is offered.
    pub tools: ToolFilter,
    /// Appended after the config's rules, so they refine them for this agent.
    pub permission: Vec<PermissionRule>,
    /// Not offered in listings meant for the model (`hidden: true` in an agent file).
    pub hidden: bool,
}

impl AgentProfile {
    fn named(name: &str, mode: AgentMode, description: &str) -> Self {
        Self {
            name: name.into(),
            description: Some(description.into()),
            mode,
            prompt: None,
            model: None,
            temperature: None,
            steps: None,
            tools: ToolFilter::default(),
            permission: Vec::new(),
            hidden: false,
        }
    }

    /// The default agent: every tool; edits and shell commands ask first.
    pub fn build() -> Self {
        Self::named(
            "build",
            AgentMode::Primary,
            "The default agent: every tool; edits and shell commands ask first.",
        )
    }

    /// Plans without editing: read-only tools, edits denied, shell commands asked.
    pub fn plan() -> Self {
        Self {
            prompt: Some(PLAN_PROMPT.into()),
            tools: only(PLAN_TOOLS),
            permission: vec![
                PermissionRule::new("edit", "*", PermissionAction::Deny),
                PermissionRule::new("bash", "*", PermissionAction::Ask),
            ],
            ..Self::named(
                "plan",
                AgentMode::Primary,
                "Plans without editing: reads and searches, asks before every shell command.",
            )
        }
    }

    /// Read-only search sub-agent: no edits, no shell.
    pub fn explore() -> Self {
        Self {
            prompt: Some(EXPLORE_PROMPT.into()),
            tools: only(EXPLORE_TOOLS),
            permission: vec![
                PermissionRule::new("edit", "*", PermissionAction::Deny),
                PermissionRule::new("bash", "*", PermissionAction::Deny),
            ],
            ..Self::named(
                "explore",
                AgentMode::Subagent,
                "Fast read-only search: finds files by pattern, greps the code and reads it to answer a question. Use it for open-ended searches that would take several rounds of grep and read.",
            )
        }
    }

    /// General-purpose sub-agent with every tool, for one delegated task.
    pub fn general() -> Self {
        Self {
            prompt: Some(GENERAL_PROMPT.into()),
            ..Self::named(
                "general",
                AgentMode::Subagent,
                "General-purpose agent for multi-step work: researching a question, searching code and making changes. Several can run at once on independent parts of a task.",
            )
        }
    }

    /// The built-in profile `name`.
    pub fn builtin(name: &str) -> Option<Self> {
        match name {
            "build" => Some(Self::build()),
            "plan" => Some(Self::plan()),
            "explore" => Some(Self::explore()),
            "general" => Some(Self::general()),
            _ => None,
        }
    }

    /// A user can pick it (`--agent`, the TUI's agent switch).
    pub fn is_primary(&self) -> bool {
        self.mode != AgentMode::Subagent
    }

    /// The `task` tool can start it.
    pub fn is_subagent(&self) -> bool {
        self.mode != AgentMode::Primary
    }

    /// Whether the profile offers tool `id`. Entries may use `*` as a wildcard.
    pub fn offers(&self, id: &str) -> bool {
        let allowed = match &self.tools.allow {
            Some(list) => list.iter().any(|a| wildcard(a, id)),
            None => true,
        };
        allowed && !self.tools.deny.iter().any(|d| wildcard(d, id))
    }

    pub(crate) fn apply(&mut self, c: &AgentConfig) {
        if c.prompt.is_some() {
            self.prompt = c.prompt.clone();
        }
        if c.model.is_some() {
            self.model = c.model.clone();
        }
        if let Some(t) = &c.tools {
            self.tools = t.clone();
        }
        if c.description.is_some() {
            self.description = c.description.clone();
        }
        if let Some(m) = c.mode {
            self.mode = m;
        }
        if c.temperature.is_some() {
            self.temperature = c.temperature;
        }
        if c.steps.is_some() {
            self.steps = c.steps;
        }
        self.permission.extend(c.permission.iter().cloned());
    }
}

fn only(ids: &[&str]) -> ToolFilter {
    ToolFilter {
        allow: Some(ids.iter().map(|s| s.to_string()).collect()),
        deny: Vec::new(),
    }
}

/// `*` matches any run of characters; everything else matches itself.
pub(crate) fn wildcard(pattern: &str, text: &str) -> bool {
    let Some((head, rest)) = pattern.split_once('*') else {
        return pattern == text;
    };
    let Some(mut left) = text.strip_prefix(head) else {
        return false;
    };
    let parts: Vec<&str> = rest.split('*').collect();
    let (last, middle) = parts.split_last().unwrap_or((&"", &[]));
    for part in middle {
        match left.find(part) {
            Some(i) => left = &left[i + part.len()..],
            None => return false,
        }
    }
    left.len() >= last.len() && left.ends_with(last)
}

/// The profile `name` from the built-ins and `[agent.NAME]` in config (no agent files):
/// `AgentCatalog` is the full picture.
pub fn resolve_profile(config: &Config, name: &str) -> Result<AgentProfile, AgentError> {
    crate::catalog::AgentCatalog::from_config(config).resolve(name)
}

/// A registry holding only the tools `profile` offers, so a call to any other tool fails
/// in the pipeline exactly like an unknown one (naming the closest offered tools).
pub fn filter_registry(full: &ToolRegistry, profile: &AgentProfile) -> ToolRegistry {
    filter_with(full, |id| profile.offers(id))
}

fn filter_with(full: &ToolRegistry, keep: impl Fn(&str) -> bool) -> ToolRegistry {
    full.narrowed(keep, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_offers_read_only_tools_denies_edits_and_asks_for_the_shell() {
        let plan = AgentProfile::plan();
        for id in ["read", "list", "glob", "grep", "bash"] {
            assert!(plan.offers(id), "{id}");
        }
        for id in ["write", "edit", "apply_patch", "deploy", "task"] {
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
                ("bash", PermissionAction::Ask)
            ]
        );
    }

    #[test]
    fn explore_is_a_read_only_sub_agent_and_general_has_the_build_tools() {
        let explore = AgentProfile::explore();
        assert_eq!(explore.mode, AgentMode::Subagent);
        assert!(explore.offers("grep") && !explore.offers("bash") && !explore.offers("task"));
        let general = AgentProfile::general();
        assert!(general.is_subagent() && !general.is_primary());
        for id in ["write", "bash", "task", "deploy"] {
            assert!(general.offers(id), "{id}");
        }
    }

    #[test]
    fn config_overrides_built_ins_and_defines_new_profiles() {
        let config: Config = toml_like(
            r#"{"agent": {"plan": {"model": "x/y"},
                "review": {"prompt": "Review only.", "tools": {"deny": ["bash", "mcp_*"]},
                           "mode": "subagent", "temperature": 0.2, "steps": 7,
                           "permission": [{"permission": "edit", "pattern": "*", "action": "deny"}]}}}"#,
        );
        let plan = resolve_profile(&config, "plan").unwrap();
        assert_eq!(plan.model.as_deref(), Some("x/y"));
        assert_eq!(plan.prompt.as_deref(), Some(PLAN_PROMPT));
        let review = resolve_profile(&config, "review").unwrap();
        assert_eq!(review.prompt.as_deref(), Some("Review only."));
        assert!(review.offers("read") && !review.offers("bash") && !review.offers("mcp_x"));
        assert_eq!(review.permission.len(), 1);
        assert_eq!(
            (review.mode, review.temperature, review.steps),
            (AgentMode::Subagent, Some(0.2), Some(7))
        );
        let err = resolve_profile(&config, "nope").unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown agent \"nope\"; available: build, plan, explore, general, review"
        );
    }

    #[test]
    fn wildcards_match_like_globs() {
        assert!(wildcard("*", "anything"));
        assert!(wildcard("mcp_*", "mcp_tool"));
        assert!(!wildcard("mcp_*", "xmcp_tool"));
        assert!(wildcard("a*c*e", "abcde"));
        assert!(!wildcard("a*c*e", "abcd"));
        assert!(wildcard("read", "read") && !wildcard("read", "reads"));
    }

    fn toml_like(json: &str) -> Config {
        serde_json::from_str(json).unwrap()
    }
}
