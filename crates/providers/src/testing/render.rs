//! Renders a [`Reply`] as one protocol's HTTP response: status, headers and SSE frames
//! shaped like the real APIs' output.

use serde_json::{Value, json};

use super::reply::{Item, Reply};
use crate::WireProtocol;

pub(crate) struct Rendered {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Each element is one SSE event (or the whole body for non-streamed replies).
    pub frames: Vec<String>,
}

pub(crate) fn render(reply: &Reply, protocol: WireProtocol, model: &str, seq: usize) -> Rendered {
    if let Some(raw) = &reply.raw {
        return Rendered {
            status: raw.status,
            headers: vec![("content-type".into(), raw.content_type.clone())],
            frames: vec![raw.body.clone()],
        };
    }
    if let Some(err) = &reply.error {
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        if let Some(secs) = err.retry_after {
            headers.push(("retry-after".into(), secs.to_string()));
        }
        return Rendered {
            status: err.status,
            headers,
            frames: vec![error_body(protocol, err.status, &err.message)],
        };
    }
    let frames = match protocol {
        WireProtocol::OpenAi => openai(reply, model, seq),
        WireProtocol::Anthropic => anthropic(reply, model, seq),
    };
    let headers = vec![
        ("content-type".to_string(), "text/event-stream".to_string()),
        ("cache-control".to_string(), "no-cache".to_string()),
    ];
    Rendered {
        status: 200,
        headers,
        frames,
    }
}

/// The protocol's JSON error body.
pub(crate) fn error_body(protocol: WireProtocol, status: u16, message: &str) -> String {
    match protocol {
        WireProtocol::OpenAi => {
            json!({"error": {"message": message, "type": "scripted_error", "code": status}})
        }
        WireProtocol::Anthropic => {
            let kind = match status {
                400 => "invalid_request_error",
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
    }
    .to_string()
}

fn finish_reason(reply: &Reply, protocol: WireProtocol) -> String {
    let has_calls = reply
        .items
        .iter()
        .any(|i| matches!(i, Item::ToolCall { .. }));
    let given = reply
        .finish
        .clone()
        .unwrap_or_else(|| if has_calls { "tool_calls" } else { "stop" }.to_string());
    let pairs = [
        ("stop", "end_turn"),
        ("tool_calls", "tool_use"),
        ("length", "max_tokens"),
    ];
    for (openai, anthropic) in pairs {
        if given == openai || given == anthropic {
            return match protocol {
                WireProtocol::OpenAi => openai,
                WireProtocol::Anthropic => anthropic,
            }
            .to_string();
        }
    }
    given
}

/// `text` in `n` near-equal pieces, split at character boundaries.
fn split(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let size = chars.len().div_ceil(n.max(1));
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn openai(reply: &Reply, model: &str, seq: usize) -> Vec<String> {
    let id = format!("chatcmpl-scripted-{seq}");
    let chunk = |delta: Value, finish: Value| {
        let c = json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {c}\n\n")
    };
    let mut frames = vec![chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    let mut call_index = 0;
    for item in &reply.items {
        match item {
            Item::Text(t) => frames.push(chunk(json!({"content": t}), Value::Null)),
            Item::Reasoning { text, .. } => {
                frames.push(chunk(json!({"reasoning_content": text}), Value::Null))
            }
            Item::ToolCall {
                id,
                name,
                arguments,
            } => {
                let first = json!({"index": call_index, "id": id, "type": "function",
                    "function": {"name": name, "arguments": ""}});
                frames.push(chunk(json!({"tool_calls": [first]}), Value::Null));
                for piece in split(arguments, reply.split_args) {
                    let frag = json!({"index": call_index, "function": {"arguments": piece}});
                    frames.push(chunk(json!({"tool_calls": [frag]}), Value::Null));
                }
                call_index += 1;
            }
        }
    }
    frames.push(chunk(
        json!({}),
        json!(finish_reason(reply, WireProtocol::OpenAi)),
    ));
    let u = &reply.usage;
    let mut usage = json!({"prompt_tokens": u.input, "completion_tokens": u.output,
        "total_tokens": u.input + u.output, "prompt_tokens_details": {"cached_tokens": u.cache_read},
        "completion_tokens_details": {"reasoning_tokens": u.reasoning}});
    if let Some(cost) = u.cost {
        usage["cost"] = json!(cost);
    }
    let last = json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
        "choices": [], "usage": usage});
    frames.push(format!("data: {last}\n\n"));
    frames.push("data: [DONE]\n\n".to_string());
    frames
}

fn anthropic(reply: &Reply, model: &str, seq: usize) -> Vec<String> {
    let ev = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let u = &reply.usage;
    let uncached = u.input.saturating_sub(u.cache_read + u.cache_write);
    let mut frames = vec![
        ev(
            "message_start",
            json!({"type": "message_start", "message": {"id": format!("msg_scripted_{seq}"), "type": "message",
                "role": "assistant", "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": uncached, "cache_creation_input_tokens": u.cache_write,
                    "cache_read_input_tokens": u.cache_read, "output_tokens": 1}}}),
        ),
        ev("ping", json!({"type": "ping"})),
    ];
    let mut index = 0;
    let mut open_text = false;
    let stop = |index: usize| {
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        )
    };
    let start = |index: usize, block: Value| {
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": block}),
        )
    };
    let delta = |index: usize, delta: Value| {
        ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        )
    };
    for item in &reply.items {
        if open_text && !matches!(item, Item::Text(_)) {
            frames.push(stop(index));
            index += 1;
            open_text = false;
        }
        match item {
            Item::Text(t) => {
                if !open_text {
                    frames.push(start(index, json!({"type": "text", "text": ""})));
                    open_text = true;
                }
                frames.push(delta(index, json!({"type": "text_delta", "text": t})));
            }
            Item::Reasoning { text, signature } => {
                frames.push(start(
                    index,
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                ));
                frames.push(delta(
                    index,
                    json!({"type": "thinking_delta", "thinking": text}),
                ));
                if let Some(sig) = signature {
                    frames.push(delta(
                        index,
                        json!({"type": "signature_delta", "signature": sig}),
                    ));
                }
                frames.push(stop(index));
                index += 1;
            }
            Item::ToolCall {
                id,
                name,
                arguments,
            } => {
                frames.push(start(
                    index,
                    json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                ));
                for piece in split(arguments, reply.split_args) {
                    frames.push(delta(
                        index,
                        json!({"type": "input_json_delta", "partial_json": piece}),
                    ));
                }
                frames.push(stop(index));
                index += 1;
            }
        }
    }
    if open_text {
        frames.push(stop(index));
    }
    frames.push(ev(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": finish_reason(reply, WireProtocol::Anthropic),
            "stop_sequence": null}, "usage": {"output_tokens": u.output}}),
    ));
    frames.push(ev("message_stop", json!({"type": "message_stop"})));
    frames
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_characters_whole() {
        assert_eq!(split("abcdefg", 3), vec!["abc", "def", "g"]);
        assert_eq!(split("ééé", 2), vec!["éé", "é"]);
        assert_eq!(split("ab", 5), vec!["a", "b"]);
        assert!(split("", 3).is_empty());
    }

    #[test]
    fn finish_reasons_translate_between_vocabularies() {
        let r = Reply::new().tool_call("c", "t", "{}");
        assert_eq!(finish_reason(&r, WireProtocol::Anthropic), "tool_use");
        assert_eq!(
            finish_reason(&r.clone().finish("end_turn"), WireProtocol::OpenAi),
            "stop"
        );
        assert_eq!(
            finish_reason(&Reply::new().finish("length"), WireProtocol::Anthropic),
            "max_tokens"
        );
        assert_eq!(
            finish_reason(
                &Reply::new().finish("content_filter"),
                WireProtocol::Anthropic
            ),
            "content_filter"
        );
    }
}
