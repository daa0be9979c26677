//! `experimental.chat.messages.transform`: plugins that prune or add context rewrite the
//! conversation just before it is sent, as in opencode. The hook gets `{}` and
//! `{messages: [{info, parts}]}` in opencode's shapes — a tool call and its result are one
//! `tool` part of the assistant message (`{callID, tool, state: {status, input, output |
//! error}}`), so the user turns that only carry results do not appear — and whatever it
//! leaves is turned back into the request's messages (results after their calls, images
//! and result attachments kept). The stored conversation never changes: the transform
//! applies to one request. A result that no longer pairs every call with its result is
//! refused (a provider would reject it) and the request goes as it was, with a warning.

use std::collections::HashMap;

use podcode_providers::{Message, Part, Role};
use serde_json::{Value, json};

use crate::history::History;

/// The hook's name.
pub const HOOK: &str = "experimental.chat.messages.transform";

/// What a transform left that cannot be sent.
pub fn unpaired_text(call_id: &str) -> String {
    format!(
        "{HOOK} hook left tool call {call_id} without its result (or a result without its call); the request was sent without the hook's changes"
    )
}

/// `messages` in opencode's `{info, parts}[]` shape, for session `session_id`.
pub fn to_opencode(messages: &[Message], session_id: &str) -> Value {
    let mut results: HashMap<&str, (&str, bool)> = HashMap::new();
    for m in messages {
        for p in &m.parts {
            if let Part::ToolResult {
                call_id,
                output,
                is_error,
                ..
            } = p
            {
                results.insert(call_id, (output, *is_error));
            }
        }
    }
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let parts: Vec<Value> = m
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text { text } => Some(json!({"type": "text", "text": text})),
                Part::Reasoning { text, signature } => Some(
                    json!({"type": "reasoning", "text": text, "metadata": {"signature": signature}}),
                ),
                Part::Image { mime, url } => {
                    Some(json!({"type": "file", "mime": mime, "url": url}))
                }
                Part::ToolCall {
                    id,
                    name,
                    arguments,
                } => {
                    let input: Value = serde_json::from_str(arguments)
                        .unwrap_or_else(|_| Value::String(arguments.clone()));
                    let state = match results.get(id.as_str()) {
                        Some((output, false)) => {
                            json!({"status": "completed", "input": input, "output": output, "title": "", "metadata": {}})
                        }
                        Some((error, true)) => {
                            json!({"status": "error", "input": input, "error": error})
                        }
                        None => json!({"status": "pending", "input": input}),
                    };
                    Some(json!({"type": "tool", "callID": id, "tool": name, "state": state}))
                }
                // Results are shown inside their call's `tool` part.
                Part::ToolResult { .. } => None,
            })
            .collect();
        if parts.is_empty() {
            continue;
        }
        let role = match m.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        out.push(json!({
            "info": {"id": format!("msg_{i:04}"), "sessionID": session_id, "role": role},
            "parts": parts,
        }));
    }
    Value::Array(out)
}

/// The messages a transform left, back in the request's shape; `Err` names a call left
/// without its result. `original` supplies what opencode's shape does not carry (result
/// attachments).
pub fn from_opencode(value: &Value, original: &[Message]) -> Result<Vec<Message>, String> {
    let mut attachments = HashMap::new();
    for m in original {
        for p in &m.parts {
            if let Part::ToolResult {
                call_id,
                attachments: a,
                ..
            } = p
            {
                attachments.insert(call_id.clone(), a.clone());
            }
        }
    }
    let mut history = History::default();
    for m in value.as_array().into_iter().flatten() {
        let role = match m.pointer("/info/role").and_then(Value::as_str) {
            Some("assistant") => Role::Assistant,
            _ => Role::User,
        };
        let mut parts = Vec::new();
        let mut results = Vec::new();
        for p in m["parts"].as_array().into_iter().flatten() {
            let text = |k: &str| p[k].as_str().unwrap_or_default().to_string();
            match p["type"].as_str().unwrap_or_default() {
                "text" if p["ignored"] != true => parts.push(Part::Text { text: text("text") }),
                "reasoning" if role == Role::Assistant => parts.push(Part::Reasoning {
                    text: text("text"),
                    signature: p
                        .pointer("/metadata/signature")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                }),
                "file" if text("mime").starts_with("image/") => parts.push(Part::Image {
                    mime: text("mime"),
                    url: text("url"),
                }),
                "tool" if role == Role::Assistant => {
                    let id = text("callID");
                    let state = &p["state"];
                    let input = &state["input"];
                    let arguments = match input {
                        Value::String(s) => s.clone(),
                        Value::Null => "{}".into(),
                        other => other.to_string(),
                    };
                    let (output, is_error) = match state["status"].as_str() {
                        Some("completed") => (state["output"].as_str(), false),
                        Some("error") => (state["error"].as_str(), true),
                        _ => return Err(unpaired_text(&id)),
                    };
                    results.push(Part::ToolResult {
                        call_id: id.clone(),
                        output: output.unwrap_or_default().to_string(),
                        is_error,
                        attachments: attachments.get(&id).cloned().unwrap_or_default(),
                    });
                    parts.push(Part::ToolCall {
                        id,
                        name: text("tool"),
                        arguments,
                    });
                }
                _ => {}
            }
        }
        history.push(role, parts);
        history.push(Role::User, results);
    }
    Ok(history.messages)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conversation() -> Vec<Message> {
        vec![
            Message {
                role: Role::User,
                parts: vec![Part::Text {
                    text: "list files".into(),
                }],
            },
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Text {
                        text: "Looking.".into(),
                    },
                    Part::ToolCall {
                        id: "c1".into(),
                        name: "bash".into(),
                        arguments: r#"{"command":"ls"}"#.into(),
                    },
                ],
            },
            Message {
                role: Role::User,
                parts: vec![Part::ToolResult {
                    call_id: "c1".into(),
                    output: "a.txt\nb.txt".into(),
                    is_error: false,
                    attachments: Vec::new(),
                }],
            },
            Message {
                role: Role::Assistant,
                parts: vec![Part::Text {
                    text: "Two files.".into(),
                }],
            },
        ]
    }

    #[test]
    fn the_conversation_round_trips_unchanged() {
        let c = conversation();
        let shown = to_opencode(&c, "ses_1");
        assert_eq!(
            shown.as_array().unwrap().len(),
            3,
            "results ride in their call"
        );
        assert_eq!(
            shown[1]["parts"][1],
            json!({"type": "tool", "callID": "c1", "tool": "bash", "state": {"status": "completed",
                "input": {"command": "ls"}, "output": "a.txt\nb.txt", "title": "", "metadata": {}}})
        );
        assert_eq!(from_opencode(&shown, &c).unwrap(), c);
    }

    #[test]
    fn a_pruned_output_and_an_added_text_are_sent_and_a_broken_pair_is_refused() {
        let c = conversation();
        let mut shown = to_opencode(&c, "ses_1");
        shown[1]["parts"][1]["state"]["output"] = json!("[output pruned]");
        shown[0]["parts"]
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "text", "text": "Context: repo is small.", "synthetic": true}));
        let sent = from_opencode(&shown, &c).unwrap();
        assert_eq!(
            sent[0].parts[1],
            Part::Text {
                text: "Context: repo is small.".into()
            }
        );
        assert!(
            matches!(&sent[2].parts[0], Part::ToolResult { output, .. } if output == "[output pruned]")
        );
        shown[1]["parts"][1]["state"] = json!({"status": "running", "input": {}});
        assert_eq!(from_opencode(&shown, &c), Err(unpaired_text("c1")));
    }
}
