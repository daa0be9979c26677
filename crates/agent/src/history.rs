//! How the loop stores a conversation, and how it is read back.
//!
//! A user prompt is a `user` message with `text` parts. Each step is one `assistant`
//! message whose parts are written as they complete: `text`, `reasoning` (with its
//! signature), `tool` (one per call: the provider's call id, our `call_…` id that keys the
//! `tool_calls` row holding state and result, name, raw arguments) and finally `step`
//! (status, finish reason, usage). A step whose stream was cut or failed is marked so and
//! left out of the history; a step without a `step` part was being streamed when the
//! process died, and its completed parts still count. Every tool call gets a result in the
//! rebuilt history — from its `tool_calls` row, or an "interrupted" text when the row never
//! finished — so the next request is valid for every provider.

use std::collections::HashMap;

use podcode_protocol::{Attachment, StepUsage};
use podcode_providers::{Message, Part, Role};
use podcode_store::{PartRow, Store, StoreError, ToolCallRow, ToolCallState};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::texts::lost_result_text;

/// The `kind` column of the parts the loop writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartKind {
    /// Assistant text (`TextData`).
    Text,
    /// Model reasoning (`ReasoningData`).
    Reasoning,
    /// A tool call the model asked for (`ToolData`).
    Tool,
    /// One model request's outcome (`StepData`).
    Step,
    /// A file the user attached to a prompt (`crate::FileData`).
    File,
}

impl PartKind {
    /// The `kind` column's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Reasoning => "reasoning",
            Self::Tool => "tool",
            Self::Step => "step",
            Self::File => "file",
        }
    }
}

/// A `text` part: assistant text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextData {
    /// The text as streamed.
    pub text: String,
    /// The stream stopped (abort) while this text was arriving.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// A `reasoning` part: the model's reasoning, sent back to providers that want it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReasoningData {
    /// The reasoning text as streamed.
    pub text: String,
    /// The provider's signature over it (Anthropic), needed to send it back.
    #[serde(default)]
    pub signature: Option<String>,
    /// The stream stopped (abort) while this reasoning was arriving.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// A `tool` part: one tool call the model asked for (its result is in the `tool_calls` row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolData {
    /// Our id: the key of the call's `tool_calls` row.
    pub call_id: String,
    /// The id the provider gave the call (sent back with its result).
    pub provider_id: String,
    /// The tool's id as the model named it.
    pub name: String,
    /// The arguments exactly as the model streamed them.
    pub arguments: String,
}

/// How one model request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// The model's response arrived in full.
    Completed,
    /// The stream broke mid-way; the step was discarded (and retried).
    Cut,
    /// The user aborted while the response streamed; completed parts are kept.
    Aborted,
    /// The request failed; the step was discarded.
    Error,
}

impl StepStatus {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Cut => "cut",
            Self::Aborted => "aborted",
            Self::Error => "error",
        }
    }
}

/// A `step` part: one model request and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepData {
    /// Which request of the turn (1-based).
    pub step: u32,
    /// How it ended.
    pub status: StepStatus,
    /// The provider's reason for stopping, when it gave one.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Tokens and cost of the request.
    #[serde(default)]
    pub usage: StepUsage,
    /// Why the request failed, for `Error` and `Cut`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One stored part, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum StoredPart {
    /// Assistant text.
    Text(TextData),
    /// Model reasoning.
    Reasoning(ReasoningData),
    /// A tool call.
    Tool(ToolData),
    /// A model request's outcome.
    Step(StepData),
    /// A file attached to a prompt.
    File(crate::attach::FileData),
    /// A kind this version does not know (or could not parse): ignored.
    Other(String, Value),
}

impl StoredPart {
    /// Types a stored row by its kind; unknown or unreadable rows become `Other`.
    pub fn parse(row: &PartRow) -> Self {
        fn de<T: serde::de::DeserializeOwned>(v: &Value) -> Option<T> {
            serde_json::from_value(v.clone()).ok()
        }
        let parsed = match row.kind.as_str() {
            "text" => de(&row.data).map(Self::Text),
            "reasoning" => de(&row.data).map(Self::Reasoning),
            "tool" => de(&row.data).map(Self::Tool),
            "step" => de(&row.data).map(Self::Step),
            "file" => de(&row.data).map(Self::File),
            _ => None,
        };
        parsed.unwrap_or_else(|| Self::Other(row.kind.clone(), row.data.clone()))
    }
}

/// A provider-neutral history that merges consecutive messages of one role (tool results
/// followed by the next prompt become one user message, results first, as Anthropic wants).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    /// The messages, oldest first.
    pub messages: Vec<Message>,
}

impl History {
    /// Appends a message, merged into the last one when it has the same role; empty parts add
    /// nothing.
    pub fn push(&mut self, role: Role, parts: Vec<Part>) {
        if parts.is_empty() {
            return;
        }
        match self.messages.last_mut() {
            Some(last) if last.role == role => last.parts.extend(parts),
            _ => self.messages.push(Message { role, parts }),
        }
    }
}

/// The tools the conversation holds a call of.
pub(crate) fn called_tools(history: &History) -> std::collections::HashSet<&str> {
    history
        .messages
        .iter()
        .flat_map(|m| &m.parts)
        .filter_map(|p| match p {
            Part::ToolCall { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect()
}

/// The assistant parts of a stored step that go back to the model, with the call ids.
pub(crate) fn assistant_part(part: &StoredPart) -> Option<Part> {
    match part {
        StoredPart::Text(t) if !t.text.is_empty() => Some(Part::Text {
            text: t.text.clone(),
        }),
        StoredPart::Reasoning(r)
            if !r.interrupted && (!r.text.is_empty() || r.signature.is_some()) =>
        {
            Some(Part::Reasoning {
                text: r.text.clone(),
                signature: r.signature.clone(),
            })
        }
        StoredPart::Tool(t) => Some(Part::ToolCall {
            id: t.provider_id.clone(),
            name: t.name.clone(),
            arguments: t.arguments.clone(),
        }),
        _ => None,
    }
}

/// The result part for a stored call, from its `tool_calls` row.
pub(crate) fn result_part(tool: &ToolData, row: Option<&ToolCallRow>) -> Part {
    let (output, is_error, attachments) = match row {
        Some(r) if r.state != ToolCallState::Running => (
            r.output.clone(),
            r.state != ToolCallState::Completed,
            serde_json::from_value::<Vec<Attachment>>(r.attachments.clone()).unwrap_or_default(),
        ),
        _ => (lost_result_text(&tool.name), true, Vec::new()),
    };
    Part::ToolResult {
        call_id: tool.provider_id.clone(),
        output,
        is_error,
        attachments,
    }
}

/// An attached file as the model was sent it: the read's text, then the images it attached.
fn user_file_parts(f: &crate::attach::FileData, call: Option<&ToolCallRow>) -> Vec<Part> {
    let mut parts = vec![Part::Text {
        text: f.text.clone(),
    }];
    if let Some(call) = call.filter(|_| !f.failed) {
        let attached =
            serde_json::from_value::<Vec<Attachment>>(call.attachments.clone()).unwrap_or_default();
        parts.extend(crate::attach::image_parts(&attached));
    }
    parts
}

/// Rebuilds a session's conversation for the next request (`--continue`, `--session ID`),
/// as the model was last sent it: compactions recorded in the store are replayed.
pub fn load_history(store: &Store, session_id: &str) -> Result<Vec<Message>, StoreError> {
    Ok(load_with_window(store, session_id, "")?.0)
}

/// [`load_history`], and the smallest context window an overflow taught `model`
/// (`provider/model`) in this session, from its compaction records.
pub(crate) fn load_with_window(
    store: &Store,
    session_id: &str,
    model: &str,
) -> Result<(Vec<Message>, Option<u64>), StoreError> {
    let mut window: Option<u64> = None;
    let calls: HashMap<String, ToolCallRow> = store
        .tool_calls(session_id)?
        .into_iter()
        .map(|r| (r.id.clone(), r))
        .collect();
    let mut history = History::default();
    for m in store.messages(session_id)? {
        let parts: Vec<StoredPart> = store.parts(&m.id)?.iter().map(StoredPart::parse).collect();
        match m.role.as_str() {
            "user" => {
                let texts = parts
                    .iter()
                    .flat_map(|p| match p {
                        StoredPart::Text(t) if !t.text.is_empty() => vec![Part::Text {
                            text: t.text.clone(),
                        }],
                        StoredPart::File(f) => user_file_parts(f, calls.get(&f.call_id)),
                        _ => Vec::new(),
                    })
                    .collect();
                history.push(Role::User, texts);
            }
            "assistant" => {
                let discarded = parts.iter().any(|p| {
                    matches!(p, StoredPart::Step(s) if matches!(s.status, StepStatus::Cut | StepStatus::Error))
                });
                if discarded {
                    continue;
                }
                let said: Vec<Part> = parts.iter().filter_map(assistant_part).collect();
                let results: Vec<Part> = parts
                    .iter()
                    .filter_map(|p| match p {
                        StoredPart::Tool(t) => Some(result_part(t, calls.get(&t.call_id))),
                        _ => None,
                    })
                    .collect();
                history.push(Role::Assistant, said);
                history.push(Role::User, results);
            }
            // A compaction: what was sent from here on was pruned and summarised.
            "system" => {
                if let Some(record) = crate::compaction::record_of(&m.content) {
                    if let (Some(w), Some(for_model)) = (record.window, &record.model)
                        && for_model == model
                    {
                        window = Some(window.map_or(w, |known| known.min(w)));
                    }
                    let summary = parts.iter().find_map(|p| match p {
                        StoredPart::Other(kind, data)
                            if kind == crate::compaction::SUMMARY_PART =>
                        {
                            data.get("summary").and_then(Value::as_str)
                        }
                        _ => None,
                    });
                    crate::compaction::replay(&mut history.messages, &record, summary);
                }
            }
            _ => {}
        }
    }
    Ok((history.messages, window))
}

/// The history with tool calls and results turned into plain text, for a request that
/// offers no tools (the summary after `max_steps`): both APIs refuse tool blocks without
/// tool definitions, and the model still needs to see what happened.
pub fn without_tool_parts(messages: &[Message]) -> Vec<Message> {
    messages
        .iter()
        .map(|m| Message {
            role: m.role,
            parts: m
                .parts
                .iter()
                .map(|p| match p {
                    Part::ToolCall {
                        name, arguments, ..
                    } => Part::Text {
                        text: format!("[called tool {name} with {arguments}]"),
                    },
                    Part::ToolResult {
                        output, is_error, ..
                    } => Part::Text {
                        text: format!(
                            "[tool {}: {output}]",
                            if *is_error { "error" } else { "result" }
                        ),
                    },
                    other => other.clone(),
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod flatten_tests {
    use super::*;

    #[test]
    fn tool_blocks_become_text_and_other_parts_stay() {
        let messages = vec![
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Text {
                        text: "checking".into(),
                    },
                    Part::ToolCall {
                        id: "c1".into(),
                        name: "read".into(),
                        arguments: "{\"filePath\":\"a\"}".into(),
                    },
                ],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult {
                    call_id: "c1".into(),
                    output: "1\thello".into(),
                    is_error: false,
                    attachments: vec![],
                }],
            },
        ];
        let flat = without_tool_parts(&messages);
        assert_eq!(
            flat[0].parts[0],
            Part::Text {
                text: "checking".into()
            }
        );
        assert_eq!(
            flat[0].parts[1],
            Part::Text {
                text: "[called tool read with {\"filePath\":\"a\"}]".into()
            }
        );
        assert_eq!(
            flat[1].parts[0],
            Part::Text {
                text: "[tool result: 1\thello]".into()
            }
        );
    }
}
