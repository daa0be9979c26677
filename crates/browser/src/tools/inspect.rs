//! Reading and looking at the page: snapshot, screenshot, look, measure, diff.

use base64::Engine as _;
use chromiumoxide::cdp::browser_protocol::page::Viewport;
use podcode_protocol::{Attachment, ToolResult};
use podcode_tools::ToolError;
use serde_json::{Value, json};

use super::{LookArgs, RefArgs, ScreenshotArgs};
use crate::diff::{changed_share, png_size, snapshot_diff};
use crate::page::Tab;
use crate::{snapshot, texts};

const MAX_VISIBLE_TEXT: usize = 8_000;

pub(super) async fn snapshot(tab: &Tab) -> Result<ToolResult, ToolError> {
    let snap = snapshot::take(tab).await?;
    tab.keep_snapshot(&snap);
    let url = tab.eval("location.href").await?;
    let url = url.as_str().unwrap_or_default().to_string();
    Ok(ToolResult::text(format!("URL: {url}\n\n{snap}")).with_title(url))
}

/// The element's box in page coordinates, for a clipped screenshot.
async fn element_clip(tab: &Tab, r: &str) -> Result<Viewport, ToolError> {
    let rect = tab
        .on_element(
            r,
            "function () { this.scrollIntoView({ block: 'center' }); const b = this.getBoundingClientRect(); return [b.left + scrollX, b.top + scrollY, b.width, b.height]; }",
            vec![],
        )
        .await?;
    let n = |i: usize| rect.get(i).and_then(Value::as_f64).unwrap_or(0.0);
    if n(2) < 1.0 || n(3) < 1.0 {
        return Err(ToolError::failed(texts::not_clickable(r)));
    }
    Ok(Viewport {
        x: n(0),
        y: n(1),
        width: n(2),
        height: n(3),
        scale: 1.0,
    })
}

async fn capture(tab: &Tab, target: Option<&str>, full_page: bool) -> Result<Vec<u8>, ToolError> {
    let clip = match (target, full_page) {
        (Some(r), _) => Some(element_clip(tab, r).await?),
        (None, true) => {
            let size = tab
                .eval(
                    "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]",
                )
                .await?;
            let n = |i: usize| size.get(i).and_then(Value::as_f64).unwrap_or(1.0);
            Some(Viewport {
                x: 0.0,
                y: 0.0,
                width: n(0),
                height: n(1).min(16_384.0),
                scale: 1.0,
            })
        }
        (None, false) => None,
    };
    tab.screenshot(clip).await
}

fn attachment(png: &[u8], name: &str) -> Attachment {
    Attachment {
        mime: "image/png".into(),
        url: format!(
            "data:image/png;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(png)
        ),
        filename: Some(name.into()),
    }
}

pub(super) async fn screenshot(tab: &Tab, args: ScreenshotArgs) -> Result<ToolResult, ToolError> {
    let png = capture(tab, args.target.as_deref(), args.full_page).await?;
    tab.keep_shot(&png);
    let (w, h) = png_size(&png).unwrap_or((0, 0));
    let what = match (&args.target, args.full_page) {
        (Some(r), _) => format!("[ref={r}]"),
        (None, true) => "the whole page".into(),
        (None, false) => "the viewport".into(),
    };
    let mut result = ToolResult::text(format!(
        "Screenshot of {what}: {w}×{h} PNG ({} bytes), attached.",
        png.len()
    ))
    .with_metadata(json!({ "width": w, "height": h, "bytes": png.len() }));
    result.attachments.push(attachment(&png, "screenshot.png"));
    Ok(result)
}

/// The screenshot is always taken (browser_diff compares it); it is attached only when
/// the session's model takes images.
pub(super) async fn look(tab: &Tab, args: LookArgs, images: bool) -> Result<ToolResult, ToolError> {
    let png = capture(tab, args.target.as_deref(), false).await?;
    tab.keep_shot(&png);
    let text = match &args.target {
        Some(r) => {
            tab.on_element(
                r,
                "function () { return this.innerText || this.textContent || ''; }",
                vec![],
            )
            .await?
        }
        None => {
            tab.eval("document.body ? document.body.innerText : ''")
                .await?
        }
    };
    let mut text: String = text.as_str().unwrap_or_default().trim().to_string();
    if text.len() > MAX_VISIBLE_TEXT {
        let cut = (0..=MAX_VISIBLE_TEXT)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        text.truncate(cut);
        text.push_str("\n[visible text cut]");
    }
    let mut result = ToolResult::text(format!(
        "Question: {}\n{}\n\nVisible text:\n{}",
        args.question,
        if images {
            texts::LOOK_NOTE
        } else {
            texts::LOOK_NO_IMAGES
        },
        if text.is_empty() { "(none)" } else { &text }
    ));
    if images {
        result.attachments.push(attachment(&png, "look.png"));
    }
    Ok(result)
}

const MEASURE: &str = r#"function () {
  const b = this.getBoundingClientRect();
  const s = getComputedStyle(this);
  const px = (k) => s.getPropertyValue(k);
  const four = (p, suffix) => ['top', 'right', 'bottom', 'left'].map(d => px(p + '-' + d + (suffix || ''))).join(' ');
  const hidden = s.display === 'none' ? 'display: none'
    : s.visibility !== 'visible' ? 'visibility: ' + s.visibility
    : parseFloat(s.opacity) === 0 ? 'opacity: 0'
    : (b.width === 0 || b.height === 0) ? 'zero size' : null;
  const inView = b.bottom > 0 && b.right > 0 && b.top < innerHeight && b.left < innerWidth;
  return {
    tag: this.tagName.toLowerCase(),
    x: b.left + scrollX, y: b.top + scrollY, width: b.width, height: b.height,
    viewportX: b.left, viewportY: b.top,
    visible: hidden === null, hiddenBy: hidden, inViewport: inView,
    margin: four('margin'), border: four('border', '-width'), padding: four('padding'),
    styles: {
      display: px('display'), position: px('position'), 'box-sizing': px('box-sizing'),
      'font-family': px('font-family'), 'font-size': px('font-size'), 'font-weight': px('font-weight'),
      'line-height': px('line-height'), color: px('color'), 'background-color': px('background-color'),
      'flex-direction': px('flex-direction'), 'justify-content': px('justify-content'),
      'align-items': px('align-items'), gap: px('gap'), 'grid-template-columns': px('grid-template-columns'),
      overflow: px('overflow'), 'z-index': px('z-index'), opacity: px('opacity')
    }
  };
}"#;

pub(super) async fn measure(tab: &Tab, args: RefArgs) -> Result<ToolResult, ToolError> {
    let m = tab.on_element(&args.target, MEASURE, vec![]).await?;
    let f = |k: &str| m.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let s = |k: &str| {
        m.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let visible = match m.get("hiddenBy").and_then(Value::as_str) {
        None => "yes".to_string(),
        Some(why) => format!("no ({why})"),
    };
    let mut out = format!(
        "[ref={}] <{}>\nbox: x={} y={} width={} height={} (CSS pixels, page coordinates; in the viewport at {}, {})\nvisible: {visible}; in the viewport: {}\nmargin: {}\nborder: {}\npadding: {}\n",
        args.target,
        s("tag"),
        round(f("x")),
        round(f("y")),
        round(f("width")),
        round(f("height")),
        round(f("viewportX")),
        round(f("viewportY")),
        if m.get("inViewport")
            .and_then(Value::as_bool)
            .unwrap_or(false)
        {
            "yes"
        } else {
            "no"
        },
        s("margin"),
        s("border"),
        s("padding"),
    );
    if let Some(Value::Object(styles)) = m.get("styles") {
        out.push_str("styles:\n");
        for (k, v) in styles {
            let v = v.as_str().unwrap_or_default();
            if !v.is_empty() && v != "normal" && v != "none" && v != "auto" {
                out.push_str(&format!("  {k}: {v}\n"));
            }
        }
    }
    Ok(ToolResult::text(out).with_metadata(m))
}

fn round(v: f64) -> String {
    let r = (v * 100.0).round() / 100.0;
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r}")
    }
}

pub(super) async fn diff(tab: &Tab) -> Result<ToolResult, ToolError> {
    let now = snapshot::take(tab).await?;
    let (older, newest) = tab
        .snapshots
        .lock()
        .map(|s| (s.0.clone(), s.1.clone()))
        .unwrap_or((None, None));
    let text = match (older, newest) {
        // Nothing moved since the last action: show what that action changed.
        (Some(older), Some(newest)) if newest == now => snapshot_diff(&older, &now),
        (_, Some(newest)) => {
            tab.keep_snapshot(&now);
            snapshot_diff(&newest, &now)
        }
        (_, None) => {
            tab.keep_snapshot(&now);
            None
        }
    };
    let png = tab.screenshot(None).await?;
    let previous = tab.shots.lock().ok().and_then(|s| s.1.clone());
    tab.keep_shot(&png);
    let mut out = match text {
        Some(d) => format!("Changes in the snapshot:\n{d}\n"),
        None => format!("{}\n", texts::NO_CHANGE),
    };
    let share = match previous {
        Some(prev) => {
            let share = changed_share(&prev, &png).map_err(|e| {
                ToolError::failed(format!("the screenshots could not be compared: {e}"))
            })?;
            out.push_str(&format!(
                "Pixels changed since the previous screenshot: {:.2}%",
                share * 100.0
            ));
            Some(share)
        }
        None => {
            out.push_str("No earlier screenshot to compare with; this one is the baseline for the next browser_diff.");
            None
        }
    };
    Ok(ToolResult::text(out).with_metadata(json!({ "pixelsChanged": share })))
}
