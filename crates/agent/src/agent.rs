//! `Agent`: one profile, one model, one tool runtime; `run_turn` is the loop.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use podcode_config::CompactionConfig;
use podcode_protocol::{Event, StepUsage, TurnEnd, TurnSummary};
use podcode_providers::{ModelClient, ModelInfo, Part, Role, unknown_model_warning};
use podcode_store::Store;
use podcode_tools::{CallIdentity, CallStatus, ToolHook, ToolRegistry, ToolRuntime};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::budget::{Budget, estimate_fixed};
use crate::calls::{CallDone, Calls, DoomTracker};
use crate::compaction::Reason;
use crate::error::AgentError;
use crate::history::{History, PartKind, StepStatus, TextData};
use crate::profile::{AgentProfile, filter_registry};
use crate::record::Recorder;
use crate::step::StepOutput;
use crate::texts::{max_steps_text, no_tools_text};

mod chat_hooks;
mod command;
mod context;
mod messages_hook;
mod offered;

/// A custom command's turn.
#[derive(Debug, Clone, Copy)]
pub struct CommandTurn<'a> {
    /// The command's name.
    pub name: &'a str,
    /// What the user typed after the name (plugins' `command.execute.before` sees it).
    pub arguments: &'a str,
    /// The sub-agent profile it runs in, if any.
    pub subtask: Option<&'a str>,
}

/// A rebuilt tool set: the complete (unfiltered) registry and the hooks of the plugins
/// that were loaded with it.
pub struct ReloadedTools {
    /// Every tool of the rebuilt set; the agent narrows it to its profile.
    pub registry: Arc<ToolRegistry>,
    /// `tool.execute.before/after` hooks of the plugins loaded with it.
    pub hooks: Vec<Arc<dyn ToolHook>>,
}

/// Rebuilds the tool set when tool or plugin files changed on disk.
#[async_trait]
pub trait ToolReloader: Send + Sync {
    /// Called before every model request; `Some` is the new tool set.
    async fn reload(&self) -> Option<ReloadedTools>;
}

/// How one session's loop runs: limits, directories, the model's facts and compaction.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// Model requests with tools per turn; then one more, without tools, for a summary.
    pub max_steps: u32,
    /// Retries of a step whose stream was cut (so up to `1 + this` attempts).
    pub max_stream_retries: u32,
    /// Pause before retrying a cut step.
    pub stream_retry_delay: Duration,
    /// The session's working directory.
    pub directory: PathBuf,
    /// The user's primary workspace.
    pub main_cwd: PathBuf,
    /// The workspace root (git root): `AGENTS.md` files are read from here down.
    pub worktree: PathBuf,
    /// The global config directory, for `AGENTS.md` there.
    pub config_dir: Option<PathBuf>,
    /// Reply token limit sent with each request; `None`: the provider client's default.
    pub max_tokens: Option<u32>,
    /// Sampling temperature; `None`: the provider's default.
    pub temperature: Option<f64>,
    /// The model's context window, reply limit and prices (`podcode_providers::model_info`).
    pub model_info: ModelInfo,
    /// When the conversation is compacted (`[compaction]`).
    pub compaction: CompactionConfig,
    /// Set for a sub-agent session: the session that started it and the top of the tree
    /// (tools see them as `ctx.parentID`/`ctx.rootID`).
    pub parent_id: Option<String>,
    /// The top-level session of a sub-agent's tree.
    pub root_id: Option<String>,
    /// Models the "not in the catalog" warning was given for, shared by every session of
    /// an engine: the user reads it once, not in every new session.
    pub warned_models: Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
    /// A git status read ahead of the turn (`GitPrefetch`), shared by an engine's sessions.
    pub git_prefetch: crate::prompt::GitPrefetch,
}

impl AgentOptions {
    /// Defaults (50 steps, 2 stream retries) for a session working in `directory` inside
    /// `worktree`.
    pub fn new(directory: PathBuf, worktree: PathBuf) -> Self {
        Self {
            max_steps: 50,
            max_stream_retries: 2,
            stream_retry_delay: Duration::from_millis(250),
            main_cwd: directory.clone(),
            directory,
            worktree,
            config_dir: None,
            max_tokens: None,
            temperature: None,
            model_info: ModelInfo::fallback(),
            compaction: CompactionConfig::default(),
            parent_id: None,
            root_id: None,
            warned_models: Arc::default(),
            git_prefetch: Default::default(),
        }
    }
}

/// One session's agent loop: sends the history to the model, runs the tool calls it asks for
/// through the runtime, records everything in the store, and repeats until the model answers.
pub struct Agent {
    runtime: Arc<ToolRuntime>,
    model: Arc<dyn ModelClient>,
    store: Arc<Store>,
    profile: AgentProfile,
    opts: AgentOptions,
    reloader: Option<Arc<dyn ToolReloader>>,
    /// The context budget, calibrated by every response.
    budget: Mutex<Budget>,
    /// The unknown-model warning was shown.
    warned: AtomicBool,
    /// The turn's user message (id, created in ms): `chat.params` hooks get it as opencode's
    /// `message`.
    turn_message: Mutex<Option<(String, i64)>>,
    /// What plugins' `tool.definition` made of each tool definition.
    tool_definitions: Mutex<chat_hooks::Definitions>,
    /// The tools the last step offered (see `offered`).
    offered: offered::OfferedCache,
}

impl Agent {
    /// Narrows the runtime's registry to the tools `profile` offers (the agent owns the
    /// runtime's registry from here on; reloads are narrowed the same way).
    pub fn new(
        runtime: Arc<ToolRuntime>,
        model: Arc<dyn ModelClient>,
        store: Arc<Store>,
        profile: AgentProfile,
        opts: AgentOptions,
    ) -> Self {
        runtime.set_registry(filter_registry(&runtime.registry(), &profile));
        let budget = Mutex::new(Budget::new(&opts.model_info, &opts.compaction));
        Self {
            runtime,
            model,
            store,
            profile,
            opts,
            reloader: None,
            budget,
            warned: AtomicBool::new(false),
            turn_message: Mutex::new(None),
            tool_definitions: Mutex::new(chat_hooks::Definitions::new()),
            offered: Mutex::new(None),
        }
    }

    /// Checks for a rebuilt tool set before every model request.
    pub fn with_reloader(mut self, reloader: Arc<dyn ToolReloader>) -> Self {
        self.reloader = Some(reloader);
        self
    }

    /// The agent profile this loop runs.
    pub fn profile(&self) -> &AgentProfile {
        &self.profile
    }

    /// The tool runtime calls go through (its registry narrowed to the profile).
    pub fn runtime(&self) -> &Arc<ToolRuntime> {
        &self.runtime
    }

    /// Takes `user_text` through the loop. Model failures end the turn with
    /// `TurnEnd::Error` (and a summary); `Err` means the store could not be written.
    /// Every path ends with one `Event::TurnFinished`.
    pub async fn run_turn(
        &self,
        session_id: &str,
        user_text: &str,
        abort: CancellationToken,
    ) -> Result<TurnSummary, AgentError> {
        self.run_turn_with_files(session_id, user_text, &[], abort)
            .await
    }

    /// `run_turn` with files the user attached: each is read through the `read` tool (its
    /// permission rules apply) before the first request, and joins the user's message.
    pub async fn run_turn_with_files(
        &self,
        session_id: &str,
        user_text: &str,
        files: &[String],
        abort: CancellationToken,
    ) -> Result<TurnSummary, AgentError> {
        self.run_prompt(session_id, user_text, files, None, abort)
            .await
    }

    /// A custom command's turn: `text` is its template with the arguments filled in; each
    /// ``!`cmd` `` in it runs through the `bash` tool (its permission rules and sandbox) and
    /// is replaced by what the call returned, then the turn goes on as for a prompt with
    /// `files` attached. The stored message names the command.
    /// With `subtask` (an agent profile's name) the filled-in prompt goes to a sub-agent of
    /// that profile through a `task` call before the model answers.
    pub async fn run_command_turn(
        &self,
        session_id: &str,
        command: CommandTurn<'_>,
        text: &str,
        files: &[String],
        abort: CancellationToken,
    ) -> Result<TurnSummary, AgentError> {
        self.run_prompt(session_id, text, files, Some(command), abort)
            .await
    }

    async fn run_prompt(
        &self,
        session_id: &str,
        user_text: &str,
        files: &[String],
        command: Option<CommandTurn<'_>>,
        abort: CancellationToken,
    ) -> Result<TurnSummary, AgentError> {
        let (rec, mut history, system) = self.open_conversation(session_id).await?;
        let identity = self.identity(session_id);
        let (message_id, user_text) = match command {
            None => {
                let text = self.chat_message_hook(session_id, user_text).await;
                let id = self.user_message(&rec, &mut history, &text, false)?;
                (id, text)
            }
            Some(CommandTurn {
                name, arguments, ..
            }) => {
                let id = self.open_user_message(&rec, false, Some(name))?;
                let text =
                    command::run_shell_snippets(&rec, &identity, &id, name, user_text, &abort)
                        .await;
                let text = self.command_hook(session_id, name, arguments, &text).await;
                let text = self.chat_message_hook(session_id, &text).await;
                self.user_text(&rec, &mut history, &id, &text)?;
                (id, text)
            }
        };
        rec.emit(Event::UserMessage {
            session_id: session_id.to_string(),
            message_id: message_id.clone(),
            text: user_text.clone(),
            files: files.to_vec(),
        });
        rec.emit(Event::TurnStarted {
            session_id: session_id.to_string(),
            agent: self.profile.name.clone(),
            model: self.model.model().to_string(),
        });
        let first_warning = || {
            self.opts
                .warned_models
                .lock()
                .map(|mut w| w.insert(self.model.model().to_string()))
                .unwrap_or(true)
        };
        if !self.opts.model_info.known
            && !self.warned.swap(true, Ordering::Relaxed)
            && first_warning()
        {
            rec.emit(Event::Warning {
                message: unknown_model_warning(self.model.model()),
            });
        }

        let mut summary = TurnSummary {
            session_id: session_id.to_string(),
            end: TurnEnd::Answered,
            steps: 0,
            tool_calls: 0,
            usage: StepUsage::default(),
            changes: Vec::new(),
            files: Vec::new(),
            error: None,
        };
        if !files.is_empty() {
            let parts =
                crate::attach::attach_files(&rec, &identity, &message_id, files, &abort).await?;
            history.push(Role::User, parts);
        }
        let mut doom = DoomTracker::default();
        let mut child_files: Vec<String> = Vec::new();
        if let Some(CommandTurn {
            name,
            subtask: Some(subagent),
            ..
        }) = command
        {
            let args = json!({
                "description": format!("/{name}"),
                "prompt": user_text,
                "subagent_type": subagent,
            });
            summary.steps += 1;
            let out = crate::step::synthetic_step(
                &rec,
                &self.opts.model_info,
                &self.model,
                &self.profile.name,
                summary.steps,
                "task",
                args.to_string(),
            )
            .await?;
            history.push(Role::Assistant, out.parts.clone());
            summary.tool_calls += 1;
            let calls = Calls {
                rec: &rec,
                identity: &identity,
                message_id: &out.message_id,
                abort: &abort,
            };
            let done = calls.run(&out.calls, &mut doom).await;
            for d in &done {
                summary.changes.extend(d.changes.iter().cloned());
                child_files.extend(d.child_files.iter().cloned());
            }
            history.push(Role::User, done.into_iter().map(|d| d.result).collect());
        }
        loop {
            if abort.is_cancelled() {
                summary.end = TurnEnd::Aborted;
                break;
            }
            let last = summary.steps >= self.opts.max_steps;
            if last {
                self.user_message(
                    &rec,
                    &mut history,
                    &max_steps_text(self.opts.max_steps),
                    true,
                )?;
            } else {
                self.reload_tools().await;
            }
            summary.steps += 1;
            let out = match self
                .step(&rec, &mut history, &system, !last, summary.steps, &abort)
                .await?
            {
                Ok(out) => out,
                Err(_) if abort.is_cancelled() => {
                    summary.end = TurnEnd::Aborted;
                    break;
                }
                Err(error) => {
                    summary.end = TurnEnd::Error;
                    summary.error = Some(error);
                    break;
                }
            };
            summary.usage.add(&out.usage);
            history.push(Role::Assistant, out.parts.clone());
            if out.status == StepStatus::Aborted {
                summary.end = TurnEnd::Aborted;
                break;
            }
            if out.calls.is_empty() {
                summary.end = if last {
                    TurnEnd::MaxSteps
                } else {
                    TurnEnd::Answered
                };
                break;
            }
            summary.tool_calls += out.calls.len() as u32;
            let done = if last {
                self.refuse_calls(&rec, &out)
            } else {
                let calls = Calls {
                    rec: &rec,
                    identity: &identity,
                    message_id: &out.message_id,
                    abort: &abort,
                };
                calls.run(&out.calls, &mut doom).await
            };
            for d in &done {
                summary.changes.extend(d.changes.iter().cloned());
                child_files.extend(d.child_files.iter().cloned());
            }
            history.push(Role::User, done.into_iter().map(|d| d.result).collect());
            if last {
                summary.end = TurnEnd::MaxSteps;
                break;
            }
        }
        for id in &summary.changes {
            if let Some(c) = self.store.change(id)?
                && !summary.files.contains(&c.file)
            {
                summary.files.push(c.file);
            }
        }
        // What the turn's sub-agents changed is part of what the turn changed.
        for file in child_files {
            if !summary.files.contains(&file) {
                summary.files.push(file);
            }
        }
        rec.emit(Event::TurnFinished {
            session_id: session_id.to_string(),
            summary: summary.clone(),
        });
        Ok(summary)
    }

    /// Who the turn's calls are made as.
    fn identity(&self, session_id: &str) -> CallIdentity {
        CallIdentity {
            session_id: session_id.to_string(),
            agent: self.profile.name.clone(),
            main_cwd: self.opts.main_cwd.clone(),
            directory: self.opts.directory.clone(),
            worktree: self.opts.worktree.clone(),
            parent_id: self.opts.parent_id.clone(),
            root_id: self.opts.root_id.clone(),
            model_images: self
                .opts
                .model_info
                .known
                .then_some(self.opts.model_info.images),
            ..Default::default()
        }
    }

    fn user_message(
        &self,
        rec: &Recorder,
        history: &mut History,
        text: &str,
        synthetic: bool,
    ) -> Result<String, AgentError> {
        let id = self.open_user_message(rec, synthetic, None)?;
        self.user_text(rec, history, &id, text)?;
        Ok(id)
    }

    /// Stores a user message (its text comes with `user_text`); `command` names the custom
    /// command it came from.
    fn open_user_message(
        &self,
        rec: &Recorder,
        synthetic: bool,
        command: Option<&str>,
    ) -> Result<String, AgentError> {
        let mut content = json!({ "agent": self.profile.name });
        if synthetic {
            content["synthetic"] = json!(true);
        }
        if let Some(name) = command {
            content["command"] = json!(name);
        }
        let id = rec.message("user", &content)?;
        self.set_turn_message(&id);
        Ok(id)
    }

    fn user_text(
        &self,
        rec: &Recorder,
        history: &mut History,
        id: &str,
        text: &str,
    ) -> Result<(), AgentError> {
        let data = TextData {
            text: text.to_string(),
            interrupted: false,
        };
        rec.part(id, PartKind::Text, &data)?;
        history.push(
            Role::User,
            vec![Part::Text {
                text: text.to_string(),
            }],
        );
        Ok(())
    }

    async fn reload_tools(&self) {
        if let Some(r) = &self.reloader
            && let Some(reloaded) = r.reload().await
        {
            let offered = filter_registry(&reloaded.registry, &self.profile);
            let tools = offered.listing();
            self.runtime.set_registry(offered);
            self.runtime.set_hooks(reloaded.hooks);
            self.runtime.emit(Event::ToolsReloaded { tools });
        }
    }

    /// One step, retried when its stream is cut. Before it, the conversation is compacted
    /// when it would pass the context budget; a provider's overflow error compacts and
    /// retries once. `Ok(Err(text))` ends the turn in error.
    async fn step(
        &self,
        rec: &Recorder,
        history: &mut History,
        system: &str,
        with_tools: bool,
        step: u32,
        abort: &CancellationToken,
    ) -> Result<Result<StepOutput, String>, AgentError> {
        let tools = self
            .tool_definition_hook(self.tool_specs(with_tools, history))
            .await;
        let fixed = estimate_fixed(system, self.tools_chars(&tools));
        let mut extra = StepUsage::default();
        if self.opts.compaction.auto {
            let out = self
                .compactor(rec)
                .run(history, fixed, Reason::Auto, abort)
                .await?;
            extra.add(&out.usage);
            if let Some(e) = out.error {
                rec.emit(Event::Warning {
                    message: format!("could not summarise the conversation: {e}"),
                });
            }
        }
        let out = self
            .attempts(
                rec,
                history,
                system,
                (tools, with_tools),
                fixed,
                step,
                abort,
            )
            .await?;
        Ok(out.map(|mut o| {
            // The summarising request's tokens count toward the turn too.
            o.usage.add(&extra);
            o
        }))
    }

    /// Calls made in the final, tool-less request still get a result each.
    fn refuse_calls(&self, rec: &Recorder, out: &StepOutput) -> Vec<CallDone> {
        let mut done = Vec::new();
        for c in &out.calls {
            let text = no_tools_text(&c.name);
            let args = serde_json::from_str(&c.arguments).unwrap_or(json!(c.arguments));
            rec.settled_call(
                &out.message_id,
                &c.call_id,
                &c.name,
                &args,
                CallStatus::Failed,
                &text,
            );
            done.push(CallDone {
                result: Part::ToolResult {
                    call_id: c.provider_id.clone(),
                    output: text,
                    is_error: true,
                    attachments: Vec::new(),
                },
                changes: Vec::new(),
                child_files: Vec::new(),
            });
        }
        done
    }
}
