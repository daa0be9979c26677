//! The network half of `webfetch`: which targets may be fetched, and the GET itself.
//!
//! Every hop (the first URL and each redirect target) goes through `Gate::check`: only
//! `http`/`https`; the host is resolved here. If any of its addresses is private, loopback,
//! link-local or otherwise internal (a local dev server, cloud metadata), the hop is the
//! `webfetch_private` permission with the origin as pattern (`http://localhost:5173`; a
//! rule for the bare host counts where none for the origin decides), as the browser's
//! `browser_private`: a rule decides, else the user is asked like at every other gate
//! (once, always, reject), and that answer settles the hop; a `webfetch` rule denying the
//! host still refuses, and a refusal by a rule names the rules that would allow the hop as
//! TOML to paste. A public address is the `webfetch` permission with the host as pattern.
//! The checked addresses are pinned in the client's resolver, so the connection goes to
//! exactly the addresses that were checked (no second, different DNS answer: a name cannot
//! be re-pointed at an internal address after its check); a proxy from the environment is
//! still honoured. Redirects are followed here, not by reqwest, so each target is checked;
//! the body is streamed and abandoned as soon as it passes `MAX_BODY_BYTES`.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::time::Instant;

use podcode_protocol::{PermissionAction, PermissionRequest};
use podcode_tools::{ToolContext, ToolError};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::{StatusCode, Url};
use serde_json::json;

use super::texts;

pub(crate) const MAX_BODY_BYTES: usize = 5 * 1024 * 1024;
pub(crate) const MAX_REDIRECTS: usize = 5;
const USER_AGENT: &str = concat!("Podcode/", env!("CARGO_PKG_VERSION"), " (+webfetch)");

/// A successful download.
pub(crate) struct Fetched {
    pub(crate) url: Url,
    pub(crate) redirects: usize,
    pub(crate) status: u16,
    pub(crate) content_type: Option<String>,
    pub(crate) body: Vec<u8>,
}

/// Internal addresses: loopback, private, link-local, shared (CGNAT), unspecified,
/// broadcast, and their IPv6 counterparts (including IPv4-mapped addresses).
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_private_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_private_v4(v4);
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || (first & 0xfe00) == 0xfc00 // fc00::/7 unique local
                || (first & 0xffc0) == 0xfe80 // fe80::/10 link-local
                || (first & 0xffc0) == 0xfec0 // fec0::/10 old site-local
                || v6 == Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 1)
        }
    }
}

fn is_private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // 100.64.0.0/10 shared address space
}

/// The resolver the client uses. Hosts `Gate` checked resolve to exactly the checked
/// addresses. Any other name can only be a proxy from the user's environment (every URL
/// host is checked before it is requested), and resolves normally.
#[derive(Default)]
struct Pinned(Mutex<HashMap<String, Vec<SocketAddr>>>);

impl Resolve for Pinned {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_ascii_lowercase();
        let pinned = self.0.lock().ok().and_then(|m| m.get(&host).cloned());
        Box::pin(async move {
            let addrs = match pinned {
                Some(a) => a,
                None => tokio::net::lookup_host((host.as_str(), 0)).await?.collect(),
            };
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

struct Client {
    http: reqwest::Client,
    pinned: Arc<Pinned>,
}

/// The process-wide client. rustls is built without a crypto provider of its own, so
/// *ring* is installed first (an "already installed" error is fine).
fn client() -> Result<&'static Client, ToolError> {
    static CLIENT: OnceLock<Result<Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
            let pinned = Arc::new(Pinned::default());
            reqwest::Client::builder()
                .user_agent(USER_AGENT)
                .redirect(reqwest::redirect::Policy::none())
                // No idle connections: calls are rare, and a pooled connection would be
                // tied to the runtime that opened it.
                .pool_max_idle_per_host(0)
                .dns_resolver(pinned.clone())
                .build()
                .map(|http| Client { http, pinned })
                .map_err(|e| format!("could not set up the HTTP client: {e}"))
        })
        .as_ref()
        .map_err(|e| ToolError::failed(e.clone()))
}

/// Checks targets, remembers which hosts and private origins were already allowed in this
/// call (a redirect back to one is not asked again), and keeps the call's deadline: network
/// steps must finish by it, and time spent waiting for the user's answer to a prompt moves
/// it back (the timeout is for the network, not the user).
pub(crate) struct Gate<'a> {
    ctx: &'a ToolContext,
    asked: HashSet<String>,
    private_allowed: HashSet<String>,
    deadline: Instant,
    seconds: u64,
}

impl<'a> Gate<'a> {
    pub(crate) fn new(ctx: &'a ToolContext, seconds: u64) -> Self {
        Self {
            ctx,
            asked: HashSet::new(),
            private_allowed: HashSet::new(),
            deadline: Instant::now() + Duration::from_secs(seconds),
            seconds,
        }
    }

    /// Asks the user (through the call's context, which applies hooks and remembered
    /// approvals first); the wait does not count against the timeout.
    async fn ask(&mut self, request: PermissionRequest) -> Result<(), ToolError> {
        let asked_at = Instant::now();
        let answer = self.ctx.ask(request).await;
        self.deadline += asked_at.elapsed();
        answer
    }

    /// A private address: `webfetch_private` for the origin (see the module doc). `Ok`
    /// settles the hop, the `webfetch` question included.
    async fn private_verdict(&mut self, url: &Url, host: &str, ip: &str) -> Result<(), ToolError> {
        let origin = url.origin().ascii_serialization();
        if self.private_allowed.contains(&origin) {
            return Ok(());
        }
        // A rule for the origin decides; one for the bare host only where none does, so the
        // origin rule a refusal suggests always takes effect.
        let private = match self.ctx.rule_action("webfetch_private", &origin) {
            PermissionAction::Ask => self.ctx.rule_action("webfetch_private", host),
            decided => decided,
        };
        let webfetch_denied = self.ctx.rule_action("webfetch", host) == PermissionAction::Deny;
        if private == PermissionAction::Deny || webfetch_denied {
            let mut needed = vec![("webfetch_private", origin.as_str())];
            if webfetch_denied {
                needed.push(("webfetch", host));
            }
            return Err(ToolError::Permission(texts::blocked_private(
                url.as_str(),
                host,
                ip,
                &podcode_tools::allow_rules(&needed),
            )));
        }
        if private != PermissionAction::Allow {
            self.ask(PermissionRequest {
                permission: "webfetch_private".into(),
                patterns: vec![origin.clone()],
                always: vec![podcode_tools::glob_literal(&origin)],
                metadata: json!({ "url": url.as_str(), "address": ip }),
            })
            .await?;
        }
        self.private_allowed.insert(origin);
        Ok(())
    }

    /// Runs one network step within the deadline.
    async fn timed<F: Future>(&self, url: &Url, step: F) -> Result<F::Output, ToolError> {
        tokio::time::timeout_at(self.deadline, step)
            .await
            .map_err(|_| ToolError::failed(texts::timed_out(url.as_str(), self.seconds)))
    }

    /// Scheme, addresses and permission for one hop; pins the checked addresses.
    pub(crate) async fn check(&mut self, url: &Url) -> Result<(), ToolError> {
        let shown = url.as_str();
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::failed(texts::blocked_scheme(
                shown,
                url.scheme(),
            )));
        }
        let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
            return Err(ToolError::failed(texts::invalid_url(shown, "no host")));
        };
        let pattern = host.to_string();
        let port = url.port_or_known_default().unwrap_or(80);
        let literal = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .ok();
        let (addrs, domain) = match literal {
            Some(ip) => (vec![SocketAddr::new(ip, port)], None),
            None => {
                let found: Vec<SocketAddr> = self
                    .timed(url, tokio::net::lookup_host((host, port)))
                    .await?
                    .map(|a| a.collect())
                    .unwrap_or_default();
                if found.is_empty() {
                    return Err(ToolError::failed(texts::dns_failed(shown, host)));
                }
                (found, Some(host.to_ascii_lowercase()))
            }
        };
        // Any internal address among the answers makes the hop private: the connection may
        // go to any of them.
        if let Some(private) = addrs.iter().find(|a| is_private(a.ip())) {
            let ip = private.ip().to_string();
            self.private_verdict(url, &pattern, &ip).await?;
        } else if self.asked.insert(pattern.clone()) {
            self.ask(PermissionRequest {
                permission: "webfetch".into(),
                patterns: vec![pattern.clone()],
                always: vec![podcode_tools::glob_literal(&pattern)],
                metadata: json!({ "url": shown }),
            })
            .await?;
        }
        if let Some(domain) = domain {
            let client = client()?;
            if let Ok(mut pinned) = client.pinned.0.lock() {
                pinned.insert(domain, addrs);
            }
        }
        Ok(())
    }
}

/// GET `url`, following up to `MAX_REDIRECTS` checked redirects, and read the body.
pub(crate) async fn fetch(
    gate: &mut Gate<'_>,
    url: Url,
    accept: &str,
) -> Result<Fetched, ToolError> {
    let client = client()?;
    let original = url.to_string();
    let mut url = url;
    let mut redirects = 0;
    loop {
        gate.check(&url).await?;
        let request = client
            .http
            .get(url.clone())
            .header(reqwest::header::ACCEPT, accept)
            .send();
        let response = gate
            .timed(&url, request)
            .await?
            .map_err(|e| request_error(&url, &e))?;
        let status = response.status();
        if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
            let next = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| url.join(l).ok())
                .ok_or_else(|| {
                    ToolError::failed(texts::bad_redirect(url.as_str(), status.as_u16()))
                })?;
            redirects += 1;
            if redirects > MAX_REDIRECTS {
                return Err(ToolError::failed(texts::too_many_redirects(&original)));
            }
            url = next;
            continue;
        }
        if !status.is_success() {
            let text = texts::http_status(
                url.as_str(),
                status.as_u16(),
                status.canonical_reason().unwrap_or(""),
            );
            return Err(if matches!(status.as_u16(), 502..=504) {
                ToolError::transient(text)
            } else {
                ToolError::failed(text)
            });
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|c| c.to_str().ok())
            .map(str::to_string);
        let body = read_body(gate, response, &url).await?;
        return Ok(Fetched {
            url,
            redirects,
            status: status.as_u16(),
            content_type,
            body,
        });
    }
}

/// Streams the body, giving up (and dropping the connection) past `MAX_BODY_BYTES`.
async fn read_body(
    gate: &Gate<'_>,
    mut response: reqwest::Response,
    url: &Url,
) -> Result<Vec<u8>, ToolError> {
    let declared = response.content_length().unwrap_or(0);
    if declared > MAX_BODY_BYTES as u64 {
        return Err(ToolError::failed(texts::too_large(url.as_str())));
    }
    let mut body = Vec::with_capacity(declared as usize);
    while let Some(chunk) = gate
        .timed(url, response.chunk())
        .await?
        .map_err(|e| request_error(url, &e))?
    {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(ToolError::failed(texts::too_large(url.as_str())));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Reads a `file:` URL the user allowed explicitly, with the same size limit.
pub(crate) fn read_file_url(url: &Url) -> Result<Vec<u8>, ToolError> {
    use std::io::Read;
    let path = url
        .to_file_path()
        .map_err(|_| ToolError::failed(texts::invalid_url(url.as_str(), "not a local path")))?;
    let file = std::fs::File::open(&path)
        .map_err(|e| ToolError::failed(format!("could not open {}: {e}.", path.display())))?;
    let mut body = Vec::new();
    file.take(MAX_BODY_BYTES as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| ToolError::failed(format!("could not read {}: {e}.", path.display())))?;
    if body.len() > MAX_BODY_BYTES {
        return Err(ToolError::failed(texts::too_large(url.as_str())));
    }
    Ok(body)
}

/// The model-facing text for a failed request: TLS, connection or other network failure.
fn request_error(url: &Url, error: &reqwest::Error) -> ToolError {
    let host = url.host_str().unwrap_or_default();
    if is_tls(error) {
        return ToolError::failed(texts::tls_failed(url.as_str(), host));
    }
    let detail = root_cause(error);
    if error.is_connect() {
        ToolError::transient(texts::connect_failed(url.as_str(), host, &detail))
    } else {
        ToolError::transient(texts::network_failed(url.as_str(), &detail))
    }
}

/// A rustls error anywhere in the chain, including inside `io::Error`s (whose `source()`
/// skips the error they wrap).
fn is_tls(error: &(dyn std::error::Error + 'static)) -> bool {
    if error.is::<rustls::Error>() {
        return true;
    }
    if let Some(inner) = error
        .downcast_ref::<std::io::Error>()
        .and_then(|io| io.get_ref())
        && is_tls(inner)
    {
        return true;
    }
    error.source().is_some_and(is_tls)
}

fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_are_recognised() {
        for ip in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "8.8.8.8",
            "172.32.0.1",
            "192.169.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert!(!is_private(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn user_agent_names_podcode() {
        assert!(USER_AGENT.starts_with("Podcode/"));
        assert!(USER_AGENT.ends_with(" (+webfetch)"));
    }
}
