//! `ToolRegistry`: the merged tool set. Built-ins register first; every other source
//! merges by id. Unprotected built-ins may be replaced, protected ones never (they carry
//! their security gate inside `execute`); between two custom sources the later one wins.
//! Every refusal, replacement and shadowing is recorded as a `LoadProblem` so nothing
//! about the merge is silent. Name resolution for calls lives here too.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde::Serialize;

use crate::schema::CompiledSchema;
use crate::texts::{ambiguous_tool_text, switched_off_text, unknown_tool_text};
use crate::tool::Tool;

/// Built-ins that can never be replaced (DESIGN.md §4).
pub const PROTECTED_TOOL_IDS: &[&str] = &[
    "read",
    "list",
    "write",
    "edit",
    "apply_patch",
    "bash",
    "glob",
    "grep",
    "symbols",
    "webfetch",
    "task",
    "sync_to_main",
    "browser_navigate",
    "browser_click",
    "browser_type",
    "browser_snapshot",
    "browser_screenshot",
    "browser_look",
    "browser_select",
    "browser_scroll",
    "browser_measure",
    "browser_diff",
    "browser_resize",
];

/// Whether `id` is a built-in no plugin, MCP server or executable may replace.
pub fn is_protected(id: &str) -> bool {
    PROTECTED_TOOL_IDS.contains(&id)
}

/// What kind of source a tool came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// Compiled into Podcode.
    Builtin,
    /// A Podcode or opencode plugin file.
    Plugin,
    /// An opencode tool file (`tool/` folder).
    ToolFile,
    /// An MCP server.
    Mcp,
    /// An executable in a tools folder.
    Executable,
    /// Registered by a test.
    Test,
}

/// Where a tool came from: a kind and a name a user recognises (a file path, `mcp:name`).
/// A plain label kept beside each registered tool for listings and collision reports; the
/// thing that loads tools is `podcode_core::ToolSource`, a different item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolOrigin {
    /// What kind of source it is.
    pub kind: SourceKind,
    /// The name a user recognises (a file path, `mcp:name`, `built-in`).
    pub name: String,
}

impl ToolOrigin {
    /// The label of the built-in tools.
    pub fn builtin() -> Self {
        Self {
            kind: SourceKind::Builtin,
            name: "built-in".into(),
        }
    }
    /// A label of `kind` named `name`.
    pub fn new(kind: SourceKind, name: impl Into<String>) -> Self {
        Self {
            kind,
            name: name.into(),
        }
    }
}

/// How serious a load problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemLevel {
    /// The tool or source did not load.
    Error,
    /// It loaded, but something about it needs the user's attention.
    Warning,
}

/// A problem met while loading tools, shown to the user (never to the model).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadProblem {
    /// The source it concerns (a file, a server).
    pub source: String,
    /// Error or warning.
    pub level: ProblemLevel,
    /// What is wrong and, where there is one, what to do.
    pub message: String,
}

/// A tool in the registry, with where it came from and what it replaced.
pub struct RegisteredTool {
    /// The tool.
    pub tool: Arc<dyn Tool>,
    /// Where it came from.
    pub source: ToolOrigin,
    /// A protected built-in: no later source may replace it.
    pub protected: bool,
    /// What this tool replaced, e.g. `built-in grep` or the losing source's name.
    pub replaced: Option<String>,
    schema: OnceLock<CompiledSchema>,
}

impl RegisteredTool {
    fn new(
        tool: Arc<dyn Tool>,
        source: ToolOrigin,
        protected: bool,
        replaced: Option<String>,
    ) -> Self {
        Self {
            tool,
            source,
            protected,
            replaced,
            schema: OnceLock::new(),
        }
    }

    /// The tool's id.
    pub fn id(&self) -> &str {
        &self.tool.spec().id
    }

    /// The compiled parameter schema, built on first use.
    pub(crate) fn schema(&self) -> &CompiledSchema {
        self.schema
            .get_or_init(|| CompiledSchema::compile(&self.tool.spec().parameters))
    }
}

/// A tool the config switched off (opencode's `tools: {"name": false}`): loaded, not offered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SwitchedOff {
    /// The tool's id.
    pub id: String,
    /// The name of the source it came from.
    pub source: String,
    /// The config entry that switched it off (an id or a `prefix_*` pattern).
    pub by: String,
}

/// The merged tool set: every tool by id, in registration order, with the load problems and
/// replacements met while merging.
#[derive(Default)]
pub struct ToolRegistry {
    tools: Vec<RegisteredTool>,
    switched_off: Vec<SwitchedOff>,
    index: HashMap<String, usize>,
    problems: Vec<LoadProblem>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a built-in. Built-ins come first; a duplicate built-in id is a bug.
    pub fn register_builtin(&mut self, tool: Arc<dyn Tool>) {
        let id = tool.spec().id.clone();
        if !podcode_protocol::is_valid_tool_id(&id) || self.index.contains_key(&id) {
            self.add_problem(
                "built-in",
                ProblemLevel::Error,
                format!("built-in tool id \"{id}\" is invalid or duplicated"),
            );
            return;
        }
        let protected = is_protected(&id);
        self.index.insert(id, self.tools.len());
        self.tools.push(RegisteredTool::new(
            tool,
            ToolOrigin::builtin(),
            protected,
            None,
        ));
    }

    /// Merges one source's tools by id, recording every refusal and replacement.
    pub fn merge(&mut self, source: ToolOrigin, tools: Vec<Arc<dyn Tool>>) {
        for tool in tools {
            let id = tool.spec().id.clone();
            if !podcode_protocol::is_valid_tool_id(&id) {
                self.add_problem(
                    &source.name,
                    ProblemLevel::Error,
                    format!("{}: invalid tool id \"{id}\": ids must match ^[A-Za-z][A-Za-z0-9_-]{{0,63}}$", source.name),
                );
                continue;
            }
            let Some(&at) = self.index.get(&id) else {
                self.index.insert(id, self.tools.len());
                self.tools
                    .push(RegisteredTool::new(tool, source.clone(), false, None));
                continue;
            };
            let existing = &self.tools[at];
            if existing.source.kind == SourceKind::Builtin && existing.protected {
                self.add_problem(
                    &source.name,
                    ProblemLevel::Error,
                    format!("plugin: refusing to override protected built-in tool {id}"),
                );
                continue;
            }
            let (replaced, message) = if existing.source.kind == SourceKind::Builtin {
                (
                    format!("built-in {id}"),
                    format!("tool {id} from {} replaces the built-in {id}", source.name),
                )
            } else {
                (
                    existing.source.name.clone(),
                    format!(
                        "tool {id} from {} shadows the one from {}",
                        source.name, existing.source.name
                    ),
                )
            };
            self.add_problem(&source.name, ProblemLevel::Warning, message);
            self.tools[at] = RegisteredTool::new(tool, source.clone(), false, Some(replaced));
        }
    }

    /// Records a problem with `source` for the user.
    pub fn add_problem(&mut self, source: &str, level: ProblemLevel, message: String) {
        self.problems.push(LoadProblem {
            source: source.to_string(),
            level,
            message,
        });
    }

    /// Every registered tool, in registration order.
    pub fn tools(&self) -> &[RegisteredTool] {
        &self.tools
    }

    /// Problems met while loading, in order.
    pub fn problems(&self) -> &[LoadProblem] {
        &self.problems
    }

    /// Removes every tool `by` names an entry for (built-ins and protected ones too:
    /// switching a tool off only narrows what the model is offered), remembering each.
    pub fn switch_off(&mut self, by: impl Fn(&str) -> Option<String>) {
        let tools = std::mem::take(&mut self.tools);
        self.index.clear();
        for t in tools {
            match by(t.id()) {
                Some(entry) => self.switched_off.push(SwitchedOff {
                    id: t.id().to_string(),
                    source: t.source.name.clone(),
                    by: entry,
                }),
                None => {
                    self.index.insert(t.id().to_string(), self.tools.len());
                    self.tools.push(t);
                }
            }
        }
    }

    /// A registry of the tools `keep` accepts (in order, each from its own source), with
    /// `extra` registered right after the built-ins, and this one's load problems and
    /// switched-off tools (a call of one is still told why it is missing).
    pub fn narrowed(&self, keep: impl Fn(&str) -> bool, extra: Vec<Arc<dyn Tool>>) -> ToolRegistry {
        let mut out = ToolRegistry::new();
        let (builtins, others): (Vec<_>, Vec<_>) = self
            .tools
            .iter()
            .filter(|t| keep(t.id()))
            .partition(|t| t.source.kind == SourceKind::Builtin);
        for t in builtins {
            out.register_builtin(t.tool.clone());
        }
        for tool in extra {
            out.register_builtin(tool);
        }
        for t in others {
            let source = ToolOrigin::new(t.source.kind, t.source.name.clone());
            out.merge(source, vec![t.tool.clone()]);
        }
        out.problems = self.problems.clone();
        out.switched_off = self.switched_off.clone();
        out
    }

    /// The tools [`Self::switch_off`] removed, in load order.
    pub fn switched_off(&self) -> &[SwitchedOff] {
        &self.switched_off
    }

    /// One `id · source` line per tool, then one `⚠ problem (source)` line per load
    /// problem: what front ends show as the merged tool list.
    pub fn listing(&self) -> Vec<String> {
        self.tools
            .iter()
            .map(|t| format!("{} · {}", t.id(), t.source.name))
            .chain(self.switched_off.iter().map(|t| {
                format!(
                    "○ {} · {} (switched off by tools entry \"{}\")",
                    t.id, t.source, t.by
                )
            }))
            .chain(
                self.problems
                    .iter()
                    .map(|p| format!("⚠ {} ({})", p.message, p.source)),
            )
            .collect()
    }

    /// The tool with exactly this id.
    pub fn get(&self, id: &str) -> Option<&RegisteredTool> {
        self.index.get(id).map(|&i| &self.tools[i])
    }

    /// Whether a tool has exactly this id.
    pub fn contains(&self, id: &str) -> bool {
        self.index.contains_key(id)
    }

    /// Exact id, else a unique case-insensitive match; otherwise the model-facing error.
    pub fn resolve(&self, name: &str) -> Result<&RegisteredTool, String> {
        self.resolve_index(name).map(|i| &self.tools[i])
    }

    /// `resolve`, as a position in `tools()` (a prepared call keeps it with the registry).
    pub(crate) fn resolve_index(&self, name: &str) -> Result<usize, String> {
        if let Some(&i) = self.index.get(name) {
            return Ok(i);
        }
        let folded: Vec<usize> = (0..self.tools.len())
            .filter(|&i| self.tools[i].id().eq_ignore_ascii_case(name))
            .collect();
        match folded.as_slice() {
            [one] => Ok(*one),
            [] => match self.switched_off.iter().find(|t| t.id == name) {
                Some(off) => Err(switched_off_text(name, &off.by)),
                None => Err(unknown_tool_text(name, &self.closest(name, 3))),
            },
            many => Err(ambiguous_tool_text(
                name,
                &many
                    .iter()
                    .map(|&i| self.tools[i].id().to_string())
                    .collect::<Vec<_>>(),
            )),
        }
    }

    /// Up to `n` ids nearest to `name`, nearest first.
    pub fn closest(&self, name: &str, n: usize) -> Vec<String> {
        let lower = name.to_ascii_lowercase();
        let mut scored: Vec<(usize, &str)> = self
            .tools
            .iter()
            .map(|t| {
                let id = t.id();
                let mut d = strsim::levenshtein(&lower, &id.to_ascii_lowercase());
                if id.contains(&lower) || lower.contains(id) {
                    d = d.min(1);
                }
                (d, id)
            })
            .collect();
        scored.sort();
        scored
            .into_iter()
            .take(n)
            .map(|(_, id)| id.to_string())
            .collect()
    }
}
