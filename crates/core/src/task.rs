//! The `task` tool: a session hands a piece of work to a sub-agent. Each call opens (or,
//! with `task_id`, continues) a child session in the store — `parent_id` the calling
//! session, `root_id` the top of the tree — and drives one turn of it with the sub-agent's
//! profile (tools, permission rules, model, temperature, steps), then returns the child's
//! final answer, the files it changed and its session id.
//!
//! Data flow: the child's events go up to the parent's event stream wrapped in
//! `Event::Subagent` (so `podcode run --format json` and the TUI see them tagged with the
//! child's id); its permission asks go to the top session's asker, labelled with the
//! sub-agent, and are answered by that session's front end with `Op::PermissionReply`. The
//! child runs under the `task` call's abort signal, so aborting the parent stops every
//! child (and their tools) before the call returns. Every session gets its own `task` tool
//! instance (`tools_for`), registered as a protected built-in, because it reports to its
//! own session.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use async_trait::async_trait;
use podcode_agent::{
    Agent, AgentCatalog, AgentOptions, AgentProfile, ReloadedTools, ToolReloader, filter_registry,
    load_history,
};
use podcode_protocol::{Event, PermissionReply, PermissionRequest, ToolResult, ToolSpec};
use podcode_providers::{ModelClient, Part, Role};
use podcode_store::{NewSession, Store};
use podcode_tools::{
    AskRequest, Asker, SourceKind, Tool, ToolContext, ToolError, ToolOrigin, ToolRegistry,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::asker::EventAsker;
use crate::engine::Engine;
use crate::session::resolve_model;
use crate::toolset::{SessionTools, ToolSet, ToolSets};

/// Where a session's events go; a child's sink wraps each event and passes it up.
pub(crate) type EventSink = Arc<dyn Fn(Event) + Send + Sync>;

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
pub(crate) fn tools_for(host: &TaskHost, set: &ToolSet) -> (ToolRegistry, Arc<dyn ToolReloader>) {
    let task: Arc<dyn Tool> = Arc::new(TaskTool::new(host.clone()));
    let registry = with_task(&set.registry, task.clone());
    let reloader = Arc::new(TaskReloader {
        inner: SessionTools {
            sets: host.sets.clone(),
            seen: AtomicU64::new(set.generation),
        },
        task,
    });
    (registry, reloader)
}

/// `full` with `task` registered among the built-ins, before any other source, so a
/// plugin's `task` is refused like any protected id.
fn with_task(full: &ToolRegistry, task: Arc<dyn Tool>) -> ToolRegistry {
    let mut out = ToolRegistry::new();
    let (builtins, others): (Vec<_>, Vec<_>) = full
        .tools()
        .iter()
        .partition(|t| t.source.kind == SourceKind::Builtin);
    for t in builtins {
        out.register_builtin(t.tool.clone());
    }
    out.register_builtin(task);
    for t in others {
        let source = ToolOrigin::new(t.source.kind, t.source.name.clone());
        out.merge(source, vec![t.tool.clone()]);
    }
    for p in full.problems() {
        out.add_problem(&p.source, p.level, p.message.clone());
    }
    out
}

struct TaskReloader {
    inner: SessionTools,
    task: Arc<dyn Tool>,
}

#[async_trait]
impl ToolReloader for TaskReloader {
    async fn reload(&self) -> Option<ReloadedTools> {
        let r = self.inner.reload().await?;
        Some(ReloadedTools {
            registry: Arc::new(with_task(&r.registry, self.task.clone())),
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

/// Labels a sub-agent's asks before the top session's asker shows them.
struct ChildAsker {
    inner: Arc<EventAsker>,
    label: String,
}

#[async_trait]
impl Asker for ChildAsker {
    async fn ask(&self, request: &AskRequest) -> PermissionReply {
        let mut request = request.clone();
        if !request.request.metadata.is_object() {
            request.request.metadata = json!({});
        }
        request.request.metadata["subagent"] = json!(self.label);
        self.inner.ask(&request).await
    }
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

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let a: TaskArgs = serde_json::from_value(args).map_err(failed)?;
        let engine = &self.host.engine;
        let store = engine.store().map_err(failed)?;
        let parent_id = ctx.session_id().to_string();
        let max_depth = engine.config().task.max_depth;
        if depth_of(&store, &parent_id)? + 1 > max_depth {
            return Err(ToolError::failed(depth_limit_text(max_depth)));
        }
        let catalog = engine.agents();
        let names = || catalog.names(|p| p.is_subagent() && !p.hidden);
        let profile = match catalog.resolve(&a.subagent_type) {
            Ok(p) if p.is_subagent() => p,
            Ok(_) => {
                return Err(ToolError::failed(primary_only_text(
                    &a.subagent_type,
                    &names(),
                )));
            }
            Err(_) => {
                return Err(ToolError::failed(unknown_subagent_text(
                    &a.subagent_type,
                    &names(),
                )));
            }
        };
        ctx.ask(PermissionRequest {
            permission: "task".into(),
            patterns: vec![profile.name.clone()],
            always: vec![profile.name.clone()],
            metadata: json!({"description": a.description, "prompt": a.prompt}),
        })
        .await?;
        ctx.metadata(Some(a.description.clone()), None);
        let parent = store
            .session(&parent_id)
            .map_err(failed)?
            .ok_or_else(|| failed(format!("no session with id {parent_id}")))?;
        let root_id = parent.root_id.clone().unwrap_or_else(|| parent_id.clone());
        let model = match &profile.model {
            Some(m) => resolve_model(engine, Some(m)).map_err(failed)?,
            None => self.host.model.clone(),
        };
        let child_id = match &a.task_id {
            Some(id) => match store.session(id).map_err(failed)? {
                Some(s) if s.parent_id.as_deref() == Some(parent_id.as_str()) => s.id,
                _ => return Err(ToolError::failed(foreign_task_text(id))),
            },
            None => {
                let title: String = a.description.chars().take(60).collect();
                store
                    .create_session(&NewSession {
                        parent_id: Some(parent_id.clone()),
                        root_id: Some(root_id.clone()),
                        agent: profile.name.clone(),
                        cwd: parent.cwd.clone(),
                        main_cwd: parent.main_cwd.clone(),
                        model: Some(model.model().to_string()),
                        title,
                    })
                    .map_err(failed)?
                    .id
            }
        };
        let up = self.host.sink.clone();
        let (sid, pid, cid, agent, desc) = (
            child_id.clone(),
            parent_id.clone(),
            ctx.call_id().to_string(),
            profile.name.clone(),
            a.description.clone(),
        );
        let sink: EventSink = Arc::new(move |event| {
            up(Event::Subagent {
                session_id: sid.clone(),
                parent_id: pid.clone(),
                call_id: cid.clone(),
                agent: agent.clone(),
                description: desc.clone(),
                event: Box::new(event),
            })
        });
        let host = TaskHost {
            model: model.clone(),
            sink: sink.clone(),
            ..self.host.clone()
        };
        let asker = Arc::new(ChildAsker {
            inner: self.host.asker.clone(),
            label: format!("{} · {}", profile.name, a.description),
        });
        let set = self.host.sets.latest();
        let (registry, reloader) = tools_for(&host, &set);
        let runtime = Arc::new(
            engine
                .runtime(
                    // A sub-agent never syncs a worktree back: the session that owns it does.
                    crate::worktree::without_sync(&filter_registry(&registry, &profile)),
                    set.hooks.clone(),
                    asker,
                    &profile.permission,
                    &profile.name,
                )
                .map_err(failed)?,
        );
        let forwarder = forward(&runtime, sink, engine.bus().clone());
        let cwd = PathBuf::from(&parent.cwd);
        let mut opts = AgentOptions::new(cwd.clone(), podcode_config::project_root(&cwd));
        opts.main_cwd = PathBuf::from(&parent.main_cwd);
        opts.config_dir = Some(engine.dirs().config_dir.clone());
        opts.parent_id = Some(parent_id.clone());
        opts.root_id = Some(root_id);
        opts.model_info = podcode_providers::model_info(engine.config(), model.model());
        opts.compaction = engine.config().compaction;
        opts.temperature = profile.temperature;
        if let Some(n) = profile.steps {
            opts.max_steps = n;
        }
        let name = profile.name.clone();
        let agent =
            Agent::new(runtime, model, store.clone(), profile, opts).with_reloader(reloader);
        let summary = agent
            .run_turn(&child_id, &a.prompt, ctx.abort().clone())
            .await
            .map_err(failed)?;
        // The runtime's sender goes with the agent; the forwarder then delivers what is
        // left, so the child's last events reach the parent before the `task` result.
        drop(agent);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), forwarder).await;
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
        let answer = final_answer(&store, &child_id);
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

/// The text of the child's last assistant message.
fn final_answer(store: &Store, session_id: &str) -> String {
    let Ok(history) = load_history(store, session_id) else {
        return String::new();
    };
    history
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map(|m| {
            m.parts
                .iter()
                .filter_map(|p| match p {
                    Part::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("")
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

/// Copies a child runtime's events into `sink` (and the engine's bus, for plugins' `event`
/// hooks); ends when the runtime is dropped.
fn forward(
    runtime: &podcode_tools::ToolRuntime,
    sink: EventSink,
    bus: tokio::sync::broadcast::Sender<Event>,
) -> tokio::task::JoinHandle<()> {
    use tokio::sync::broadcast::error::RecvError;
    let mut events = runtime.subscribe();
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(e) => {
                    if bus.receiver_count() > 0 {
                        let _ = bus.send(e.clone());
                    }
                    sink(e);
                }
                Err(RecvError::Lagged(n)) => sink(Event::Warning {
                    message: format!("{n} events of the sub-agent were dropped"),
                }),
                Err(RecvError::Closed) => break,
            }
        }
    })
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
