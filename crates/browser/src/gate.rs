//! The navigation gate. Every document request of the tab (typed URLs, clicks, form posts,
//! redirects, frames) is paused by the DevTools `Fetch` domain and checked here before it
//! may go out:
//! - `about:`, `data:` and `blob:` URLs reach no network and pass;
//! - `http`/`https`: the host is resolved; a private, loopback or link-local address needs
//!   an explicit `allow` rule for `browser_private` with the host as pattern (as for
//!   webfetch: a remembered approval does not count); then the `browser` permission with
//!   the host as pattern — asked through the running call's context, once per host for the
//!   life of the browser;
//! - any other scheme (`file:`, `chrome:`, …) only with an explicit `browser_private`
//!   allow rule for the URL.
//!
//! A request made while no call runs (a timer navigating the page) or by a frame is never
//! asked about: it passes only when the host was allowed before. Refusals are recorded so
//! the call that caused them can report them.

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;

use podcode_protocol::{PermissionAction, PermissionRequest};
use podcode_tools::{ToolContext, ToolError};
use serde_json::json;
use url::Url;

use crate::texts;

/// Why a request was refused: a permission answer (already model-facing) or a policy text.
#[derive(Debug, Clone)]
pub(crate) enum Refusal {
    Permission(String),
    Policy(String),
}

impl Refusal {
    pub(crate) fn into_error(self) -> ToolError {
        match self {
            Self::Permission(t) => ToolError::Permission(t),
            Self::Policy(t) => ToolError::failed(t),
        }
    }
}

#[derive(Default)]
pub(crate) struct Gate {
    /// The call running now, whose context may ask the user.
    current: Mutex<Option<ToolContext>>,
    allowed: Mutex<HashSet<String>>,
    refusals: Mutex<Vec<(String, Refusal)>>,
}

impl Gate {
    pub(crate) fn begin(&self, ctx: &ToolContext) {
        if let Ok(mut c) = self.current.lock() {
            *c = Some(ctx.clone());
        }
        if let Ok(mut r) = self.refusals.lock() {
            r.clear();
        }
    }

    pub(crate) fn end(&self) {
        if let Ok(mut c) = self.current.lock() {
            *c = None;
        }
    }

    /// The refusals since the call began, oldest first.
    pub(crate) fn take_refusals(&self) -> Vec<(String, Refusal)> {
        self.refusals
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default()
    }

    fn context(&self) -> Option<ToolContext> {
        self.current.lock().ok().and_then(|c| c.clone())
    }

    fn is_allowed(&self, host: &str) -> bool {
        self.allowed
            .lock()
            .map(|a| a.contains(host))
            .unwrap_or(false)
    }

    /// Checks one request; records and returns a refusal. `may_ask`: a main-frame
    /// navigation during a call (frames only pass hosts allowed before).
    pub(crate) async fn check(&self, raw: &str, may_ask: bool) -> Result<(), Refusal> {
        let verdict = self.verdict(raw, may_ask).await;
        if let Err(refusal) = &verdict
            && let Ok(mut r) = self.refusals.lock()
        {
            r.push((raw.to_string(), refusal.clone()));
        }
        verdict
    }

    async fn verdict(&self, raw: &str, may_ask: bool) -> Result<(), Refusal> {
        let url = Url::parse(raw)
            .map_err(|e| Refusal::Policy(texts::invalid_url(raw, &e.to_string())))?;
        let ctx = self.context();
        let rule = |permission: &str, pattern: &str| {
            ctx.as_ref()
                .map(|c| c.rule_action(permission, pattern))
                .unwrap_or(PermissionAction::Deny)
        };
        match url.scheme() {
            "about" | "data" | "blob" => return Ok(()),
            "http" | "https" => {}
            scheme => {
                if rule("browser_private", url.as_str()) == PermissionAction::Allow {
                    return Ok(());
                }
                return Err(Refusal::Policy(texts::blocked_scheme(url.as_str(), scheme)));
            }
        }
        let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
            return Err(Refusal::Policy(texts::invalid_url(raw, "no host")));
        };
        let host = host.to_ascii_lowercase();
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let port = url.port_or_known_default().unwrap_or(80);
        let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((bare, port))
                .await
                .map(|a| a.collect())
                .unwrap_or_default(),
        };
        if addrs.is_empty() {
            return Err(Refusal::Policy(texts::dns_failed(url.as_str(), &host)));
        }
        if let Some(private) = addrs
            .iter()
            .find(|a| podcode_builtins::is_private_address(a.ip()))
            && rule("browser_private", &host) != PermissionAction::Allow
        {
            return Err(Refusal::Policy(texts::blocked_private(
                url.as_str(),
                &host,
                &private.ip().to_string(),
            )));
        }
        if self.is_allowed(&host) {
            return Ok(());
        }
        let Some(ctx) = ctx.filter(|_| may_ask) else {
            return Err(Refusal::Policy(texts::blocked_navigation(
                url.as_str(),
                "the host was not allowed earlier, and only a navigation you start can ask the user",
            )));
        };
        let answer = ctx
            .ask(PermissionRequest {
                permission: "browser".into(),
                patterns: vec![host.clone()],
                always: vec![host.clone()],
                metadata: json!({ "url": url.as_str() }),
            })
            .await;
        match answer {
            Ok(()) => {
                if let Ok(mut a) = self.allowed.lock() {
                    a.insert(host);
                }
                Ok(())
            }
            Err(ToolError::Permission(t)) => Err(Refusal::Permission(t)),
            Err(e) => Err(Refusal::Policy(e.to_string())),
        }
    }
}
