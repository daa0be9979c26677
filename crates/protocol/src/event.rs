//! The one API every front end uses: `Op`s go into the core, `Event`s stream out.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    PermissionReply, PermissionRequest, RevertReport, RevertTarget, ToolCallState, ToolResult,
};

/// Something a front end asks the core to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Send the user's message to a session and run a turn.
    Prompt {
        /// The session to prompt.
        session_id: String,
        /// The message as the user typed it.
        text: String,
        /// Files the user attached (`@path` mentions): the agent reads each through the
        /// `read` tool, with its permission rules, and adds what it read to the message.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<String>,
    },
    /// Run a custom command (`/review src/a.rs`): its template, with the arguments filled
    /// in, its ``!`cmd` `` snippets run and its `@path` files attached, is the prompt of a
    /// turn (queued behind a running one, like a prompt).
    Command {
        /// The session to prompt.
        session_id: String,
        /// The command's name (`review`, `team/deploy`), without the slash.
        name: String,
        /// What the user typed after the name.
        #[serde(default)]
        arguments: String,
    },
    /// Answer an open permission ask (`Event::PermissionAsked`).
    PermissionReply {
        /// The ask's `request_id`.
        request_id: String,
        /// Once, always, or reject with optional feedback.
        reply: PermissionReply,
    },
    /// Stop the session's running turn (its tool calls are aborted, open asks closed).
    Abort {
        /// The session whose turn stops.
        session_id: String,
    },
    /// Undo journaled changes; the outcome comes back as `Event::Reverted`.
    Revert {
        /// The session whose changes are reverted.
        session_id: String,
        /// Which changes: one, a call's, since a message, or all.
        target: RevertTarget,
        /// Overwrite files that changed since Podcode wrote them instead of refusing.
        #[serde(default)]
        force: bool,
    },
    /// Use this model (`provider/model-id`) for the next turns.
    SetModel {
        /// The session to reconfigure.
        session_id: String,
        /// The model, as `provider/model-id`.
        model: String,
    },
    /// Use this agent profile for the next turns.
    SetAgent {
        /// The session to reconfigure.
        session_id: String,
        /// The agent profile's name.
        agent: String,
    },
    /// Compact the session's conversation now (`/compact`); `Event::Compacted` follows.
    Compact {
        /// The session to compact.
        session_id: String,
    },
}

/// Something that happened in the core, in order, for front ends to show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A tool call passed its permission check and began running.
    ToolStarted {
        /// The session the call belongs to.
        session_id: String,
        /// The model's id for the call; later events about it carry the same id.
        call_id: String,
        /// The tool's id.
        tool: String,
        /// The arguments as parsed from the model's request.
        args: Value,
    },
    /// Live title/metadata from `ctx.metadata()` while a call runs.
    ToolMetadata {
        /// The running call.
        call_id: String,
        /// The new title, when the tool set one.
        title: Option<String>,
        /// The new metadata, when the tool set some.
        metadata: Option<Value>,
    },
    /// A tool call succeeded; `result` is what the model receives (after truncation).
    ToolFinished {
        /// The call.
        call_id: String,
        /// The tool's id.
        tool: String,
        /// What the tool returned, output truncated to the model's limit.
        result: ToolResult,
        /// Set when the output was truncated: the spill file with the full text.
        spill_path: Option<String>,
        /// How long the call ran.
        duration_ms: u64,
    },
    /// A tool call failed (bad arguments, denied, error, timeout or abort).
    ToolFailed {
        /// The call.
        call_id: String,
        /// The tool's id.
        tool: String,
        /// The model-facing error text.
        error: String,
        /// How long the call ran before failing.
        duration_ms: u64,
        /// How it ended: `failed`, `denied`, `interrupted` or `timed_out` (as the call log
        /// records it; `failed` in events logged before this field existed).
        #[serde(default = "ToolCallState::failed")]
        state: ToolCallState,
    },
    /// A call needs the user's decision: answer with `Op::PermissionReply { request_id }`.
    PermissionAsked {
        /// The session whose call asks (a sub-agent's own session for its asks).
        session_id: String,
        /// Id to answer with.
        request_id: String,
        /// The call waiting for the answer.
        call_id: String,
        /// The tool asking.
        tool: String,
        /// What it asks for; render with `prompt_text`.
        request: PermissionRequest,
    },
    /// An ask is closed: answered (by any front end; the first reply wins) or abandoned
    /// because its call was aborted (`reply` is then `None`).
    PermissionResolved {
        /// The ask that closed.
        request_id: String,
        /// The answer; `None` when the ask was abandoned.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reply: Option<PermissionReply>,
    },
    /// The outcome of an `Op::Revert`.
    Reverted {
        /// The session whose changes were reverted.
        session_id: String,
        /// What was restored, skipped, or why nothing was.
        report: RevertReport,
    },
    /// A tool call wrote a file and journaled the change (revertible).
    ChangeRecorded {
        /// The journal row's id (a `RevertTarget::Change`).
        change_id: String,
        /// The call that made it, when there was one.
        call_id: Option<String>,
        /// The changed file's path.
        file: String,
    },
    /// Something the user should see that is not part of any call (hook errors, load problems).
    Warning {
        /// The warning text, ready to show.
        message: String,
    },
    /// A plugin's `client.tui.showToast({ body: { title, message, variant } })`: a short notice
    /// for every front end (`variant`: `info`, `success`, `warning` or `error`).
    Toast {
        /// Heading; may be empty.
        title: String,
        /// Body; may be empty.
        message: String,
        /// `info`, `success`, `warning` or `error`; anything else shows as `info`.
        variant: String,
    },
    /// The model or agent profile for the next turns changed (`Op::SetModel`/`SetAgent`).
    Configured {
        /// The agent profile now in use.
        agent: String,
        /// The model now in use, as `provider/model-id`.
        model: String,
    },
    /// The tool set was rebuilt (plugin files changed, an MCP server became ready): what the
    /// model is offered now, one `id · source` line per tool, then load problems.
    ToolsReloaded {
        /// `id · source` per tool, then one line per load problem.
        tools: Vec<String>,
    },
    /// A session was stored (a front end's first prompt, or a sub-agent's start). Sent on
    /// the engine's bus, before the session's first event.
    SessionCreated {
        /// The new session.
        session_id: String,
        /// The session whose `task` call started it, for a sub-agent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_id: Option<String>,
        /// Its title (may be empty).
        title: String,
        /// Where it works.
        directory: String,
        /// The agent profile it runs.
        agent: String,
        /// When it was stored, in milliseconds since the Unix epoch.
        created_at: i64,
    },
    /// The agent loop took a user prompt and stored it: every front end (and a replay of
    /// the event log) shows the prompt from this, whoever sent it.
    UserMessage {
        /// The session prompted.
        session_id: String,
        /// The stored user message (the transcript's `message_id` for it).
        message_id: String,
        /// The prompt as the model reads it (after plugins' `chat.message` hooks).
        text: String,
        /// Paths of the files attached to it.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<String>,
    },
    /// A turn began (right after its `UserMessage`).
    TurnStarted {
        /// The session whose turn started.
        session_id: String,
        /// The agent profile running it.
        agent: String,
        /// The model it asks, as `provider/model-id`.
        model: String,
    },
    /// One model request began; `message_id` is the assistant message it is recorded under.
    StepStarted {
        /// The session.
        session_id: String,
        /// The assistant message this request's output is stored under.
        message_id: String,
        /// 1 for the turn's first request, counting up.
        step: u32,
    },
    /// Streamed assistant text, as it arrives.
    TextDelta {
        /// The assistant message the text belongs to.
        message_id: String,
        /// The new text, to append.
        text: String,
    },
    /// A plugin's `experimental.text.complete` hook rewrote the text block of `message_id`
    /// that just ended (its last one): `text` replaces what its deltas spelled, in the store
    /// and for the model. Front ends show `text` in place of the streamed block.
    TextReplaced {
        /// The assistant message whose last text block is replaced.
        message_id: String,
        /// The block's whole text now.
        text: String,
    },
    /// Streamed model reasoning, as it arrives.
    ReasoningDelta {
        /// The assistant message the reasoning belongs to.
        message_id: String,
        /// The new reasoning text, to append.
        text: String,
    },
    /// The model asked for a tool call (before it runs; `ToolStarted` follows when it does).
    ToolRequested {
        /// The assistant message that asked for the call.
        message_id: String,
        /// The model's id for the call.
        call_id: String,
        /// The tool's id as the model named it.
        tool: String,
    },
    /// One model request ended. `status` is `completed`, `cut`, `aborted` or `error`.
    StepFinished {
        /// The session.
        session_id: String,
        /// The assistant message of the request.
        message_id: String,
        /// Which request of the turn.
        step: u32,
        /// `completed`, `cut`, `aborted` or `error`.
        status: String,
        /// The provider's reason for stopping (`stop`, `tool_calls`, `length`, …), when it gave
        /// one.
        finish_reason: Option<String>,
        /// Tokens and cost of this request.
        usage: StepUsage,
    },
    /// A step's stream was cut off; it was discarded and is being retried.
    StepRetry {
        /// The session.
        session_id: String,
        /// The request being retried.
        step: u32,
        /// The retry's number (1 for the first retry).
        attempt: u32,
        /// Why the stream was cut, for the user.
        error: String,
    },
    /// The session's running totals after a model request: tokens and cost so far, how
    /// large the last prompt was and the model's context window.
    Usage {
        /// The session.
        session_id: String,
        /// Tokens and cost of the whole session so far.
        total: StepUsage,
        /// Prompt tokens of the last request (its `input_tokens`).
        context_tokens: u64,
        /// The model's context window (catalog or config; 0 when unknown).
        context_window: u64,
    },
    /// The conversation sent to the model was compacted to fit its context window; the
    /// store still holds every original message. `reason` is `auto` (the threshold was
    /// passed), `overflow` (the provider refused the request as too long) or `manual`.
    Compacted {
        /// The session.
        session_id: String,
        /// `auto`, `overflow` or `manual`.
        reason: String,
        /// Old tool outputs replaced by a one-line marker.
        pruned: u32,
        /// Messages replaced by the summary (0 when pruning was enough).
        summarized: u32,
        /// Estimated prompt tokens before and after.
        tokens_before: u64,
        /// Estimated prompt tokens after compaction.
        tokens_after: u64,
    },
    /// The turn is over (final answer, abort, step limit or error).
    TurnFinished {
        /// The session whose turn ended.
        session_id: String,
        /// How it ended and what it used.
        summary: TurnSummary,
    },
    /// An event of a sub-agent session that a `task` call of this session runs: the child's
    /// own event, tagged with the child's session id (a grandchild's arrives wrapped twice).
    /// Its permission asks are not wrapped: they arrive as `PermissionAsked` naming the
    /// child's session, with `metadata.subagent` saying which sub-agent asks.
    Subagent {
        /// The child session.
        session_id: String,
        /// The session whose `task` call started it.
        parent_id: String,
        /// That `task` call.
        call_id: String,
        /// The child's agent profile.
        agent: String,
        /// The `task` call's short description (the card title).
        description: String,
        /// The child's event.
        event: Box<Event>,
    },
}

/// Tokens (and cost, when the provider reports it) of one step or a whole turn.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct StepUsage {
    /// Prompt tokens, including cached ones.
    pub input_tokens: u64,
    /// Completion tokens, including reasoning.
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's prompt cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's prompt cache.
    pub cache_write_tokens: u64,
    /// Reasoning tokens (part of `output_tokens`), when the provider reports them.
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// In USD: reported by the provider, or computed from the model catalog's prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

impl StepUsage {
    /// Adds another step's usage; the cost is known when either side knows it.
    pub fn add(&mut self, other: &StepUsage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        self.cost = match (self.cost, other.cost) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }
}

impl StepUsage {
    /// `12.3k in (8.0k cached) · 1.2k out · $0.0123`: the totals as every front end shows
    /// them (cached and cost only when there are any).
    pub fn short(&self) -> String {
        let mut s = format!("{} in", tokens(self.input_tokens));
        if self.cache_read_tokens > 0 {
            s.push_str(&format!(" ({} cached)", tokens(self.cache_read_tokens)));
        }
        s.push_str(&format!(" · {} out", tokens(self.output_tokens)));
        if self.reasoning_tokens > 0 {
            s.push_str(&format!(" ({} reasoning)", tokens(self.reasoning_tokens)));
        }
        if let Some(c) = self.cost {
            s.push_str(&format!(" · ${c:.4}"));
        }
        s
    }
}

/// A token count for people: `950`, `12.3k`, `1.25M`.
pub fn tokens(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.2}M", n as f64 / 1_000_000.0),
    }
}

/// The line every front end shows for `Event::Toast` (user-facing): `✓ title: message` for a
/// success, `⚠` for a warning, `✗` for an error, `ℹ` otherwise; an empty title or message is
/// left out.
pub fn toast_text(title: &str, message: &str, variant: &str) -> String {
    let mark = match variant {
        "success" => "✓",
        "warning" => "⚠",
        "error" => "✗",
        _ => "ℹ",
    };
    match (title.trim(), message.trim()) {
        ("", "") => format!("{mark} (empty toast)"),
        ("", m) => format!("{mark} {m}"),
        (t, "") => format!("{mark} {t}"),
        (t, m) => format!("{mark} {t}: {m}"),
    }
}

/// The note every front end shows for `Event::Compacted` (user-facing).
pub fn compacted_text(
    reason: &str,
    pruned: u32,
    summarized: u32,
    before: u64,
    after: u64,
) -> String {
    let why = match reason {
        "overflow" => "the model refused the conversation as too long",
        "manual" => "as asked",
        _ => "the context window was filling up",
    };
    let mut done = Vec::new();
    if pruned > 0 {
        done.push(format!("{pruned} old tool outputs pruned"));
    }
    if summarized > 0 {
        done.push(format!("{summarized} messages summarised"));
    }
    format!(
        "≡ compacted ({why}): {}; ~{} → ~{} tokens sent (the session keeps every message)",
        done.join(", "),
        tokens(before),
        tokens(after)
    )
}

#[cfg(test)]
mod usage_tests {
    use super::*;

    #[test]
    fn the_compaction_note_is_pinned() {
        assert_eq!(
            compacted_text("auto", 12, 40, 7_200, 2_100),
            "≡ compacted (the context window was filling up): 12 old tool outputs pruned, 40 messages summarised; ~7.2k → ~2.1k tokens sent (the session keeps every message)"
        );
        assert_eq!(
            compacted_text("overflow", 0, 8, 130_000, 20_000),
            "≡ compacted (the model refused the conversation as too long): 8 messages summarised; ~130.0k → ~20.0k tokens sent (the session keeps every message)"
        );
    }

    #[test]
    fn the_toast_line_is_pinned() {
        assert_eq!(
            toast_text("Deploy", "api is live", "success"),
            "✓ Deploy: api is live"
        );
        assert_eq!(toast_text("", "rate limited", "warning"), "⚠ rate limited");
        assert_eq!(toast_text("Build failed", " ", "error"), "✗ Build failed");
        assert_eq!(toast_text("", "", "info"), "ℹ (empty toast)");
        assert_eq!(toast_text("Note", "x", "loud"), "ℹ Note: x");
        let e = Event::Toast {
            title: "T".into(),
            message: "m".into(),
            variant: "info".into(),
        };
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"type":"toast","title":"T","message":"m","variant":"info"}"#
        );
    }

    #[test]
    fn usage_reads_short() {
        let u = StepUsage {
            input_tokens: 12_345,
            output_tokens: 950,
            cache_read_tokens: 8_000,
            cache_write_tokens: 0,
            reasoning_tokens: 0,
            cost: Some(0.01234),
        };
        assert_eq!(u.short(), "12.3k in (8.0k cached) · 950 out · $0.0123");
        assert_eq!(StepUsage::default().short(), "0 in · 0 out");
        assert_eq!(tokens(1_250_000), "1.25M");
    }
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEnd {
    /// The model gave a final answer.
    Answered,
    /// The step limit was reached; the last message is the model's progress summary.
    MaxSteps,
    /// The user aborted.
    Aborted,
    /// The model could not be reached or its stream kept breaking.
    Error,
}

/// What a turn did, for the closing summary of every front end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnSummary {
    /// The session the turn ran in.
    pub session_id: String,
    /// Why the turn ended.
    pub end: TurnEnd,
    /// Model requests made (the final summary request included).
    pub steps: u32,
    /// Tool calls the model made, whatever their outcome.
    pub tool_calls: u32,
    /// Tokens and cost of all the turn's requests.
    pub usage: StepUsage,
    /// Ids of the journaled changes made during the turn.
    pub changes: Vec<String>,
    /// Files those changes touched, in first-touched order.
    pub files: Vec<String>,
    /// Set when `end` is `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
