//! The OpenAI-compatible chat completions client: `POST {base}/chat/completions` with
//! `stream: true`. One client serves OpenAI, OpenRouter, Groq, DeepSeek, vLLM, llama.cpp,
//! LM Studio and Ollama; `request` builds the body, `decode` reads the stream.

mod decode;
mod memo;
mod request;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use crate::endpoint::http_client;
use crate::stream::{self, Prepared};
use crate::{ChatRequest, Endpoint, EventStream, ModelClient, ModelRef, ProviderError};

pub(crate) use request::{model_id, unsupported_attachment, wire_body};

/// A streaming client for OpenAI-compatible chat completions.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    model: ModelRef,
    endpoint: Endpoint,
    http: reqwest::Client,
    /// The messages of the last body, written (a session's next body reuses them).
    memo: Arc<Mutex<memo::WireMemo>>,
}

impl OpenAiClient {
    /// A client for `model` at `endpoint` (`Authorization: Bearer <api_key>` when a key is set).
    pub fn new(model: ModelRef, endpoint: Endpoint) -> Result<Self, ProviderError> {
        Ok(Self {
            model,
            http: http_client(&endpoint.base_url)?,
            endpoint,
            memo: Arc::default(),
        })
    }

    /// Where requests go and with what key and headers.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }
}

#[async_trait]
impl ModelClient for OpenAiClient {
    fn model(&self) -> &ModelRef {
        &self.model
    }

    async fn stream(
        &self,
        request: &ChatRequest,
        abort: CancellationToken,
    ) -> Result<EventStream, ProviderError> {
        let provider = &self.model.provider;
        let body = wire_body(&self.model, request, Some(&self.memo)).map_err(|e| {
            ProviderError::Protocol {
                provider: provider.to_string(),
                message: e.to_string(),
            }
        })?;
        let auth: Vec<(&str, String)> = self
            .endpoint
            .api_key
            .iter()
            .map(|k| ("authorization", format!("Bearer {k}")))
            .collect();
        let prepared = Prepared::json(
            &self.endpoint,
            provider,
            "chat/completions",
            &auth,
            &request.headers,
            &body,
        )?;
        stream::start(
            &self.http,
            &self.endpoint,
            prepared,
            || decode::OpenAiDecoder::new(provider),
            abort,
        )
        .await
    }
}
