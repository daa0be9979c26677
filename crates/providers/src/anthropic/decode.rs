//! Reads a Messages event stream: `message_start`, then per content block
//! `content_block_start` / `content_block_delta`… / `content_block_stop`, then
//! `message_delta` (stop reason, output tokens) and `message_stop`.
//!
//! Content block indexes count every block; tool calls are renumbered among themselves
//! (0, 1, …) for `ToolCallStart`/`ToolCallDelta`. Usage is collected from `message_start`
//! and `message_delta` and emitted once, before `Finish`. `redacted_thinking` blocks are
//! dropped (the neutral `Part` has no place for them).

use std::collections::HashMap;

use serde_json::Value;

use crate::sse::SseEvent;
use crate::stream::Decoder;
use crate::{FinishReason, ProviderError, StreamEvent, Usage};

#[derive(Debug, Default)]
pub(crate) struct AnthropicDecoder {
    provider: String,
    /// Content block index → tool call index.
    tool_blocks: HashMap<u64, usize>,
    tools: usize,
    stop_reason: Option<String>,
    input: u64,
    cache_read: u64,
    cache_write: u64,
    output: u64,
}

fn u64_at(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

impl AnthropicDecoder {
    pub(crate) fn new(provider: &str) -> Self {
        Self {
            provider: provider.to_string(),
            ..Self::default()
        }
    }

    fn usage(&mut self, u: &Value) {
        if let Some(n) = u64_at(u, "input_tokens") {
            self.input = n;
        }
        if let Some(n) = u64_at(u, "cache_read_input_tokens") {
            self.cache_read = n;
        }
        if let Some(n) = u64_at(u, "cache_creation_input_tokens") {
            self.cache_write = n;
        }
        if let Some(n) = u64_at(u, "output_tokens") {
            self.output = n;
        }
    }

    fn block_start(&mut self, index: u64, block: &Value, out: &mut Vec<StreamEvent>) {
        match str_at(block, "type") {
            "text" => push_text(out, str_at(block, "text"), |t| StreamEvent::TextDelta {
                text: t,
            }),
            "thinking" => {
                push_text(out, str_at(block, "thinking"), |t| {
                    StreamEvent::ReasoningDelta { text: t }
                });
                push_text(out, str_at(block, "signature"), |s| {
                    StreamEvent::ReasoningSignature { signature: s }
                });
            }
            "tool_use" => {
                let call = self.tools;
                self.tools += 1;
                self.tool_blocks.insert(index, call);
                let (id, name) = (
                    str_at(block, "id").to_string(),
                    str_at(block, "name").to_string(),
                );
                out.push(StreamEvent::ToolCallStart {
                    index: call,
                    id,
                    name,
                });
                // The API sends `input: {}` and streams the JSON; a proxy may send it whole.
                if let Some(input) = block
                    .get("input")
                    .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
                {
                    out.push(StreamEvent::ToolCallDelta {
                        index: call,
                        arguments: input.to_string(),
                    });
                }
            }
            _ => {}
        }
    }

    fn block_delta(&mut self, index: u64, delta: &Value, out: &mut Vec<StreamEvent>) {
        match str_at(delta, "type") {
            "text_delta" => push_text(out, str_at(delta, "text"), |t| StreamEvent::TextDelta {
                text: t,
            }),
            "thinking_delta" => push_text(out, str_at(delta, "thinking"), |t| {
                StreamEvent::ReasoningDelta { text: t }
            }),
            "signature_delta" => push_text(out, str_at(delta, "signature"), |s| {
                StreamEvent::ReasoningSignature { signature: s }
            }),
            "input_json_delta" => {
                if let Some(&call) = self.tool_blocks.get(&index) {
                    push_text(out, str_at(delta, "partial_json"), |a| {
                        StreamEvent::ToolCallDelta {
                            index: call,
                            arguments: a,
                        }
                    });
                }
            }
            _ => {}
        }
    }

    fn error(&self, data: &Value) -> ProviderError {
        let error = data.get("error").unwrap_or(data);
        let message = str_at(error, "message").to_string();
        let status = match str_at(error, "type") {
            "overloaded_error" => 529,
            "rate_limit_error" => 429,
            "api_error" => 500,
            "timeout_error" => 504,
            "authentication_error" => 401,
            "permission_error" => 403,
            "not_found_error" => 404,
            "request_too_large" => 413,
            _ => 400,
        };
        ProviderError::Http {
            provider: self.provider.clone(),
            status,
            message,
        }
    }
}

fn push_text(out: &mut Vec<StreamEvent>, text: &str, make: impl FnOnce(String) -> StreamEvent) {
    if !text.is_empty() {
        out.push(make(text.to_string()));
    }
}

impl Decoder for AnthropicDecoder {
    fn event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<bool, ProviderError> {
        if event.data.trim().is_empty() {
            return Ok(false);
        }
        let data: Value =
            serde_json::from_str(&event.data).map_err(|e| ProviderError::Protocol {
                provider: self.provider.clone(),
                message: format!("invalid JSON in the stream ({e}): {:.200}", event.data),
            })?;
        let kind = if event.event.is_empty() {
            str_at(&data, "type")
        } else {
            event.event.as_str()
        };
        let index = u64_at(&data, "index").unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(u) = data.pointer("/message/usage") {
                    self.usage(u);
                }
            }
            "content_block_start" => self.block_start(
                index,
                data.get("content_block").unwrap_or(&Value::Null),
                out,
            ),
            "content_block_delta" => {
                self.block_delta(index, data.get("delta").unwrap_or(&Value::Null), out)
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(u) = data.get("usage") {
                    self.usage(u);
                }
            }
            "message_stop" => {
                let usage = Usage {
                    input_tokens: self.input + self.cache_read + self.cache_write,
                    output_tokens: self.output,
                    cache_read_tokens: self.cache_read,
                    cache_write_tokens: self.cache_write,
                    reasoning_tokens: 0,
                    cost: None,
                };
                out.push(StreamEvent::Usage { usage });
                let reason = match self.stop_reason.as_deref() {
                    Some("end_turn" | "stop_sequence") => FinishReason::Stop,
                    Some("tool_use") => FinishReason::ToolCalls,
                    Some("max_tokens") => FinishReason::Length,
                    Some(other) => FinishReason::Other(other.to_string()),
                    None if self.tools > 0 => FinishReason::ToolCalls,
                    None => FinishReason::Stop,
                };
                out.push(StreamEvent::Finish { reason });
                return Ok(true);
            }
            "error" => return Err(self.error(&data)),
            _ => {}
        }
        Ok(false)
    }

    /// Without `message_stop` the turn is incomplete, whatever arrived.
    fn end(&mut self, _out: &mut Vec<StreamEvent>) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_in_the_stream_carry_a_status() {
        let mut d = AnthropicDecoder::new("anthropic");
        let mut out = Vec::new();
        let ev = SseEvent {
            event: "error".into(),
            data: json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).to_string(),
        };
        let err = d.event(&ev, &mut out).unwrap_err();
        assert_eq!(err.to_string(), "anthropic returned HTTP 529: Overloaded");
    }

    #[test]
    fn a_whole_input_at_block_start_is_one_delta() {
        let mut d = AnthropicDecoder::new("p");
        let mut out = Vec::new();
        let start = json!({"type": "content_block_start", "index": 3,
            "content_block": {"type": "tool_use", "id": "t", "name": "n", "input": {"a": 1}}});
        d.event(
            &SseEvent {
                event: String::new(),
                data: start.to_string(),
            },
            &mut out,
        )
        .unwrap();
        assert_eq!(
            out,
            vec![
                StreamEvent::ToolCallStart {
                    index: 0,
                    id: "t".into(),
                    name: "n".into()
                },
                StreamEvent::ToolCallDelta {
                    index: 0,
                    arguments: "{\"a\":1}".into()
                },
            ]
        );
    }
}
