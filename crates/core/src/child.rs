//! Child sessions: where a `task` call's sub-agent works. `TaskHost::open_child` opens one
//! — a new session row under the calling session (`parent_id`, `root_id` the top of the
//! tree, the parent's directories), or the earlier child a `task_id` names — with the
//! sub-agent's profile (tools, permission rules, model, temperature, steps); `Child::run`
//! drives one turn of it under the `task` call's abort signal and waits for it.
//!
//! Data flow: the child's runtime events go up to the parent's event stream wrapped in
//! `Event::Subagent` (tagged with the child's id); its permission asks go to the top
//! session's asker, labelled with the sub-agent, and are answered by that session's front
//! end with `Op::PermissionReply`. The child runs in its parent's workspace: the engine, and
//! so the config, trust, rules, sandbox and tool set, of the directory the parent runs in.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use podcode_agent::{Agent, AgentOptions, AgentProfile, filter_registry, load_history};
use podcode_protocol::{Event, PermissionReply, TurnSummary};
use podcode_providers::{Part, Role};
use podcode_store::{NewSession, Store};
use podcode_tools::{AskRequest, Asker, ToolError};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::active::{ActiveSessions, Driver};
use crate::asker::EventAsker;
use crate::session::{resolve_model, runtime_sink};
use crate::task::{EventSink, TaskHost, foreign_task_text, tools_for};

/// What a `task` call asks for.
pub(crate) struct ChildSpec {
    /// The calling session.
    pub parent_id: String,
    /// The `task` call (its card shows the child's progress).
    pub call_id: String,
    /// The sub-agent's profile.
    pub profile: AgentProfile,
    /// The task's short description (the child's title).
    pub description: String,
    /// Continue this earlier child of the parent instead of starting one.
    pub task_id: Option<String>,
}

/// A child session ready for a turn.
pub(crate) struct Child {
    /// The child session's id (the `task_id` the model may pass again).
    pub id: String,
    /// The directory it works in.
    pub cwd: PathBuf,
    agent: Agent,
    store: Arc<Store>,
    active: Arc<ActiveSessions>,
}

/// How the child's turn went: its summary and its last answer.
pub(crate) struct ChildTurn {
    pub summary: TurnSummary,
    pub answer: String,
}

fn failed(e: impl std::fmt::Display) -> ToolError {
    ToolError::failed(e.to_string())
}

impl TaskHost {
    /// Opens the child `spec` asks for (see the module doc).
    pub(crate) fn open_child(&self, spec: ChildSpec) -> Result<Child, ToolError> {
        let engine = &self.engine;
        let store = engine.store().map_err(failed)?;
        let parent = store
            .session(&spec.parent_id)
            .map_err(failed)?
            .ok_or_else(|| failed(format!("no session with id {}", spec.parent_id)))?;
        let root_id = parent
            .root_id
            .clone()
            .unwrap_or_else(|| spec.parent_id.clone());
        let profile = spec.profile;
        let model = match &profile.model {
            Some(m) => resolve_model(engine, Some(m)).map_err(failed)?,
            None => self.model.clone(),
        };
        let child_id = match &spec.task_id {
            Some(id) => match store.session(id).map_err(failed)? {
                Some(s) if s.parent_id.as_deref() == Some(spec.parent_id.as_str()) => s.id,
                _ => return Err(ToolError::failed(foreign_task_text(id))),
            },
            None => {
                store
                    .create_session(&NewSession {
                        parent_id: Some(spec.parent_id.clone()),
                        root_id: Some(root_id.clone()),
                        agent: profile.name.clone(),
                        cwd: parent.cwd.clone(),
                        main_cwd: parent.main_cwd.clone(),
                        model: Some(model.model().to_string()),
                        title: spec.description.chars().take(60).collect(),
                    })
                    .map_err(failed)
                    .inspect(|row| engine.announce_session(row))?
                    .id
            }
        };
        let up = self.sink.clone();
        let (sid, pid, cid, agent, desc) = (
            child_id.clone(),
            spec.parent_id.clone(),
            spec.call_id,
            profile.name.clone(),
            spec.description.clone(),
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
            ..self.clone()
        };
        let asker = Arc::new(ChildAsker {
            inner: self.asker.clone(),
            label: format!("{} · {}", profile.name, spec.description),
        });
        let set = self.sets.latest();
        // A sub-agent never syncs a worktree back: the session that owns it does.
        let (registry, reloader) = tools_for(&host, &set, false);
        let runtime = Arc::new(
            engine
                .runtime(
                    filter_registry(&registry, &profile),
                    set.hooks.clone(),
                    asker,
                    &profile.permission,
                    &profile.name,
                    runtime_sink(sink, engine.bus()),
                )
                .map_err(failed)?,
        );
        let cwd = PathBuf::from(&parent.cwd);
        let mut opts = AgentOptions::new(cwd.clone(), podcode_config::project_root(&cwd));
        opts.warned_models = engine.warned_models.clone();
        opts.git_prefetch = engine.git_prefetch.clone();
        opts.main_cwd = PathBuf::from(&parent.main_cwd);
        opts.config_dir = Some(engine.dirs().config_dir.clone());
        opts.parent_id = Some(spec.parent_id);
        opts.root_id = Some(root_id);
        opts.model_info = podcode_providers::model_info(engine.config(), model.model());
        opts.compaction = engine.config().compaction;
        opts.temperature = profile.temperature;
        if let Some(n) = profile.steps {
            opts.max_steps = n;
        }
        let agent =
            Agent::new(runtime, model, store.clone(), profile, opts).with_reloader(reloader);
        Ok(Child {
            id: child_id,
            cwd,
            agent,
            store,
            active: engine.active.clone(),
        })
    }
}

impl Child {
    /// Runs one turn of the child with `prompt` under `abort`. Its events reached the
    /// parent's writer as they happened, so all of them come before the `task` result.
    pub(crate) async fn run(
        self,
        prompt: &str,
        abort: CancellationToken,
    ) -> Result<ChildTurn, ToolError> {
        let Child {
            id,
            agent,
            store,
            active,
            ..
        } = self;
        // A client may be prompting this session itself (a `task_id` names an earlier
        // child): one turn at a time, whoever drives it.
        let Some(_turn) = active.hold(&id, Driver::Task) else {
            return Err(ToolError::failed(busy_child_text(&id)));
        };
        let summary = agent.run_turn(&id, prompt, abort).await.map_err(failed)?;
        let answer = final_answer(&store, &id);
        Ok(ChildTurn { summary, answer })
    }
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

/// The `task` result when the child session it resumes has a turn running (a client is
/// prompting it).
pub fn busy_child_text(id: &str) -> String {
    format!(
        "the sub-agent session {id} is answering a prompt sent to it directly: wait for it to finish, or start a new sub-agent without task_id"
    )
}
