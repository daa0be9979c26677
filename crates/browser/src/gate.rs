//! The navigation gate. Every document request of the tab (typed URLs, clicks, form posts,
//! redirects, frames) is paused by the DevTools `Fetch` domain and checked here before it
//! may go out:
//! - `about:`, `data:` and `blob:` URLs reach no network and pass;
//! - `http`/`https`: the host is resolved. A private, loopback or link-local address (a
//!   local dev server, cloud metadata) is the `browser_private` permission with the origin
//!   as pattern (`http://localhost:5173`; a rule for the bare host counts where none for
//!   the origin decides): a rule decides, else the user is asked like at every other gate
//!   (once, always, reject). That
//!   answer is the page's only question; a `browser` rule denying the host still refuses.
//!   A public address is the `browser` permission with the host as pattern. Either is
//!   asked through the running call's context, once per origin or host for the life of
//!   the browser;
//! - any other scheme (`file:`, `chrome:`, …) only with an explicit `browser_private`
//!   allow rule for the URL.
//!
//! A request made while no call runs (a timer navigating the page) or by a frame is never
//! asked about: it passes only when its origin or host was allowed before. A refusal names
//! the config rules that would allow the request, as TOML to paste. Refusals are recorded
//! so the call that caused them can report them. The check runs before the browser starts
//! too (`Pool::acquire`), so a refused first navigation launches no Chromium.
//!
//! The page's own requests (`fetch()`, XHR, images, scripts, styles, media, beacons) are
//! paused too and pass the same scheme and address checks — a private address passes when
//! a rule or an earlier answer allowed its origin — but not the `browser` host question,
//! which is for what the page shows. They and the frames are never the action's error:
//! their refusals are listed as notes in its result.

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

/// What kind of request is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Request {
    /// A main-frame navigation; `may_ask` while a call runs.
    Navigation { may_ask: bool },
    /// A frame's document: passes only hosts allowed before.
    Frame,
    /// Anything else the page loads or sends.
    Subresource,
}

#[derive(Default)]
pub(crate) struct Gate {
    /// The call running now, whose context may ask the user.
    current: Mutex<Option<ToolContext>>,
    allowed: Mutex<HashSet<String>>,
    /// Private origins a `browser_private` rule or answer allowed during a call: the page
    /// may still reach them between calls, when no rule can be read.
    private_allowed: Mutex<HashSet<String>>,
    refusals: Mutex<Vec<(String, Refusal)>>,
    /// Refused requests of frames and subresources since the call began (their texts).
    blocked: Mutex<Vec<String>>,
}

impl Gate {
    pub(crate) fn begin(&self, ctx: &ToolContext) {
        if let Ok(mut c) = self.current.lock() {
            *c = Some(ctx.clone());
        }
        if let Ok(mut r) = self.refusals.lock() {
            r.clear();
        }
        if let Ok(mut b) = self.blocked.lock() {
            b.clear();
        }
    }

    /// Records a refusal that is the call's own error (a navigation, a download).
    pub(crate) fn refuse(&self, url: &str, refusal: Refusal) {
        if let Ok(mut r) = self.refusals.lock() {
            r.push((url.to_string(), refusal));
        }
    }

    /// The refused requests of frames and subresources since the call began.
    pub(crate) fn take_blocked(&self) -> Vec<String> {
        self.blocked
            .lock()
            .map(|mut b| std::mem::take(&mut *b))
            .unwrap_or_default()
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

    fn private_allowed_before(&self, origin: &str) -> bool {
        self.private_allowed
            .lock()
            .map(|p| p.contains(origin))
            .unwrap_or(false)
    }

    /// A private address: `browser_private` for the origin (see the module doc). `Ok`
    /// settles the request, also the `browser` question of a navigation.
    async fn private_verdict(
        &self,
        ctx: Option<&ToolContext>,
        url: &Url,
        host: &str,
        ip: &str,
        may_ask: bool,
    ) -> Result<(), Refusal> {
        let origin = url.origin().ascii_serialization();
        let rule = |permission: &str, pattern: &str| {
            ctx.map_or(PermissionAction::Ask, |c| {
                c.rule_action(permission, pattern)
            })
        };
        // A rule for the origin decides; one for the bare host only where none does, so the
        // origin rule a refusal suggests always takes effect.
        let private = match rule("browser_private", &origin) {
            PermissionAction::Ask => rule("browser_private", host),
            decided => decided,
        };
        let browser_denied = rule("browser", host) == PermissionAction::Deny;
        let mut needed = vec![("browser_private", origin.as_str())];
        if browser_denied {
            needed.push(("browser", host));
        }
        let refused = |why: &str| {
            texts::blocked_private(url.as_str(), host, ip, why, &texts::allow_rules(&needed))
        };
        if private == PermissionAction::Deny || browser_denied {
            return Err(Refusal::Permission(refused(texts::DENIED_BY_RULE)));
        }
        if private != PermissionAction::Allow && !self.private_allowed_before(&origin) {
            let Some(ctx) = ctx.filter(|_| may_ask) else {
                return Err(Refusal::Policy(refused(texts::CANNOT_ASK)));
            };
            ctx.ask(PermissionRequest {
                permission: "browser_private".into(),
                patterns: vec![origin.clone()],
                always: vec![podcode_tools::glob_literal(&origin)],
                metadata: json!({ "url": url.as_str(), "address": ip }),
            })
            .await
            .map_err(|e| match e {
                ToolError::Permission(t) => Refusal::Permission(t),
                e => Refusal::Policy(e.to_string()),
            })?;
        }
        if let Ok(mut p) = self.private_allowed.lock() {
            p.insert(origin);
        }
        if let Ok(mut a) = self.allowed.lock() {
            a.insert(host.to_string());
        }
        Ok(())
    }

    fn is_allowed(&self, host: &str) -> bool {
        self.allowed
            .lock()
            .map(|a| a.contains(host))
            .unwrap_or(false)
    }

    /// Checks a main-frame navigation; records and returns a refusal. `may_ask`: during a
    /// call.
    pub(crate) async fn check(&self, raw: &str, may_ask: bool) -> Result<(), Refusal> {
        self.check_request(raw, Request::Navigation { may_ask })
            .await
    }

    /// Checks one request of any kind; records and returns a refusal (a navigation's as
    /// the call's error, the others' as notes).
    pub(crate) async fn check_request(&self, raw: &str, kind: Request) -> Result<(), Refusal> {
        let verdict = self.verdict(raw, kind).await;
        if let Err(refusal) = &verdict {
            match kind {
                Request::Navigation { .. } => self.refuse(raw, refusal.clone()),
                Request::Frame | Request::Subresource => {
                    if let Ok(mut b) = self.blocked.lock() {
                        b.push(match refusal {
                            Refusal::Permission(t) | Refusal::Policy(t) => t.clone(),
                        });
                    }
                }
            }
        }
        verdict
    }

    async fn verdict(&self, raw: &str, kind: Request) -> Result<(), Refusal> {
        let url = Url::parse(raw)
            .map_err(|e| Refusal::Policy(texts::invalid_url(raw, &e.to_string())))?;
        let ctx = self.context();
        match url.scheme() {
            "about" | "data" | "blob" => return Ok(()),
            "http" | "https" => {}
            scheme => {
                let allowed = ctx
                    .as_ref()
                    .map(|c| c.rule_action("browser_private", url.as_str()));
                if allowed == Some(PermissionAction::Allow) {
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
        let may_ask = match kind {
            Request::Subresource | Request::Frame => false,
            Request::Navigation { may_ask } => may_ask,
        };
        if let Some(private) = addrs
            .iter()
            .find(|a| podcode_builtins::is_private_address(a.ip()))
        {
            let ip = private.ip().to_string();
            return self
                .private_verdict(ctx.as_ref(), &url, &host, &ip, may_ask)
                .await;
        }
        if kind == Request::Subresource {
            return Ok(());
        }
        if self.is_allowed(&host) {
            return Ok(());
        }
        let Some(ctx) = ctx.filter(|_| may_ask) else {
            return Err(Refusal::Policy(texts::blocked_navigation(
                url.as_str(),
                &format!(
                    "the host was not allowed earlier, and only a navigation you start can ask the user. To allow it without asking, the user can add to their config.toml:\n{}",
                    texts::allow_rules(&[("browser", &host)])
                ),
            )));
        };
        let answer = ctx
            .ask(PermissionRequest {
                permission: "browser".into(),
                patterns: vec![host.clone()],
                always: vec![podcode_tools::glob_literal(&host)],
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
