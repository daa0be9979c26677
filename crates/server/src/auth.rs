//! The bearer token: made at start (or taken from `PODCODE_SERVER_TOKEN`), checked on every
//! `/api/…` request in constant time. The two event-stream routes also take `?token=`,
//! because a browser's `EventSource` cannot set headers; nothing else does, so a token never
//! lands in a URL that is not a stream's.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use subtle::ConstantTimeEq;

use crate::error::ErrorBody;
use crate::state::AppState;

/// The environment variable that sets the token (required for a non-loopback `--host`).
pub const TOKEN_ENV: &str = "PODCODE_SERVER_TOKEN";

/// 32 random bytes, URL-safe base64 without padding (43 characters).
pub fn new_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

fn same(a: &str, b: &str) -> bool {
    // `ct_eq` on slices of different lengths is false without comparing contents; the
    // length of the token is not a secret worth hiding.
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

/// The event-stream routes, where `?token=` is accepted too.
fn is_stream(path: &str) -> bool {
    path == "/api/events" || (path.starts_with("/api/sessions/") && path.ends_with("/events"))
}

fn query_token(query: Option<&str>) -> Option<String> {
    query?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == "token").then(|| percent_decode(v))
    })
}

/// Enough percent-decoding for a token (base64url needs none; a chosen one might).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Lets an `/api` request through only with the right token.
pub async fn require_token(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    // The page and the API description hold no data.
    if !request.uri().path().starts_with("/api/") && request.uri().path() != "/api" {
        return next.run(request).await;
    }
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .map(str::to_string);
    let given = bearer.or_else(|| {
        is_stream(request.uri().path())
            .then(|| query_token(request.uri().query()))
            .flatten()
    });
    match given {
        Some(t) if same(&t, &state.token) => next.run(request).await,
        _ => unauthorized(),
    }
}

pub fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        axum::Json(ErrorBody {
            error: "unauthorized".into(),
        }),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_url_safe() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
    }

    #[test]
    fn only_stream_routes_take_a_query_token() {
        assert!(is_stream("/api/events"));
        assert!(is_stream("/api/sessions/ses_1/events"));
        assert!(!is_stream("/api/sessions"));
        assert!(!is_stream("/api/sessions/ses_1"));
        assert_eq!(
            query_token(Some("last_event_id=3&token=a%2Bb")),
            Some("a+b".into())
        );
        assert_eq!(query_token(Some("tokenx=1")), None);
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
    }
}
