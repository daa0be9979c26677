//! Signing a browser in without putting the token anywhere it lingers.
//!
//! The server mints one-time sign-in codes ([`Grants::code`]) for the URLs it prints or
//! hands to a browser (`/#code=…`). The page removes the code from its address bar, then
//! trades it (`POST /api/login`) for a cookie: `HttpOnly` (no script reads it),
//! `SameSite=Strict`, `Path=/`, with a lifetime ([`COOKIE_TTL`]). A code works once and
//! expires ([`CODE_TTL`], or less for the one a browser is started with), so a code left in
//! the browser's history, a terminal's scrollback or `ps` after use is worthless. The login
//! form trades the token itself the same way. Codes and cookie values are 256 random bits;
//! the maps are keyed by them (SipHash with a random key: a lookup's timing says nothing
//! useful about a guess) and are swept of expired entries as new ones are added.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::auth::{self, new_token};
use crate::error::ErrorBody;
use crate::state::AppState;

/// How long a printed sign-in code stays usable (once).
pub const CODE_TTL: Duration = Duration::from_secs(10 * 60);
/// How long a browser stays signed in.
pub const COOKIE_TTL: Duration = Duration::from_secs(12 * 60 * 60);
/// Browser sign-ins remembered at most (the oldest go first).
const MAX_COOKIES: usize = 1000;

/// The text of a refused sign-in code (user-facing).
pub const CODE_REFUSED: &str = "this sign-in link was already used or has expired: paste the \
    token `podcode serve` printed, or run `podcode web` again";

/// Live sign-in codes and browser sign-ins.
#[derive(Default)]
pub struct Grants {
    codes: Mutex<HashMap<String, Instant>>,
    cookies: Mutex<HashMap<String, Instant>>,
}

fn sweep(map: &mut HashMap<String, Instant>, now: Instant) {
    map.retain(|_, until| *until > now);
}

impl Grants {
    /// A new one-time code, usable for `ttl`.
    pub fn code(&self, ttl: Duration) -> Result<String, getrandom::Error> {
        let code = new_token()?;
        let now = Instant::now();
        let mut codes = self.codes.lock().unwrap_or_else(|e| e.into_inner());
        sweep(&mut codes, now);
        codes.insert(code.clone(), now + ttl);
        Ok(code)
    }

    /// Spends `code`: true (once) when it was live.
    fn spend(&self, code: &str) -> bool {
        let mut codes = self.codes.lock().unwrap_or_else(|e| e.into_inner());
        codes
            .remove(code)
            .is_some_and(|until| until > Instant::now())
    }

    /// A new browser sign-in's cookie value.
    fn sign_in(&self) -> Result<String, getrandom::Error> {
        let value = new_token()?;
        let now = Instant::now();
        let mut cookies = self.cookies.lock().unwrap_or_else(|e| e.into_inner());
        sweep(&mut cookies, now);
        if cookies.len() >= MAX_COOKIES
            && let Some(oldest) = cookies
                .iter()
                .min_by_key(|(_, until)| **until)
                .map(|(k, _)| k.clone())
        {
            cookies.remove(&oldest);
        }
        cookies.insert(value.clone(), now + COOKIE_TTL);
        Ok(value)
    }

    /// Whether `value` is a live browser sign-in.
    pub fn signed_in(&self, value: &str) -> bool {
        let cookies = self.cookies.lock().unwrap_or_else(|e| e.into_inner());
        cookies
            .get(value)
            .is_some_and(|until| *until > Instant::now())
    }

    fn sign_out(&self, value: &str) {
        let mut cookies = self.cookies.lock().unwrap_or_else(|e| e.into_inner());
        cookies.remove(value);
    }
}

/// The cookie's name: per port, because browsers share cookies between ports of one host
/// and two servers must not sign each other's pages out.
pub fn cookie_name(port: u16) -> String {
    format!("podcode_{port}")
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| {
            let (k, v) = pair.trim().split_once('=')?;
            (k == name).then(|| v.to_string())
        })
}

/// `POST /api/login`: a sign-in code or the token, traded for the cookie.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct LoginRequest {
    /// A one-time code from a sign-in link (`/#code=…`).
    pub code: Option<String>,
    /// The server's token (what the sign-in form sends).
    pub token: Option<String>,
}

#[utoipa::path(post, path = "/api/login", tag = "auth", request_body = LoginRequest,
    security(()),
    responses((status = 204, description = "Signed in: `Set-Cookie: podcode_<port>=…; HttpOnly; SameSite=Strict; Path=/; Max-Age=43200`"),
        (status = 401, description = "The code is spent or expired, or the token is wrong", body = ErrorBody),
        (status = 403, description = "Sent from another origin", body = ErrorBody),
        (status = 429, description = "Too many failed attempts from this address (see `Retry-After`)", body = ErrorBody)))]
pub async fn login(State(state): State<Arc<AppState>>, request: Request) -> Response {
    if let Err(refused) = auth::same_origin(&request, true) {
        return *refused;
    }
    let peer = crate::listen::peer(&request);
    let Ok(body) = axum::body::to_bytes(request.into_body(), 64 * 1024).await else {
        return auth::error(StatusCode::BAD_REQUEST, "the request body is too large");
    };
    let body: LoginRequest = match serde_json::from_slice(&body) {
        Ok(b) => b,
        Err(e) => return auth::error(StatusCode::BAD_REQUEST, &format!("bad JSON: {e}")),
    };
    let (ok, refused) = match (&body.code, &body.token) {
        (Some(code), _) => (state.grants.spend(code), CODE_REFUSED),
        (None, Some(token)) => match state.tokens.check(token) {
            crate::token::Check::Valid => (true, auth::TOKEN_REFUSED),
            crate::token::Check::Expired(text) => {
                return auth::error(StatusCode::UNAUTHORIZED, &text);
            }
            crate::token::Check::Wrong => (false, auth::TOKEN_REFUSED),
        },
        (None, None) => {
            return auth::error(StatusCode::BAD_REQUEST, "send a sign-in code or the token");
        }
    };
    if !ok {
        return auth::failed(&state, peer, "a wrong sign-in code or token", refused);
    }
    let value = match state.grants.sign_in() {
        Ok(v) => v,
        Err(e) => {
            return auth::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("cannot make a sign-in: {e}"),
            );
        }
    };
    let cookie = format!(
        "{}={value}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}",
        state.cookie,
        COOKIE_TTL.as_secs()
    );
    with_cookie(StatusCode::NO_CONTENT, &cookie)
}

#[utoipa::path(post, path = "/api/logout", tag = "auth", security(()),
    responses((status = 204, description = "Signed out: the cookie is cleared and no longer accepted")))]
pub async fn logout(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if let Some(value) = cookie(&headers, &state.cookie) {
        state.grants.sign_out(&value);
    }
    let cookie = format!(
        "{}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0",
        state.cookie
    );
    with_cookie(StatusCode::NO_CONTENT, &cookie)
}

fn with_cookie(status: StatusCode, cookie: &str) -> Response {
    let mut response = status.into_response();
    if let Ok(v) = HeaderValue::from_str(cookie) {
        response.headers_mut().insert(header::SET_COOKIE, v);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_works_once_and_not_after_it_expires() {
        let grants = Grants::default();
        let code = grants.code(CODE_TTL).unwrap();
        assert!(grants.spend(&code));
        assert!(!grants.spend(&code));
        let stale = grants.code(Duration::ZERO).unwrap();
        assert!(!grants.spend(&stale));
        let value = grants.sign_in().unwrap();
        assert!(grants.signed_in(&value) && !grants.signed_in("nope"));
        grants.sign_out(&value);
        assert!(!grants.signed_in(&value));
    }

    #[test]
    fn the_cookie_is_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, "a=1; podcode_80=xyz; b=2".parse().unwrap());
        assert_eq!(cookie(&headers, "podcode_80"), Some("xyz".into()));
        assert_eq!(cookie(&headers, "podcode_81"), None);
    }
}
