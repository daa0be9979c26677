//! Model clients. One `ModelClient` per wire protocol — OpenAI-compatible chat completions
//! (OpenAI, OpenRouter, Groq, DeepSeek, vLLM, llama.cpp, LM Studio, Ollama) and Anthropic
//! Messages — each streaming a turn as `StreamEvent`s over a channel. Requests are retried
//! with backoff on 429/5xx/connection failures (honouring `retry-after`) only until the
//! first event arrives; a stream cut after that is a `ProviderError::StreamCut` the agent
//! loop handles, so a half-received turn is never mistaken for a complete one.
//!
//! - [`resolve`] turns `config.toml` + `--model` + the environment into a client.
//! - [`OpenAiClient`] and [`AnthropicClient`] can also be built directly from an [`Endpoint`].
//! - With the `test-support` feature, [`testing::ScriptedModel`] is a real HTTP server on
//!   127.0.0.1 speaking both protocols from a script, for tests of everything above.
//!
//! - [`model_info`] tells a model's context window, reply limit and prices (the built-in
//!   catalog, `data/models.json`, under the config's overrides).
//!
//! Token accounting: [`Usage::input_tokens`] is the *total* prompt size, cache reads and
//! writes included (they are also reported separately), so it is also the context size.

mod anthropic;
mod api;
mod catalog;
mod endpoint;
mod openai;
mod options;
mod resolve;
mod retry;
mod sse;
mod stream;
#[cfg(feature = "test-support")]
pub mod testing;
mod tool_list;
mod transport;

pub use anthropic::{ANTHROPIC_BASE_URL, AnthropicClient, DEFAULT_MAX_TOKENS};
pub use api::*;
pub use catalog::{
    ModelInfo, Prices, catalog_entry, known_models, model_info, unknown_model_warning,
};
pub use endpoint::{Endpoint, WireProtocol};
pub use openai::OpenAiClient;
pub use resolve::{
    BUILTIN_PROVIDERS, BuiltinProvider, NOT_CONFIGURED, ResolvedModel, StoredCredential, resolve,
    resolve_model, resolve_model_with,
};
pub use retry::RetryPolicy;
pub use tool_list::ToolList;
pub use transport::{HttpTransport, Transport, TransportResponse};
