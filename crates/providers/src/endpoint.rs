//! Where a client sends its requests and how it authenticates ([`Endpoint`]), the shared
//! HTTP client (rustls with the *ring* provider), and the error texts built from HTTP
//! failures.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};

use crate::{ProviderError, RetryPolicy};

/// The two wire protocols Podcode speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireProtocol {
    /// `POST {base}/chat/completions` (OpenAI and every OpenAI-compatible server).
    OpenAi,
    /// `POST {base}/messages` (Anthropic Messages).
    Anthropic,
}

/// Where and how a client talks to its provider.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    /// API root without the trailing operation, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer` (OpenAI) or `x-api-key` (Anthropic) when present.
    pub api_key: Option<String>,
    /// Name of the environment variable the key came from; named in 401/403 errors.
    pub api_key_env: Option<String>,
    /// Extra headers sent with every request (`[provider.<name>] headers`).
    pub headers: BTreeMap<String, String>,
    /// How failed requests are retried.
    pub retry: RetryPolicy,
    /// A stream silent for this long is treated as broken (default 300 s).
    pub idle_timeout: Duration,
    /// The key came from `podcode auth login` (named in 401/403 errors).
    pub stored_key: bool,
    /// Sends requests instead of the HTTP client (an auth plugin's `fetch`).
    pub transport: Option<crate::Transport>,
}

impl Endpoint {
    /// An endpoint with no key, no extra headers and the default retry policy.
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: None,
            api_key_env: None,
            headers: BTreeMap::new(),
            retry: RetryPolicy::default(),
            idle_timeout: Duration::from_secs(300),
            stored_key: false,
            transport: None,
        }
    }

    /// Sets the key and the variable it came from.
    pub fn with_key(mut self, key: impl Into<String>, env_var: Option<&str>) -> Self {
        self.api_key = Some(key.into());
        self.api_key_env = env_var.map(str::to_string);
        self
    }

    /// `{base_url}/{path}` with exactly one slash between them.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base_url.trim_end_matches('/'), path)
    }

    /// The configured extra headers plus `extra` (protocol headers such as auth), checked.
    pub(crate) fn header_map(
        &self,
        provider: &str,
        extra: &[(&str, String)],
    ) -> Result<HeaderMap, ProviderError> {
        let mut map = HeaderMap::new();
        map.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        map.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        let configured = self.headers.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        for (name, value) in extra
            .iter()
            .map(|(k, v)| (*k, v.as_str()))
            .chain(configured)
        {
            let bad = || {
                ProviderError::Config(format!(
                    "[provider.{provider}] header `{name}` is not a valid HTTP header"
                ))
            };
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
            let mut value = HeaderValue::from_str(value).map_err(|_| bad())?;
            if name == reqwest::header::AUTHORIZATION || name.as_str() == "x-api-key" {
                value.set_sensitive(true);
            }
            map.insert(name, value);
        }
        Ok(map)
    }

    /// The hint appended to a 401/403: which variable or config key supplies the key.
    pub(crate) fn auth_hint(&self, provider: &str) -> String {
        if self.transport.is_some() {
            return format!(
                "the request was signed by the plugin that signs in for {provider}: sign in again with `podcode auth login {provider}`"
            );
        }
        if self.stored_key && self.api_key.is_some() {
            return format!(
                "check the key stored by `podcode auth login {provider}` (run it again to replace the key)"
            );
        }
        match &self.api_key_env {
            Some(var) if self.api_key.is_some() => format!(
                "check the API key in ${var} (or set `api_key_env` under [provider.{provider}] in config.toml to the variable that holds it)"
            ),
            Some(var) => format!("set the API key in ${var}"),
            None => format!(
                "no API key was sent: set `api_key_env` under [provider.{provider}] in config.toml to the environment variable that holds it"
            ),
        }
    }
}

/// The process-wide HTTP client for `base_url`. Installs rustls' *ring* crypto provider first
/// (ignoring "already installed") because reqwest is built without a provider of its own.
/// A plain `http://` endpoint (a local model server) gets a client without the system's
/// root certificates: reading them (~150 files) sat on the path to the first request, and
/// such a client never verifies a certificate.
pub(crate) fn http_client(base_url: &str) -> Result<reqwest::Client, ProviderError> {
    static PLAIN: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    static TLS: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    let plain = base_url
        .get(..7)
        .is_some_and(|s| s.eq_ignore_ascii_case("http://"));
    let cell = if plain { &PLAIN } else { &TLS };
    cell.get_or_init(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let builder = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .user_agent(concat!("podcode/", env!("CARGO_PKG_VERSION")));
        let builder = if plain {
            // No roots at all: an HTTPS redirect from such a server fails verification.
            builder.tls_certs_only(std::iter::empty())
        } else {
            builder
        };
        builder
            .build()
            .map_err(|e| format!("could not set up the HTTP client: {}", error_chain(&e)))
    })
    .clone()
    .map_err(ProviderError::Config)
}

/// The provider's own error message from an error body (`{"error":{"message"}}` for both
/// protocols, `{"message"}`, `{"detail"}`), else the body's start.
pub(crate) fn error_message(body: &str) -> String {
    let body = body.trim();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(body) {
        let candidates = [
            v.pointer("/error/message"),
            v.get("error").filter(|e| e.is_string()),
            v.get("message"),
            v.get("detail"),
        ];
        if let Some(msg) = candidates.into_iter().flatten().find_map(|m| m.as_str()) {
            return msg.to_string();
        }
    }
    if body.is_empty() {
        return "(empty response body)".to_string();
    }
    let mut end = body.len().min(500);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    body[..end].to_string()
}

/// An error with its sources, e.g. `error sending request: connection refused`.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let s = e.to_string();
        if !text.contains(&s) {
            text.push_str(": ");
            text.push_str(&s);
        }
        source = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_come_from_the_body() {
        assert_eq!(
            error_message(r#"{"error":{"message":"Rate limit reached","type":"x"}}"#),
            "Rate limit reached"
        );
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(error_message("Bad Gateway"), "Bad Gateway");
        assert_eq!(error_message(""), "(empty response body)");
    }

    #[test]
    fn urls_and_headers() {
        let mut e = Endpoint::new("http://h/v1/").with_key("k", Some("X_KEY"));
        assert_eq!(e.url("messages"), "http://h/v1/messages");
        e.headers.insert("X-Title".into(), "Podcode".into());
        let h = e
            .header_map("p", &[("authorization", "Bearer k".into())])
            .unwrap();
        assert_eq!(h["x-title"], "Podcode");
        assert!(h["authorization"].is_sensitive());
        e.headers.insert("bad header".into(), "v".into());
        assert_eq!(
            e.header_map("p", &[]).unwrap_err().to_string(),
            "[provider.p] header `bad header` is not a valid HTTP header"
        );
    }
}
