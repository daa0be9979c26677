//! What the opencode `client` in the plugin host asks of the engine after a plugin loaded:
//! log lines written after a load (a notification `client.log`, appended to the plugin log
//! by `append_log`), toasts (`client.tui.showToast`, a notification `client.toast`) and session reads
//! (`client.session.list/get/messages/status/update/prompt`, a request `client.session`). The sidecar
//! routes these frames to the `ClientBackend` its host was given (the engine's); without one
//! a toast is only logged and a session read answers that there is no session store.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One `client.tui.showToast` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toast {
    /// The plugin file that showed it.
    #[serde(default)]
    pub file: String,
    /// The toast's heading; may be empty.
    #[serde(default)]
    pub title: String,
    /// The toast's text; may be empty.
    #[serde(default)]
    pub message: String,
    /// `info`, `success`, `warning` or `error`.
    #[serde(default)]
    pub variant: String,
}

/// A failed read, in the shape the opencode SDK puts in `error` (`{ name, data: { message } }`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientError {
    /// `NotFoundError`, `BadRequestError` or `UnknownError`, as opencode's server names them.
    pub name: String,
    /// What went wrong, passed to the plugin.
    pub message: String,
}

impl ClientError {
    /// An error named `name` (one of opencode's error names) with `message`.
    pub fn new(name: &str, message: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            message: message.into(),
        }
    }
}

/// The engine's side of the plugin `client`.
#[async_trait::async_trait]
pub trait ClientBackend: Send + Sync {
    /// Shows a toast in every front end.
    fn toast(&self, toast: Toast);
    /// Answers `client.session.<method>(args)` with the SDK's `data`.
    async fn session(&self, method: &str, args: &Value) -> Result<Value, ClientError>;
    /// Reads (`get {provider}`) or stores (`set {provider, body}`) a provider's credentials
    /// for an auth plugin, in opencode's shapes (`{type: "oauth" | "api", …}`).
    async fn auth(&self, method: &str, params: &Value) -> Result<Value, ClientError> {
        let _ = params;
        Err(ClientError::new(
            "UnknownError",
            format!(
                "client.auth.{method} needs Podcode's credentials store, which this plugin host has not got"
            ),
        ))
    }
}

/// Appends one `client.log` entry (`{time, file, kind, level, service, message, extra?}`) to
/// the plugin log as a JSON line. A log that cannot be written loses the line, never the call.
pub(crate) fn append_log(file: &std::path::Path, entry: &Value) {
    use std::io::Write;
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
    {
        let _ = writeln!(f, "{entry}");
    }
}

/// A `client.*` notification from the sidecar: a toast goes to the backend.
pub(crate) fn notified(backend: Option<Arc<dyn ClientBackend>>, method: &str, params: Value) {
    if method == "client.toast"
        && let (Some(b), Ok(toast)) = (backend, serde_json::from_value::<Toast>(params))
    {
        b.toast(toast);
    }
}

/// The result of a `client.*` request from the sidecar: `{data}` or `{error}`, as the SDK
/// resolves (never a JSON-RPC error).
pub(crate) async fn answer(
    backend: Option<Arc<dyn ClientBackend>>,
    method: &str,
    params: &Value,
) -> Value {
    let what = params.get("method").and_then(Value::as_str).unwrap_or("");
    let args = params.get("args").cloned().unwrap_or(Value::Null);
    let reply = match (method, backend) {
        ("client.session", Some(b)) => b.session(what, &args).await,
        ("client.auth", Some(b)) => b.auth(what, params).await,
        ("client.auth", None) => Err(ClientError::new(
            "UnknownError",
            "this plugin host has no credentials store",
        )),
        ("client.session", None) => Err(ClientError::new(
            "UnknownError",
            "this plugin host has no session store",
        )),
        _ => Err(ClientError::new(
            "UnknownError",
            format!("unknown method {method}"),
        )),
    };
    match reply {
        Ok(data) => json!({ "data": data }),
        Err(e) => json!({ "error": {"name": e.name, "data": {"message": e.message}} }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn without_a_backend_a_session_read_is_an_sdk_error_not_a_throw() {
        assert_eq!(
            answer(None, "client.session", &json!({"method": "list"})).await,
            json!({"error": {"name": "UnknownError", "data": {"message": "this plugin host has no session store"}}})
        );
        assert_eq!(
            answer(None, "client.find", &json!({})).await,
            json!({"error": {"name": "UnknownError", "data": {"message": "unknown method client.find"}}})
        );
    }
}
