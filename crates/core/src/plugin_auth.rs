//! Model requests signed by a plugin (opencode's `auth` hook). When credentials are stored
//! for the chosen model's provider (`<data>/auth.json`, by `podcode auth login` or a plugin's
//! `client.auth.set`), the session's client is a [`PluginSignedClient`]: at its first request
//! it asks the loaded plugins whether one signs in for that provider; if so, it runs that
//! plugin's `loader` with the stored credentials and builds the real client from what it
//! returned (`apiKey`, `baseURL`, `headers`, and a `fetch` every request then goes through:
//! [`PluginFetch`]). A reload of the plugins runs the loader again. Without such a plugin a
//! stored API key is used as it is.

use std::sync::Arc;

use async_trait::async_trait;
use podcode_plugins::PluginHooks;
use podcode_providers::{
    ChatRequest, EventStream, HttpTransport, ModelClient, ModelRef, ProviderError, ResolvedModel,
    StoredCredential, Transport, TransportResponse,
};
use serde_json::{Value, json};
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use crate::toolset::ToolSets;

/// How resolution sees a stored entry (`{type: "api", key}` or anything a plugin reads).
pub(crate) fn stored_credential(entry: &Value) -> StoredCredential {
    match (
        entry.get("type").and_then(Value::as_str),
        entry.get("key").and_then(Value::as_str),
    ) {
        (Some("api"), Some(key)) if !key.is_empty() => StoredCredential::ApiKey(key.into()),
        _ => StoredCredential::SignedIn,
    }
}

/// A built client and the plugin hooks it was built from.
type Built = (Option<Arc<PluginHooks>>, Arc<dyn ModelClient>);

/// A client whose requests a plugin may sign; built at its first request.
pub(crate) struct PluginSignedClient {
    resolved: ResolvedModel,
    tools: Arc<OnceCell<Arc<ToolSets>>>,
    signed_in: bool,
    /// The client built, with the plugin hooks it was built from (a reload changes them).
    built: tokio::sync::Mutex<Option<Built>>,
}

impl PluginSignedClient {
    pub(crate) fn new(
        resolved: ResolvedModel,
        tools: Arc<OnceCell<Arc<ToolSets>>>,
        credential: &StoredCredential,
    ) -> Self {
        Self {
            resolved,
            tools,
            signed_in: matches!(credential, StoredCredential::SignedIn),
            built: tokio::sync::Mutex::new(None),
        }
    }

    fn hooks(&self) -> Option<Arc<PluginHooks>> {
        let hooks = self.tools.get()?.plugins()?.state()?.hooks.clone()?;
        let provider = &self.resolved.model.provider;
        hooks
            .auth_hooks()
            .iter()
            .any(|(_, a)| &a.provider == provider)
            .then_some(hooks)
    }

    async fn client(&self) -> Result<Arc<dyn ModelClient>, ProviderError> {
        let hooks = self.hooks();
        let mut built = self.built.lock().await;
        if let Some((was, client)) = built.as_ref()
            && same(was, &hooks)
        {
            return Ok(client.clone());
        }
        let client = self.build(hooks.clone()).await?;
        *built = Some((hooks, client.clone()));
        Ok(client)
    }

    async fn build(
        &self,
        hooks: Option<Arc<PluginHooks>>,
    ) -> Result<Arc<dyn ModelClient>, ProviderError> {
        let provider = self.resolved.model.provider.clone();
        let mut resolved = self.resolved.clone();
        let Some(hooks) = hooks else {
            if self.signed_in && resolved.endpoint.api_key.is_none() {
                return Err(ProviderError::Config(format!(
                    "you signed in to {provider} through a plugin, but no loaded plugin signs in for {provider} now (see `podcode plugins`); sign in another way with `podcode auth login {provider}`"
                )));
            }
            return resolved.client();
        };
        let info = provider_info(&resolved.model);
        let loaded = hooks
            .auth_load(&provider, info.clone())
            .await
            .unwrap_or_else(|| Ok(Default::default()))
            .map_err(|e| {
                ProviderError::Config(format!(
                    "the plugin that signs in for {provider} failed to load its credentials: {e}"
                ))
            })?;
        let options = &loaded.options;
        if let Some(key) = options.get("apiKey").and_then(Value::as_str) {
            resolved.endpoint.api_key = (!key.is_empty()).then(|| key.to_string());
            resolved.endpoint.stored_key = false;
        }
        if let Some(url) = options.get("baseURL").and_then(Value::as_str) {
            resolved.endpoint.base_url = url.to_string();
        }
        if let Some(headers) = options.get("headers").and_then(Value::as_object) {
            for (name, value) in headers {
                if let Some(v) = value.as_str() {
                    resolved
                        .endpoint
                        .headers
                        .insert(name.clone(), v.to_string());
                }
            }
        }
        if loaded.fetch {
            resolved.endpoint.transport = Some(Transport(Arc::new(PluginFetch {
                hooks,
                provider,
                info,
            })));
        }
        resolved.client()
    }
}

fn same(a: &Option<Arc<PluginHooks>>, b: &Option<Arc<PluginHooks>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// The `provider` argument of a loader: opencode's Provider object, as far as Podcode knows it.
fn provider_info(model: &ModelRef) -> Value {
    json!({
        "id": model.provider, "name": model.provider, "source": "custom", "env": [],
        "options": {}, "models": {model.model.as_str(): {"id": model.model, "name": model.model}},
    })
}

#[async_trait]
impl ModelClient for PluginSignedClient {
    fn model(&self) -> &ModelRef {
        &self.resolved.model
    }

    async fn stream(
        &self,
        request: &ChatRequest,
        abort: CancellationToken,
    ) -> Result<EventStream, ProviderError> {
        self.client().await?.stream(request, abort).await
    }
}

/// Model requests sent through the `fetch` an auth plugin's loader returned.
struct PluginFetch {
    hooks: Arc<PluginHooks>,
    provider: String,
    info: Value,
}

#[async_trait]
impl HttpTransport for PluginFetch {
    async fn post(
        &self,
        url: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<TransportResponse, String> {
        let r = self
            .hooks
            .auth_fetch(&self.provider, &self.info, url, headers, body)
            .await
            .map_err(|e| format!("the plugin's fetch failed: {e}"))?;
        Ok(TransportResponse {
            status: r.status,
            headers: r.headers,
            body: r.body,
            keep: Box::new(r.guard),
        })
    }
}
