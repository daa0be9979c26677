//! Maps the provider-neutral conversation to a chat completions request body.
//!
//! Tool results become `role: "tool"` messages right after the assistant turn that called
//! them. Tool messages cannot carry images, so image attachments follow in one `user`
//! message (before the user's own parts of that turn). Reasoning is not sent back: several
//! compatible servers reject it.

use podcode_protocol::Attachment;
use serde_json::{Map, Value, json};

use crate::{ChatRequest, Message, ModelRef, Part, Role};

/// The text introducing images a tool call returned (model-facing).
pub(crate) fn attachment_intro(call_id: &str) -> String {
    format!("Attachments returned by tool call {call_id}:")
}

/// The note for an attachment this protocol cannot carry (model-facing).
pub(crate) fn unsupported_attachment(a: &Attachment) -> String {
    let name = a.filename.as_deref().unwrap_or("attachment");
    format!(
        "[{name} ({}) is attached but cannot be shown: only images can be sent to this model]",
        a.mime
    )
}

pub(crate) fn request_body(model: &ModelRef, req: &ChatRequest) -> Value {
    let mut messages = Vec::new();
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    for m in &req.messages {
        match m.role {
            Role::User => user_messages(m, &mut messages),
            Role::Assistant => messages.extend(assistant_message(m)),
        }
    }
    let id = model_id(model, &req.model);
    let mut body = Map::new();
    body.insert("model".into(), json!(id));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if !req.tools.is_empty() {
        let tools = req.tools.iter().map(|t| {
            json!({"type": "function", "function": {"name": t.id, "description": t.description, "parameters": t.parameters}})
        });
        body.insert("tools".into(), Value::Array(tools.collect()));
    }
    if let Some(max) = req.max_tokens {
        // OpenAI's own API replaced `max_tokens` (rejected by its reasoning models); the
        // compatible servers still read `max_tokens`.
        let key = if model.provider == "openai" {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(key.into(), json!(max));
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = req.top_p {
        body.insert("top_p".into(), json!(p));
    }
    crate::options::merge(&mut body, &req.options, crate::options::Wire::OpenAi);
    // OpenAI routes requests sharing a key to the same prompt cache; other compatible
    // servers may refuse unknown fields, so only OpenAI's own API gets it.
    if let Some(key) = &req.cache_key
        && model.provider == "openai"
    {
        body.insert("prompt_cache_key".into(), json!(key));
    }
    Value::Object(body)
}

/// The model id to send: the request's, without a `provider/` prefix naming this provider,
/// or the client's own when the request leaves it empty.
pub(crate) fn model_id<'a>(model: &'a ModelRef, requested: &'a str) -> &'a str {
    let requested = requested
        .strip_prefix(&format!("{}/", model.provider))
        .unwrap_or(requested);
    if requested.is_empty() {
        &model.model
    } else {
        requested
    }
}

fn user_messages(m: &Message, out: &mut Vec<Value>) {
    let mut content: Vec<Value> = Vec::new();
    let mut has_image = false;
    for part in &m.parts {
        if let Part::ToolResult {
            call_id,
            output,
            attachments,
            ..
        } = part
        {
            let mut text = output.clone();
            let mut images = Vec::new();
            for a in attachments {
                if a.mime.starts_with("image/") {
                    images.push(json!({"type": "image_url", "image_url": {"url": a.url}}));
                } else {
                    text.push_str(if text.is_empty() { "" } else { "\n" });
                    text.push_str(&unsupported_attachment(a));
                }
            }
            out.push(json!({"role": "tool", "tool_call_id": call_id, "content": text}));
            if !images.is_empty() {
                content.push(json!({"type": "text", "text": attachment_intro(call_id)}));
                content.extend(images);
                has_image = true;
            }
        }
    }
    for part in &m.parts {
        match part {
            Part::Text { text } => content.push(json!({"type": "text", "text": text})),
            Part::Image { url, .. } => {
                content.push(json!({"type": "image_url", "image_url": {"url": url}}));
                has_image = true;
            }
            _ => {}
        }
    }
    if content.is_empty() {
        return;
    }
    if has_image {
        out.push(json!({"role": "user", "content": content}));
    } else {
        // Text only: a plain string, which every compatible server accepts.
        let texts: Vec<&str> = content.iter().filter_map(|c| c["text"].as_str()).collect();
        out.push(json!({"role": "user", "content": texts.join("\n\n")}));
    }
}

fn assistant_message(m: &Message) -> Option<Value> {
    let mut text = String::new();
    let mut calls = Vec::new();
    for part in &m.parts {
        match part {
            Part::Text { text: t } => text.push_str(t),
            Part::ToolCall {
                id,
                name,
                arguments,
            } => {
                let arguments = if arguments.trim().is_empty() {
                    "{}"
                } else {
                    arguments
                };
                calls.push(json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}));
            }
            _ => {}
        }
    }
    if text.is_empty() && calls.is_empty() {
        return None;
    }
    let mut msg = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
    if !calls.is_empty() {
        msg["tool_calls"] = Value::Array(calls);
    }
    Some(msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use podcode_protocol::ToolSpec;

    fn req(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            model: String::new(),
            system: "sys".into(),
            messages,
            tools: vec![],
            max_tokens: None,
            temperature: None,
            top_p: None,
            top_k: None,
            options: Default::default(),
            cache_key: None,
            headers: Vec::new(),
        }
    }

    #[test]
    fn the_prompt_cache_key_goes_to_openai_only() {
        let mut r = req(vec![]);
        r.cache_key = Some("ses_1".into());
        let openai = request_body(&ModelRef::parse("openai/gpt-4.1").unwrap(), &r);
        assert_eq!(openai["prompt_cache_key"], "ses_1");
        assert_eq!(openai["stream_options"], json!({"include_usage": true}));
        let groq = request_body(&ModelRef::parse("groq/llama").unwrap(), &r);
        assert!(groq.get("prompt_cache_key").is_none());
    }

    #[test]
    fn conversation_maps_to_chat_messages() {
        let model = ModelRef::parse("groq/llama").unwrap();
        let mut r = req(vec![
            Message {
                role: Role::User,
                parts: vec![Part::Text { text: "hi".into() }],
            },
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Reasoning {
                        text: "hmm".into(),
                        signature: None,
                    },
                    Part::Text { text: "ok".into() },
                    Part::ToolCall {
                        id: "c1".into(),
                        name: "read".into(),
                        arguments: "{\"a\":1}".into(),
                    },
                    Part::ToolCall {
                        id: "c2".into(),
                        name: "list".into(),
                        arguments: String::new(),
                    },
                ],
            },
            Message {
                role: Role::User,
                parts: vec![
                    Part::ToolResult {
                        call_id: "c1".into(),
                        output: "one".into(),
                        is_error: false,
                        attachments: vec![],
                    },
                    Part::ToolResult {
                        call_id: "c2".into(),
                        output: "two".into(),
                        is_error: true,
                        attachments: vec![],
                    },
                    Part::Text {
                        text: "go on".into(),
                    },
                ],
            },
        ]);
        r.max_tokens = Some(100);
        r.tools = vec![ToolSpec {
            id: "read".into(),
            description: "Read".into(),
            parameters: json!({"type": "object"}),
            truncation: Default::default(),
            idempotent: true,
            timeout_ms: None,
            offered_after: None,
        }];
        let body = request_body(&model, &r);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "ok", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"a\":1}"}},
                    {"id": "c2", "type": "function", "function": {"name": "list", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "one"},
                {"role": "tool", "tool_call_id": "c2", "content": "two"},
                {"role": "user", "content": "go on"},
            ])
        );
        assert_eq!(body["model"], "llama");
        assert_eq!(body["max_tokens"], 100);
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        assert_eq!(
            body["tools"],
            json!([{"type": "function", "function": {"name": "read", "description": "Read", "parameters": {"type": "object"}}}])
        );
        let openai = request_body(&ModelRef::parse("openai/gpt-4.1").unwrap(), &r);
        assert_eq!(openai["max_completion_tokens"], 100);
        assert!(openai.get("max_tokens").is_none());
    }

    #[test]
    fn non_image_attachments_are_named_in_the_tool_message() {
        let a = Attachment {
            mime: "application/pdf".into(),
            url: "data:application/pdf;base64,AA".into(),
            filename: Some("r.pdf".into()),
        };
        let m = Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: "c".into(),
                output: "done".into(),
                is_error: false,
                attachments: vec![a],
            }],
        };
        let body = request_body(&ModelRef::parse("x/y").unwrap(), &req(vec![m]));
        assert_eq!(
            body["messages"][1]["content"],
            "done\n[r.pdf (application/pdf) is attached but cannot be shown: only images can be sent to this model]"
        );
        assert_eq!(body["messages"].as_array().unwrap().len(), 2);
    }
}
