//! The one tab of a session's browser: the listeners that gate navigations, count network
//! requests and block new windows; waiting for the page to settle; DevTools calls and
//! element handles by ref; what the tools remember between calls (refs, the last snapshots
//! and screenshots, the viewport).
//!
//! Settling: after an action the tab waits a frame, then until no request is in flight for
//! `QUIET` and the document is complete, for at most `SETTLE_LIMIT`; the caller notes when
//! it gave up.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use base64::Engine as _;
use chromiumoxide::cdp::browser_protocol::browser::{
    SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::dom::{
    BackendNodeId, EnableParams as DomEnable, ResolveNodeParams,
};
use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, EventResponseReceived,
    ResourceType,
};
use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, CaptureScreenshotFormat, CaptureScreenshotParams,
    GetNavigationHistoryParams, NavigateParams, NavigateToHistoryEntryParams, Viewport,
};
use chromiumoxide::cdp::browser_protocol::target::{CloseTargetParams, EventTargetCreated};
use chromiumoxide::cdp::js_protocol::runtime::{CallArgument, CallFunctionOnParams};
use chromiumoxide::{Browser, Command, Page};
use futures_util::StreamExt;
use podcode_tools::ToolError;
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::gate::Gate;
use crate::{intercept, texts};

const QUIET: Duration = Duration::from_millis(100);
pub(crate) const SETTLE_LIMIT: Duration = Duration::from_secs(10);

/// Network activity of the tab.
#[derive(Default)]
struct Net {
    inflight: AtomicI64,
    /// Milliseconds since `epoch` of the last request start or end.
    last_activity: AtomicU64,
    /// Status and URL of the last main-document response.
    document: Mutex<Option<(i64, String)>>,
    /// New windows or tabs the page tried to open (closed at once).
    blocked_windows: Mutex<Vec<String>>,
}

pub(crate) struct Tab {
    pub(crate) page: Page,
    pub(crate) gate: Arc<Gate>,
    net: Arc<Net>,
    epoch: Instant,
    listeners: Vec<JoinHandle<()>>,
    refs: Mutex<Refs>,
    /// The last two snapshots (older, newer) and screenshots.
    pub(crate) snapshots: Mutex<(Option<String>, Option<String>)>,
    pub(crate) shots: Mutex<Pair<Vec<u8>>>,
    pub(crate) viewport: Mutex<(u32, u32)>,
}

/// The older and the newer of the last two.
pub(crate) type Pair<T> = (Option<T>, Option<T>);

#[derive(Default)]
struct Refs {
    by_node: HashMap<i64, u32>,
    by_ref: HashMap<u32, i64>,
    next: u32,
}

pub(crate) fn cdp_error(e: impl std::fmt::Display) -> ToolError {
    ToolError::failed(format!("{}: {e}", texts::BROWSER_FAILED))
}

/// DevTools parameters from JSON (the field names of the protocol).
pub(crate) fn params<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, ToolError> {
    serde_json::from_value(v).map_err(cdp_error)
}

impl Tab {
    /// Sets the tab up: the gate (which may have allowed the first URL already), the network counter, blocked downloads and windows, the
    /// default viewport (1280×720 at 1× pixels).
    pub(crate) async fn open(
        browser: &Browser,
        page: Page,
        gate: Arc<Gate>,
    ) -> Result<Self, ToolError> {
        let net = Arc::new(Net::default());
        let epoch = Instant::now();
        let mut listeners = Vec::new();

        listeners.push(intercept::listen(&page, &gate).await?);
        listeners.push(count(&page, &net, epoch).await?);
        {
            let mut created = browser
                .event_listener::<EventTargetCreated>()
                .await
                .map_err(cdp_error)?;
            let own = page.target_id().clone();
            let net = net.clone();
            let browser_page = page.clone();
            listeners.push(tokio::spawn(async move {
                while let Some(ev) = created.next().await {
                    let info = &ev.target_info;
                    if info.r#type == "page" && info.target_id != own {
                        if let Ok(mut b) = net.blocked_windows.lock() {
                            b.push(info.url.clone());
                        }
                        let _ = browser_page
                            .execute(CloseTargetParams::new(info.target_id.clone()))
                            .await;
                    }
                }
            }));
        }
        let fetch = intercept::patterns();
        let mut metrics = SetDeviceMetricsOverrideParams::new(1280, 720, 1.0, false);
        metrics.screen_width = Some(1280);
        metrics.screen_height = Some(720);
        // Independent set-up calls go out together: one round trip instead of five.
        tokio::try_join!(
            page.execute(metrics),
            page.execute(fetch),
            page.execute(DomEnable::default()),
            browser.execute(SetDownloadBehaviorParams::new(
                SetDownloadBehaviorBehavior::Deny,
            )),
            page.execute(AddScriptToEvaluateOnNewDocumentParams::new(
                "window.open = function () { return null; };",
            )),
        )
        .map_err(cdp_error)?;
        Ok(Self {
            page,
            gate,
            net,
            epoch,
            listeners,
            refs: Mutex::new(Refs::default()),
            snapshots: Mutex::new((None, None)),
            shots: Mutex::new((None, None)),
            viewport: Mutex::new((1280, 720)),
        })
    }

    pub(crate) async fn call<C: Command>(&self, cmd: C) -> Result<C::Response, ToolError> {
        self.page
            .execute(cmd)
            .await
            .map(|r| r.result)
            .map_err(cdp_error)
    }

    pub(crate) async fn set_viewport(
        &self,
        width: u32,
        height: u32,
        scale: f64,
        mobile: bool,
    ) -> Result<(), ToolError> {
        let mut p = SetDeviceMetricsOverrideParams::new(width, height, scale, mobile);
        p.screen_width = Some(width.into());
        p.screen_height = Some(height.into());
        self.call(p).await?;
        if let Ok(mut v) = self.viewport.lock() {
            *v = (width, height);
        }
        Ok(())
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// The status and URL of the last main document response, since the call began.
    pub(crate) fn take_document(&self) -> Option<(i64, String)> {
        self.net.document.lock().ok().and_then(|mut d| d.take())
    }

    pub(crate) fn take_blocked_windows(&self) -> Vec<String> {
        self.net
            .blocked_windows
            .lock()
            .map(|mut b| std::mem::take(&mut *b))
            .unwrap_or_default()
    }

    /// Runs JavaScript in the page and returns its JSON value.
    pub(crate) async fn eval(&self, expression: &str) -> Result<Value, ToolError> {
        let r = self
            .page
            .evaluate_expression(expression)
            .await
            .map_err(cdp_error)?;
        Ok(r.value().cloned().unwrap_or(Value::Null))
    }

    /// Waits for the page to settle; `Some(ms)` when it gave up after `limit`.
    pub(crate) async fn settle(&self, limit: Duration) -> Option<u64> {
        let start = Instant::now();
        // One frame: event handlers of the action ran and requests they start are seen.
        let frame = "new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))";
        let _ = tokio::time::timeout(Duration::from_millis(500), self.eval(frame)).await;
        loop {
            let quiet = self.net.inflight.load(Ordering::SeqCst) <= 0
                && self
                    .now_ms()
                    .saturating_sub(self.net.last_activity.load(Ordering::SeqCst))
                    >= QUIET.as_millis() as u64;
            if quiet {
                let ready = tokio::time::timeout(
                    Duration::from_millis(500),
                    self.eval("document.readyState"),
                )
                .await;
                if matches!(ready, Ok(Ok(Value::String(s))) if s == "complete") {
                    return None;
                }
            }
            if start.elapsed() >= limit {
                return Some(start.elapsed().as_millis() as u64);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The ref of a node, given on first sight and kept while the node lives.
    pub(crate) fn ref_for(&self, node: i64) -> String {
        let Ok(mut refs) = self.refs.lock() else {
            return String::new();
        };
        let n = match refs.by_node.get(&node) {
            Some(n) => *n,
            None => {
                refs.next += 1;
                let n = refs.next;
                refs.by_node.insert(node, n);
                refs.by_ref.insert(n, node);
                n
            }
        };
        format!("e{n}")
    }

    /// The node behind a ref as a JS object id.
    pub(crate) async fn resolve(&self, r: &str) -> Result<(BackendNodeId, String), ToolError> {
        let n: u32 = r
            .trim()
            .trim_start_matches("ref=")
            .strip_prefix('e')
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| ToolError::failed(texts::bad_ref(r)))?;
        let node = self
            .refs
            .lock()
            .ok()
            .and_then(|refs| refs.by_ref.get(&n).copied())
            .ok_or_else(|| ToolError::failed(texts::stale_ref(r)))?;
        let backend = BackendNodeId::new(node);
        let resolved = self
            .page
            .execute(ResolveNodeParams {
                backend_node_id: Some(backend),
                ..Default::default()
            })
            .await
            .map_err(|_| ToolError::failed(texts::stale_ref(r)))?;
        let id = resolved
            .result
            .object
            .object_id
            .ok_or_else(|| ToolError::failed(texts::stale_ref(r)))?;
        Ok((backend, id.inner().clone()))
    }

    /// Calls `function` with `this` = the element behind `r` and returns its JSON result.
    pub(crate) async fn on_element(
        &self,
        r: &str,
        function: &str,
        args: Vec<Value>,
    ) -> Result<Value, ToolError> {
        let (_, object) = self.resolve(r).await?;
        let p = CallFunctionOnParams {
            function_declaration: function.into(),
            object_id: Some(object.into()),
            arguments: Some(
                args.into_iter()
                    .map(|v| CallArgument {
                        value: Some(v),
                        ..Default::default()
                    })
                    .collect(),
            ),
            return_by_value: Some(true),
            await_promise: Some(true),
            ..CallFunctionOnParams::new(function)
        };
        let out = self.call(p).await?;
        if let Some(ex) = out.exception_details {
            return Err(ToolError::failed(format!(
                "the page threw: {}",
                ex.exception.and_then(|e| e.description).unwrap_or(ex.text)
            )));
        }
        Ok(out.result.value.unwrap_or(Value::Null))
    }

    /// A PNG of the viewport, or of `clip` (page coordinates) beyond the viewport.
    pub(crate) async fn screenshot(&self, clip: Option<Viewport>) -> Result<Vec<u8>, ToolError> {
        let p = CaptureScreenshotParams {
            format: Some(CaptureScreenshotFormat::Png),
            capture_beyond_viewport: Some(clip.is_some()),
            clip,
            ..Default::default()
        };
        let shot = self.call(p).await?;
        base64::engine::general_purpose::STANDARD
            .decode(AsRef::<str>::as_ref(&shot.data))
            .map_err(cdp_error)
    }

    /// Remembers a screenshot as the newest; the one before becomes the older.
    pub(crate) fn keep_shot(&self, png: &[u8]) {
        if let Ok(mut s) = self.shots.lock() {
            s.0 = s.1.take();
            s.1 = Some(png.to_vec());
        }
    }

    /// Remembers a snapshot as the newest and returns the one before it.
    pub(crate) fn keep_snapshot(&self, text: &str) -> Option<String> {
        let mut s = self.snapshots.lock().ok()?;
        s.0 = s.1.take();
        s.1 = Some(text.to_string());
        s.0.clone()
    }

    /// After a refused navigation Chromium shows its error page: go back to the page before.
    pub(crate) async fn leave_error_page(&self) {
        let on_error = self
            .eval("location.href")
            .await
            .ok()
            .and_then(|v| v.as_str().map(|s| s.starts_with("chrome-error:")))
            .unwrap_or(false);
        if !on_error {
            return;
        }
        let back = match self.call(GetNavigationHistoryParams::default()).await {
            Ok(h) if h.current_index > 0 => {
                h.entries.get(h.current_index as usize - 1).map(|e| e.id)
            }
            _ => None,
        };
        let _ = match back {
            Some(id) => self
                .call(NavigateToHistoryEntryParams::new(id))
                .await
                .map(|_| ()),
            None => self
                .call(NavigateParams::new("about:blank"))
                .await
                .map(|_| ()),
        };
        let _ = self.settle(Duration::from_secs(5)).await;
    }

    pub(crate) fn last_snapshot(&self) -> Option<String> {
        self.snapshots.lock().ok().and_then(|s| s.1.clone())
    }
}

impl Drop for Tab {
    fn drop(&mut self) {
        for l in &self.listeners {
            l.abort();
        }
    }
}

/// Counts requests in flight (a redirect continues its request) and keeps the status of
/// main-document responses.
async fn count(page: &Page, net: &Arc<Net>, epoch: Instant) -> Result<JoinHandle<()>, ToolError> {
    let mut sent = page
        .event_listener::<EventRequestWillBeSent>()
        .await
        .map_err(cdp_error)?;
    let mut done = page
        .event_listener::<EventLoadingFinished>()
        .await
        .map_err(cdp_error)?;
    let mut failed = page
        .event_listener::<EventLoadingFailed>()
        .await
        .map_err(cdp_error)?;
    let mut responses = page
        .event_listener::<EventResponseReceived>()
        .await
        .map_err(cdp_error)?;
    let net = net.clone();
    let stamp = move |net: &Net| {
        net.last_activity
            .store(epoch.elapsed().as_millis() as u64, Ordering::SeqCst)
    };
    Ok(tokio::spawn(async move {
        loop {
            tokio::select! {
                Some(ev) = sent.next() => {
                    if ev.redirect_response.is_none() {
                        net.inflight.fetch_add(1, Ordering::SeqCst);
                    }
                    stamp(&net);
                }
                Some(_) = done.next() => {
                    net.inflight.fetch_sub(1, Ordering::SeqCst);
                    stamp(&net);
                }
                Some(_) = failed.next() => {
                    net.inflight.fetch_sub(1, Ordering::SeqCst);
                    stamp(&net);
                }
                Some(ev) = responses.next() => {
                    if ev.r#type == ResourceType::Document
                        && ev.response.url.starts_with("http")
                        && let Ok(mut d) = net.document.lock()
                    {
                        *d = Some((ev.response.status, ev.response.url.clone()));
                    }
                }
                else => break,
            }
        }
    }))
}
