//! Reads a chat completions event stream: `data: {chunk}` lines ending with `data: [DONE]`.
//!
//! Tool calls arrive as `delta.tool_calls[{index, id?, function{name?, arguments?}}]`; the
//! first fragment of a call carries its id and name, later ones only `index` and argument
//! text. Calls are renumbered in order of appearance (some servers reuse an index for a new
//! id, or omit it). Usage (`include_usage`) comes in a last chunk with empty `choices`; it
//! is emitted once, just before `Finish`.

use serde_json::Value;

use crate::sse::SseEvent;
use crate::stream::Decoder;
use crate::{FinishReason, ProviderError, StreamEvent, Usage};

#[derive(Debug, Default)]
pub(crate) struct OpenAiDecoder {
    provider: String,
    calls: Vec<Call>,
    finish: Option<String>,
    usage: Option<Usage>,
}

#[derive(Debug)]
struct Call {
    wire_index: Option<u64>,
    id: String,
    name: String,
    started: bool,
    pending: String,
}

impl OpenAiDecoder {
    /// `provider` names the provider in errors.
    pub(crate) fn new(provider: &str) -> Self {
        Self {
            provider: provider.to_string(),
            ..Self::default()
        }
    }

    fn protocol(&self, message: String) -> ProviderError {
        ProviderError::Protocol {
            provider: self.provider.clone(),
            message,
        }
    }

    fn in_stream_error(&self, error: &Value) -> ProviderError {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| error.to_string(), str::to_string);
        match error.get("code").and_then(Value::as_u64) {
            Some(status @ 400..=599) => ProviderError::Http {
                provider: self.provider.clone(),
                status: status as u16,
                message,
            },
            _ => self.protocol(format!("error in stream: {message}")),
        }
    }

    fn finish_events(&mut self, out: &mut Vec<StreamEvent>) {
        for (index, call) in self.calls.iter_mut().enumerate() {
            // A call whose name never arrived is still surfaced, so its result can be paired.
            if !call.started {
                call.started = true;
                out.push(StreamEvent::ToolCallStart {
                    index,
                    id: call.id.clone(),
                    name: call.name.clone(),
                });
                if !call.pending.is_empty() {
                    out.push(StreamEvent::ToolCallDelta {
                        index,
                        arguments: std::mem::take(&mut call.pending),
                    });
                }
            }
        }
        if let Some(usage) = self.usage.take() {
            out.push(StreamEvent::Usage { usage });
        }
        let reason = match self.finish.as_deref() {
            Some("stop") => FinishReason::Stop,
            Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
            Some("length") => FinishReason::Length,
            Some(other) => FinishReason::Other(other.to_string()),
            None if self.calls.is_empty() => FinishReason::Stop,
            None => FinishReason::ToolCalls,
        };
        out.push(StreamEvent::Finish { reason });
    }

    fn tool_call(&mut self, tc: &Value, out: &mut Vec<StreamEvent>) {
        let wire_index = tc.get("index").and_then(Value::as_u64);
        let id = tc
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let function = tc.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let args = function
            .and_then(|f| f.get("arguments"))
            .and_then(Value::as_str)
            .unwrap_or("");

        let existing = match wire_index {
            Some(wi) => self.calls.iter().rposition(|c| c.wire_index == Some(wi)),
            None => self.calls.len().checked_sub(1),
        };
        // A different id at a known index (or with no index) is a new call.
        let existing = existing.filter(|&i| id.is_none_or(|id| self.calls[i].id == id));
        let index = match existing {
            Some(i) => i,
            None => {
                let index = self.calls.len();
                let id = id.map_or_else(|| format!("call_{index}"), str::to_string);
                self.calls.push(Call {
                    wire_index,
                    id,
                    name: String::new(),
                    started: false,
                    pending: String::new(),
                });
                index
            }
        };
        let call = &mut self.calls[index];
        if let Some(name) = name
            && !call.started
        {
            call.name = name.to_string();
            call.started = true;
            out.push(StreamEvent::ToolCallStart {
                index,
                id: call.id.clone(),
                name: call.name.clone(),
            });
            if !call.pending.is_empty() {
                out.push(StreamEvent::ToolCallDelta {
                    index,
                    arguments: std::mem::take(&mut call.pending),
                });
            }
        }
        if !args.is_empty() {
            if call.started {
                out.push(StreamEvent::ToolCallDelta {
                    index,
                    arguments: args.to_string(),
                });
            } else {
                call.pending.push_str(args);
            }
        }
    }
}

fn u64_at(v: &Value, path: &str) -> u64 {
    v.pointer(path).and_then(Value::as_u64).unwrap_or(0)
}

impl Decoder for OpenAiDecoder {
    fn event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<bool, ProviderError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.finish_events(out);
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| self.protocol(format!("invalid JSON in the stream ({e}): {data:.200}")))?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            return Err(self.in_stream_error(error));
        }
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(Usage {
                input_tokens: u64_at(u, "/prompt_tokens"),
                output_tokens: u64_at(u, "/completion_tokens"),
                cache_read_tokens: u64_at(u, "/prompt_tokens_details/cached_tokens"),
                cache_write_tokens: u64_at(u, "/prompt_tokens_details/cache_write_tokens"),
                reasoning_tokens: u64_at(u, "/completion_tokens_details/reasoning_tokens"),
                cost: u.get("cost").and_then(Value::as_f64),
            });
        }
        let choice = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first());
        if let Some(choice) = choice {
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            let text = |key: &str| {
                delta
                    .get(key)
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
            };
            if let Some(r) = text("reasoning_content").or_else(|| text("reasoning")) {
                out.push(StreamEvent::ReasoningDelta {
                    text: r.to_string(),
                });
            }
            if let Some(t) = text("content") {
                out.push(StreamEvent::TextDelta {
                    text: t.to_string(),
                });
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for tc in calls {
                    self.tool_call(tc, out);
                }
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish = Some(reason.to_string());
            }
        }
        Ok(false)
    }

    /// Some servers close the stream without `[DONE]`; the turn is complete when a finish
    /// reason arrived.
    fn end(&mut self, out: &mut Vec<StreamEvent>) -> bool {
        if self.finish.is_none() {
            return false;
        }
        self.finish_events(out);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn feed(d: &mut OpenAiDecoder, chunks: &[Value]) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        for c in chunks {
            let done = d
                .event(
                    &SseEvent {
                        event: String::new(),
                        data: c.to_string(),
                    },
                    &mut out,
                )
                .unwrap();
            assert!(!done);
        }
        out
    }

    fn delta(d: Value) -> Value {
        json!({"choices": [{"index": 0, "delta": d, "finish_reason": null}]})
    }

    #[test]
    fn reused_or_missing_indexes_still_separate_calls() {
        let mut d = OpenAiDecoder::new("the model server");
        let out = feed(
            &mut d,
            &[
                // Gemini-style: whole calls, index 0 reused for a second id.
                delta(
                    json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "x", "arguments": "{}"}}]}),
                ),
                delta(
                    json!({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "y", "arguments": "{\"k\":"}}]}),
                ),
                delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]})),
                // No index, no id: continues the last call. Name arriving late is buffered.
                delta(json!({"tool_calls": [{"id": "c", "function": {"arguments": "{\"z\""}}]})),
                delta(json!({"tool_calls": [{"function": {"name": "z", "arguments": ":2}"}}]})),
            ],
        );
        use StreamEvent::*;
        assert_eq!(
            out,
            vec![
                ToolCallStart {
                    index: 0,
                    id: "a".into(),
                    name: "x".into()
                },
                ToolCallDelta {
                    index: 0,
                    arguments: "{}".into()
                },
                ToolCallStart {
                    index: 1,
                    id: "b".into(),
                    name: "y".into()
                },
                ToolCallDelta {
                    index: 1,
                    arguments: "{\"k\":".into()
                },
                ToolCallDelta {
                    index: 1,
                    arguments: "1}".into()
                },
                ToolCallStart {
                    index: 2,
                    id: "c".into(),
                    name: "z".into()
                },
                ToolCallDelta {
                    index: 2,
                    arguments: "{\"z\"".into()
                },
                ToolCallDelta {
                    index: 2,
                    arguments: ":2}".into()
                },
            ]
        );
        let mut out = Vec::new();
        assert!(!d.end(&mut out), "no finish reason yet: the stream was cut");
        assert!(
            d.event(
                &SseEvent {
                    event: String::new(),
                    data: "[DONE]".into()
                },
                &mut out
            )
            .unwrap()
        );
        assert_eq!(
            out,
            vec![Finish {
                reason: FinishReason::ToolCalls
            }]
        );
    }

    #[test]
    fn reasoning_field_and_in_stream_errors() {
        let mut d = OpenAiDecoder::new("the model server");
        let out = feed(
            &mut d,
            &[
                delta(json!({"reasoning": "think"})),
                delta(json!({"content": "", "reasoning_content": null})),
            ],
        );
        assert_eq!(
            out,
            vec![StreamEvent::ReasoningDelta {
                text: "think".into()
            }]
        );
        let mut out = Vec::new();
        let ev = |v: Value| SseEvent {
            event: String::new(),
            data: v.to_string(),
        };
        let err = d
            .event(
                &ev(json!({"error": {"message": "upstream overloaded", "code": 502}})),
                &mut out,
            )
            .unwrap_err();
        assert!(
            matches!(err, ProviderError::Http { status: 502, ref message, .. } if message == "upstream overloaded")
        );
        let err = d
            .event(
                &ev(json!({"error": {"message": "bad", "code": "x"}})),
                &mut out,
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "unexpected response from the model server: error in stream: bad"
        );
    }
}
