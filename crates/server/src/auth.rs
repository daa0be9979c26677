//! Who may use `/api`: the bearer token, or a browser's sign-in cookie (see `login`).
//!
//! The token is made at start (or taken from `PODCODE_SERVER_TOKEN`), lives as long as
//! `token` says (an expired one is answered with how to get the next) and is compared in
//! constant time; API clients send it as `Authorization: Bearer <token>` (the scheme in any
//! case). A browser sends the cookie `login` gave it — on every route, the event streams
//! included (an `EventSource` sends cookies), so no secret ever goes in a URL. A request
//! carried by the cookie must come from the page itself: a present `Origin` must be this
//! server's, `Sec-Fetch-Site` (when sent) must say same-origin, and anything but GET/HEAD
//! must carry `Origin` — `SameSite` does not tell the ports of one host apart, so without
//! this another local site could post with the cookie. A wrong credential counts against
//! the peer (`limit`): once over the limit it is answered 429 until it has waited.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use subtle::ConstantTimeEq;

use crate::error::ErrorBody;
use crate::state::AppState;
use crate::token::Check;

/// The environment variable that sets the token (required for a non-loopback `--host`).
pub const TOKEN_ENV: &str = "PODCODE_SERVER_TOKEN";
/// The text of a refused token or cookie (user-facing; says nothing of which was wrong).
pub const TOKEN_REFUSED: &str = "unauthorized";
/// The shortest token accepted off loopback.
pub const MIN_TOKEN_CHARS: usize = 32;
/// The least estimated randomness of a token accepted off loopback, in bits.
const MIN_TOKEN_BITS: f64 = 100.0;

/// 32 random bytes, URL-safe base64 without padding (43 characters).
pub fn new_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Why `token` is too weak to guard a server other machines can reach, if it is: shorter
/// than [`MIN_TOKEN_CHARS`], or under [`MIN_TOKEN_BITS`] by its characters' frequencies
/// (which catches repeats and small alphabets, not a memorable phrase of the right length).
pub fn weakness(token: &str) -> Option<String> {
    let chars: Vec<char> = token.chars().collect();
    if chars.len() < MIN_TOKEN_CHARS {
        return Some(format!(
            "it has {} characters; at least {MIN_TOKEN_CHARS} are needed",
            chars.len()
        ));
    }
    let mut counts = std::collections::HashMap::new();
    for c in &chars {
        *counts.entry(*c).or_insert(0usize) += 1;
    }
    let n = chars.len() as f64;
    let per_char: f64 = counts
        .values()
        .map(|&k| {
            let p = k as f64 / n;
            -p * p.log2()
        })
        .sum();
    let bits = per_char * n;
    (bits < MIN_TOKEN_BITS).then(|| {
        format!(
            "it looks too regular (about {} bits of randomness; at least {} are needed)",
            bits as u32, MIN_TOKEN_BITS as u32
        )
    })
}

pub fn same(a: &str, b: &str) -> bool {
    // `ct_eq` on slices of different lengths is false without comparing contents; the
    // length of the token is not a secret worth hiding.
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

/// The credential of `Authorization: Bearer <token>`, the scheme in any case.
fn bearer(request: &Request) -> Option<String> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_string())
}

/// Refuses a cookie-carried request that does not come from the page itself: the answer
/// is the 403 to send. `changes`: the request changes something, so `Origin` is required.
pub fn same_origin(request: &Request, changes: bool) -> Result<(), Box<Response>> {
    let headers = request.headers();
    let refused = |why: &str| Err(Box::new(error(StatusCode::FORBIDDEN, why)));
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok())
        && site != "same-origin"
        && site != "none"
    {
        return refused("a request from another site is refused");
    }
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    match headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        Some(origin) => {
            let ours = host.is_some_and(|h| {
                origin
                    .strip_prefix("http://")
                    .or_else(|| origin.strip_prefix("https://"))
                    .is_some_and(|o| o.eq_ignore_ascii_case(h))
            });
            if ours {
                Ok(())
            } else {
                refused("a request from another origin is refused")
            }
        }
        None if changes => refused(
            "a signed-in browser request that changes something must carry Origin; \
             API clients send Authorization: Bearer <token> instead",
        ),
        None => Ok(()),
    }
}

/// Lets an `/api` request through only with the token or a live sign-in cookie.
pub async fn require_auth(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    // The page and the API description hold no data.
    if !path.starts_with("/api/") && path != "/api" {
        return next.run(request).await;
    }
    let peer = crate::listen::peer(&request);
    if let Some(wait) = peer.and_then(|p| state.limiter.blocked(p.ip())) {
        return too_many(wait);
    }
    // Signing in and out check their own credentials.
    if path == "/api/login" || path == "/api/logout" {
        return next.run(request).await;
    }
    if let Some(token) = bearer(&request) {
        return match state.tokens.check(&token) {
            Check::Valid => next.run(request).await,
            Check::Expired(text) => error(StatusCode::UNAUTHORIZED, &text),
            Check::Wrong => failed(&state, peer, "a wrong bearer token", TOKEN_REFUSED),
        };
    }
    if let Some(value) = crate::login::cookie(request.headers(), &state.cookie) {
        if !state.grants.signed_in(&value) {
            return failed(
                &state,
                peer,
                "an unknown or expired sign-in cookie",
                TOKEN_REFUSED,
            );
        }
        let changes = !matches!(*request.method(), Method::GET | Method::HEAD);
        return match same_origin(&request, changes) {
            Ok(()) => next.run(request).await,
            Err(refused) => *refused,
        };
    }
    error(StatusCode::UNAUTHORIZED, TOKEN_REFUSED)
}

/// A wrong credential: counted against the peer (and logged), then 401 — or 429 when this
/// one used up the peer's allowance.
pub fn failed(
    state: &AppState,
    peer: Option<std::net::SocketAddr>,
    what: &str,
    text: &str,
) -> Response {
    let ip = peer.map_or(IpAddr::from([0, 0, 0, 0]), |p| p.ip());
    match state.limiter.fail(ip, what) {
        Some(wait) => too_many(wait),
        None => error(StatusCode::UNAUTHORIZED, text),
    }
}

fn too_many(wait: Duration) -> Response {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let mut response = error(
        StatusCode::TOO_MANY_REQUESTS,
        &format!("too many failed sign-in attempts from this address: try again in {secs} s"),
    );
    if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, v);
    }
    response
}

pub fn error(status: StatusCode, text: &str) -> Response {
    (
        status,
        axum::Json(ErrorBody {
            error: text.to_string(),
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
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
    }

    #[test]
    fn short_or_regular_tokens_are_weak_and_random_ones_are_not() {
        assert!(
            weakness("chosen-token-123")
                .unwrap()
                .contains("16 characters")
        );
        assert!(weakness(&"ab".repeat(20)).unwrap().contains("too regular"));
        assert!(weakness(&"a".repeat(64)).is_some());
        for _ in 0..20 {
            assert_eq!(weakness(&new_token().unwrap()), None);
        }
        // 128 random bits in hex (32 characters) pass.
        assert_eq!(weakness("3f9a1c07e4b25d86a0c3e9f17b24d5c8"), None);
    }
}
