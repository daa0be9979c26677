//! The agent's side of long sessions: the manual `/compact`, and the attempts of one step
//! — each request is built from the (possibly compacted) history, a cut stream is retried,
//! and a provider's context-overflow error compacts the conversation and retries once.
//! Every response calibrates the context budget with the tokens the provider reported.

use podcode_protocol::{Event, StepUsage};
use podcode_providers::{ChatRequest, ToolList};
use tokio_util::sync::CancellationToken;

use super::Agent;
use crate::budget::{Budget, estimate_fixed, estimate_messages};
use crate::compaction::{Compactor, Reason};
use crate::error::AgentError;
use crate::history::{History, load_with_window, without_tool_parts};
use crate::prompt::{SystemContext, system_prompt};
use crate::record::Recorder;
use crate::step::{StepFailure, StepOutput, run_step};
use crate::texts::stream_failed_text;

impl Agent {
    /// What a turn and `/compact` both start from: the session's recorder, its history
    /// from the store, and the system prompt.
    pub(super) async fn open_conversation(
        &self,
        session_id: &str,
    ) -> Result<(Recorder, History, String), AgentError> {
        if self.store.session(session_id)?.is_none() {
            return Err(AgentError::UnknownSession(session_id.to_string()));
        }
        let rec = Recorder {
            store: self.store.clone(),
            runtime: self.runtime.clone(),
            session: session_id.to_string(),
        };
        let (messages, window) =
            load_with_window(&self.store, session_id, &self.model.model().to_string())?;
        if let Some(window) = window {
            self.lock_budget().learn(window);
        }
        let history = History { messages };
        let ctx = SystemContext {
            cwd: self.opts.directory.clone(),
            project_root: self.opts.worktree.clone(),
            config_dir: self.opts.config_dir.clone(),
        };
        let prefetch = Some(&self.opts.git_prefetch);
        let system = system_prompt(&ctx, self.profile.prompt.as_deref(), prefetch).await;
        Ok((rec, history, system))
    }

    pub(super) fn compactor<'a>(&'a self, rec: &'a Recorder) -> Compactor<'a> {
        Compactor {
            rec,
            model: &self.model,
            info: &self.opts.model_info,
            budget: &self.budget,
            prune: self.opts.compaction.prune,
        }
    }

    /// Compacts the session's conversation now (`/compact`): prunes old tool outputs and
    /// summarises the older turns. False when there was nothing to compact; a failed
    /// summary is a warning event.
    pub async fn compact(
        &self,
        session_id: &str,
        abort: CancellationToken,
    ) -> Result<bool, AgentError> {
        let (rec, mut history, system) = self.open_conversation(session_id).await?;
        let tools = self.tool_specs(true, &history);
        let fixed = estimate_fixed(&system, self.tools_chars(&tools));
        let out = self
            .compactor(&rec)
            .run(&mut history, fixed, Reason::Manual, &abort)
            .await?;
        if let Some(e) = &out.error {
            rec.emit(Event::Warning {
                message: format!("could not summarise the conversation: {e}"),
            });
        }
        Ok(out.changed)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) async fn attempts(
        &self,
        rec: &Recorder,
        history: &mut History,
        system: &str,
        (tools, with_tools): (ToolList, bool),
        fixed: u64,
        step: u32,
        abort: &CancellationToken,
    ) -> Result<Result<StepOutput, String>, AgentError> {
        let mut overflowed = false;
        // The summarising request after an overflow counts toward the step's usage.
        let mut spent = StepUsage::default();
        let params = self.chat_params_hook(&rec.session).await;
        let headers = self.chat_headers_hook(&rec.session).await;
        let system = self.system_transform_hook(&rec.session, system).await;
        let system = system.as_str();
        let mut attempt = 0;
        // The first request takes the step's tool list; a retry (rare) builds it again
        // rather than every request paying for a copy.
        let mut tools = Some(tools);
        loop {
            attempt += 1;
            let raw = fixed + estimate_messages(&history.messages);
            // Before the conversation is taken: which tools are offered depends on it.
            let offered = match tools.take() {
                Some(tools) => tools,
                None => {
                    self.tool_definition_hook(self.tool_specs(with_tools, history))
                        .await
                }
            };
            // The request takes the conversation itself and gives it back once sent: it
            // is not copied at every step. A tool-less request, or one a plugin rewrote,
            // sends its own copy.
            let borrowed = with_tools;
            let messages = if with_tools {
                std::mem::take(&mut history.messages)
            } else {
                without_tool_parts(&history.messages)
            };
            let (messages, borrowed) = match self
                .messages_transform_hook(&rec.session, &messages, |message| {
                    rec.emit(Event::Warning { message })
                })
                .await
            {
                Some(rewritten) => {
                    if borrowed {
                        history.messages = messages;
                    }
                    (rewritten, false)
                }
                None => (messages, borrowed),
            };
            let mut request = ChatRequest {
                model: self.model.model().model.clone(),
                system: system.to_string(),
                messages,
                tools: offered,
                max_tokens: params.max_tokens,
                temperature: params.temperature,
                top_p: params.top_p,
                top_k: params.top_k,
                options: params.options.clone(),
                cache_key: Some(rec.session.clone()),
                headers: headers.clone(),
            };
            let info = &self.opts.model_info;
            let stepped = run_step(
                rec,
                info,
                &self.runtime,
                &self.model,
                &self.profile.name,
                step,
                &request,
                abort,
            )
            .await;
            if borrowed {
                history.messages = std::mem::take(&mut request.messages);
            }
            match stepped? {
                Ok(mut out) => {
                    self.lock_budget().calibrate(raw, out.usage.input_tokens);
                    out.usage.add(&spent);
                    return Ok(Ok(out));
                }
                Err(StepFailure::Failed(e)) => return Ok(Err(e)),
                Err(StepFailure::Overflow(e)) if overflowed => return Ok(Err(e)),
                Err(StepFailure::Overflow(e)) => {
                    overflowed = true;
                    self.lock_budget().overflowed(raw, &e);
                    let out = self
                        .compactor(rec)
                        .run(history, fixed, Reason::Overflow, abort)
                        .await?;
                    spent.add(&out.usage);
                    if !out.changed {
                        let why = out.error.map(|c| format!("; compacting failed: {c}"));
                        return Ok(Err(format!("{e}{}", why.unwrap_or_default())));
                    }
                    attempt -= 1;
                }
                Err(StepFailure::Cut(e)) if attempt > self.opts.max_stream_retries => {
                    return Ok(Err(stream_failed_text(attempt, &e)));
                }
                Err(StepFailure::Cut(e)) => {
                    rec.emit(Event::StepRetry {
                        session_id: rec.session.clone(),
                        step,
                        attempt: attempt + 1,
                        error: e,
                    });
                    tokio::select! {
                        _ = tokio::time::sleep(self.opts.stream_retry_delay) => {}
                        _ = abort.cancelled() => return Ok(Err("aborted while retrying".into())),
                    }
                }
            }
        }
    }

    pub(super) fn lock_budget(&self) -> std::sync::MutexGuard<'_, Budget> {
        self.budget.lock().unwrap_or_else(|p| p.into_inner())
    }
}
