//! Maps the provider-neutral conversation to a Messages request body.
//!
//! The API's rules shape this: content blocks must be non-empty, roles alternate (so
//! consecutive same-role messages are merged), `tool_result` blocks open the user turn that
//! answers the calls, thinking blocks go back only with their signature, and `tool_use.input`
//! is a JSON object (parsed from the call's argument text).

use podcode_protocol::{Attachment, ToolSpec};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value, json};

use super::DEFAULT_MAX_TOKENS;
use crate::openai::model_id;
use crate::options::Wire;
use crate::{ChatRequest, Message, ModelRef, Part, Role, ToolList};

pub(crate) fn wire_body<'a>(model: &ModelRef, req: &'a ChatRequest) -> Body<'a> {
    let mut messages: Vec<(Role, Vec<Value>)> = Vec::new();
    for m in &req.messages {
        let blocks = content(m);
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some((role, existing)) if *role == m.role => {
                // tool_result blocks must lead the merged user turn.
                let (mut results, rest): (Vec<Value>, Vec<Value>) = std::mem::take(existing)
                    .into_iter()
                    .chain(blocks)
                    .partition(is_tool_result);
                results.extend(rest);
                *existing = results;
            }
            _ => messages.push((m.role, blocks)),
        }
    }
    let mut messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    // Prompt caching: breakpoints on the recent turn (the last two messages, so the next
    // request reads what this one wrote), the tools and the system prompt — four, the API's
    // maximum. Each caches everything before it.
    let n = messages.len();
    for m in messages.iter_mut().skip(n.saturating_sub(2)) {
        mark_last_block(m);
    }

    let mut body = Map::new();
    body.insert("model".into(), json!(model_id(model, &req.model)));
    body.insert(
        "max_tokens".into(),
        json!(req.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    body.insert("stream".into(), json!(true));
    if !req.system.is_empty() {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": req.system, "cache_control": ephemeral()}]),
        );
    }
    body.insert("messages".into(), Value::Array(messages));
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = req.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if let Some(k) = req.top_k {
        body.insert("top_k".into(), json!(k));
    }
    crate::options::merge(&mut body, &req.options, Wire::Anthropic);
    Body {
        head: body,
        tools: &req.tools,
    }
}

/// A Messages request body: the tool schemas are written from the request itself rather
/// than copied into a JSON tree at every step.
pub(crate) struct Body<'a> {
    head: Map<String, Value>,
    tools: &'a ToolList,
}

impl Serialize for Body<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (key, value) in &self.head {
            map.serialize_entry(key, value)?;
        }
        if !self.tools.is_empty() {
            let tools = self
                .tools
                .wire_json(Wire::Anthropic, |t| {
                    serde_json::value::to_raw_value(&wire_tools(t))
                })
                .map_err(serde::ser::Error::custom)?;
            map.serialize_entry("tools", tools)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<Value>,
}

/// The tools as Messages takes them; the last carries a cache breakpoint: the tools are
/// cached with the system.
fn wire_tools(tools: &[ToolSpec]) -> Vec<Tool<'_>> {
    let last = tools.len().saturating_sub(1);
    (tools.iter().enumerate())
        .map(|(i, t)| Tool {
            name: &t.id,
            description: &t.description,
            input_schema: &t.parameters,
            cache_control: (i == last).then(ephemeral),
        })
        .collect()
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Puts a cache breakpoint on a message's last block that may carry one (thinking blocks
/// may not).
fn mark_last_block(message: &mut Value) {
    if let Some(block) = message["content"]
        .as_array_mut()
        .and_then(|blocks| blocks.iter_mut().rev().find(|b| b["type"] != "thinking"))
    {
        block["cache_control"] = ephemeral();
    }
}

fn is_tool_result(block: &Value) -> bool {
    block["type"] == "tool_result"
}

fn content(m: &Message) -> Vec<Value> {
    let mut results = Vec::new();
    let mut blocks = Vec::new();
    for part in &m.parts {
        match part {
            Part::Text { text } if !text.is_empty() => {
                blocks.push(json!({"type": "text", "text": text}))
            }
            Part::Reasoning {
                text,
                signature: Some(sig),
            } if m.role == Role::Assistant => {
                blocks.push(json!({"type": "thinking", "thinking": text, "signature": sig}));
            }
            Part::ToolCall {
                id,
                name,
                arguments,
            } => {
                blocks.push(json!({"type": "tool_use", "id": id, "name": name, "input": tool_input(arguments)}));
            }
            Part::ToolResult {
                call_id,
                output,
                is_error,
                attachments,
            } => {
                results.push(tool_result(call_id, output, *is_error, attachments));
            }
            Part::Image { mime, url } => blocks.push(image(mime, url)),
            _ => {}
        }
    }
    results.extend(blocks);
    results
}

/// The call's arguments as the JSON object `tool_use.input` must be; `{}` when they are
/// empty or not an object (the tool's result then explains what was wrong).
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({}),
    }
}

fn tool_result(call_id: &str, output: &str, is_error: bool, attachments: &[Attachment]) -> Value {
    let mut content = Vec::new();
    if !output.is_empty() {
        content.push(json!({"type": "text", "text": output}));
    }
    for a in attachments {
        if a.mime.starts_with("image/") {
            content.push(image(&a.mime, &a.url));
        } else if a.mime == "application/pdf" {
            content.push(json!({"type": "document", "source": source(&a.mime, &a.url)}));
        } else {
            content.push(json!({"type": "text", "text": crate::openai::unsupported_attachment(a)}));
        }
    }
    let mut block = json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
    if is_error {
        block["is_error"] = json!(true);
    }
    block
}

fn image(mime: &str, url: &str) -> Value {
    json!({"type": "image", "source": source(mime, url)})
}

/// `data:<mime>;base64,<data>` → a base64 source; anything else → a URL source.
fn source(mime: &str, url: &str) -> Value {
    if let Some(rest) = url.strip_prefix("data:")
        && let Some((meta, data)) = rest.split_once(',')
        && let Some(media_type) = meta.strip_suffix(";base64")
    {
        let media_type = if media_type.is_empty() {
            mime
        } else {
            media_type
        };
        return json!({"type": "base64", "media_type": media_type, "data": data});
    }
    json!({"type": "url", "url": url})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request_body(model: &ModelRef, req: &ChatRequest) -> Value {
        serde_json::to_value(wire_body(model, req)).unwrap()
    }

    fn msg(role: Role, parts: Vec<Part>) -> Message {
        Message { role, parts }
    }

    #[test]
    fn conversation_maps_to_messages() {
        let req = ChatRequest {
            model: "anthropic/claude-x".into(),
            system: String::new(),
            messages: vec![
                msg(Role::User, vec![Part::Text { text: "hi".into() }]),
                msg(
                    Role::User,
                    vec![
                        Part::Text {
                            text: String::new(),
                        },
                        Part::Text {
                            text: "again".into(),
                        },
                    ],
                ),
                msg(
                    Role::Assistant,
                    vec![
                        Part::Reasoning {
                            text: "think".into(),
                            signature: Some("sig".into()),
                        },
                        Part::Reasoning {
                            text: "unsigned".into(),
                            signature: None,
                        },
                        Part::ToolCall {
                            id: "t1".into(),
                            name: "read".into(),
                            arguments: r#"{"a":1}"#.into(),
                        },
                        Part::ToolCall {
                            id: "t2".into(),
                            name: "list".into(),
                            arguments: "not json".into(),
                        },
                    ],
                ),
                msg(
                    Role::User,
                    vec![Part::Text {
                        text: "also".into(),
                    }],
                ),
                msg(
                    Role::User,
                    vec![
                        Part::ToolResult {
                            call_id: "t1".into(),
                            output: "x".into(),
                            is_error: false,
                            attachments: vec![],
                        },
                        Part::ToolResult {
                            call_id: "t2".into(),
                            output: String::new(),
                            is_error: true,
                            attachments: vec![],
                        },
                    ],
                ),
            ],
            tools: vec![].into(),
            max_tokens: None,
            temperature: Some(0.5),
            top_p: None,
            top_k: None,
            options: Default::default(),
            cache_key: None,
            headers: Vec::new(),
        };
        let body = request_body(&ModelRef::parse("anthropic/claude-y").unwrap(), &req);
        assert_eq!(body["model"], "claude-x");
        assert_eq!(body["max_tokens"], 8192);
        assert!(body.get("system").is_none() && body.get("tools").is_none());
        assert_eq!(
            body["messages"],
            json!([
                {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "again"}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "think", "signature": "sig"},
                    {"type": "tool_use", "id": "t1", "name": "read", "input": {"a": 1}},
                    {"type": "tool_use", "id": "t2", "name": "list", "input": {}, "cache_control": {"type": "ephemeral"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "x"}]},
                    {"type": "tool_result", "tool_use_id": "t2", "content": [], "is_error": true},
                    {"type": "text", "text": "also", "cache_control": {"type": "ephemeral"}}]},
            ])
        );
    }

    #[test]
    fn cache_breakpoints_on_system_tools_and_the_recent_turn() {
        let tool = |id: &str| podcode_protocol::ToolSpec {
            id: id.into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
            truncation: Default::default(),
            idempotent: true,
            timeout_ms: None,
            offered_after: None,
        };
        let text = |t: &str| Part::Text { text: t.into() };
        let req = ChatRequest {
            model: String::new(),
            system: "sys".into(),
            messages: vec![
                msg(Role::User, vec![text("one")]),
                msg(Role::Assistant, vec![text("two")]),
                msg(Role::User, vec![text("three"), text("four")]),
            ],
            tools: vec![tool("a"), tool("b")].into(),
            max_tokens: None,
            temperature: None,
            top_p: None,
            top_k: None,
            options: Default::default(),
            cache_key: Some("ses_1".into()),
            headers: Vec::new(),
        };
        let body = request_body(&ModelRef::parse("anthropic/claude-y").unwrap(), &req);
        let eph = json!({"type": "ephemeral"});
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": "sys", "cache_control": eph}])
        );
        assert!(body["tools"][0].get("cache_control").is_none());
        assert_eq!(body["tools"][1]["cache_control"], eph);
        let m = &body["messages"];
        assert!(m[0]["content"][0].get("cache_control").is_none());
        assert_eq!(m[1]["content"][0]["cache_control"], eph);
        assert!(m[2]["content"][0].get("cache_control").is_none());
        assert_eq!(m[2]["content"][1]["cache_control"], eph);
        let marks = body.to_string().matches("cache_control").count();
        assert_eq!(marks, 4, "the API allows at most four breakpoints");
    }

    #[test]
    fn sources_from_data_and_remote_urls() {
        assert_eq!(
            source("image/png", "data:image/jpeg;base64,QUJD"),
            json!({"type": "base64", "media_type": "image/jpeg", "data": "QUJD"})
        );
        assert_eq!(
            source("image/png", "data:;base64,QUJD")["media_type"],
            "image/png"
        );
        assert_eq!(
            source("image/png", "https://x/y.png"),
            json!({"type": "url", "url": "https://x/y.png"})
        );
    }
}
