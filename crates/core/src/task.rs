//! The `task` tool: a session hands a piece of work to a sub-agent. A call checks the
//! depth limit and the sub-agent's profile, asks permission `task`, then opens (or, with
//! `task_id`, continues) a child session, runs one turn of it and waits (`child.rs`: the
//! child's row, its profile's tools and rules, its events wrapped in `Event::Subagent` up
//! to the parent's stream, its asks to the top session's asker), and returns the child's
//! final answer, the files it changed and its session id. The child runs under the `task`
//! call's abort signal, so aborting the parent stops every child (and their tools) before
//! the call returns. Every session gets its own `task` tool
//! instance (`tools_for`), registered as a protected built-in, because it reports to its
//! own session.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use async_trait::async_trait;
use podcode_agent::{AgentCatalog, AgentProfile, ReloadedTools, ToolReloader};
use podcode_protocol::{PermissionRequest, ToolResult, ToolSpec};
use podcode_providers::ModelClient;
use podcode_store::Store;
use podcode_tools::{Tool, ToolContext, ToolError, ToolRegistry};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::asker::EventAsker;
use crate::child::{ChildSpec, ChildTurn};
use crate::engine::Engine;
use crate::toolset::{SessionTools, ToolSet, ToolSets};

/// Where a session's events go; a child's sink wraps each event and passes it up.
pub(crate) use podcode_tools::EventSink;

/// A sub-agent may work for hours; the configured per-call timeout is for ordinary tools.
const TASK_TIMEOUT_MS: u64 = 6 * 60 * 60 * 1000;

/// What a session's `task` tool needs from it.
#[derive(Clone)]
pub(crate) struct TaskHost {
    pub engine: Arc<Engine>,
    pub sets: Arc<ToolSets>,
    /// The session's model: a sub-agent whose profile names none uses it.
    pub model: Arc<dyn ModelClient>,
    pub sink: EventSink,
    /// The top session's asker: every sub-agent's asks are answered there.
    pub asker: Arc<EventAsker>,
}

/// The registry (the set plus this session's `task` tool) and the reloader that keeps
/// adding it to every rebuilt set.
/// `in_worktree`: the session has a worktree to sync, so it keeps `sync_to_main` — in this
/// registry and in every one the reloader rebuilds, which start from the full set again.
pub(crate) fn tools_for(
    host: &TaskHost,
    set: &ToolSet,
    in_worktree: bool,
) -> (ToolRegistry, Arc<dyn ToolReloader>) {
    let task: Arc<dyn Tool> = Arc::new(TaskTool::new(host.clone()));
    let registry = with_task(&set.registry, task.clone(), in_worktree);
    let reloader = Arc::new(TaskReloader {
        inner: SessionTools {
            sets: host.sets.clone(),
            seen: AtomicU64::new(set.generation),
        },
        task,
        in_worktree,
    });
    (registry, reloader)
}

/// `full` with `task` registered among the built-ins, before any other source, so a
/// plugin's `task` is refused like any protected id; without `sync_to_main` outside a
/// worktree (a session in the user's checkout has nothing to sync: the tool could only
/// refuse).
fn with_task(full: &ToolRegistry, task: Arc<dyn Tool>, in_worktree: bool) -> ToolRegistry {
    full.narrowed(|id| in_worktree || id != "sync_to_main", vec![task])
}

struct TaskReloader {
    inner: SessionTools,
    task: Arc<dyn Tool>,
    in_worktree: bool,
}

#[async_trait]
impl ToolReloader for TaskReloader {
    async fn reload(&self) -> Option<ReloadedTools> {
        let r = self.inner.reload().await?;
        Some(ReloadedTools {
            registry: Arc::new(with_task(&r.registry, self.task.clone(), self.in_worktree)),
            hooks: r.hooks,
        })
    }
}

/// The model-facing description: what `task` does and the sub-agents it can start.
pub fn task_description(subagents: &[&AgentProfile]) -> String {
    let mut text = String::from(
        "Start a sub-agent: it works on one task in its own session, with its own tools, and returns a final report. It does not see this conversation, so the prompt must say everything it needs: the goal, what you already know, whether to change code or only research, and what to report back.\n\nAvailable agent types (subagent_type):\n",
    );
    for p in subagents {
        let about = p.description.as_deref().unwrap_or("(no description)");
        text.push_str(&format!("- {}: {}\n", p.name, first_line(about)));
    }
    text.push_str(
        "\nUsage:\n- Several task calls in one response run at the same time: use that for independent pieces of work.\n- The result holds the sub-agent's final answer, the files it changed and its task_id. The user does not see it: tell them what matters.\n- Pass task_id (with a new prompt) to continue that sub-agent's session where it stopped.",
    );
    text
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// The model-facing refusal past the depth limit.
pub fn depth_limit_text(max_depth: u32) -> String {
    format!(
        "task refused: sub-agents may nest at most {max_depth} level{} deep ([task] max_depth), and this session is already at that depth. Do this part of the work yourself.",
        if max_depth == 1 { "" } else { "s" }
    )
}

/// The model-facing error for a `subagent_type` that names no sub-agent.
pub fn unknown_subagent_text(name: &str, available: &[String]) -> String {
    format!(
        "unknown subagent_type \"{name}\"; available: {}",
        available.join(", ")
    )
}

/// The model-facing error for a `subagent_type` that names a primary-only profile
/// (`mode: primary`): the user's own agent, never started by `task`.
pub fn primary_only_text(name: &str, available: &[String]) -> String {
    format!(
        "subagent_type \"{name}\" is a primary agent (mode: primary): only the user runs it, a task cannot start it; available sub-agents: {}",
        available.join(", ")
    )
}

/// The model-facing error for a `task_id` that is not a sub-agent of this session.
pub fn foreign_task_text(task_id: &str) -> String {
    format!(
        "task_id \"{task_id}\" is not a sub-agent session started by this session; omit task_id to start a new one"
    )
}

#[derive(Deserialize)]
struct TaskArgs {
    description: String,
    prompt: String,
    subagent_type: String,
    #[serde(default)]
    task_id: Option<String>,
}

pub(crate) struct TaskTool {
    spec: ToolSpec,
    host: TaskHost,
}

impl TaskTool {
    fn new(host: TaskHost) -> Self {
        let spec = task_spec(&host.engine.agents());
        Self { spec, host }
    }
}

/// The `task` tool's spec exactly as the model sees it (also what `podcode tools` lists).
pub(crate) fn task_spec(catalog: &AgentCatalog) -> ToolSpec {
    let subagents = catalog.subagents();
    // A plain string, as in opencode (the description lists the names): a wrong name gets
    // `task`'s own refusal, which says why (unknown, or a primary agent) instead of a schema
    // error.
    let parameters = json!({
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "A short (3-5 words) description of the task"},
            "prompt": {"type": "string", "description": "The task for the sub-agent to perform: everything it needs to know"},
            "subagent_type": {"type": "string", "description": "The type of sub-agent to use for this task: one of the agent types the tool description lists"},
            "task_id": {"type": "string", "description": "Continue this earlier sub-agent session (the task_id a previous task result gave) instead of starting a new one"}
        },
        "required": ["description", "prompt", "subagent_type"],
        "additionalProperties": false
    });
    let mut spec = ToolSpec::new("task", task_description(&subagents), parameters);
    spec.timeout_ms = Some(TASK_TIMEOUT_MS);
    spec
}

fn failed(e: impl std::fmt::Display) -> ToolError {
    ToolError::failed(e.to_string())
}

/// How many sessions lie above `id`.
fn depth_of(store: &Store, id: &str) -> Result<u32, ToolError> {
    let mut depth = 0;
    let mut at = store.session(id).map_err(failed)?;
    while let Some(parent) = at.and_then(|s| s.parent_id) {
        depth += 1;
        if depth > 64 {
            break;
        }
        at = store.session(&parent).map_err(failed)?;
    }
    Ok(depth)
}

#[async_trait]
impl Tool for TaskTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// It asks permission `task` with the sub-agent's name as the pattern, so rules can
    /// allow or deny single sub-agents.
    fn gates_itself(&self) -> bool {
        true
    }

    /// Checks the depth and the profile, asks permission, then opens a child session,
    /// runs its turn and waits for it (`child.rs`), and reports its answer.
    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let a: TaskArgs = serde_json::from_value(args).map_err(failed)?;
        let parent_id = ctx.session_id().to_string();
        let profile = self.profile_for(&a.subagent_type, &parent_id)?;
        ctx.ask(PermissionRequest {
            permission: "task".into(),
            patterns: vec![profile.name.clone()],
            always: vec![profile.name.clone()],
            metadata: json!({"description": a.description, "prompt": a.prompt}),
        })
        .await?;
        ctx.metadata(Some(a.description.clone()), None);
        let name = profile.name.clone();
        let child = self.host.open_child(ChildSpec {
            parent_id,
            call_id: ctx.call_id().to_string(),
            profile,
            description: a.description.clone(),
            task_id: a.task_id.clone(),
        })?;
        let (child_id, cwd) = (child.id.clone(), child.cwd.clone());
        let ChildTurn { summary, answer } = child.run(&a.prompt, ctx.abort().clone()).await?;
        use podcode_protocol::TurnEnd;
        match summary.end {
            TurnEnd::Aborted => return Err(ToolError::Aborted),
            TurnEnd::Error => {
                return Err(ToolError::failed(format!(
                    "the {name} sub-agent failed: {} (task_id: {child_id})",
                    summary.error.as_deref().unwrap_or("unknown error")
                )));
            }
            TurnEnd::Answered | TurnEnd::MaxSteps => {}
        }
        let mut output = format!(
            "task_id: {child_id} (pass it as task_id to continue this sub-agent's session)\n\n<task_result>\n{}\n</task_result>\n",
            if answer.is_empty() {
                "(the sub-agent gave no final answer)"
            } else {
                answer.as_str()
            }
        );
        if summary.end == TurnEnd::MaxSteps {
            output.push_str(
                "The sub-agent stopped at its step limit; its answer is a progress summary.\n",
            );
        }
        output.push_str(&changed_files_text(&summary.files, &cwd));
        Ok(ToolResult {
            title: a.description,
            output,
            metadata: json!({
                "sessionId": child_id,
                "agent": name,
                "steps": summary.steps,
                "toolCalls": summary.tool_calls,
                "files": summary.files,
            }),
            attachments: Vec::new(),
        })
    }
}

impl TaskTool {
    /// The sub-agent profile `name`, when this session may start one: within the depth
    /// limit, and a sub-agent (not unknown, not primary-only).
    fn profile_for(&self, name: &str, parent_id: &str) -> Result<AgentProfile, ToolError> {
        let engine = &self.host.engine;
        let store = engine.store().map_err(failed)?;
        let max_depth = engine.config().task.max_depth;
        if depth_of(&store, parent_id)? + 1 > max_depth {
            return Err(ToolError::failed(depth_limit_text(max_depth)));
        }
        let catalog = engine.agents();
        let names = || catalog.names(|p| p.is_subagent() && !p.hidden);
        match catalog.resolve(name) {
            Ok(p) if p.is_subagent() => Ok(p),
            Ok(_) => Err(ToolError::failed(primary_only_text(name, &names()))),
            Err(_) => Err(ToolError::failed(unknown_subagent_text(name, &names()))),
        }
    }
}

/// "Files changed: a.rs, b.rs" relative to the session's directory, or "no files".
fn changed_files_text(files: &[String], cwd: &std::path::Path) -> String {
    if files.is_empty() {
        return "The sub-agent changed no files.".into();
    }
    let shown: Vec<String> = files
        .iter()
        .map(|f| {
            let p = std::path::Path::new(f);
            p.strip_prefix(cwd).unwrap_or(p).display().to_string()
        })
        .collect();
    format!("Files changed ({}): {}", shown.len(), shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_description_lists_the_sub_agents_and_is_pinned() {
        let explore = AgentProfile::explore();
        let general = AgentProfile::general();
        assert_eq!(
            task_description(&[&explore, &general]),
            "Start a sub-agent: it works on one task in its own session, with its own tools, and returns a final report. It does not see this conversation, so the prompt must say everything it needs: the goal, what you already know, whether to change code or only research, and what to report back.\n\nAvailable agent types (subagent_type):\n\
             - explore: Fast read-only search: finds files by pattern, greps the code and reads it to answer a question. Use it for open-ended searches that would take several rounds of grep and read.\n\
             - general: General-purpose agent for multi-step work: researching a question, searching code and making changes. Several can run at once on independent parts of a task.\n\
             \nUsage:\n- Several task calls in one response run at the same time: use that for independent pieces of work.\n- The result holds the sub-agent's final answer, the files it changed and its task_id. The user does not see it: tell them what matters.\n- Pass task_id (with a new prompt) to continue that sub-agent's session where it stopped."
        );
    }

    #[test]
    fn subagent_type_is_a_plain_string_with_a_pinned_description() {
        let catalog = AgentCatalog::from_config(&podcode_config::Config::default());
        let spec = task_spec(&catalog);
        assert_eq!(
            spec.parameters["properties"]["subagent_type"],
            json!({"type": "string", "description": "The type of sub-agent to use for this task: one of the agent types the tool description lists"})
        );
    }

    #[test]
    fn refusals_are_pinned() {
        assert_eq!(
            depth_limit_text(2),
            "task refused: sub-agents may nest at most 2 levels deep ([task] max_depth), and this session is already at that depth. Do this part of the work yourself."
        );
        assert_eq!(
            unknown_subagent_text("x", &["explore".into(), "general".into()]),
            "unknown subagent_type \"x\"; available: explore, general"
        );
        assert_eq!(
            primary_only_text("build", &["explore".into(), "general".into()]),
            "subagent_type \"build\" is a primary agent (mode: primary): only the user runs it, a task cannot start it; available sub-agents: explore, general"
        );
        assert_eq!(
            foreign_task_text("ses_1"),
            "task_id \"ses_1\" is not a sub-agent session started by this session; omit task_id to start a new one"
        );
    }

    #[test]
    fn changed_files_are_listed_relative_to_the_session() {
        let cwd = std::path::Path::new("/w");
        assert_eq!(
            changed_files_text(&[], cwd),
            "The sub-agent changed no files."
        );
        assert_eq!(
            changed_files_text(&["/w/a.rs".into(), "/x/b.rs".into()], cwd),
            "Files changed (2): a.rs, /x/b.rs"
        );
    }
}
