//! [`ScriptedModel`]: the HTTP server that serves a script of [`Reply`]s and records requests.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, Response, StatusCode, Uri};
use serde_json::Value;
use tokio::sync::oneshot;

use super::render::{Rendered, error_body, render};
use super::reply::{Cut, Gate, Reply};
use crate::WireProtocol;

/// One request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// Chosen by path: `…/chat/completions` or `…/messages`.
    pub protocol: WireProtocol,
    /// e.g. `/v1/messages`.
    pub path: String,
    /// Header names lower-cased (e.g. `authorization`, `x-api-key`, `anthropic-version`).
    pub headers: BTreeMap<String, String>,
    /// The JSON body (a JSON string holding the raw text if it was not valid JSON).
    pub body: Value,
}

/// Computes the reply to a request from its JSON body (see [`ScriptedModel::responding`]).
pub type Responder = Arc<dyn Fn(&Value) -> Reply + Send + Sync>;

#[derive(Default)]
struct Shared {
    script: VecDeque<Reply>,
    requests: Vec<RecordedRequest>,
    scripted: usize,
    responder: Option<Responder>,
    /// Request bodies are dropped after answering (long benchmarks).
    forget_bodies: bool,
}

type SharedState = Arc<Mutex<Shared>>;

fn lock(state: &SharedState) -> MutexGuard<'_, Shared> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A model API on `127.0.0.1` that answers from a script. See the [module docs](super).
pub struct ScriptedModel {
    addr: SocketAddr,
    state: SharedState,
    shutdown: Option<oneshot::Sender<()>>,
}

impl ScriptedModel {
    /// Starts a server whose replies are served in order, one per request.
    ///
    /// Panics if no port can be bound on 127.0.0.1 (a broken test environment).
    pub async fn start(script: Vec<Reply>) -> Self {
        Self::start_blocking(script)
    }

    /// [`ScriptedModel::start`] for code without an async context.
    pub fn start_blocking(script: Vec<Reply>) -> Self {
        Self::serve(script, None)
    }

    /// A server whose replies are computed from each request (after `script` is used up):
    /// for conversations whose shape depends on the code under test, such as a long session
    /// that compacts whenever its context fills.
    pub fn responding(script: Vec<Reply>, responder: Responder) -> Self {
        Self::serve(script, Some(responder))
    }

    fn serve(script: Vec<Reply>, responder: Option<Responder>) -> Self {
        let scripted = script.len();
        let state: SharedState = Arc::new(Mutex::new(Shared {
            script: script.into(),
            requests: Vec::new(),
            scripted,
            responder,
            forget_bodies: false,
        }));
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").expect("scripted model: bind 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("scripted model: set_nonblocking");
        let addr = listener.local_addr().expect("scripted model: local_addr");
        let (shutdown, stopped) = oneshot::channel::<()>();
        let app = Router::new().fallback(handle).with_state(state.clone());
        std::thread::Builder::new()
            .name("scripted-model".into())
            .spawn(move || {
                let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return;
                };
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    tokio::select! {
                        _ = axum::serve(listener, app) => {}
                        _ = stopped => {}
                    }
                });
            })
            .expect("scripted model: spawn server thread");
        Self {
            addr,
            state,
            shutdown: Some(shutdown),
        }
    }

    /// `http://127.0.0.1:PORT/v1`: the base URL for both clients (`/chat/completions` and
    /// `/messages` are served under it).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The socket address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The JSON bodies of every request received so far, in order (including requests that
    /// found the script exhausted).
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.state)
            .requests
            .iter()
            .map(|r| r.body.clone())
            .collect()
    }

    /// Every request received so far with its path and headers.
    pub fn recorded(&self) -> Vec<RecordedRequest> {
        lock(&self.state).requests.clone()
    }

    /// Stops keeping request bodies (they are recorded as `null`), so a long benchmark
    /// measures the code under test rather than the server's record.
    pub fn forget_bodies(&self) {
        lock(&self.state).forget_bodies = true;
    }

    /// How many requests have arrived.
    pub fn request_count(&self) -> usize {
        lock(&self.state).requests.len()
    }

    /// How many replies are still waiting to be served.
    pub fn remaining(&self) -> usize {
        lock(&self.state).script.len()
    }

    /// Appends a reply to the script (also after it ran out).
    pub fn push(&self, reply: Reply) {
        let mut state = lock(&self.state);
        state.script.push_back(reply);
        state.scripted += 1;
    }

    /// Waits (polling) until at least `count` requests have arrived; false on timeout.
    pub async fn wait_for_requests(&self, count: usize, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        while self.request_count() < count {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        true
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedModel")
            .field("base_url", &self.base_url())
            .finish_non_exhaustive()
    }
}

async fn handle(
    State(state): State<SharedState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    let path = uri.path().to_string();
    let protocol = if path.ends_with("/chat/completions") {
        WireProtocol::OpenAi
    } else if path.ends_with("/messages") {
        WireProtocol::Anthropic
    } else {
        let msg = format!(
            "scripted model: nothing at {method} {path}; use POST <base>/chat/completions or POST <base>/messages"
        );
        return respond(
            404,
            &[("content-type".into(), "text/plain".into())],
            Body::from(msg),
        );
    };
    let json = serde_json::from_slice::<Value>(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    let model = json
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("scripted")
        .to_string();
    let headers = headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let (reply, seq, scripted) = {
        let mut s = lock(&state);
        let computed = match (s.script.is_empty(), &s.responder) {
            (true, Some(responder)) => Some(responder(&json)),
            _ => None,
        };
        let body = if s.forget_bodies { Value::Null } else { json };
        s.requests.push(RecordedRequest {
            protocol,
            path: path.clone(),
            headers,
            body,
        });
        (
            s.script.pop_front().or(computed),
            s.requests.len(),
            s.scripted,
        )
    };
    let Some(reply) = reply else {
        let msg = format!(
            "scripted model: the script is exhausted: request #{seq} ({method} {path}) has no reply left ({scripted} replies were scripted)"
        );
        // `x-should-retry: false` keeps clients from retrying into the same exhausted script.
        let headers = [
            ("content-type".to_string(), "application/json".to_string()),
            ("x-should-retry".to_string(), "false".to_string()),
        ];
        return respond(500, &headers, Body::from(error_body(protocol, 500, &msg)));
    };
    if !reply.stall.is_zero() {
        sleep_saturating(reply.stall).await;
    }
    let Rendered {
        status,
        mut headers,
        frames,
    } = render(&reply, protocol, &model, seq);
    headers.extend(reply.headers.iter().cloned());
    let body = Body::from_stream(frame_stream(
        frames,
        reply.cut,
        reply.pace,
        reply.hold.clone(),
    ));
    respond(status, &headers, body)
}

fn respond(status: u16, headers: &[(String, String)], body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in headers {
        if let (Ok(n), Ok(v)) = (
            name.parse::<axum::http::HeaderName>(),
            value.parse::<axum::http::HeaderValue>(),
        ) {
            response.headers_mut().insert(n, v);
        }
    }
    response
}

/// The frames as a body stream, paced, held at a gate after `hold`'s count of frames, and
/// cut (reset or clean end) after `cut` frames.
fn frame_stream(
    frames: Vec<String>,
    cut: Option<(usize, Cut)>,
    pace: Duration,
    hold: Option<(usize, Gate)>,
) -> impl futures_util::Stream<Item = Result<Bytes, std::io::Error>> + Send {
    let state = (frames.into_iter(), 0usize, false);
    futures_util::stream::unfold(state, move |(mut frames, sent, stopped)| {
        let hold = hold.clone();
        async move {
            if stopped {
                return None;
            }
            if let Some((at, how)) = cut
                && sent >= at
            {
                return match how {
                    Cut::End => None,
                    Cut::Reset => {
                        // Let what was sent reach the client before the connection drops.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        let err = std::io::Error::new(
                            std::io::ErrorKind::ConnectionReset,
                            "scripted cut",
                        );
                        Some((Err(err), (frames, sent, true)))
                    }
                };
            }
            if let Some((at, gate)) = &hold
                && sent == *at
            {
                gate.passed().await;
            }
            let frame = frames.next()?;
            if sent > 0 && !pace.is_zero() {
                sleep_saturating(pace).await;
            }
            Some((Ok(Bytes::from(frame)), (frames, sent + 1, false)))
        }
    })
}

async fn sleep_saturating(wait: Duration) {
    let now = tokio::time::Instant::now();
    let until = now
        .checked_add(wait)
        .unwrap_or_else(|| now + Duration::from_secs(86_400 * 365));
    tokio::time::sleep_until(until).await;
}
