//! The provider-neutral conversation and streaming types, and the `ModelClient` trait.

use async_trait::async_trait;
use podcode_protocol::Attachment;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::ToolList;

/// `provider/model-id`, e.g. `openai/gpt-4.1` or `anthropic/claude-sonnet-4-5`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRef {
    /// The provider's name (built-in or `[provider.<name>]`).
    pub provider: String,
    /// The model id as the provider knows it.
    pub model: String,
}

impl ModelRef {
    /// Splits at the first `/` (model ids may contain more: `openrouter/meta/llama-3`).
    pub fn parse(s: &str) -> Option<Self> {
        let (provider, model) = s.split_once('/')?;
        (!provider.is_empty() && !model.is_empty()).then(|| Self {
            provider: provider.to_string(),
            model: model.to_string(),
        })
    }
}

impl std::fmt::Display for ModelRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.provider, self.model)
    }
}

/// Who a message is from. Tool results travel in user messages, so two roles suffice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (prompts, attached files, tool results).
    User,
    /// The model.
    Assistant,
}

/// One piece of a message. Tool results live in the user turn that follows the assistant
/// turn that called them (Anthropic's shape; the OpenAI client maps them to `tool` messages).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// Model reasoning; Anthropic thinking blocks keep their signature so they can be sent back.
    Reasoning {
        /// The reasoning text.
        text: String,
        /// Anthropic's signature over it; `None` for providers without one.
        signature: Option<String>,
    },
    /// A tool call the model made.
    ToolCall {
        /// The provider's id for the call (its result names it).
        id: String,
        /// The tool's id.
        name: String,
        /// The arguments as the model streamed them (JSON text).
        arguments: String,
    },
    /// The result of a tool call, sent back to the model.
    ToolResult {
        /// The provider's id of the call this answers.
        call_id: String,
        /// The text the model reads.
        output: String,
        /// The call failed; `output` is the error text.
        is_error: bool,
        /// Images or files the result carries, for models that accept them.
        attachments: Vec<Attachment>,
    },
    /// An image the user attached (`data:` URL).
    Image {
        /// Media type, e.g. `image/png`.
        mime: String,
        /// The image as a `data:` URL.
        url: String,
    },
}

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who it is from.
    pub role: Role,
    /// Its content, in order.
    pub parts: Vec<Part>,
}

/// One model request, provider-neutral; each client maps it to its wire format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model id (without the provider prefix).
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// The conversation, oldest first.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: ToolList,
    /// Most tokens the reply may have; `None`: the client's default.
    pub max_tokens: Option<u32>,
    /// Sampling temperature; `None`: the provider's default. `f64`, so the value a
    /// plugin or config set goes out exactly as written (0.42, not 0.41999998…).
    pub temperature: Option<f64>,
    /// Nucleus sampling; `None`: the provider's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Top-k sampling (sent to Anthropic only, as opencode's SDK does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u64>,
    /// Provider options (a `chat.params` hook's `options`): extra body fields, opencode's
    /// camelCase names mapped to the wire's (see `options`).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub options: serde_json::Map<String, serde_json::Value>,
    /// A stable key for the provider's prompt cache (the session id): sent as
    /// `prompt_cache_key` to OpenAI, which routes requests sharing it to the same cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_key: Option<String>,
    /// HTTP headers for this request (a `chat.headers` hook's), sent after the provider's
    /// configured ones (a same-named one replaces it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
}

/// Tokens one request used, as the provider reported them.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens, cached ones included.
    pub input_tokens: u64,
    /// Completion tokens, reasoning included.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    pub cache_write_tokens: u64,
    /// Reasoning tokens, part of `output_tokens` (OpenAI `completion_tokens_details`).
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// When the provider reports it (OpenRouter), in USD.
    pub cost: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
/// Why the model stopped.
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// It finished its answer.
    Stop,
    /// It wants tool calls run.
    ToolCalls,
    /// It hit the reply token limit.
    Length,
    /// Anything else, as the provider named it.
    Other(String),
}

/// What a streaming turn produces, in order. Tool calls are identified by their position
/// `index` in the turn; `ToolCallDelta` appends raw JSON text to that call's arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// More answer text.
    TextDelta {
        /// The text to append.
        text: String,
    },
    /// More reasoning text.
    ReasoningDelta {
        /// The text to append.
        text: String,
    },
    /// The signature of the reasoning so far (Anthropic), needed to send it back.
    ReasoningSignature {
        /// The signature.
        signature: String,
    },
    /// A tool call begins.
    ToolCallStart {
        /// The call's position in the turn.
        index: usize,
        /// The provider's id for the call.
        id: String,
        /// The tool's id.
        name: String,
    },
    /// More of a tool call's arguments.
    ToolCallDelta {
        /// The call's position in the turn.
        index: usize,
        /// JSON text to append to its arguments.
        arguments: String,
    },
    /// Token counts (usually near the end).
    Usage {
        /// The counts.
        usage: Usage,
    },
    /// The turn is complete.
    Finish {
        /// Why the model stopped.
        reason: FinishReason,
    },
}

/// Why a model request failed, worded for the user.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// No model configured, unknown provider, missing key: the user must act.
    #[error("{0}")]
    Config(String),
    /// The API refused (after retries for retryable statuses).
    #[error("{provider} returned HTTP {status}: {message}")]
    Http {
        /// The provider's name.
        provider: String,
        /// The HTTP status.
        status: u16,
        /// The error message from the response body.
        message: String,
    },
    /// The request could not be sent or no response came (after retries).
    #[error("could not reach {provider}: {message}")]
    Network {
        /// The provider's name.
        provider: String,
        /// The connection error.
        message: String,
    },
    /// The stream ended or broke after it had started, before the turn finished.
    #[error("the response from {provider} was cut off mid-stream ({message})")]
    StreamCut {
        /// The provider's name.
        provider: String,
        /// What broke.
        message: String,
    },
    /// The provider sent something this client does not understand.
    #[error("unexpected response from {provider}: {message}")]
    Protocol {
        /// The provider's name.
        provider: String,
        /// What was not understood.
        message: String,
    },
    /// The request was cancelled through its abort token.
    #[error("aborted")]
    Aborted,
}

impl ProviderError {
    /// The provider refused the request because the conversation does not fit the model's
    /// context window (OpenAI `context_length_exceeded`, Anthropic `prompt is too long`, and
    /// the wordings of the compatible servers). The agent compacts and retries once.
    pub fn is_context_overflow(&self) -> bool {
        let Self::Http {
            status, message, ..
        } = self
        else {
            return false;
        };
        if !matches!(status, 400 | 413 | 422) {
            return false;
        }
        let m = message.to_ascii_lowercase();
        // Groq's and OpenAI's tokens-per-minute limits also speak of "tokens": not overflow.
        if m.contains("per minute") || m.contains("rate limit") {
            return false;
        }
        OVERFLOW_PATTERNS.iter().any(|p| m.contains(p))
    }
}

/// Lower-case fragments of the providers' context-overflow error messages.
const OVERFLOW_PATTERNS: &[&str] = &[
    "context_length_exceeded",
    "maximum context length",
    "prompt is too long",
    "context window",
    "context length",
    "too many tokens",
    "input is too long",
    "input too long",
    "reduce the length of the messages",
    "exceeds the available context size",
    "request_too_large",
];

/// A streaming turn: events until `Finish` (then the channel closes), or one error.
pub type EventStream = mpsc::Receiver<Result<StreamEvent, ProviderError>>;

/// A model endpoint the agent loop streams turns from (OpenAI-compatible, Anthropic, or the
/// scripted test server's client).
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// `provider/model` for display.
    fn model(&self) -> &ModelRef;
    /// Starts a turn. Connection-level failures before the first event are retried inside;
    /// the returned stream yields events, then closes after `Finish`. Cancelling `abort`
    /// stops the request and ends the stream with `ProviderError::Aborted`.
    async fn stream(
        &self,
        request: &ChatRequest,
        abort: CancellationToken,
    ) -> Result<EventStream, ProviderError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_refs_split_at_the_first_slash() {
        let m = ModelRef::parse("openrouter/meta-llama/llama-3.1-70b").unwrap();
        assert_eq!(
            (m.provider.as_str(), m.model.as_str()),
            ("openrouter", "meta-llama/llama-3.1-70b")
        );
        assert!(ModelRef::parse("gpt-4o").is_none());
        assert!(ModelRef::parse("/x").is_none());
        assert_eq!(m.to_string(), "openrouter/meta-llama/llama-3.1-70b");
    }
}

#[cfg(test)]
mod overflow_tests {
    use super::*;

    fn http(status: u16, message: &str) -> ProviderError {
        ProviderError::Http {
            provider: "p".into(),
            status,
            message: message.into(),
        }
    }

    #[test]
    fn the_providers_overflow_errors_are_recognised() {
        let overflows = [
            // OpenAI (the code is appended when the message lacks it).
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130382 tokens. Please reduce the length of the messages. (context_length_exceeded)",
            // Anthropic.
            "prompt is too long: 208310 tokens > 200000 maximum",
            // llama.cpp, vLLM, Groq, DeepSeek style wordings.
            "the request exceeds the available context size, try increasing it",
            "This model's maximum context length is 8192 tokens",
            "Please reduce the length of the messages or completion.",
        ];
        for m in overflows {
            assert!(http(400, m).is_context_overflow(), "{m}");
        }
        assert!(!http(400, "invalid tool schema").is_context_overflow());
        assert!(
            !http(
                413,
                "Request too large: tokens per minute (TPM) limit reached"
            )
            .is_context_overflow()
        );
        assert!(!http(429, "prompt is too long").is_context_overflow());
        assert!(!ProviderError::Aborted.is_context_overflow());
    }
}
