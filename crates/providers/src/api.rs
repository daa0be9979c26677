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
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
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
