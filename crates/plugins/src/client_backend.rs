//! What the opencode `client` in the plugin host asks of the engine after a plugin loaded:
//! toasts (`client.tui.showToast`, a notification `client.toast`) and session reads
//! (`client.session.list/get/messages/status`, a request `client.session`). The sidecar
//! routes these frames to the `ClientBackend` its host was given (the engine's); without one
//! a toast is only logged and a session read answers that there is no session store.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One `client.tui.showToast` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toast {
    /// The plugin file that showed it.
    #[serde(default)]
    pub file: String,
    #[serde(default)]
    pub title: String,
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
    pub message: String,
}

impl ClientError {
    pub fn new(name: &str, message: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            message: message.into(),
        }
    }
}

/// The engine's side of the plugin `client`.
pub trait ClientBackend: Send + Sync {
    /// Shows a toast in every front end.
    fn toast(&self, toast: Toast);
    /// Answers `client.session.<method>(args)` with the SDK's `data`.
    fn session(&self, method: &str, args: &Value) -> Result<Value, ClientError>;
}
