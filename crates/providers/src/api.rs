//! The provider-neutral conversation and streaming types, and the `ModelClient` trait.

use async_trait::async_trait;
use podcode_protocol::{Attachment, ToolSpec};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// `provider/model-id`, e.g. `openai/gpt-4.1` or `anthropic/claude-sonnet-4-5`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRef {
    pub provider: String,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One piece of a message. Tool results live in the user turn that follows the assistant
/// turn that called them (Anthropic's shape; the OpenAI client maps them to `tool` messages).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    Text {
        text: String,
    },
    /// Model reasoning; Anthropic thinking blocks keep their signature so they can be sent back.
    Reasoning {
        text: String,
        signature: Option<String>,
    },
    ToolCall {
        id: String,
        name: String,
        arguments: String,
    },
    ToolResult {
        call_id: String,
        output: String,
        is_error: bool,
        attachments: Vec<Attachment>,
    },
    /// An image the user attached (`data:` URL).
    Image {
        mime: String,
        url: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub model: String,
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    /// A stable key for the provider's prompt cache (the session id): sent as
    /// `prompt_cache_key` to OpenAI, which routes requests sharing it to the same cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_key: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// Reasoning tokens, part of `output_tokens` (OpenAI `completion_tokens_details`).
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// When the provider reports it (OpenRouter), in USD.
    pub cost: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    Other(String),
}

/// What a streaming turn produces, in order. Tool calls are identified by their position
/// `index` in the turn; `ToolCallDelta` appends raw JSON text to that call's arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    TextDelta {
        text: String,
    },
    ReasoningDelta {
        text: String,
    },
    ReasoningSignature {
        signature: String,
    },
    ToolCallStart {
        index: usize,
        id: String,
        name: String,
    },
    ToolCallDelta {
        index: usize,
        arguments: String,
    },
    Usage {
        usage: Usage,
    },
    Finish {
        reason: FinishReason,
    },
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// No model configured, unknown provider, missing key: the user must act.
    #[error("{0}")]
    Config(String),
    /// The API refused (after retries for retryable statuses).
    #[error("{provider} returned HTTP {status}: {message}")]
    Http {
        provider: String,
        status: u16,
        message: String,
    },
    #[error("could not reach {provider}: {message}")]
    Network { provider: String, message: String },
    /// The stream ended or broke after it had started, before the turn finished.
    #[error("the response from {provider} was cut off mid-stream ({message})")]
    StreamCut { provider: String, message: String },
    /// The provider sent something this client does not understand.
    #[error("unexpected response from {provider}: {message}")]
    Protocol { provider: String, message: String },
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

#[async_trait]
pub trait ModelClient: Send + Sync {
    /// `provider/model` for display.
    fn model(&self) -> &ModelRef;
    /// Starts a turn. Connection-level failures before the first event are retried inside;
    /// the returned stream yields events, then closes after `Finish`. Cancelling `abort`
    /// stops the request and ends the stream with `ProviderError::Aborted`.
    async fn stream(
        &self,
        request: ChatRequest,
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
