//! The tab's paused requests (DevTools `Fetch` domain): every request before it goes out,
//! and every document's response before the browser acts on it.
//!
//! A request is checked by the gate as a main-frame navigation, a frame, or one of the
//! page's own requests (`fetch()`, images, scripts, …), and continued or failed. A
//! main-frame response the browser would save rather than show (a download: an
//! `attachment`, or a type it cannot display) is failed at once and recorded as the call's
//! refusal, so the action answers "the download was blocked" instead of waiting for a page
//! that never comes. Downloads are also denied browser-wide (`Tab::open`).

use std::sync::Arc;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EnableParams as FetchEnable, EventRequestPaused, FailRequestParams,
    HeaderEntry, RequestPattern, RequestStage,
};
use chromiumoxide::cdp::browser_protocol::network::{ErrorReason, ResourceType};
use futures_util::StreamExt;
use podcode_tools::ToolError;
use tokio::task::JoinHandle;

use crate::gate::{Gate, Refusal, Request};
use crate::page::cdp_error;
use crate::texts;

/// What `Fetch.enable` pauses: every request, and documents' responses.
pub(crate) fn patterns() -> FetchEnable {
    let requests = RequestPattern {
        url_pattern: Some("*".into()),
        resource_type: None,
        request_stage: Some(RequestStage::Request),
    };
    let documents = RequestPattern {
        url_pattern: Some("*".into()),
        resource_type: Some(ResourceType::Document),
        request_stage: Some(RequestStage::Response),
    };
    FetchEnable {
        patterns: Some(vec![requests, documents]),
        handle_auth_requests: None,
    }
}

/// Starts the task that decides every paused request of `page`.
pub(crate) async fn listen(page: &Page, gate: &Arc<Gate>) -> Result<JoinHandle<()>, ToolError> {
    let mut paused = page
        .event_listener::<EventRequestPaused>()
        .await
        .map_err(cdp_error)?;
    // The main frame's id is the tab's target id, for the tab's whole life.
    let main_frame = page.target_id().inner().clone();
    let (page, gate) = (page.clone(), gate.clone());
    Ok(tokio::spawn(async move {
        while let Some(ev) = paused.next().await {
            let document = ev.resource_type == ResourceType::Document;
            let main = document && ev.frame_id.inner() == &main_frame;
            let (page, gate) = (page.clone(), gate.clone());
            // Each request is decided on its own: one waiting for the user does not hold
            // up the others.
            if ev.response_status_code.is_some() || ev.response_error_reason.is_some() {
                tokio::spawn(async move { on_response(&page, &gate, &ev, main).await });
            } else {
                let kind = match (document, main) {
                    (true, true) => Request::Navigation { may_ask: true },
                    (true, false) => Request::Frame,
                    _ => Request::Subresource,
                };
                tokio::spawn(async move { on_request(&page, &gate, &ev, kind).await });
            }
        }
    }))
}

async fn on_request(page: &Page, gate: &Gate, ev: &EventRequestPaused, kind: Request) {
    let id = ev.request_id.clone();
    if gate.check_request(&ev.request.url, kind).await.is_ok() {
        let _ = page.execute(ContinueRequestParams::new(id)).await;
        return;
    }
    // Blocked, not aborted: a blocked document (main frame or frame) ends on Chromium's
    // error page, so its load completes (the action then leaves a main-frame error page, see
    // `leave_error_page`); an aborted frame would leave `Page.navigate` waiting for a load
    // that never comes.
    let failed = FailRequestParams::new(id, ErrorReason::BlockedByClient);
    let _ = page.execute(failed).await;
}

async fn on_response(page: &Page, gate: &Gate, ev: &EventRequestPaused, main: bool) {
    let id = ev.request_id.clone();
    if main && is_download(ev) {
        let url = &ev.request.url;
        gate.refuse(url, Refusal::Policy(texts::download_blocked(url)));
        let failed = FailRequestParams::new(id, ErrorReason::BlockedByClient);
        let _ = page.execute(failed).await;
        return;
    }
    let _ = page.execute(ContinueRequestParams::new(id)).await;
}

/// Whether a successful document response would be saved rather than shown.
fn is_download(ev: &EventRequestPaused) -> bool {
    if !ev
        .response_status_code
        .is_some_and(|s| (200..300).contains(&s))
    {
        return false;
    }
    let headers = ev.response_headers.as_deref().unwrap_or_default();
    saved_not_shown(
        header(headers, "content-disposition"),
        header(headers, "content-type"),
    )
}

fn header<'a>(headers: &'a [HeaderEntry], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .map(|h| h.value.as_str())
}

/// An `attachment` disposition, or a type the browser has no viewer for. A missing or empty
/// type is sniffed by the browser from the content, so it is not taken as a download.
fn saved_not_shown(disposition: Option<&str>, content_type: Option<&str>) -> bool {
    let attachment = disposition.is_some_and(|d| {
        d.split(';')
            .next()
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("attachment"))
    });
    if attachment {
        return true;
    }
    let mime = content_type
        .and_then(|t| t.split(';').next())
        .map(|t| t.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if mime.is_empty() {
        return false;
    }
    let (kind, sub) = mime.split_once('/').unwrap_or((mime.as_str(), ""));
    let shown = match kind {
        "text" | "image" | "audio" | "video" => true,
        "multipart" => sub == "x-mixed-replace",
        "application" => {
            matches!(
                sub,
                "json" | "xml" | "xhtml+xml" | "javascript" | "ecmascript" | "x-javascript"
            ) || sub.ends_with("+json")
                || sub.ends_with("+xml")
        }
        _ => false,
    };
    !shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attachments_and_types_without_a_viewer_are_downloads() {
        let cases = [
            (
                Some("attachment; filename=\"a.txt\""),
                Some("text/plain"),
                true,
            ),
            (Some("Attachment"), None, true),
            (Some("inline"), Some("text/html; charset=utf-8"), false),
            (None, Some("application/octet-stream"), true),
            (None, Some("application/zip"), true),
            (None, Some("font/woff2"), true),
            (None, Some("application/json"), false),
            (None, Some("image/svg+xml"), false),
            (None, Some("application/rss+xml"), false),
            (None, None, false),
        ];
        for (disposition, content_type, download) in cases {
            assert_eq!(
                saved_not_shown(disposition, content_type),
                download,
                "{disposition:?} {content_type:?}"
            );
        }
    }
}
