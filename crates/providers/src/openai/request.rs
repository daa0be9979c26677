//! Maps the provider-neutral conversation to a chat completions request body.
//!
//! Tool results become `role: "tool"` messages right after the assistant turn that called
//! them. Tool messages cannot carry images, so image attachments follow in one `user`
//! message (before the user's own parts of that turn). Reasoning is not sent back: several
//! compatible servers reject it.

use std::borrow::Cow;
use std::sync::Mutex;

use podcode_protocol::{Attachment, ToolSpec};
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value, json};

use super::memo::{Items, WireMemo};
use crate::options::Wire;
use crate::{ChatRequest, Message, ModelRef, Part, Role, ToolList};

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

/// The body for `req`, serialized straight from it: the conversation and the tool schemas
/// are written from where they are, with no JSON tree of the whole request built (and
/// dropped) at every step. With `memo`, messages written for an earlier request are reused.
pub(crate) fn wire_body<'a>(
    model: &ModelRef,
    req: &'a ChatRequest,
    memo: Option<&Mutex<WireMemo>>,
) -> serde_json::Result<Body<'a>> {
    let id = model_id(model, &req.model);
    let mut head = Map::new();
    head.insert("model".into(), json!(id));
    head.insert("stream".into(), json!(true));
    head.insert("stream_options".into(), json!({"include_usage": true}));
    if let Some(max) = req.max_tokens {
        // OpenAI's own API replaced `max_tokens` (rejected by its reasoning models); the
        // compatible servers still read `max_tokens`.
        let key = if model.provider == "openai" {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        head.insert(key.into(), json!(max));
    }
    if let Some(t) = req.temperature {
        head.insert("temperature".into(), json!(t));
    }
    if let Some(p) = req.top_p {
        head.insert("top_p".into(), json!(p));
    }
    crate::options::merge(&mut head, &req.options, Wire::OpenAi);
    // OpenAI routes requests sharing a key to the same prompt cache; other compatible
    // servers may refuse unknown fields, so only OpenAI's own API gets it.
    if let Some(key) = &req.cache_key
        && model.provider == "openai"
    {
        head.insert("prompt_cache_key".into(), json!(key));
    }
    let system = (!req.system.is_empty()).then(|| Item::Text {
        role: "system",
        content: Cow::Borrowed(&req.system),
    });
    let messages = match memo {
        Some(memo) => memo
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .items(req.cache_key.as_deref(), &req.messages)?,
        None => (req.messages.iter())
            .map(message_items)
            .collect::<serde_json::Result<_>>()?,
    };
    Ok(Body {
        head,
        system,
        messages,
        tools: &req.tools,
    })
}

/// The chat messages one conversation message becomes, written.
pub(crate) fn message_items(m: &Message) -> serde_json::Result<Items> {
    let mut items = Vec::new();
    match m.role {
        Role::User => user_messages(m, &mut items),
        Role::Assistant => items.extend(assistant_message(m)),
    }
    (items.iter())
        .map(serde_json::value::to_raw_value)
        .collect::<serde_json::Result<Vec<_>>>()
        .map(Items::from)
}

/// A chat completions request body (see `wire_body`).
pub(crate) struct Body<'a> {
    /// `model`, `stream` and the sampling fields and options: small, built per request.
    head: Map<String, Value>,
    system: Option<Item<'a>>,
    /// Each message's chat messages, written.
    messages: Vec<Items>,
    tools: &'a ToolList,
}

/// The `messages` array: the system prompt, then every message's items.
struct Messages<'b, 'a>(&'b Body<'a>);

impl Serialize for Messages<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        if let Some(system) = &self.0.system {
            seq.serialize_element(system)?;
        }
        for item in self.0.messages.iter().flat_map(|m| m.iter()) {
            seq.serialize_element(item)?;
        }
        seq.end()
    }
}

impl Serialize for Body<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (key, value) in &self.head {
            map.serialize_entry(key, value)?;
        }
        map.serialize_entry("messages", &Messages(self))?;
        if !self.tools.is_empty() {
            let tools = self
                .tools
                .wire_json(Wire::OpenAi, |t| serde_json::value::to_raw_value(&Tools(t)))
                .map_err(serde::ser::Error::custom)?;
            map.serialize_entry("tools", tools)?;
        }
        map.end()
    }
}

/// One chat message.
#[derive(Serialize)]
#[serde(untagged)]
enum Item<'a> {
    Text {
        role: &'static str,
        content: Cow<'a, str>,
    },
    Parts {
        role: &'static str,
        content: Vec<Content<'a>>,
    },
    Tool {
        role: &'static str,
        tool_call_id: &'a str,
        content: Cow<'a, str>,
    },
    Assistant {
        role: &'static str,
        content: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<Call<'a>>,
    },
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Content<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: Url<'a> },
}

#[derive(Serialize)]
struct Url<'a> {
    url: &'a str,
}

#[derive(Serialize)]
struct Call<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: CallFunction<'a>,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

struct Tools<'a>(&'a [ToolSpec]);

impl Serialize for Tools<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Tool<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            function: Function<'a>,
        }
        #[derive(Serialize)]
        struct Function<'a> {
            name: &'a str,
            description: &'a str,
            parameters: &'a Value,
        }
        s.collect_seq(self.0.iter().map(|t| Tool {
            kind: "function",
            function: Function {
                name: &t.id,
                description: &t.description,
                parameters: &t.parameters,
            },
        }))
    }
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

fn user_messages<'a>(m: &'a Message, out: &mut Vec<Item<'a>>) {
    let mut content: Vec<Content<'a>> = Vec::new();
    let mut has_image = false;
    for part in &m.parts {
        if let Part::ToolResult {
            call_id,
            output,
            attachments,
            ..
        } = part
        {
            let mut text = Cow::Borrowed(output.as_str());
            let mut images = Vec::new();
            for a in attachments {
                if a.mime.starts_with("image/") {
                    images.push(Content::ImageUrl {
                        image_url: Url { url: &a.url },
                    });
                } else {
                    let text = text.to_mut();
                    text.push_str(if text.is_empty() { "" } else { "\n" });
                    text.push_str(&unsupported_attachment(a));
                }
            }
            out.push(Item::Tool {
                role: "tool",
                tool_call_id: call_id,
                content: text,
            });
            if !images.is_empty() {
                content.push(Content::Text {
                    text: Cow::Owned(attachment_intro(call_id)),
                });
                content.extend(images);
                has_image = true;
            }
        }
    }
    for part in &m.parts {
        match part {
            Part::Text { text } => content.push(Content::Text {
                text: Cow::Borrowed(text),
            }),
            Part::Image { url, .. } => {
                content.push(Content::ImageUrl {
                    image_url: Url { url },
                });
                has_image = true;
            }
            _ => {}
        }
    }
    if content.is_empty() {
        return;
    }
    if has_image {
        out.push(Item::Parts {
            role: "user",
            content,
        });
        return;
    }
    // Text only: a plain string, which every compatible server accepts.
    let mut texts = content.into_iter().filter_map(|c| match c {
        Content::Text { text } => Some(text),
        Content::ImageUrl { .. } => None,
    });
    let first = texts.next().unwrap_or_default();
    let content = texts.fold(first, |mut all, t| {
        let all_text = all.to_mut();
        all_text.push_str("\n\n");
        all_text.push_str(&t);
        all
    });
    out.push(Item::Text {
        role: "user",
        content,
    });
}

fn assistant_message(m: &Message) -> Option<Item<'_>> {
    let mut text: Option<Cow<'_, str>> = None;
    let mut tool_calls = Vec::new();
    for part in &m.parts {
        match part {
            Part::Text { text: t } => match &mut text {
                None => text = Some(Cow::Borrowed(t)),
                Some(all) => all.to_mut().push_str(t),
            },
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
                tool_calls.push(Call {
                    id,
                    kind: "function",
                    function: CallFunction { name, arguments },
                });
            }
            _ => {}
        }
    }
    let text = text.filter(|t| !t.is_empty());
    if text.is_none() && tool_calls.is_empty() {
        return None;
    }
    Some(Item::Assistant {
        role: "assistant",
        content: text,
        tool_calls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request_body(model: &ModelRef, req: &ChatRequest) -> Value {
        serde_json::to_value(wire_body(model, req, None).unwrap()).unwrap()
    }

    fn req(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            model: String::new(),
            system: "sys".into(),
            messages,
            tools: vec![].into(),
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
        }]
        .into();
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
