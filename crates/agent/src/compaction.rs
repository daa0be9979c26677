//! Compaction: making a long conversation fit the model's context window again.
//!
//! Two stages, cheapest first. **Pruning** replaces the outputs of old tool calls (all but
//! the newest [`PROTECTED_MESSAGES`] messages) with a one-line marker naming the call.
//! If the prompt is still over the budget, **summarising** sends the older part of the
//! conversation to the model with [`COMPACTION_PROMPT`] and replaces it with the summary,
//! keeping the newest turns verbatim (the kept part always starts with an assistant message,
//! so every tool result still follows its call).
//!
//! A loaded skill's instructions hold for the rest of the session, so `skill` results are
//! never pruned, and a summary carries the skills loaded in the part it replaces (their
//! results, word for word, after the summary; their names in the record).
//!
//! Only what is *sent* changes. The store keeps every original message, part and tool call;
//! a compaction adds one `system` message whose content records what was done
//! (`{"compaction": {"prune_through", "keep", …}}`, plus a `compaction` part holding the
//! summary), and [`replay`] applies the same edits when `load_history` rebuilds the
//! conversation, so a resumed session sends exactly what the running one did.

use std::sync::{Arc, Mutex};

use podcode_protocol::{Event, StepUsage};
use podcode_providers::{ChatRequest, Message, ModelClient, ModelInfo, Part, Role, StreamEvent};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::budget::{Budget, estimate_messages};
use crate::error::AgentError;
use crate::history::{History, without_tool_parts};
use crate::record::Recorder;
use crate::texts::{
    COMPACTION_PROMPT, COMPACTION_REQUEST, kept_skills_text, pruned_output_text, summary_text,
};

/// The newest messages whose tool outputs are never pruned (the last two steps).
pub const PROTECTED_MESSAGES: usize = 4;
/// Outputs shorter than this (in bytes) are left alone: pruning them saves nothing.
const PRUNE_MIN_BYTES: usize = 400;
/// The share of the budget the verbatim tail may keep after a summary.
const KEEP_SHARE: f64 = 0.3;
/// The tool whose results compaction keeps (a loaded skill).
const KEPT_TOOL: &str = "skill";
/// The kind of the part that holds a summary.
pub(crate) const SUMMARY_PART: &str = "compaction";

/// Why a compaction ran (`Event::Compacted.reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The prompt passed the threshold.
    Auto,
    /// The provider refused the request as too long.
    Overflow,
    /// The user asked (`/compact`): summarise whatever the budget says.
    Manual,
}

impl Reason {
    fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Overflow => "overflow",
            Self::Manual => "manual",
        }
    }
}

/// What one compaction did, as recorded in its `system` message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Record {
    pub reason: String,
    /// Tool outputs in messages `[..prune_through]` are replaced by markers.
    pub prune_through: usize,
    /// When summarised: how many of the newest messages were kept after the summary.
    #[serde(default)]
    pub keep: Option<usize>,
    pub pruned: u32,
    pub summarized: u32,
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// The window an overflow taught for `model` (`provider/model`), kept for a resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The skills whose results the summary carried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<String>,
}

/// The compaction record of a stored message's content, if it is one.
pub(crate) fn record_of(content: &Value) -> Option<Record> {
    serde_json::from_value(content.get("compaction")?.clone()).ok()
}

/// Applies a stored compaction to a conversation being rebuilt.
pub(crate) fn replay(messages: &mut Vec<Message>, record: &Record, summary: Option<&str>) {
    prune(messages, record.prune_through);
    if let (Some(keep), Some(summary)) = (record.keep, summary) {
        apply_summary(messages, summary, keep);
    }
}

/// Replaces long tool outputs in `messages[..through]` with markers; returns how many.
pub(crate) fn prune(messages: &mut [Message], through: usize) -> u32 {
    let through = through.min(messages.len());
    let mut pruned = 0;
    for i in 1..through {
        let (before, rest) = messages.split_at_mut(i);
        let calls = &before[i - 1];
        for part in &mut rest[0].parts {
            let Part::ToolResult {
                call_id,
                output,
                attachments,
                ..
            } = part
            else {
                continue;
            };
            if output.len() < PRUNE_MIN_BYTES && attachments.is_empty() {
                continue;
            }
            let (name, args) = call_of(calls, call_id).unwrap_or(("a tool", ""));
            if name == KEPT_TOOL {
                continue;
            }
            *output = pruned_output_text(name, args);
            attachments.clear();
            pruned += 1;
        }
    }
    pruned
}

/// The tool name and arguments of call `call_id` in assistant message `calls`.
fn call_of<'a>(calls: &'a Message, call_id: &str) -> Option<(&'a str, &'a str)> {
    calls.parts.iter().find_map(|p| match p {
        Part::ToolCall {
            id,
            name,
            arguments,
        } if id == call_id => Some((name.as_str(), arguments.as_str())),
        _ => None,
    })
}

/// The skills loaded (successfully) in `messages`: each name once, with its newest result.
pub(crate) fn loaded_skills(messages: &[Message]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for pair in messages.windows(2) {
        for part in &pair[1].parts {
            let Part::ToolResult {
                call_id,
                output,
                is_error: false,
                ..
            } = part
            else {
                continue;
            };
            let Some((KEPT_TOOL, args)) = call_of(&pair[0], call_id) else {
                continue;
            };
            let name = serde_json::from_str::<Value>(args)
                .ok()
                .and_then(|a| a["name"].as_str().map(str::to_string))
                .unwrap_or_default();
            out.retain(|(n, _)| *n != name);
            out.push((name, output.clone()));
        }
    }
    out
}

/// Replaces all but the newest `keep` messages with one user message holding the summary
/// and the skills loaded in what it replaces; returns those skills' names.
pub(crate) fn apply_summary(
    messages: &mut Vec<Message>,
    summary: &str,
    keep: usize,
) -> Vec<String> {
    let cut = messages.len().saturating_sub(keep);
    let skills = loaded_skills(&messages[..cut]);
    let outputs: Vec<&str> = skills.iter().map(|(_, o)| o.as_str()).collect();
    let mut rebuilt = History::default();
    rebuilt.push(
        Role::User,
        vec![Part::Text {
            text: format!("{}{}", summary_text(summary), kept_skills_text(&outputs)),
        }],
    );
    for m in messages.drain(cut..) {
        rebuilt.push(m.role, m.parts);
    }
    *messages = rebuilt.messages;
    skills.into_iter().map(|(n, _)| n).collect()
}

/// Where the verbatim tail starts: the earliest assistant message from which the tail fits
/// `keep_budget`, or the latest one; `len` (keep nothing) when no assistant message is
/// left to start it. `None` when there is nothing worth summarising.
fn cut_point(messages: &[Message], keep_budget: u64) -> Option<usize> {
    let len = messages.len();
    let mut tail = 0u64;
    let mut best = None;
    let mut latest = None;
    for i in (1..len).rev() {
        tail += estimate_messages(&messages[i..=i]);
        if messages[i].role == Role::Assistant {
            latest.get_or_insert(i);
            if tail <= keep_budget {
                best = Some(i);
            }
        }
    }
    let cut = best.or(latest).unwrap_or(len);
    (cut >= 2).then_some(cut)
}

/// Shrinks the largest text parts until the messages fit `limit` tokens.
fn shrink_to(messages: &mut [Message], limit: u64) {
    for _ in 0..64 {
        let over = estimate_messages(messages).saturating_sub(limit);
        if over == 0 {
            return;
        }
        let largest = messages
            .iter_mut()
            .flat_map(|m| m.parts.iter_mut())
            .filter_map(|p| match p {
                Part::Text { text } => Some(text),
                _ => None,
            })
            .max_by_key(|t| t.len());
        let Some(text) = largest else { return };
        let target = text
            .len()
            .saturating_sub((over as usize * 4).max(text.len() / 2));
        let (head, tail) = (target / 2, target - target / 2);
        let mut start = head.min(text.len());
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = text.len() - tail.min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        if end <= start {
            text.truncate(start);
            continue;
        }
        let omitted = end - start;
        text.replace_range(
            start..end,
            &format!("\n[… {omitted} characters omitted …]\n"),
        );
    }
}

/// What a compaction needs from the agent.
pub(crate) struct Compactor<'a> {
    pub rec: &'a Recorder,
    pub model: &'a Arc<dyn ModelClient>,
    pub info: &'a ModelInfo,
    pub budget: &'a Mutex<Budget>,
    pub prune: bool,
}

/// The outcome: the usage of the summarising request (also added to the session's totals),
/// and whether anything changed.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub changed: bool,
    pub usage: StepUsage,
    /// Summarising failed (the error); pruning may still have happened.
    pub error: Option<String>,
}

fn budget_of(m: &Mutex<Budget>) -> Budget {
    m.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

impl Compactor<'_> {
    /// Compacts `history` when `reason` calls for it: `Auto` only past the threshold.
    pub async fn run(
        &self,
        history: &mut History,
        fixed: u64,
        reason: Reason,
        abort: &CancellationToken,
    ) -> Result<Outcome, AgentError> {
        let budget = budget_of(self.budget);
        let before = budget.estimate(fixed, &history.messages);
        if reason == Reason::Auto && before <= budget.limit() {
            return Ok(Outcome::default());
        }
        let len = history.messages.len();
        let prune_through = if self.prune {
            len.saturating_sub(PROTECTED_MESSAGES)
        } else {
            0
        };
        let pruned = prune(&mut history.messages, prune_through);
        let mut out = Outcome::default();
        let mut summarized = 0;
        let mut keep = None;
        let mut summary = None;
        let mut skills = Vec::new();
        let still_over = budget.over(fixed, &history.messages);
        if still_over || reason != Reason::Auto {
            // The tail is measured uncalibrated. Past the threshold it may keep a share of
            // the budget; asked by the user, or refused by the provider (whose count we
            // evidently underestimate), a quarter of what there is.
            let fit = (budget.limit() as f64 * KEEP_SHARE / budget.calibration) as u64;
            let keep_budget = match reason {
                Reason::Auto => fit,
                _ => fit.min(estimate_messages(&history.messages) / 4),
            };
            if let Some(cut) = cut_point(&history.messages, keep_budget) {
                match self
                    .summarise(&history.messages[..cut], &budget, abort)
                    .await
                {
                    Ok((text, usage)) => {
                        out.usage = usage;
                        let kept = len - cut;
                        skills = apply_summary(&mut history.messages, &text, kept);
                        summarized = cut as u32;
                        keep = Some(kept);
                        summary = Some(text);
                    }
                    Err(e) => out.error = Some(e),
                }
            }
        }
        if pruned == 0 && summary.is_none() {
            return Ok(out);
        }
        out.changed = true;
        let after = budget.estimate(fixed, &history.messages);
        let record = Record {
            reason: reason.as_str().to_string(),
            prune_through,
            keep,
            pruned,
            summarized,
            tokens_before: before,
            tokens_after: after,
            window: budget.learned,
            model: budget.learned.map(|_| self.model.model().to_string()),
            skills,
        };
        let id = self
            .rec
            .message("system", &json!({ "compaction": record }))?;
        if let Some(text) = &summary {
            self.rec.store.add_part(
                &id,
                &self.rec.session,
                SUMMARY_PART,
                &json!({ "summary": text }),
            )?;
        }
        self.rec.emit(Event::Compacted {
            session_id: self.rec.session.clone(),
            reason: record.reason,
            pruned,
            summarized,
            tokens_before: before,
            tokens_after: after,
        });
        Ok(out)
    }

    /// What the summarising request asks, after plugins' `experimental.session.compacting`
    /// hooks (opencode's shapes: input `{sessionID}`, output `{context: [], prompt}`): their
    /// `context` strings are added after Podcode's request (what a summary must keep), a
    /// `prompt` replaces the request.
    async fn compacting_hook(&self) -> String {
        let out = self
            .rec
            .runtime
            .chat_hook(
                "experimental.session.compacting",
                serde_json::json!({"sessionID": self.rec.session}),
                serde_json::json!({"context": [], "prompt": null}),
            )
            .await;
        if let Some(prompt) = out["prompt"].as_str().filter(|p| !p.trim().is_empty()) {
            return prompt.to_string();
        }
        let mut parts = vec![COMPACTION_REQUEST.to_string()];
        if let Some(context) = out["context"].as_array() {
            parts.extend(
                context
                    .iter()
                    .filter_map(|c| c.as_str())
                    .filter(|c| !c.trim().is_empty())
                    .map(str::to_string),
            );
        }
        parts.join("\n\n")
    }

    /// Asks the model for the summary of `head`; the text and the request's usage.
    async fn summarise(
        &self,
        head: &[Message],
        budget: &Budget,
        abort: &CancellationToken,
    ) -> Result<(String, StepUsage), String> {
        let mut conversation = History {
            messages: without_tool_parts(head),
        };
        let request = self.compacting_hook().await;
        conversation.push(Role::User, vec![Part::Text { text: request }]);
        let system_tokens = (COMPACTION_PROMPT.len() / 4) as u64 + 8;
        let room = budget
            .window()
            .saturating_sub(budget.reply_reserve() + system_tokens);
        // The calibration says how much denser the real tokens are than the estimate.
        shrink_to(
            &mut conversation.messages,
            (room as f64 / budget.calibration) as u64,
        );
        let request = ChatRequest {
            model: self.model.model().model.clone(),
            system: COMPACTION_PROMPT.to_string(),
            messages: conversation.messages,
            tools: Default::default(),
            max_tokens: Some(budget.reply_reserve().clamp(256, 8_192) as u32),
            temperature: None,
            top_p: None,
            top_k: None,
            options: Default::default(),
            cache_key: Some(self.rec.session.clone()),
            headers: Vec::new(),
        };
        let mut rx = tokio::select! {
            _ = abort.cancelled() => return Err("aborted".into()),
            r = self.model.stream(&request, abort.clone()) => r.map_err(|e| e.to_string())?,
        };
        let mut text = String::new();
        let mut usage = StepUsage::default();
        loop {
            let next = tokio::select! {
                _ = abort.cancelled() => return Err("aborted".into()),
                n = rx.recv() => n,
            };
            match next {
                Some(Ok(StreamEvent::TextDelta { text: t })) => text.push_str(&t),
                Some(Ok(StreamEvent::Usage { usage: u })) => {
                    usage = StepUsage {
                        input_tokens: u.input_tokens,
                        output_tokens: u.output_tokens,
                        cache_read_tokens: u.cache_read_tokens,
                        cache_write_tokens: u.cache_write_tokens,
                        reasoning_tokens: u.reasoning_tokens,
                        cost: u.cost,
                    }
                }
                Some(Ok(StreamEvent::Finish { .. })) | None => break,
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.to_string()),
            }
        }
        if usage.cost.is_none() {
            usage.cost = self.info.cost_of(&usage);
        }
        if usage != StepUsage::default() {
            self.rec
                .store
                .add_session_usage(&self.rec.session, &usage)
                .map_err(|e| e.to_string())?;
        }
        let text = text.trim().to_string();
        if text.is_empty() {
            return Err("the model returned an empty summary".into());
        }
        Ok((text, usage))
    }
}

#[cfg(test)]
#[path = "compaction_tests.rs"]
mod tests;
