//! One model request: stream the response, emit deltas, and record each part in the store
//! as soon as it is complete (a text or reasoning block when the next block starts, tool
//! calls when the response finishes, then the `step` part with usage). A cut or failed
//! stream marks the step so it is never taken for a complete one. A text block that ended
//! whole goes through plugins' `experimental.text.complete` before it is stored: what the hook
//! leaves is what the store keeps and the model reads next (`TextReplaced` tells front ends).

use std::sync::Arc;

use podcode_protocol::{Event, StepUsage, new_id};
use podcode_providers::{
    ChatRequest, FinishReason, ModelClient, ModelInfo, Part, ProviderError, StreamEvent, Usage,
};
use podcode_store::StoreError;
use podcode_tools::ToolRuntime;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::history::{
    PartKind, ReasoningData, StepData, StepStatus, StoredPart, TextData, ToolData, assistant_part,
};
use crate::record::Recorder;

/// A step whose response arrived in full, or was stopped by the user.
pub(crate) struct StepOutput {
    pub message_id: String,
    /// `Completed` or `Aborted`.
    pub status: StepStatus,
    /// What goes back to the model in the next request (text, reasoning, tool calls).
    pub parts: Vec<Part>,
    pub calls: Vec<ToolData>,
    pub usage: StepUsage,
}

/// Why a step produced nothing usable.
pub(crate) enum StepFailure {
    /// The stream broke after it started: worth retrying.
    Cut(String),
    /// The request failed (configuration, HTTP, protocol): not retried here.
    Failed(String),
    /// The provider refused the prompt as longer than the context window: the loop
    /// compacts and retries once.
    Overflow(String),
}

enum Open {
    None,
    Text(String),
    Reasoning(String, Option<String>),
}

struct Pending {
    index: usize,
    data: ToolData,
}

/// opencode's hook on a finished text block.
const TEXT_COMPLETE: &str = "experimental.text.complete";

struct Streaming<'a> {
    rec: &'a Recorder,
    info: &'a ModelInfo,
    /// The runtime whose plugins have `experimental.text.complete`, when any has.
    text_hook: Option<&'a ToolRuntime>,
    message_id: String,
    open: Open,
    parts: Vec<Part>,
    pending: Vec<Pending>,
    usage: StepUsage,
    finish: Option<String>,
}

impl<'a> Streaming<'a> {
    /// A new assistant message for step `step`, announced.
    fn open(
        rec: &'a Recorder,
        info: &'a ModelInfo,
        text_hook: Option<&'a ToolRuntime>,
        model: &Arc<dyn ModelClient>,
        agent: &str,
        step: u32,
    ) -> Result<Self, StoreError> {
        let content = json!({ "agent": agent, "model": model.model().to_string() });
        let message_id = rec.message("assistant", &content)?;
        rec.emit(Event::StepStarted {
            session_id: rec.session.clone(),
            message_id: message_id.clone(),
            step,
        });
        Ok(Self {
            rec,
            info,
            text_hook: text_hook.filter(|rt| rt.has_chat_hook(TEXT_COMPLETE)),
            message_id,
            open: Open::None,
            parts: Vec::new(),
            pending: Vec::new(),
            usage: StepUsage::default(),
            finish: None,
        })
    }

    async fn close(&mut self, interrupted: bool) -> Result<(), StoreError> {
        let stored = match std::mem::replace(&mut self.open, Open::None) {
            Open::None => return Ok(()),
            Open::Text(text) => {
                let text = match self.text_hook {
                    Some(rt) if !interrupted => self.complete_text(rt, text).await,
                    _ => text,
                };
                StoredPart::Text(TextData { text, interrupted })
            }
            Open::Reasoning(text, signature) => StoredPart::Reasoning(ReasoningData {
                text,
                signature,
                interrupted,
            }),
        };
        match &stored {
            StoredPart::Text(t) => self.rec.part(&self.message_id, PartKind::Text, t)?,
            StoredPart::Reasoning(r) => self.rec.part(&self.message_id, PartKind::Reasoning, r)?,
            _ => {}
        }
        if let Some(p) = assistant_part(&stored) {
            self.parts.push(p);
        }
        Ok(())
    }

    /// `experimental.text.complete` (opencode's input `{sessionID, messageID, partID}`,
    /// output `{text}`) on a block that ended whole; a changed text is announced.
    async fn complete_text(&self, rt: &ToolRuntime, text: String) -> String {
        let input = json!({"sessionID": self.rec.session, "messageID": self.message_id,
            "partID": new_id("prt")});
        let out = rt
            .chat_hook(TEXT_COMPLETE, input, json!({ "text": text }))
            .await;
        match out["text"].as_str() {
            Some(done) if done != text => {
                self.rec.emit(Event::TextReplaced {
                    message_id: self.message_id.clone(),
                    text: done.to_string(),
                });
                done.to_string()
            }
            _ => text,
        }
    }

    async fn apply(&mut self, ev: StreamEvent) -> Result<(), StoreError> {
        match ev {
            StreamEvent::TextDelta { text } => {
                if !matches!(self.open, Open::Text(_)) {
                    self.close(false).await?;
                    self.open = Open::Text(String::new());
                }
                if let Open::Text(buf) = &mut self.open {
                    buf.push_str(&text);
                }
                self.rec.emit(Event::TextDelta {
                    message_id: self.message_id.clone(),
                    text,
                });
            }
            StreamEvent::ReasoningDelta { text } => {
                if !matches!(self.open, Open::Reasoning(..)) {
                    self.close(false).await?;
                    self.open = Open::Reasoning(String::new(), None);
                }
                if let Open::Reasoning(buf, _) = &mut self.open {
                    buf.push_str(&text);
                }
                self.rec.emit(Event::ReasoningDelta {
                    message_id: self.message_id.clone(),
                    text,
                });
            }
            StreamEvent::ReasoningSignature { signature } => {
                if !matches!(self.open, Open::Reasoning(..)) {
                    self.close(false).await?;
                    self.open = Open::Reasoning(String::new(), None);
                }
                if let Open::Reasoning(_, sig) = &mut self.open {
                    *sig = Some(signature);
                }
            }
            StreamEvent::ToolCallStart { index, id, name } => {
                self.close(false).await?;
                let call_id = new_id("call");
                self.rec.emit(Event::ToolRequested {
                    message_id: self.message_id.clone(),
                    call_id: call_id.clone(),
                    tool: name.clone(),
                });
                let provider_id = if id.is_empty() { call_id.clone() } else { id };
                self.pending.push(Pending {
                    index,
                    data: ToolData {
                        call_id,
                        provider_id,
                        name,
                        arguments: String::new(),
                    },
                });
            }
            StreamEvent::ToolCallDelta { index, arguments } => {
                if let Some(p) = self.pending.iter_mut().rev().find(|p| p.index == index) {
                    p.data.arguments.push_str(&arguments);
                }
            }
            StreamEvent::Usage { usage } => merge_usage(&mut self.usage, &usage),
            StreamEvent::Finish { reason } => {
                self.finish = Some(match reason {
                    FinishReason::Stop => "stop".into(),
                    FinishReason::ToolCalls => "tool_calls".into(),
                    FinishReason::Length => "length".into(),
                    FinishReason::Other(s) => s,
                });
            }
        }
        Ok(())
    }

    /// Closes the step: open block, then (when complete) the tool calls, then `step`.
    async fn end(
        mut self,
        step: u32,
        status: StepStatus,
        error: Option<String>,
    ) -> Result<StepOutput, StoreError> {
        self.close(status != StepStatus::Completed).await?;
        let mut calls = Vec::new();
        // The tool calls, the `step` part and the session's new totals are written in one
        // transaction, before anything announces the step.
        let mut rows = Vec::new();
        if status == StepStatus::Completed {
            self.pending.sort_by_key(|p| p.index);
            for p in self.pending.drain(..) {
                rows.push((PartKind::Tool.as_str(), serde_json::to_value(&p.data)?));
                if let Some(part) = assistant_part(&StoredPart::Tool(p.data.clone())) {
                    self.parts.push(part);
                }
                calls.push(p.data);
            }
        }
        // Accounting: a price from the catalog when the provider reports none.
        if self.usage.cost.is_none() {
            self.usage.cost = self.info.cost_of(&self.usage);
        }
        let data = StepData {
            step,
            status,
            finish_reason: self.finish.clone(),
            usage: self.usage,
            error,
        };
        rows.push((PartKind::Step.as_str(), serde_json::to_value(&data)?));
        let used = (self.usage != StepUsage::default()).then_some(&self.usage);
        self.rec
            .store
            .end_step(&self.message_id, &self.rec.session, &rows, used)?;
        self.rec.emit(Event::StepFinished {
            session_id: self.rec.session.clone(),
            message_id: self.message_id.clone(),
            step,
            status: status.as_str().into(),
            finish_reason: self.finish.clone(),
            usage: self.usage,
        });
        // The session's totals, when this request reported anything.
        if self.usage != StepUsage::default()
            && let Some(total) = self.rec.store.session_usage(&self.rec.session)?
        {
            self.rec.emit(Event::Usage {
                session_id: self.rec.session.clone(),
                total,
                context_tokens: self.usage.input_tokens,
                context_window: self.info.context,
            });
        }
        Ok(StepOutput {
            message_id: self.message_id,
            status,
            parts: self.parts,
            calls,
            usage: self.usage,
        })
    }
}

/// Providers report usage once or piecemeal (Anthropic: input at the start, output at the
/// end); a non-zero field replaces what was known.
fn merge_usage(into: &mut StepUsage, u: &Usage) {
    let set = |slot: &mut u64, v: u64| {
        if v > 0 {
            *slot = v;
        }
    };
    set(&mut into.input_tokens, u.input_tokens);
    set(&mut into.output_tokens, u.output_tokens);
    set(&mut into.cache_read_tokens, u.cache_read_tokens);
    set(&mut into.cache_write_tokens, u.cache_write_tokens);
    set(&mut into.reasoning_tokens, u.reasoning_tokens);
    if u.cost.is_some() {
        into.cost = u.cost;
    }
}

enum Stop {
    Finished,
    Aborted,
    Cut(String),
    Failed(String),
    Overflow(String),
}

/// A step the model did not stream: one call of `tool` with `arguments`, recorded and
/// announced exactly as if the model had asked for it (a custom command with `subtask`
/// starts its `task` call this way, so every front end shows it as a sub-agent card).
pub(crate) async fn synthetic_step(
    rec: &Recorder,
    info: &ModelInfo,
    model: &Arc<dyn ModelClient>,
    agent: &str,
    step: u32,
    tool: &str,
    arguments: String,
) -> Result<StepOutput, StoreError> {
    let mut st = Streaming::open(rec, info, None, model, agent, step)?;
    for ev in [
        StreamEvent::ToolCallStart {
            index: 0,
            id: String::new(),
            name: tool.to_string(),
        },
        StreamEvent::ToolCallDelta {
            index: 0,
            arguments,
        },
        StreamEvent::Finish {
            reason: FinishReason::ToolCalls,
        },
    ] {
        st.apply(ev).await?;
    }
    st.end(step, StepStatus::Completed, None).await
}

/// Streams one request into a new assistant message. `Ok(Err(_))` is a failed step (already
/// recorded as cut or error); `Err` is a store failure. `runtime`'s plugins see each whole
/// text block (`experimental.text.complete`).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn run_step(
    rec: &Recorder,
    info: &ModelInfo,
    runtime: &ToolRuntime,
    model: &Arc<dyn ModelClient>,
    agent: &str,
    step: u32,
    request: &ChatRequest,
    abort: &CancellationToken,
) -> Result<Result<StepOutput, StepFailure>, StoreError> {
    let mut st = Streaming::open(rec, info, Some(runtime), model, agent, step)?;
    let started = tokio::select! {
        biased;
        _ = abort.cancelled() => Err(ProviderError::Aborted),
        r = model.stream(request, abort.clone()) => r,
    };
    if started.is_ok() {
        // While the model works: what the first call would otherwise wait for, and the
        // syncs a store created for this session skipped.
        podcode_tools::warm_validation();
        rec.store.sync_if_new();
    }
    let stop = match started {
        Err(e) => classify(e),
        Ok(mut rx) => loop {
            let next = tokio::select! {
                biased;
                _ = abort.cancelled() => break Stop::Aborted,
                next = rx.recv() => next,
            };
            match next {
                Some(Ok(ev)) => {
                    let finished = matches!(ev, StreamEvent::Finish { .. });
                    st.apply(ev).await?;
                    if finished {
                        // Anything already queued behind `Finish` (late usage) still counts.
                        while let Ok(Ok(ev)) = rx.try_recv() {
                            st.apply(ev).await?;
                        }
                        break Stop::Finished;
                    }
                }
                Some(Err(e)) => break classify(e),
                None if st.finish.is_some() => break Stop::Finished,
                None => {
                    break Stop::Cut("the stream ended before the model finished".into());
                }
            }
        },
    };
    let out = match stop {
        Stop::Finished => Ok(st.end(step, StepStatus::Completed, None).await?),
        Stop::Aborted => Ok(st.end(step, StepStatus::Aborted, None).await?),
        Stop::Cut(e) => {
            st.end(step, StepStatus::Cut, Some(e.clone())).await?;
            Err(StepFailure::Cut(e))
        }
        Stop::Failed(e) => {
            st.end(step, StepStatus::Error, Some(e.clone())).await?;
            Err(StepFailure::Failed(e))
        }
        Stop::Overflow(e) => {
            st.end(step, StepStatus::Error, Some(e.clone())).await?;
            Err(StepFailure::Overflow(e))
        }
    };
    Ok(out)
}

fn classify(e: ProviderError) -> Stop {
    match e {
        ProviderError::Aborted => Stop::Aborted,
        e @ ProviderError::StreamCut { .. } => Stop::Cut(e.to_string()),
        e if e.is_context_overflow() => Stop::Overflow(e.to_string()),
        e => Stop::Failed(e.to_string()),
    }
}
