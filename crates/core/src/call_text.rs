//! What `podcode tool call` prints: its progress while it runs, and its outcome: as JSON
//! (`--json`), and the notes after the output (truncation and where the full output went,
//! attachments, metadata, changed files). The front end prints what this returns.

use podcode_protocol::{Event, sanitize_for_terminal as clean, sanitize_json};
use podcode_tools::CallOutcome;
use serde_json::{Value, json};

/// What an event of a running call shows.
pub enum Progress {
    /// A line for stderr: live metadata (`… title {metadata}`) or a warning.
    Line(String),
    /// The call ended: nothing more to show.
    Done,
    /// Nothing to show.
    Nothing,
}

/// What `event` shows while a call runs.
pub fn progress(event: &Event) -> Progress {
    match event {
        Event::ToolMetadata {
            title, metadata, ..
        } => {
            let mut line = String::from("…");
            if let Some(t) = title {
                line.push_str(&format!(" {t}"));
            }
            if let Some(m) = metadata {
                line.push_str(&format!(" {m}"));
            }
            Progress::Line(clean(&line).into_owned())
        }
        Event::Warning { message } => Progress::Line(format!("warning: {}", clean(message))),
        Event::ToolFinished { .. } | Event::ToolFailed { .. } => Progress::Done,
        _ => Progress::Nothing,
    }
}

/// The outcome of a call in session `session` as JSON.
pub fn outcome_json(outcome: &CallOutcome, session: &str) -> Value {
    json!({
        "call_id": outcome.call_id,
        "session_id": session,
        "tool": outcome.tool,
        "status": outcome.status,
        "output": outcome.model_text,
        "title": outcome.result.title,
        "metadata": outcome.result.metadata,
        "attachments": outcome.result.attachments,
        "truncated": outcome.truncated.as_ref().map(|t| json!({
            "spill_path": t.spill_error.is_none().then_some(&t.spill_path), "total_lines": t.total_lines, "total_bytes": t.total_bytes,
            "cut_lines": t.cut_lines, "cut_bytes": t.cut_bytes, "spill_error": t.spill_error,
        })),
        "changes": outcome.changes,
        "duration_ms": outcome.duration.as_millis() as u64,
    })
}

/// The lines after a completed call's output, for stderr.
pub fn outcome_notes(outcome: &CallOutcome, session: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(t) = &outcome.truncated
        && let Some(why) = &t.spill_error
    {
        out.push(format!(
            "truncated: {} of {} lines cut; the full output could not be saved: {why}",
            t.cut_lines, t.total_lines
        ));
    } else if let Some(t) = &outcome.truncated {
        out.push(format!(
            "truncated: {} of {} lines cut; full output in {}",
            t.cut_lines,
            t.total_lines,
            t.spill_path.display()
        ));
    }
    for a in &outcome.result.attachments {
        out.push(format!(
            "attachment: {} ({} bytes of URL)",
            a.mime,
            a.url.len()
        ));
    }
    if !outcome.result.metadata.is_null() {
        out.push(format!(
            "metadata: {}",
            sanitize_json(&outcome.result.metadata.to_string())
        ));
    }
    if !outcome.changes.is_empty() {
        out.push(format!(
            "changes: {} (see `podcode changes --session {session}`)",
            clean(&outcome.changes.join(", "))
        ));
    }
    out
}
