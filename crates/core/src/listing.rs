//! What the model is offered and where it came from, for `podcode tools` and
//! `podcode plugins`: each tool's spec with its source, protection and what it replaced;
//! the load problems; and each plugin file's status with the fate of every tool it defined.

use podcode_plugins::FileStatus;
use podcode_protocol::Truncation;
use podcode_tools::{LoadProblem, SwitchedOff, ToolOrigin, ToolRegistry};
use serde::Serialize;
use serde_json::{Value, json};

use crate::engine::Engine;
use crate::sources::PluginState;

/// One offered tool (`podcode tools --json` prints these fields in this order).
#[derive(Debug, Clone, Serialize)]
pub struct ToolInfo {
    /// The tool's id.
    pub id: String,
    /// What the model reads about it.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: Value,
    /// Which end of oversized output is kept.
    pub truncation: Truncation,
    /// Safe to retry.
    pub idempotent: bool,
    /// Where it came from.
    pub source: ToolOrigin,
    /// A protected built-in no other source may replace.
    pub protected: bool,
    /// What it replaced, if it won a collision.
    pub replaced: Option<String>,
    /// When the model is offered it, if not in every session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The note on `sync_to_main`: only worktree sessions are offered it.
pub const SYNC_NOTE: &str = "only in worktree sessions (--worktree)";

/// The note on a tool offered once the conversation has called another.
pub fn offered_after_note(first: &str) -> String {
    format!("offered once the session has called {first}")
}

/// The note on a tool the config's permission rules deny for every pattern: it stays in the
/// set (a call is refused, naming the rule) but the model is not offered it, as in opencode.
pub const DENIED_NOTE: &str =
    "not offered: the permission rules deny it outright (a model that calls it is refused)";

/// The tool set as `podcode tools` shows it: offered tools, load problems, switched-off tools.
#[derive(Debug, Clone, Serialize)]
pub struct ToolListing {
    /// Every offered tool.
    pub tools: Vec<ToolInfo>,
    /// Problems met while loading.
    pub problems: Vec<LoadProblem>,
    /// Tools the config switched off (opencode's `tools: {"name": false}`): not offered.
    pub switched_off: Vec<SwitchedOff>,
}

fn listing(registry: &ToolRegistry) -> ToolListing {
    ToolListing {
        tools: registry
            .tools()
            .iter()
            .map(|t| {
                let spec = t.tool.spec();
                ToolInfo {
                    id: spec.id.clone(),
                    description: spec.description.clone(),
                    parameters: spec.parameters.clone(),
                    truncation: spec.truncation,
                    idempotent: spec.idempotent,
                    source: t.source.clone(),
                    protected: t.protected,
                    replaced: t.replaced.clone(),
                    note: match &spec.offered_after {
                        Some(first) => Some(offered_after_note(first)),
                        None => (spec.id == "sync_to_main").then(|| SYNC_NOTE.to_string()),
                    },
                }
            })
            .collect(),
        problems: registry.problems().to_vec(),
        switched_off: registry.switched_off().to_vec(),
    }
}

fn fate(registry: &ToolRegistry, file: &str, id: &str) -> &'static str {
    if registry
        .switched_off()
        .iter()
        .any(|t| t.id == id && t.source == file)
    {
        return "switched off by config";
    }
    match registry.get(id) {
        Some(t) if t.source.name == file => "loaded",
        Some(t) if t.protected => "refused (protected built-in)",
        Some(_) => "shadowed",
        None => "refused",
    }
}

/// The `podcode plugins` report: the JavaScript runtime, then each plugin or tool file with
/// its status, the fate of its tools, its hooks and warnings.
pub fn plugin_lines(registry: &ToolRegistry, state: Option<&PluginState>) -> Vec<String> {
    let mut out = Vec::new();
    match state.and_then(|s| s.host.runtime()) {
        Some(r) => out.push(format!("JavaScript runtime: {}", r.name())),
        None => out.push("JavaScript runtime: none found (install Bun: npm install -g bun)".into()),
    }
    for deps in state.map(|s| s.config_deps.as_slice()).unwrap_or_default() {
        out.extend(deps.lines());
    }
    let reports = state.map(|s| s.reports.as_slice()).unwrap_or_default();
    if reports.is_empty() {
        out.push(
            "No plugin or tool files found. Put one in .podcode/plugins/, .opencode/tools/ or ~/.config/podcode/plugins/."
                .into(),
        );
        return out;
    }
    for r in reports {
        let name = r.file.path.display().to_string();
        let timing = match (r.load_ms, r.cached) {
            (Some(ms), true) => format!(", {ms} ms, from cache"),
            (Some(ms), false) => format!(", {ms} ms"),
            (None, _) => String::new(),
        };
        match &r.status {
            FileStatus::Loaded {
                format,
                tools,
                hooks,
            } => {
                out.push(format!("loaded   {name} ({format}{timing})"));
                for id in tools {
                    out.push(format!(
                        "           tool {id}: {}",
                        fate(registry, &name, id)
                    ));
                }
                let (called, ignored): (Vec<&String>, Vec<&String>) = hooks
                    .iter()
                    .partition(|h| podcode_plugins::CALLED_HOOKS.contains(&h.as_str()));
                if !called.is_empty() {
                    let called: Vec<&str> = called.iter().map(|h| h.as_str()).collect();
                    out.push(format!("           hooks: {}", called.join(", ")));
                }
                for hook in ignored {
                    out.push(format!("           warning: {}", uncalled_hook_text(hook)));
                }
            }
            FileStatus::Failed { message } => {
                match timing.strip_prefix(", ") {
                    Some(t) => out.push(format!("failed   {name} ({t})")),
                    None => out.push(format!("failed   {name}")),
                }
                out.push(format!("           {message}"));
            }
            FileStatus::Skipped { reason } => {
                out.push(format!("skipped  {name}"));
                out.push(format!("           {reason}"));
            }
        }
        for w in &r.warnings {
            out.push(format!("           warning: {w}"));
        }
        for call in &r.logs {
            out.push(format!("           {}", call.line()));
        }
    }
    if let Some(added) = state.map(|s| &s.config_added) {
        out.extend(config_hook_lines(added));
    }
    out
}

/// What plugins' `config` hooks added (applied) and changed (not applied), for `podcode
/// plugins`.
pub fn config_hook_lines(added: &podcode_config::HookAdditions) -> Vec<String> {
    let mut taken: Vec<String> = added
        .mcp
        .keys()
        .map(|name| format!("MCP server {name}"))
        .collect();
    taken.extend(
        added
            .rules
            .iter()
            .map(|r| format!("rule {} {} {}", r.permission, r.pattern, r.action)),
    );
    let mut out = Vec::new();
    if !taken.is_empty() {
        out.push(format!("config hooks added: {}", taken.join(", ")));
    }
    for what in &added.ignored {
        out.push(format!(
            "           warning: {}",
            config_not_applied_text(what)
        ));
    }
    out
}

/// The warning for what a plugin's `config` hook changed that Podcode does not apply.
pub fn config_not_applied_text(what: &str) -> String {
    format!("a plugin's config hook changed {what}: Podcode does not apply that")
}

/// The warning for a hook a plugin defines that Podcode never calls: the plugin loads, but
/// that part of it does nothing here.
pub fn uncalled_hook_text(hook: &str) -> String {
    format!("hook {hook} is not called by Podcode: what the plugin does there never happens")
}

/// What each opencode config file gave, for the end of the `podcode plugins` report.
pub fn opencode_lines(imports: &[podcode_config::OpencodeImport]) -> Vec<String> {
    let mut out = Vec::new();
    for i in imports {
        out.push(format!("opencode config {}", i.file.display()));
        if i.taken.is_empty() {
            out.push("           nothing Podcode uses".into());
        }
        for t in &i.taken {
            out.push(format!("           took {t}"));
        }
        if !i.not_used.is_empty() {
            out.push(format!("           not used: {}", i.not_used.join(", ")));
        }
        if !i.refused.is_empty() {
            out.push(format!(
                "           left empty (this workspace's config may not read them): {}",
                i.refused.join(", ")
            ));
        }
    }
    out
}

/// The same report as JSON: the runtime and, per file, its report and its tools' fates.
pub fn plugin_json(registry: &ToolRegistry, state: Option<&PluginState>) -> Value {
    let reports = state.map(|s| s.reports.as_slice()).unwrap_or_default();
    let files: Vec<_> = reports
        .iter()
        .map(|r| {
            let name = r.file.path.display().to_string();
            let (tools, uncalled): (Vec<_>, Vec<_>) = match &r.status {
                FileStatus::Loaded { tools, hooks, .. } => (
                    tools
                        .iter()
                        .map(|id| json!({"id": id, "status": fate(registry, &name, id)}))
                        .collect(),
                    hooks
                        .iter()
                        .filter(|h| !podcode_plugins::CALLED_HOOKS.contains(&h.as_str()))
                        .collect(),
                ),
                _ => (Vec::new(), Vec::new()),
            };
            json!({"report": r, "tools": tools, "uncalled_hooks": uncalled})
        })
        .collect();
    json!({
        "runtime": state.and_then(|s| s.host.runtime()).map(|r| r.name()),
        "files": files,
        "config_dependencies": state.map(|s| s.config_deps.as_slice()).unwrap_or_default(),
        "config_hooks": state.map(|s| json!({
            "mcp": s.config_added.mcp.keys().collect::<Vec<_>>(),
            "rules": s.config_added.rules,
            "not_applied": s.config_added.ignored,
        })),
    })
}

impl Engine {
    /// The merged tool set as the model sees it, with sources and load problems.
    /// `task` is each session's own tool (bound to it), listed here among the built-ins with
    /// the spec a session's model gets.
    pub async fn tool_listing(&self) -> ToolListing {
        let mut out = listing(&self.tool_sets().await.latest().registry);
        let spec = crate::task::task_spec(&self.agents());
        let at = out
            .tools
            .iter()
            .position(|t| t.source.kind != podcode_tools::SourceKind::Builtin)
            .unwrap_or(out.tools.len());
        out.tools.insert(
            at,
            ToolInfo {
                id: spec.id.clone(),
                description: spec.description.clone(),
                parameters: spec.parameters.clone(),
                truncation: spec.truncation,
                idempotent: spec.idempotent,
                source: ToolOrigin::builtin(),
                protected: podcode_tools::is_protected(&spec.id),
                replaced: None,
                note: None,
            },
        );
        self.mark_denied(&mut out.tools);
        out
    }

    /// Notes the tools the config's rules deny outright (an agent profile may deny more).
    fn mark_denied(&self, tools: &mut [ToolInfo]) {
        let Ok(store) = self.store() else { return };
        let reject = podcode_protocol::PermissionReply::Reject { feedback: None };
        let rules = podcode_tools::PermissionEngine::new(
            self.base_rules(),
            store,
            self.project_key(),
            std::sync::Arc::new(podcode_tools::FixedAsker(reject)),
        );
        for t in tools {
            if rules.denies_outright(podcode_tools::tool_permission(&t.id)) {
                t.note = Some(DENIED_NOTE.to_string());
            }
        }
    }

    /// Tool ids offered now, one `id · source` line each, then load problems.
    pub async fn tool_lines(&self) -> Vec<String> {
        self.tool_sets().await.latest().registry.listing()
    }

    /// Load problems of the newest tool set that are errors: `(message, source)`.
    pub async fn tool_errors(&self) -> Vec<(String, String)> {
        self.tool_sets()
            .await
            .latest()
            .registry
            .problems()
            .iter()
            .filter(|p| p.level == podcode_tools::ProblemLevel::Error)
            .map(|p| (p.message.clone(), p.source.clone()))
            .collect()
    }

    /// The `podcode plugins` report of the newest tool set.
    pub async fn plugin_report(&self) -> Vec<String> {
        let sets = self.tool_sets().await;
        let state = sets.plugins().and_then(|p| p.state());
        let mut lines = plugin_lines(&sets.latest().registry, state.as_deref());
        lines.extend(self.plugin_home_lines());
        lines.extend(opencode_lines(self.opencode_imports()));
        lines
    }

    /// What plugins wrote to the home directory (kept in the plugins' home layer), when
    /// they wrote anything.
    fn plugin_home_lines(&self) -> Vec<String> {
        let upper = self.plugin_home_layer().join("upper");
        let mut names: Vec<String> = std::fs::read_dir(&upper)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if names.is_empty() {
            return Vec::new();
        }
        names.sort();
        vec![format!(
            "Plugins' own files in your home are kept in {} (your home itself is not changed): {}",
            upper.display(),
            names.join(", ")
        )]
    }

    /// The plugin report of `podcode plugins --json`: each file's outcome, config imports and
    /// dependency installs.
    pub async fn plugin_report_json(&self) -> Value {
        let sets = self.tool_sets().await;
        let state = sets.plugins().and_then(|p| p.state());
        let mut report = plugin_json(&sets.latest().registry, state.as_deref());
        report["opencode_config"] = json!(self.opencode_imports());
        report["home_layer"] = json!(self.plugin_home_layer().join("upper"));
        report
    }
}
