//! Acting on the page: navigate, click, type, select, scroll, resize. Each action waits for
//! the page to settle, reports navigations the gate refused and windows it blocked, checks
//! the final URL, and returns what changed in the snapshot.

use chromiumoxide::cdp::browser_protocol::dom::{
    GetContentQuadsParams, ScrollIntoViewIfNeededParams,
};
use chromiumoxide::cdp::browser_protocol::emulation::SetTouchEmulationEnabledParams;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchMouseEventParams, InsertTextParams,
};
use chromiumoxide::cdp::browser_protocol::page::NavigateParams;
use podcode_protocol::ToolResult;
use podcode_tools::ToolError;
use serde_json::{Value, json};

use super::{Device, NavigateArgs, RefArgs, ResizeArgs, ScrollArgs, SelectArgs, TypeArgs};
use crate::diff::snapshot_diff;
use crate::page::{SETTLE_LIMIT, Tab, params};
use crate::{snapshot, texts};

/// The URL `browser_navigate` opens for `raw` (a URL without a scheme gets `https://`).
pub(super) fn target(raw: &str) -> Result<url::Url, ToolError> {
    let raw = raw.trim();
    let full = if raw.contains("://") || raw.starts_with("about:") || raw.starts_with("data:") {
        raw.to_string()
    } else {
        format!("https://{raw}")
    };
    url::Url::parse(&full).map_err(|e| ToolError::failed(texts::invalid_url(raw, &e.to_string())))
}

/// Opens `url` and returns final URL, status, title and the snapshot.
pub(super) async fn navigate(tab: &Tab, args: NavigateArgs) -> Result<ToolResult, ToolError> {
    let url = target(&args.url)?;
    // The typed URL is checked (and asked about) before anything is requested.
    tab.gate
        .check(url.as_str(), true)
        .await
        .map_err(|r| r.into_error())?;
    tab.take_document();
    let nav = tab.call(NavigateParams::new(url.as_str())).await?;
    if let Some(refusal) = first_refusal(tab) {
        tab.leave_error_page().await;
        return Err(refusal);
    }
    if let Some(error) = nav.error_text.filter(|e| !e.is_empty()) {
        return Err(ToolError::failed(texts::navigation_failed(
            url.as_str(),
            &error,
        )));
    }
    let gave_up = tab.settle(SETTLE_LIMIT).await;
    let final_url = check_final_url(tab).await?;
    let status = tab.take_document().map(|(s, _)| s);
    let title = tab.eval("document.title").await?;
    let title = title.as_str().unwrap_or_default().to_string();
    let snap = snapshot::take(tab).await?;
    tab.keep_snapshot(&snap);
    // The baseline browser_diff compares the next screenshot with.
    if let Ok(png) = tab.screenshot(None).await {
        tab.keep_shot(&png);
    }
    let mut out = String::new();
    if let Some(ms) = gave_up {
        out.push_str(&texts::gave_up_waiting(ms));
    }
    out.push_str(&windows_note(tab));
    out.push_str(&format!("URL: {final_url}\n"));
    if let Some(s) = status {
        out.push_str(&format!("Status: {s}\n"));
    }
    out.push_str(&format!("Title: {title}\n\n{snap}"));
    Ok(ToolResult::text(out)
        .with_title(final_url.clone())
        .with_metadata(json!({ "url": final_url, "status": status, "title": title })))
}

/// The refusal of a main-frame request during this call, as the call's error.
fn first_refusal(tab: &Tab) -> Option<ToolError> {
    let (url, refusal) = tab.gate.take_refusals().into_iter().next()?;
    Some(match refusal {
        crate::gate::Refusal::Permission(t) => ToolError::Permission(t),
        crate::gate::Refusal::Policy(t) if t.contains(&url) => ToolError::failed(t),
        crate::gate::Refusal::Policy(t) => ToolError::failed(texts::blocked_navigation(&url, &t)),
    })
}

/// What the page tried that was blocked: new windows, and its own requests (and frames)
/// the gate refused.
fn windows_note(tab: &Tab) -> String {
    let mut out: String = tab
        .take_blocked_windows()
        .into_iter()
        .map(|u| format!("[the page tried to open a new window ({u}); new windows are blocked]\n"))
        .collect();
    out.push_str(&texts::blocked_requests(&tab.gate.take_blocked()));
    out
}

/// The page's URL, refused (and the page left) when its host was never allowed.
async fn check_final_url(tab: &Tab) -> Result<String, ToolError> {
    let href = tab.eval("location.href").await?;
    let href = href.as_str().unwrap_or("about:blank").to_string();
    if let Err(refusal) = tab.gate.check(&href, false).await {
        let _ = tab.call(NavigateParams::new("about:blank")).await;
        return Err(refusal.into_error());
    }
    Ok(href)
}

/// The snapshot an action's changes are measured against.
async fn before(tab: &Tab) -> Result<String, ToolError> {
    match tab.last_snapshot() {
        Some(s) => Ok(s),
        None => {
            let s = snapshot::take(tab).await?;
            tab.keep_snapshot(&s);
            Ok(s)
        }
    }
}

/// After an action: settle, refusals, windows, final URL, and the snapshot diff.
async fn after(
    tab: &Tab,
    headline: String,
    before: &str,
    url_before: &str,
) -> Result<ToolResult, ToolError> {
    let gave_up = tab.settle(SETTLE_LIMIT).await;
    if let Some(refusal) = first_refusal(tab) {
        tab.leave_error_page().await;
        return Err(refusal);
    }
    let url = check_final_url(tab).await?;
    let snap = snapshot::take(tab).await?;
    tab.keep_snapshot(&snap);
    let mut out = String::new();
    if let Some(ms) = gave_up {
        out.push_str(&texts::gave_up_waiting(ms));
    }
    out.push_str(&windows_note(tab));
    out.push_str(&headline);
    out.push('\n');
    if url != url_before {
        out.push_str(&format!("The page navigated to {url}\n"));
    }
    match snapshot_diff(before, &snap) {
        Some(d) => out.push_str(&format!("Changes in the snapshot:\n{d}")),
        None => out.push_str(texts::NO_CHANGE),
    }
    Ok(ToolResult::text(out).with_metadata(json!({ "url": url })))
}

async fn href(tab: &Tab) -> String {
    tab.eval("location.href")
        .await
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The middle of the element's first visible box, after scrolling it into view.
async fn center(tab: &Tab, r: &str) -> Result<(f64, f64), ToolError> {
    let (node, _) = tab.resolve(r).await?;
    let _ = tab
        .call(ScrollIntoViewIfNeededParams {
            backend_node_id: Some(node),
            ..Default::default()
        })
        .await;
    let quads = tab
        .call(GetContentQuadsParams {
            backend_node_id: Some(node),
            ..Default::default()
        })
        .await
        .map_err(|_| ToolError::failed(texts::not_clickable(r)))?;
    quads
        .quads
        .iter()
        .map(|q| q.inner())
        .filter(|q| q.len() == 8)
        .find(|q| {
            let area = ((q[0] * q[3] - q[2] * q[1])
                + (q[2] * q[5] - q[4] * q[3])
                + (q[4] * q[7] - q[6] * q[5])
                + (q[6] * q[1] - q[0] * q[7]))
                .abs();
            area > 1.0
        })
        .map(|q| {
            (
                (q[0] + q[2] + q[4] + q[6]) / 4.0,
                (q[1] + q[3] + q[5] + q[7]) / 4.0,
            )
        })
        .ok_or_else(|| ToolError::failed(texts::not_clickable(r)))
}

async fn mouse(tab: &Tab, kind: &str, x: f64, y: f64, extra: Value) -> Result<(), ToolError> {
    let mut p = json!({ "type": kind, "x": x, "y": y });
    if let (Value::Object(m), Value::Object(e)) = (&mut p, extra) {
        m.extend(e);
    }
    tab.call(params::<DispatchMouseEventParams>(p)?).await?;
    Ok(())
}

pub(super) async fn click(tab: &Tab, args: RefArgs) -> Result<ToolResult, ToolError> {
    let before = before(tab).await?;
    let url_before = href(tab).await;
    let (x, y) = center(tab, &args.target).await?;
    mouse(tab, "mouseMoved", x, y, json!({})).await?;
    let press = json!({ "button": "left", "buttons": 1, "clickCount": 1 });
    mouse(tab, "mousePressed", x, y, press).await?;
    let release = json!({ "button": "left", "buttons": 0, "clickCount": 1 });
    mouse(tab, "mouseReleased", x, y, release).await?;
    after(
        tab,
        format!("Clicked [ref={}].", args.target),
        &before,
        &url_before,
    )
    .await
}

const PREPARE_TYPING: &str = r#"function () {
  const t = this;
  const kind = t.tagName.toLowerCase() + (t.type ? '[type=' + t.type + ']' : '');
  const noText = ['checkbox', 'radio', 'button', 'submit', 'reset', 'file', 'image', 'range', 'color', 'hidden'];
  const editable = t.isContentEditable
    || t.tagName === 'TEXTAREA'
    || (t.tagName === 'INPUT' && !noText.includes(t.type));
  if (!editable) return { error: kind };
  if (t.disabled || t.readOnly) return { error: kind + ', disabled or read-only' };
  t.scrollIntoView({ block: 'center' });
  t.focus();
  if (t.isContentEditable) {
    const range = document.createRange();
    range.selectNodeContents(t);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  } else {
    t.select();
  }
  return { ok: true };
}"#;

pub(super) async fn type_text(tab: &Tab, args: TypeArgs) -> Result<ToolResult, ToolError> {
    let before = before(tab).await?;
    let url_before = href(tab).await;
    let ready = tab.on_element(&args.target, PREPARE_TYPING, vec![]).await?;
    if let Some(what) = ready.get("error").and_then(Value::as_str) {
        return Err(ToolError::failed(texts::not_editable(&args.target, what)));
    }
    if args.text.is_empty() {
        tab.call(params::<DispatchKeyEventParams>(json!({ "type": "keyDown", "key": "Delete", "code": "Delete", "windowsVirtualKeyCode": 46 }))?).await?;
        tab.call(params::<DispatchKeyEventParams>(json!({ "type": "keyUp", "key": "Delete", "code": "Delete", "windowsVirtualKeyCode": 46 }))?).await?;
    } else {
        tab.call(InsertTextParams::new(args.text.clone())).await?;
    }
    if args.submit {
        let down = json!({ "type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r" });
        let up = json!({ "type": "keyUp", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13 });
        tab.call(params::<DispatchKeyEventParams>(down)?).await?;
        tab.call(params::<DispatchKeyEventParams>(up)?).await?;
    }
    let headline = format!(
        "Typed {} characters into [ref={}]{}.",
        args.text.chars().count(),
        args.target,
        if args.submit {
            " and pressed Enter"
        } else {
            ""
        }
    );
    after(tab, headline, &before, &url_before).await
}

const SELECT_OPTIONS: &str = r#"function (values) {
  if (this.tagName !== 'SELECT') return { error: this.tagName.toLowerCase() };
  const opts = [...this.options];
  const hit = (o, v) => o.value === v || o.label.trim() === v || o.text.trim() === v;
  const missing = values.filter(v => !opts.some(o => hit(o, v)));
  if (missing.length) return { missing, available: opts.map(o => o.label.trim() + (o.value !== o.label.trim() ? ' (' + o.value + ')' : '')) };
  let first = true;
  for (const o of opts) {
    const want = values.some(v => hit(o, v)) && (this.multiple || first);
    if (want) first = false;
    o.selected = want;
  }
  this.dispatchEvent(new Event('input', { bubbles: true }));
  this.dispatchEvent(new Event('change', { bubbles: true }));
  return { selected: opts.filter(o => o.selected).map(o => o.label.trim()) };
}"#;

pub(super) async fn select(tab: &Tab, args: SelectArgs) -> Result<ToolResult, ToolError> {
    let before = before(tab).await?;
    let url_before = href(tab).await;
    let out = tab
        .on_element(&args.target, SELECT_OPTIONS, vec![json!(args.values)])
        .await?;
    if let Some(what) = out.get("error").and_then(Value::as_str) {
        return Err(ToolError::failed(texts::not_select(&args.target, what)));
    }
    let list = |k: &str| -> String {
        out.get(k)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(|s| format!("\"{s}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    if out.get("missing").is_some() {
        return Err(ToolError::failed(texts::no_such_option(
            &args.target,
            &list("missing"),
            &list("available"),
        )));
    }
    let headline = format!("Selected {} in [ref={}].", list("selected"), args.target);
    after(tab, headline, &before, &url_before).await
}

pub(super) async fn scroll(tab: &Tab, args: ScrollArgs) -> Result<ToolResult, ToolError> {
    let before = before(tab).await?;
    let url_before = href(tab).await;
    let headline = match (&args.target, args.dx, args.dy) {
        (Some(r), None, None) => {
            let (node, _) = tab.resolve(r).await?;
            tab.call(ScrollIntoViewIfNeededParams {
                backend_node_id: Some(node),
                ..Default::default()
            })
            .await?;
            format!("Scrolled [ref={r}] into view.")
        }
        (None, dx, dy) if dx.is_some() || dy.is_some() => {
            let (w, h) = tab.viewport.lock().map(|v| *v).unwrap_or((1280, 720));
            let (dx, dy) = (dx.unwrap_or(0.0), dy.unwrap_or(0.0));
            let wheel = json!({ "deltaX": dx, "deltaY": dy });
            mouse(
                tab,
                "mouseWheel",
                f64::from(w) / 2.0,
                f64::from(h) / 2.0,
                wheel,
            )
            .await?;
            // The wheel scrolls asynchronously; wait until the position stops moving.
            let mut last = Value::Null;
            for _ in 0..20 {
                tokio::time::sleep(std::time::Duration::from_millis(25)).await;
                let now = tab.eval("[scrollX, scrollY]").await?;
                if now == last {
                    break;
                }
                last = now;
            }
            format!("Scrolled by ({dx}, {dy}); the page is now at {last} (x, y).")
        }
        _ => return Err(ToolError::failed(texts::scroll_args())),
    };
    after(tab, headline, &before, &url_before).await
}

pub(super) async fn resize(tab: &Tab, args: ResizeArgs) -> Result<ToolResult, ToolError> {
    let (w, h, scale, mobile) = match (args.device, args.width, args.height) {
        (Some(Device::Desktop), None, None) => (1280, 720, 1.0, false),
        (Some(Device::Laptop), None, None) => (1440, 900, 1.0, false),
        (Some(Device::Tablet), None, None) => (768, 1024, 2.0, true),
        (Some(Device::Mobile), None, None) => (390, 844, 3.0, true),
        (None, Some(w), Some(h)) if (100..=4000).contains(&w) && (100..=4000).contains(&h) => {
            (w, h, 1.0, false)
        }
        _ => return Err(ToolError::failed(texts::resize_args())),
    };
    tab.set_viewport(w, h, scale, mobile).await?;
    tab.call(SetTouchEmulationEnabledParams::new(mobile))
        .await?;
    let gave_up = tab.settle(SETTLE_LIMIT).await;
    let mut out = gave_up.map(texts::gave_up_waiting).unwrap_or_default();
    out.push_str(&format!(
        "The viewport is now {w}×{h} CSS pixels{}.",
        if mobile {
            format!(" ({scale}× pixels, touch)")
        } else {
            String::new()
        }
    ));
    Ok(ToolResult::text(out).with_metadata(json!({ "width": w, "height": h, "scale": scale })))
}
