//! Which names the server answers to: the defence against DNS rebinding.
//!
//! A page on `evil.example` can make its own name resolve to 127.0.0.1 and then talk to the
//! server as if it were same-origin; what gives it away is the `Host` it sends, which names
//! the attacker's domain. Every request (page, assets and API alike) is refused unless its
//! `Host` is `localhost`, a loopback address, or the name given as `--host`. With an
//! unspecified `--host` (`0.0.0.0`, `::`) any IP address is accepted too: no DNS name can
//! be in play when the client dialled an address, and the user never named the machine.
//! The port in `Host` is not compared: it only matters behind a proxy, which is not a
//! rebinding vector.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ErrorBody;
use crate::state::AppState;

/// The names this server answers to.
#[derive(Debug, Clone)]
pub struct Hosts {
    /// `--host`, lower-cased, without brackets.
    configured: String,
    /// `--host` was an unspecified address: accept any IP literal.
    any_address: bool,
}

impl Hosts {
    pub fn new(host: &str) -> Self {
        let configured = bare(host);
        let any_address = configured
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_unspecified());
        Self {
            configured,
            any_address,
        }
    }

    /// Whether `authority` (a `Host` value: a name or address, maybe with a port) is ours.
    pub fn allows(&self, authority: &str) -> bool {
        let name = bare(strip_port(authority.trim()));
        if name.is_empty() {
            return false;
        }
        if name == "localhost" || name == self.configured {
            return true;
        }
        match name.parse::<IpAddr>() {
            Ok(ip) => ip.is_loopback() || self.any_address,
            Err(_) => false,
        }
    }

    /// What the refusal says the server answers to.
    fn describe(&self) -> String {
        if self.any_address {
            "localhost and IP addresses".into()
        } else if self.configured == "localhost"
            || self
                .configured
                .parse::<IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
        {
            "localhost and loopback addresses".into()
        } else {
            format!("localhost, loopback addresses and {}", self.configured)
        }
    }
}

/// Lower case, no brackets, no trailing dot (`LOCALHOST.` is `localhost`).
fn bare(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// `name:port` → `name`; `[v6]:port` → `[v6]`; a bare IPv6 address stays whole.
fn strip_port(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return match rest.find(']') {
            Some(end) => &authority[..end + 2],
            None => authority,
        };
    }
    match authority.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            name
        }
        _ => authority,
    }
}

/// Refuses a request whose `Host` is not one of ours (421, with what the server answers to).
pub async fn require_host(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let named = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| request.uri().authority().map(|a| a.to_string()));
    match named {
        Some(host) if state.hosts.allows(&host) => next.run(request).await,
        named => {
            let what = match named {
                Some(h) => format!("{:?}", h.chars().take(100).collect::<String>()),
                None => "no host".into(),
            };
            (
                StatusCode::MISDIRECTED_REQUEST,
                axum::Json(ErrorBody {
                    error: format!(
                        "this server answers only to {}; the request named {what}. A page \
                         that reaches it under another name is refused (DNS rebinding)",
                        state.hosts.describe()
                    ),
                }),
            )
                .into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_and_the_configured_host_are_ours() {
        let local = Hosts::new("127.0.0.1");
        for ok in [
            "127.0.0.1:4096",
            "localhost:1",
            "LOCALHOST",
            "localhost.:80",
            "[::1]:8080",
            "127.0.0.2",
        ] {
            assert!(local.allows(ok), "{ok}");
        }
        for no in [
            "evil.example:4096",
            "evil.example",
            "127.0.0.1.evil.example",
            "localhost.evil.example:1",
            "192.168.1.2:4096",
            "",
            ":4096",
        ] {
            assert!(!local.allows(no), "{no}");
        }
        let named = Hosts::new("box.lan");
        assert!(named.allows("box.lan:4096") && named.allows("BOX.LAN"));
        assert!(!named.allows("192.168.1.2:4096") && !named.allows("evil.example"));
        let any = Hosts::new("0.0.0.0");
        assert!(any.allows("192.168.1.2:4096") && any.allows("[fe80::1]:1"));
        assert!(!any.allows("evil.example:4096"));
    }
}
