//! Stored sessions as front ends read them: the session list, a session's conversation as
//! `Item`s (what every front end shows when it opens one; the same items `ItemFold` builds
//! from the live events), as plain text
//! (`podcode sessions show`) and as JSON with every row (`podcode sessions export`).

use std::time::{Duration, UNIX_EPOCH};

use podcode_agent::{StepStatus, StoredPart};
use podcode_protocol::{Item, StepUsage, ToolItem, child_of, diff_of};
use podcode_store::SessionRow;
use serde_json::{Value, json};

use crate::engine::Engine;
use crate::error::EngineError;

/// `2026-12-02 10:31:05` for a millisecond timestamp (UTC).
pub fn format_time(ms: i64) -> String {
    let t = UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64);
    let s = humantime::format_rfc3339_seconds(t).to_string();
    s.replace('T', " ").trim_end_matches('Z').to_string()
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines().map(|l| format!("{prefix}{l}\n")).collect()
}

impl Engine {
    /// Stored sessions, newest first; `all` includes the ones `podcode tool call` made.
    pub fn sessions(&self, all: bool) -> Result<Vec<SessionRow>, EngineError> {
        Ok(self
            .store()?
            .list_sessions()?
            .into_iter()
            .filter(|s| all || s.agent != "cli")
            .collect())
    }

    /// One stored session by id; `UnknownSession` when there is none.
    pub fn session(&self, id: &str) -> Result<SessionRow, EngineError> {
        self.store()?
            .session(id)?
            .ok_or_else(|| EngineError::UnknownSession(id.to_string()))
    }

    /// A session's token and cost totals (every model request, summaries included).
    pub fn session_usage(&self, id: &str) -> Result<StepUsage, EngineError> {
        self.store()?
            .session_usage(id)?
            .ok_or_else(|| EngineError::UnknownSession(id.to_string()))
    }

    /// Whether a session has any message yet.
    pub fn has_messages(&self, id: &str) -> Result<bool, EngineError> {
        Ok(!self.store()?.messages(id)?.is_empty())
    }

    /// A stored conversation as items, and the tokens it used.
    pub fn transcript(&self, session_id: &str) -> Result<(Vec<Item>, StepUsage), EngineError> {
        self.transcript_before(session_id, None)
    }

    /// `transcript` up to (not including) the message `before` (a running turn's prompt, which
    /// a client replays from the event log instead: see `EventLog::resume_point`).
    pub fn transcript_before(
        &self,
        session_id: &str,
        before: Option<&str>,
    ) -> Result<(Vec<Item>, StepUsage), EngineError> {
        let store = self.store()?;
        let mut items = Vec::new();
        let mut usage = StepUsage::default();
        for m in store.messages(session_id)? {
            if before == Some(m.id.as_str()) {
                break;
            }
            let synthetic = m.content.get("synthetic").and_then(|v| v.as_bool()) == Some(true);
            if m.role == "user" && synthetic {
                // Texts Podcode sent the model itself: only a revert's note is an item.
                if m.content.get("note").and_then(Value::as_str) == Some("revert") {
                    items.push(Item::RevertNote {
                        text: user_texts(&store.parts(&m.id)?),
                    });
                }
                continue;
            }
            if m.role == "system" {
                if let Some(c) = m.content.get("compaction") {
                    items.push(compaction_item(c));
                }
                continue;
            }
            let mut user_text = String::new();
            let mut files = Vec::new();
            for part in store.parts(&m.id)? {
                match StoredPart::parse(&part) {
                    StoredPart::Text(t) if m.role == "user" => user_text.push_str(&t.text),
                    StoredPart::Text(t) => items.push(Item::Assistant {
                        message_id: m.id.clone(),
                        text: t.text,
                    }),
                    StoredPart::Reasoning(r) => items.push(Item::Reasoning {
                        message_id: m.id.clone(),
                        text: r.text,
                    }),
                    // The call's arguments are read from its `tool_calls` row (parsed, as
                    // `Event::ToolStarted` carries them), never from the part's raw text.
                    StoredPart::Tool(t) => {
                        let Some(call) = store.tool_call(&t.call_id)? else {
                            continue;
                        };
                        items.push(Item::Tool(ToolItem {
                            child_session_id: child_of(&call.tool, &call.metadata),
                            diff: diff_of(&call.metadata),
                            call_id: call.id,
                            tool: call.tool,
                            args: call.args,
                            title: call.title,
                            state: call.state,
                            elapsed_ms: call
                                .ended_at
                                .map(|e| e.saturating_sub(call.started_at).max(0) as u64)
                                .unwrap_or(0),
                            output: call.error.unwrap_or(call.output),
                            attachments: call.attachments.as_array().map_or(0, |a| a.len()),
                            spill_path: call.spill_path,
                        }));
                    }
                    StoredPart::Step(st) => usage.add(&st.usage),
                    StoredPart::File(f) => files.push(f.path),
                    StoredPart::Other(..) => {}
                }
            }
            if !user_text.is_empty() || !files.is_empty() {
                items.push(Item::User {
                    message_id: m.id.clone(),
                    text: user_text,
                    files,
                });
            }
        }
        Ok((items, usage))
    }

    /// The whole conversation as text: every message, part, tool call (output clipped to
    /// 12 lines) and step with its tokens.
    pub fn session_text(&self, id: &str) -> Result<String, EngineError> {
        let store = self.store()?;
        let s = self.session(id)?;
        let mut out = format!(
            "session {} · {} · agent {} · model {}\n{}\n",
            s.id,
            format_time(s.created_at),
            s.agent,
            s.model.as_deref().unwrap_or("-"),
            s.cwd
        );
        if let Some(u) = store.session_usage(&s.id)? {
            out.push_str(&format!("tokens: {}\n", u.short()));
        }
        for m in store.messages(&s.id)? {
            let synthetic = m.content.get("synthetic").and_then(|v| v.as_bool()) == Some(true);
            let who = match (m.role.as_str(), synthetic) {
                ("user", true) => "podcode (to the model)",
                ("user", false) => "user",
                ("assistant", _) => "assistant",
                ("system", _) if m.content.get("compaction").is_some() => {
                    let c = &m.content["compaction"];
                    let n = |k: &str| c.get(k).and_then(Value::as_u64).unwrap_or(0);
                    out.push_str(&format!(
                        "\n── compacted ({}) · {} · {}\n  {} old tool outputs pruned, {} messages summarised; the model was sent ~{} tokens instead of ~{} (the originals above are kept)\n",
                        c.get("reason").and_then(Value::as_str).unwrap_or("auto"),
                        format_time(m.created_at),
                        m.id,
                        n("pruned"),
                        n("summarized"),
                        n("tokens_after"),
                        n("tokens_before"),
                    ));
                    for part in store.parts(&m.id)? {
                        if let StoredPart::Other(kind, data) = StoredPart::parse(&part)
                            && kind == "compaction"
                        {
                            let summary = data.get("summary").and_then(Value::as_str).unwrap_or("");
                            out.push_str(&indent(summary, "  ≡ "));
                        }
                    }
                    continue;
                }
                (other, _) => other,
            };
            out.push_str(&format!(
                "\n── {who} · {} · {}\n",
                format_time(m.created_at),
                m.id
            ));
            for part in store.parts(&m.id)? {
                match StoredPart::parse(&part) {
                    StoredPart::Text(t) => {
                        out.push_str(&indent(&t.text, "  "));
                        if t.interrupted {
                            out.push_str("  [interrupted]\n");
                        }
                    }
                    StoredPart::Reasoning(r) => out.push_str(&indent(&r.text, "  · ")),
                    StoredPart::File(f) => {
                        let state = if f.failed { "not read" } else { "read" };
                        out.push_str(&format!("  📎 {} [{state}]\n", f.path));
                    }
                    StoredPart::Tool(t) => {
                        let call = store.tool_call(&t.call_id)?;
                        let (state, title, output) = match &call {
                            Some(c) => (c.state.to_string(), c.title.clone(), c.output.clone()),
                            None => ("not run".into(), String::new(), String::new()),
                        };
                        out.push_str(&format!(
                            "  ▸ {} {} [{state}] {title}\n",
                            t.name, t.arguments
                        ));
                        let lines: Vec<&str> = output.lines().collect();
                        for l in lines.iter().take(12) {
                            out.push_str(&format!("    │ {l}\n"));
                        }
                        if lines.len() > 12 {
                            let more = podcode_protocol::more_lines(lines.len() - 12);
                            out.push_str(&format!("    │ … {more}\n"));
                        }
                    }
                    StoredPart::Step(st) => {
                        let u = st.usage;
                        let mut line = format!(
                            "  (step {} {} · {} in / {} out tokens",
                            st.step,
                            st.status.as_str(),
                            u.input_tokens,
                            u.output_tokens
                        );
                        if let Some(c) = u.cost {
                            line.push_str(&format!(" · ${c:.4}"));
                        }
                        line.push(')');
                        if st.status != StepStatus::Completed
                            && let Some(e) = &st.error
                        {
                            line.push_str(&format!(": {e}"));
                        }
                        out.push_str(&line);
                        out.push('\n');
                    }
                    StoredPart::Other(kind, _) => out.push_str(&format!("  ({kind} part)\n")),
                }
            }
        }
        Ok(out)
    }

    /// Every row of a session: messages with their parts, tool calls and changes.
    pub fn session_export(&self, id: &str) -> Result<Value, EngineError> {
        let store = self.store()?;
        let s = self.session(id)?;
        let mut messages = Vec::new();
        for m in store.messages(&s.id)? {
            let parts = store.parts(&m.id)?;
            let mut v = serde_json::to_value(&m).map_err(|e| EngineError::Io(e.to_string()))?;
            v["parts"] = serde_json::to_value(parts).map_err(|e| EngineError::Io(e.to_string()))?;
            messages.push(v);
        }
        Ok(json!({
            "session": s,
            "usage": store.session_usage(&s.id)?,
            "messages": messages,
            "tool_calls": store.tool_calls(&s.id)?,
            "changes": store.changes(Some(&s.id), None)?,
        }))
    }
}

impl Engine {
    /// The recorded state of a tool call (`completed`, `failed`, `denied`, `interrupted`, …).
    pub fn call_state(&self, call_id: &str) -> Option<String> {
        let store = self.store().ok()?;
        store
            .tool_call(call_id)
            .ok()
            .flatten()
            .map(|c| c.state.to_string())
    }
}

/// The text parts of a message, joined.
fn user_texts(parts: &[podcode_store::PartRow]) -> String {
    parts
        .iter()
        .filter_map(|p| match StoredPart::parse(p) {
            StoredPart::Text(t) => Some(t.text),
            _ => None,
        })
        .collect()
}

/// A compaction record (a `system` message's `compaction`) as its item.
fn compaction_item(c: &Value) -> Item {
    let n = |k: &str| c.get(k).and_then(Value::as_u64).unwrap_or(0);
    Item::Compaction {
        reason: c
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("auto")
            .to_string(),
        pruned: n("pruned") as u32,
        summarized: n("summarized") as u32,
        tokens_before: n("tokens_before"),
        tokens_after: n("tokens_after"),
    }
}
