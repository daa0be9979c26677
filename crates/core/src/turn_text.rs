//! The texts `podcode run` prints about a turn: the one-line card of a tool call, a
//! sub-agent's lines, and the closing summary (steps, tokens and cost with what sub-agents
//! spent, changed files, how to review, undo and continue). Pure functions over events and
//! summaries; the front end prints them and sanitises what it prints.

use std::collections::HashMap;

use podcode_protocol::{
    Event, StepUsage, TurnEnd, TurnSummary, compacted_text, sanitize_for_terminal as clean,
    toast_text,
};

use crate::engine::Engine;

/// What `podcode run` writes of the answer on stdout: text as it streams, or, when a plugin
/// may rewrite a finished text block (`experimental.text.complete`), each block once it is
/// final — held until the next event shows it ended, and replaced by `TextReplaced` — so
/// stdout carries the text the model and the store keep, once.
pub struct AnswerText {
    hold: Option<bool>,
    held: String,
    at_line_start: bool,
}

impl Default for AnswerText {
    fn default() -> Self {
        Self {
            hold: None,
            held: String::new(),
            at_line_start: true,
        }
    }
}

impl AnswerText {
    /// Whether a line break must end the text written so far before other output (and
    /// then it counts as written).
    pub fn end_line(&mut self) -> bool {
        !std::mem::replace(&mut self.at_line_start, true)
    }

    /// The text to write now for `event`.
    pub fn on(&mut self, event: &Event, engine: &Engine) -> Option<String> {
        let text = self.next(event, engine)?;
        if !text.is_empty() {
            self.at_line_start = text.ends_with('\n');
        }
        Some(text)
    }

    fn next(&mut self, event: &Event, engine: &Engine) -> Option<String> {
        match event {
            Event::TextDelta { text, .. } => {
                let hold = *self
                    .hold
                    .get_or_insert_with(|| engine.plugins_have_hook("experimental.text.complete"));
                if !hold {
                    return Some(text.clone());
                }
                self.held.push_str(text);
                None
            }
            Event::TextReplaced { text, .. } if self.hold == Some(true) => {
                self.held.clone_from(text);
                None
            }
            // Streamed already: the rewritten block follows on a line of its own.
            Event::TextReplaced { text, .. } => Some(format!("\n{text}")),
            _ => (!self.held.is_empty()).then(|| std::mem::take(&mut self.held)),
        }
    }
}

/// The lines a turn's events add beside the streamed answer, with the titles of the calls
/// seen so far (a call's card shows the title its metadata gave when its result has none).
#[derive(Default)]
pub struct TurnNotes {
    titles: HashMap<String, String>,
    /// On a terminal a call is also told as it starts (`… bash — title · running`), so a
    /// long one is not a blank screen; logs get only the finished card.
    live: bool,
}

impl TurnNotes {
    /// Notes that also tell each call as it starts (for a terminal).
    pub fn live(live: bool) -> Self {
        Self {
            live,
            ..Self::default()
        }
    }

    /// The line `event` adds on stderr, if any, and whether it ends a line of streamed text
    /// first (all but warnings do). `engine` says how a failed call ended.
    pub fn note(&mut self, event: &Event, engine: &Engine) -> Option<(String, bool)> {
        let line = match event {
            Event::ToolMetadata {
                call_id,
                title: Some(t),
                ..
            } => {
                self.titles.insert(call_id.clone(), t.clone());
                return None;
            }
            Event::ToolStarted { tool, args, .. } if self.live => {
                let title = podcode_protocol::tool_title(tool, args, engine.cwd());
                clean(&format!("… {title} · running")).into_owned()
            }
            Event::ToolFinished {
                tool,
                result,
                duration_ms,
                call_id,
                ..
            } => {
                let title = if result.title.is_empty() {
                    self.titles.remove(call_id).unwrap_or_default()
                } else {
                    result.title.clone()
                };
                let mut card = tool_card("✓", tool, &title, "completed", *duration_ms);
                // The todo list shows as a checklist whenever the model changes it.
                if tool == "todowrite" {
                    for line in todo_lines(&result.metadata) {
                        card.push_str("\n  ");
                        card.push_str(&line);
                    }
                }
                clean(&card).into_owned()
            }
            Event::ToolFailed {
                call_id,
                tool,
                error,
                duration_ms,
                ..
            } => {
                let state = engine
                    .call_state(call_id)
                    .unwrap_or_else(|| "failed".into());
                // A short one-line error is the card's title; any other is printed whole
                // under the card (a refusal's last sentence says what to do about it).
                let error = error.trim();
                let title = self.titles.remove(call_id).unwrap_or_else(|| {
                    let short = !error.contains('\n') && error.chars().count() <= 80;
                    if short {
                        error.to_string()
                    } else {
                        String::new()
                    }
                });
                let mut card = tool_card("✗", tool, &title, &state, *duration_ms);
                if title != error {
                    for line in error.lines() {
                        card.push('\n');
                        if !line.is_empty() {
                            card.push_str("  ");
                            card.push_str(line);
                        }
                    }
                }
                clean(&card).into_owned()
            }
            Event::StepRetry { attempt, error, .. } => {
                let error = clean(error);
                format!("↻ the response was cut off ({error}); retrying (attempt {attempt})")
            }
            Event::Warning { message } => {
                return Some((format!("warning: {}", clean(message)), false));
            }
            Event::Toast {
                title,
                message,
                variant,
            } => clean(&toast_text(title, message, variant)).into_owned(),
            Event::Compacted {
                reason,
                pruned,
                summarized,
                tokens_before,
                tokens_after,
                ..
            } => compacted_text(reason, *pruned, *summarized, *tokens_before, *tokens_after),
            Event::Subagent { .. } => clean(&subagent_line(event, "")?).into_owned(),
            _ => return None,
        };
        Some((line, true))
    }
}

/// A sub-agent's start, tool calls and end, one line each on stderr (its text stays in its
/// own session: `podcode sessions show <id>`).
pub fn subagent_line(event: &Event, outer: &str) -> Option<String> {
    let Event::Subagent {
        session_id,
        agent,
        description,
        event,
        ..
    } = event
    else {
        return None;
    };
    let who = format!("{outer}↳ {agent} · {description}");
    match event.as_ref() {
        Event::TurnStarted { .. } => Some(format!("{who}: started ({session_id})")),
        Event::ToolFinished {
            tool,
            result,
            duration_ms,
            ..
        } => Some(format!(
            "{who}: {}",
            tool_card("✓", tool, &result.title, "completed", *duration_ms)
        )),
        Event::ToolFailed {
            tool,
            error,
            duration_ms,
            ..
        } => {
            let first = clip(error.lines().next().unwrap_or(""), 80);
            Some(format!(
                "{who}: {}",
                tool_card("✗", tool, &first, "failed", *duration_ms)
            ))
        }
        Event::TurnFinished { summary, .. } => Some(format!(
            "{who}: finished · {} step{} · {} tool call{}",
            summary.steps,
            plural(summary.steps as usize),
            summary.tool_calls,
            plural(summary.tool_calls as usize)
        )),
        inner @ Event::Subagent { .. } => subagent_line(inner, &format!("{outer}  ")),
        _ => None,
    }
}

/// `s` cut to `max` characters (`max` ≥ 1), ending in `…` when cut.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// One line per tool call: mark, tool, title, status, duration.
pub fn tool_card(mark: &str, tool: &str, title: &str, status: &str, ms: u64) -> String {
    let dur = if ms >= 1000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{ms}ms")
    };
    if title.is_empty() {
        format!("{mark} {tool} · {status} · {dur}")
    } else {
        format!("{mark} {tool} — {title} · {status} · {dur}")
    }
}

/// A todo list (`todowrite`'s `{todos}` metadata) as checklist lines: `[x]` done, `[>]` in
/// progress, `[ ]` pending, `[-]` cancelled.
pub fn todo_lines(metadata: &serde_json::Value) -> Vec<String> {
    metadata["todos"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let mark = match t["status"].as_str() {
                Some("completed") => "[x]",
                Some("in_progress") => "[>]",
                Some("cancelled") => "[-]",
                _ => "[ ]",
            };
            format!("{mark} {}", t["content"].as_str().unwrap_or_default())
        })
        .collect()
}

/// The closing summary. Tokens and cost are the turn's with what its sub-agents spent
/// (`sub_agents`); when they spent any, the session's own figures follow in parentheses.
/// Changed files are shown relative to the first of `roots` that holds them (a worktree
/// session's directory, then the user's), each once: a file edited in the worktree and
/// synced to the checkout is one file.
pub fn summary_lines(
    s: &TurnSummary,
    sub_agents: &StepUsage,
    roots: &[&std::path::Path],
) -> Vec<String> {
    let mut out = Vec::new();
    let tokens_cost = |u: &StepUsage| {
        let tokens = if u.input_tokens + u.output_tokens == 0 {
            "tokens not reported".to_string()
        } else {
            format!("{} in / {} out tokens", u.input_tokens, u.output_tokens)
        };
        let cost = u.cost.map(|c| format!(" · ${c:.4}")).unwrap_or_default();
        format!("{tokens}{cost}")
    };
    let mut total = s.usage;
    total.add(sub_agents);
    let mut spent = tokens_cost(&total);
    if *sub_agents != StepUsage::default() {
        spent.push_str(&format!(
            " (this session {}; sub-agents {})",
            tokens_cost(&s.usage),
            tokens_cost(sub_agents)
        ));
    }
    let end = match s.end {
        TurnEnd::Answered => "done",
        TurnEnd::MaxSteps => "stopped at the step limit",
        TurnEnd::Aborted => "aborted",
        TurnEnd::Error => "failed",
    };
    out.push(format!(
        "\n── {end}: {} step{} · {} tool call{} · {spent}",
        s.steps,
        plural(s.steps as usize),
        s.tool_calls,
        plural(s.tool_calls as usize)
    ));
    if let Some(e) = &s.error {
        out.push(format!("error: {}", clean(e)));
    }
    if !s.files.is_empty() {
        let mut files: Vec<String> = Vec::new();
        for f in &s.files {
            let p = std::path::Path::new(f);
            let shown = roots
                .iter()
                .find_map(|r| p.strip_prefix(r).ok())
                .unwrap_or(p);
            let shown = shown.display().to_string();
            if !files.contains(&shown) {
                files.push(shown);
            }
        }
        out.push(format!(
            "changed {} file{}: {}",
            files.len(),
            plural(files.len()),
            files.join(", ")
        ));
        out.push(format!(
            "review with `podcode changes --session {id}`, undo with `podcode revert --session {id}`",
            id = s.session_id
        ));
    }
    out.push(format!(
        "session {} (continue with `podcode run --continue \"…\"`)",
        s.session_id
    ));
    out
}

/// `"s"` unless `n` is 1.
pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
