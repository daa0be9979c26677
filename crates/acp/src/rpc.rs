//! JSON-RPC 2.0 over newline-delimited JSON, the ACP transport. `Connection` owns stdout:
//! every message goes through one writer task as a single line, so responses,
//! notifications and our own requests never interleave mid-line. Requests we send to the
//! client (`session/request_permission`) wait on a oneshot that the reader completes when
//! the client's response line arrives (`deliver`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

/// JSON-RPC error codes ACP uses.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INTERNAL_ERROR: i64 = -32603;

/// What a JSON array frame (a JSON-RPC batch) is answered with.
pub const BATCH_NOT_SUPPORTED: &str =
    "JSON-RPC batches are not supported: send one message per line";
/// What a frame that is a JSON scalar (`42`, `"x"`, `null`) is answered with.
pub const NOT_AN_OBJECT: &str = "a JSON-RPC message must be a JSON object";

/// An error answer: sent to the client for its request, or received for ours.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self {
            code: INVALID_PARAMS,
            message: message.into(),
        }
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            code: INTERNAL_ERROR,
            message: message.into(),
        }
    }
}

/// What one well-formed JSON frame from the client is.
#[derive(Debug, PartialEq)]
pub enum Frame {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// The client's answer to one of our requests.
    Response(Value),
    /// Not a JSON-RPC message: answered -32600 (with the frame's id when it has a usable
    /// one, else null), so the client never waits for an answer that will not come.
    Invalid {
        id: Value,
        why: &'static str,
    },
}

impl Frame {
    pub fn classify(message: Value) -> Frame {
        let Value::Object(map) = &message else {
            // ACP uses no batches (the official SDK answers them the same way): one error
            // for the whole array, none of its entries run.
            let why = if message.is_array() {
                BATCH_NOT_SUPPORTED
            } else {
                NOT_AN_OBJECT
            };
            return Frame::Invalid {
                id: Value::Null,
                why,
            };
        };
        // Only a string or a number can be echoed back as an id.
        let id = map.get("id").cloned();
        let echo = match &id {
            Some(v @ (Value::String(_) | Value::Number(_))) => v.clone(),
            _ => Value::Null,
        };
        let params = map.get("params").cloned().unwrap_or(Value::Null);
        match (map.get("method"), id) {
            (
                Some(Value::String(method)),
                Some(Value::String(_) | Value::Number(_) | Value::Null),
            ) => Frame::Request {
                id: echo,
                method: method.clone(),
                params,
            },
            (Some(Value::String(method)), None) => Frame::Notification {
                method: method.clone(),
                params,
            },
            (Some(Value::String(_)), Some(_)) => Frame::Invalid {
                id: Value::Null,
                why: "the id must be a string, a number or null",
            },
            (Some(_), _) => Frame::Invalid {
                id: echo,
                why: "the method must be a string",
            },
            (None, Some(_)) if map.contains_key("result") || map.contains_key("error") => {
                Frame::Response(message)
            }
            // Without a method it may be a broken answer to one of our requests, whose id
            // is ours, not the client's: the error goes out with a null id.
            (None, _) => Frame::Invalid {
                id: Value::Null,
                why: "a JSON-RPC message needs a method (a request) or a result or error (a response)",
            },
        }
    }
}

type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, RpcError>>>>>;

/// The sending half of the connection, shared by every handler.
#[derive(Clone)]
pub struct Connection {
    /// Lines to write; `None` asks the writer to stop after what came before it.
    out: mpsc::UnboundedSender<Option<String>>,
    writer: Arc<Mutex<Option<tokio::task::JoinHandle<()>>>>,
    pending: Pending,
    next_id: Arc<AtomicI64>,
}

impl Connection {
    /// A connection writing to `sink`; the writer task ends when every `Connection` clone
    /// is dropped or the sink fails (the client went away).
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(mut sink: W) -> Self {
        let (out, mut rx) = mpsc::unbounded_channel::<Option<String>>();
        let writer = tokio::spawn(async move {
            while let Some(Some(mut line)) = rx.recv().await {
                line.push('\n');
                if sink.write_all(line.as_bytes()).await.is_err() || sink.flush().await.is_err() {
                    break;
                }
            }
        });
        Self {
            out,
            writer: Arc::new(Mutex::new(Some(writer))),
            pending: Arc::new(Mutex::new(HashMap::new())),
            next_id: Arc::new(AtomicI64::new(0)),
        }
    }

    fn send(&self, message: Value) {
        // `to_string` of a `Value` cannot fail and never contains a raw newline.
        let _ = self.out.send(Some(message.to_string()));
    }

    /// Writes everything sent so far, then stops writing (the last step before exit).
    pub async fn flush_and_stop(&self) {
        let _ = self.out.send(None);
        let writer = lock(&self.writer).take();
        if let Some(w) = writer {
            let _ = w.await;
        }
    }

    pub fn notify(&self, method: &str, params: impl Serialize) {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    pub fn respond(&self, id: Value, result: Result<Value, RpcError>) {
        let message = match result {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(e) => json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": e.code, "message": e.message},
            }),
        };
        self.send(message);
    }

    /// Sends a request to the client and waits for its answer (an error when the client
    /// answers with one or the connection closes first).
    pub async fn request(&self, method: &str, params: impl Serialize) -> Result<Value, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        rx.await
            .unwrap_or_else(|_| Err(RpcError::internal("the client closed the connection")))
    }

    /// Completes the request `id` with the client's answer (a response line).
    pub fn deliver(&self, message: &Value) {
        let Some(id) = message.get("id").and_then(Value::as_i64) else {
            return;
        };
        let Some(tx) = lock(&self.pending).remove(&id) else {
            return;
        };
        let result = match message.get("error") {
            Some(e) => Err(RpcError {
                code: e
                    .get("code")
                    .and_then(Value::as_i64)
                    .unwrap_or(INTERNAL_ERROR),
                message: e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            }),
            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
        };
        let _ = tx.send(result);
    }

    /// Fails every request still waiting (the client's input ended).
    pub fn close_pending(&self) {
        lock(&self.pending).clear();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_classified_and_non_messages_get_an_id_to_answer() {
        let classify = |v: Value| Frame::classify(v);
        assert!(matches!(
            classify(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"})),
            Frame::Request { id, .. } if id == json!(1)
        ));
        assert!(matches!(
            classify(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {}})),
            Frame::Notification { .. }
        ));
        assert!(matches!(
            classify(json!({"jsonrpc": "2.0", "id": 0, "result": {}})),
            Frame::Response(_)
        ));
        let invalid = [
            (json!({"id": 7, "method": 42}), json!(7)),
            (json!({"id": "a", "method": null}), json!("a")),
            (json!({"method": {"x": 1}}), Value::Null),
            (json!({"id": {"x": 1}, "method": "initialize"}), Value::Null),
            (json!({"id": 3}), Value::Null),
            (json!([{"id": 1, "method": "initialize"}]), Value::Null),
            (json!(42), Value::Null),
        ];
        for (frame, want) in invalid {
            match classify(frame.clone()) {
                Frame::Invalid { id, .. } => assert_eq!(id, want, "{frame}"),
                other => panic!("{frame} classified as {other:?}"),
            }
        }
    }
}
