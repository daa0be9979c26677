//! The Anthropic Messages client: `POST {base}/messages` with `stream: true`, `x-api-key`
//! and `anthropic-version: 2023-06-01`. `request` builds the body, `decode` reads the
//! stream.

mod decode;
mod request;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::endpoint::http_client;
use crate::stream::{self, Prepared};
use crate::{ChatRequest, Endpoint, EventStream, ModelClient, ModelRef, ProviderError};

pub(crate) use request::wire_body;

/// The API's default base URL.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com/v1";
/// `max_tokens` when the request sets none (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// A streaming client for the Anthropic Messages API.
#[derive(Debug, Clone)]
pub struct AnthropicClient {
    model: ModelRef,
    endpoint: Endpoint,
    http: reqwest::Client,
}

impl AnthropicClient {
    /// A client for `model` at `endpoint` (`x-api-key: <api_key>` when a key is set).
    pub fn new(model: ModelRef, endpoint: Endpoint) -> Result<Self, ProviderError> {
        Ok(Self {
            model,
            http: http_client(&endpoint.base_url)?,
            endpoint,
        })
    }

    /// Where requests go and with what key and headers.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }
}

#[async_trait]
impl ModelClient for AnthropicClient {
    fn model(&self) -> &ModelRef {
        &self.model
    }

    async fn stream(
        &self,
        request: &ChatRequest,
        abort: CancellationToken,
    ) -> Result<EventStream, ProviderError> {
        let provider = &self.model.provider;
        let body = wire_body(&self.model, request);
        let mut protocol_headers = vec![("anthropic-version", "2023-06-01".to_string())];
        if let Some(key) = &self.endpoint.api_key {
            protocol_headers.push(("x-api-key", key.clone()));
        }
        let prepared = Prepared::json(
            &self.endpoint,
            provider,
            "messages",
            &protocol_headers,
            &request.headers,
            &body,
        )?;
        stream::start(
            &self.http,
            &self.endpoint,
            prepared,
            || decode::AnthropicDecoder::new(provider),
            abort,
        )
        .await
    }
}
