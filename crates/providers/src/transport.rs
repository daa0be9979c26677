//! Model requests that do not go over Podcode's own HTTP client: a [`Transport`] on the
//! [`Endpoint`](crate::Endpoint) sends them instead (an auth plugin's `fetch`, which signs
//! them with its own tokens). It answers with the status and headers, then the body in
//! pieces over a channel; the stream driver treats that exactly like an HTTP response
//! (retries, error bodies, SSE decoding, idle timeout, abort).

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::mpsc;

/// Sends one model request somewhere else than Podcode's HTTP client.
#[async_trait]
pub trait HttpTransport: Send + Sync {
    /// POSTs `body` to `url` with `headers`; an `Err` is a connection-level failure (retried
    /// like one).
    async fn post(
        &self,
        url: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<TransportResponse, String>;
}

/// The answer of an [`HttpTransport`].
pub struct TransportResponse {
    /// HTTP status.
    pub status: u16,
    /// Response headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body as it arrives; the channel closes at its end, an `Err` is a cut.
    pub body: mpsc::UnboundedReceiver<Result<Vec<u8>, String>>,
    /// Kept as long as the body is read (dropping it may cancel the request).
    pub keep: Box<dyn Send + Sync>,
}

/// An endpoint's transport (compared by identity).
#[derive(Clone)]
pub struct Transport(pub Arc<dyn HttpTransport>);

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Transport(..)")
    }
}

impl PartialEq for Transport {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A response the stream driver reads: from the HTTP client or from a transport.
pub(crate) enum Response {
    Http(reqwest::Response),
    Custom {
        status: u16,
        headers: reqwest::header::HeaderMap,
        body: mpsc::UnboundedReceiver<Result<Vec<u8>, String>>,
        _keep: Box<dyn Send + Sync>,
    },
}

impl Response {
    pub(crate) fn from_transport(r: TransportResponse) -> Self {
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &r.headers {
            if let (Ok(n), Ok(v)) = (
                reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                reqwest::header::HeaderValue::from_str(value),
            ) {
                headers.append(n, v);
            }
        }
        Response::Custom {
            status: r.status,
            headers,
            body: r.body,
            _keep: r.keep,
        }
    }

    pub(crate) fn status(&self) -> reqwest::StatusCode {
        match self {
            Response::Http(r) => r.status(),
            Response::Custom { status, .. } => {
                reqwest::StatusCode::from_u16(*status).unwrap_or(reqwest::StatusCode::BAD_GATEWAY)
            }
        }
    }

    pub(crate) fn headers(&self) -> &reqwest::header::HeaderMap {
        match self {
            Response::Http(r) => r.headers(),
            Response::Custom { headers, .. } => headers,
        }
    }

    /// The whole body as text (an error body); what cannot be read is left out.
    pub(crate) async fn text(self) -> String {
        match self {
            Response::Http(r) => r.text().await.unwrap_or_default(),
            Response::Custom { mut body, .. } => {
                let mut all = Vec::new();
                while let Some(Ok(piece)) = body.recv().await {
                    all.extend_from_slice(&piece);
                }
                String::from_utf8_lossy(&all).into_owned()
            }
        }
    }

    /// The next piece of the body; `None` at its end.
    pub(crate) async fn chunk(&mut self) -> Result<Option<bytes::Bytes>, String> {
        match self {
            Response::Http(r) => r
                .chunk()
                .await
                .map_err(|e| crate::endpoint::error_chain(&e)),
            Response::Custom { body, .. } => match body.recv().await {
                None => Ok(None),
                Some(Ok(piece)) => Ok(Some(bytes::Bytes::from(piece))),
                Some(Err(e)) => Err(e),
            },
        }
    }
}
