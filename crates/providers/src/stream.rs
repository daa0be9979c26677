//! The streaming driver both clients share: send, retry until the first event, then pump
//! SSE events through a protocol [`Decoder`] into the turn's channel.
//!
//! Retrying stops at the first event because events already handed to the agent cannot be
//! taken back; after that any break is a `StreamCut`. A stream that ends without its
//! protocol's terminal event is a cut too, never a finished turn.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::endpoint::{error_chain, error_message};
use crate::retry::{is_retryable_status, retry_after};
use crate::sse::{SseEvent, SseParser};
use crate::transport::Response;
use crate::{Endpoint, EventStream, ProviderError, StreamEvent};

/// Turns one protocol's SSE events into `StreamEvent`s.
pub(crate) trait Decoder: Send + 'static {
    /// Handles one event, appending what it produced to `out`; `Ok(true)` when the turn is
    /// complete (the last thing pushed is then `Finish`).
    fn event(
        &mut self,
        event: &SseEvent,
        out: &mut Vec<StreamEvent>,
    ) -> Result<bool, ProviderError>;
    /// The body ended without the terminal event. Returns true (after pushing `Finish`) only
    /// when what arrived is nevertheless a complete turn.
    fn end(&mut self, out: &mut Vec<StreamEvent>) -> bool;
}

/// The size of the last request body written (any client's): the next one's capacity.
static LAST_BODY: AtomicUsize = AtomicUsize::new(0);
/// Most a body's buffer is sized for before it is written.
const MAX_BODY_HINT: usize = 8 << 20;

/// One request, ready to be sent as often as retries need.
pub(crate) struct Prepared {
    pub provider: String,
    pub url: String,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Prepared {
    /// A JSON POST of `body` to `path` under the endpoint, with its configured headers, the
    /// protocol's own (`extra`) and the request's (`request`, last: they win).
    pub(crate) fn json<T: serde::Serialize>(
        endpoint: &Endpoint,
        provider: &str,
        path: &str,
        extra: &[(&str, String)],
        request: &[(String, String)],
        body: &T,
    ) -> Result<Self, ProviderError> {
        let mut headers = endpoint.header_map(provider, extra)?;
        for (name, value) in request {
            let bad = || {
                ProviderError::Config(format!(
                    "a plugin's chat.headers hook set `{name}`, which is not a valid HTTP header"
                ))
            };
            let name =
                reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
            let value = reqwest::header::HeaderValue::from_str(value).map_err(|_| bad())?;
            headers.insert(name, value);
        }
        // Sized like the last body plus a little: a session's bodies grow a step at a time,
        // and growing a 50 KB buffer by doubling copied it over and over.
        let hint = LAST_BODY.load(Ordering::Relaxed);
        let mut bytes = Vec::with_capacity((hint + hint / 8).min(MAX_BODY_HINT));
        serde_json::to_writer(&mut bytes, body).map_err(|e| ProviderError::Protocol {
            provider: provider.to_string(),
            message: e.to_string(),
        })?;
        LAST_BODY.store(bytes.len(), Ordering::Relaxed);
        Ok(Prepared {
            url: endpoint.url(path),
            headers,
            body: bytes,
            provider: provider.to_string(),
        })
    }
}

struct Failure {
    error: ProviderError,
    retryable: bool,
    retry_after: Option<Duration>,
}

impl Failure {
    fn fatal(error: ProviderError) -> Self {
        Self {
            error,
            retryable: false,
            retry_after: None,
        }
    }
    fn retry(error: ProviderError) -> Self {
        Self {
            error,
            retryable: true,
            retry_after: None,
        }
    }
    fn from_decoder(error: ProviderError) -> Self {
        let retryable =
            matches!(&error, ProviderError::Http { status, .. } if is_retryable_status(*status));
        Self {
            error,
            retryable,
            retry_after: None,
        }
    }
}

/// Sends `prepared`, retrying per the endpoint's policy until the first event, and returns
/// the channel the rest of the turn arrives on.
pub(crate) async fn start<D: Decoder>(
    http: &reqwest::Client,
    endpoint: &Endpoint,
    prepared: Prepared,
    make_decoder: impl Fn() -> D,
    abort: CancellationToken,
) -> Result<EventStream, ProviderError> {
    let policy = &endpoint.retry;
    let mut failures = 0;
    loop {
        let failure = match attempt(http, endpoint, &prepared, make_decoder(), &abort).await {
            Ok(rx) => return Ok(rx),
            Err(f) => f,
        };
        failures += 1;
        if !failure.retryable || failures >= policy.max_attempts.max(1) {
            return Err(failure.error);
        }
        let delay = policy.delay(failures - 1, failure.retry_after);
        tokio::select! {
            _ = abort.cancelled() => return Err(ProviderError::Aborted),
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

async fn attempt<D: Decoder>(
    http: &reqwest::Client,
    endpoint: &Endpoint,
    prepared: &Prepared,
    mut decoder: D,
    abort: &CancellationToken,
) -> Result<EventStream, Failure> {
    let provider = &prepared.provider;
    let mut response = match &endpoint.transport {
        Some(transport) => {
            let headers: Vec<(String, String)> = prepared
                .headers
                .iter()
                .filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string())))
                .collect();
            let send = transport.0.post(&prepared.url, &headers, &prepared.body);
            let sent = tokio::select! {
                _ = abort.cancelled() => return Err(Failure::fatal(ProviderError::Aborted)),
                r = send => r,
            };
            Response::from_transport(sent.map_err(|message| {
                Failure::retry(ProviderError::Network {
                    provider: provider.clone(),
                    message,
                })
            })?)
        }
        None => {
            let send = http
                .post(&prepared.url)
                .headers(prepared.headers.clone())
                .body(prepared.body.clone())
                .send();
            let response = tokio::select! {
                _ = abort.cancelled() => return Err(Failure::fatal(ProviderError::Aborted)),
                r = send => r,
            };
            Response::Http(response.map_err(|e| {
                let message = error_chain(&e);
                if e.is_builder() {
                    Failure::fatal(ProviderError::Config(format!(
                        "invalid request to {provider} ({}): {message}",
                        prepared.url
                    )))
                } else {
                    Failure::retry(ProviderError::Network {
                        provider: provider.clone(),
                        message,
                    })
                }
            })?)
        }
    };

    let status = response.status();
    if !status.is_success() {
        let wait = retry_after(response.headers(), SystemTime::now());
        // Both APIs say explicitly whether a retry can help; their SDKs obey, so do we.
        let should_retry = response
            .headers()
            .get("x-should-retry")
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().eq_ignore_ascii_case("true"));
        let body = tokio::select! {
            _ = abort.cancelled() => return Err(Failure::fatal(ProviderError::Aborted)),
            b = response.text() => b,
        };
        let mut message = error_message(&body);
        // OpenAI names an overflow by its code; keep it where the message does not, so the
        // agent can tell an overflow from other refusals (`ProviderError::is_context_overflow`).
        if body.contains("context_length_exceeded") && !message.contains("context_length_exceeded")
        {
            message = format!("{message} (context_length_exceeded)");
        }
        if matches!(status.as_u16(), 401 | 403) {
            message = format!("{message} ({})", endpoint.auth_hint(provider));
        }
        let error = ProviderError::Http {
            provider: provider.clone(),
            status: status.as_u16(),
            message,
        };
        return Err(Failure {
            error,
            retryable: should_retry.unwrap_or_else(|| is_retryable_status(status.as_u16())),
            retry_after: wait,
        });
    }
    let is_json = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if is_json {
        let body = response.text().await;
        let message = format!(
            "expected an event stream but got JSON: {}",
            error_message(&body)
        );
        return Err(Failure::fatal(ProviderError::Protocol {
            provider: provider.clone(),
            message,
        }));
    }

    // Read until the first event: until then a failure is still worth a retry.
    let mut parser = SseParser::default();
    let mut out = Vec::new();
    let done = loop {
        let chunk = tokio::select! {
            _ = abort.cancelled() => return Err(Failure::fatal(ProviderError::Aborted)),
            c = tokio::time::timeout(endpoint.idle_timeout, response.chunk()) => c,
        };
        match read_step(
            chunk,
            &mut parser,
            &mut decoder,
            &mut out,
            provider,
            endpoint.idle_timeout,
        ) {
            Step::More if out.is_empty() => continue,
            Step::More => break false,
            Step::Done => break true,
            Step::Failed(e) if matches!(e, ProviderError::StreamCut { .. }) => {
                return Err(Failure::retry(e));
            }
            Step::Failed(e) => return Err(Failure::from_decoder(e)),
        }
    };

    let (tx, rx) = mpsc::channel(64);
    let provider = provider.clone();
    let idle = endpoint.idle_timeout;
    let abort = abort.clone();
    tokio::spawn(async move {
        pump(
            response, parser, decoder, out, done, tx, abort, provider, idle,
        )
        .await;
    });
    Ok(rx)
}

enum Step {
    More,
    Done,
    Failed(ProviderError),
}

type Chunk<B> = Result<Result<Option<B>, String>, tokio::time::error::Elapsed>;

/// Feeds one read result through the parser and decoder.
fn read_step<D: Decoder, B: AsRef<[u8]>>(
    chunk: Chunk<B>,
    parser: &mut SseParser,
    decoder: &mut D,
    out: &mut Vec<StreamEvent>,
    provider: &str,
    idle: Duration,
) -> Step {
    let cut = |message: String| {
        Step::Failed(ProviderError::StreamCut {
            provider: provider.to_string(),
            message,
        })
    };
    let events = match chunk {
        Err(_) => return cut(format!("no data for {} s", idle.as_secs())),
        Ok(Err(e)) => return cut(e),
        Ok(Ok(Some(bytes))) => parser.push(bytes.as_ref()),
        Ok(Ok(None)) => {
            if let Some(last) = parser.finish() {
                match decoder.event(&last, out) {
                    Ok(true) => return Step::Done,
                    Ok(false) => {}
                    Err(e) => return Step::Failed(e),
                }
            }
            return if decoder.end(out) {
                Step::Done
            } else {
                cut("the stream ended before the turn was complete".to_string())
            };
        }
    };
    for event in &events {
        match decoder.event(event, out) {
            Ok(true) => return Step::Done,
            Ok(false) => {}
            Err(e) => return Step::Failed(e),
        }
    }
    Step::More
}

/// Forwards the rest of the turn. Stops on `Finish`, an error, abort, or when the receiver
/// is dropped (which drops the response and so closes the connection).
#[allow(clippy::too_many_arguments)]
async fn pump<D: Decoder>(
    mut response: Response,
    mut parser: SseParser,
    mut decoder: D,
    mut out: Vec<StreamEvent>,
    mut done: bool,
    tx: mpsc::Sender<Result<StreamEvent, ProviderError>>,
    abort: CancellationToken,
    provider: String,
    idle: Duration,
) {
    loop {
        for event in out.drain(..) {
            tokio::select! {
                biased;
                _ = abort.cancelled() => {
                    let _ = tx.send(Err(ProviderError::Aborted)).await;
                    return;
                }
                sent = tx.send(Ok(event)) => if sent.is_err() { return },
            }
        }
        if done {
            return;
        }
        let chunk = tokio::select! {
            biased;
            _ = abort.cancelled() => {
                let _ = tx.send(Err(ProviderError::Aborted)).await;
                return;
            }
            _ = tx.closed() => return,
            c = tokio::time::timeout(idle, response.chunk()) => c,
        };
        match read_step(chunk, &mut parser, &mut decoder, &mut out, &provider, idle) {
            Step::More => {}
            Step::Done => done = true,
            Step::Failed(e) => {
                // Events decoded before the failure in the same chunk are still delivered.
                for event in out.drain(..) {
                    if tx.send(Ok(event)).await.is_err() {
                        return;
                    }
                }
                let _ = tx.send(Err(e)).await;
                return;
            }
        }
    }
}
