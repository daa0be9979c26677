//! The eleven tools: their arguments (the JSON Schema models read), and the frame every call
//! runs in — the session's browser from the pool, the gate bound to this call's context, the
//! user's abort, and the note when the browser had to be restarted. What each tool does is
//! in `actions` (acting on the page) and `inspect` (reading and looking at it).

mod actions;
mod inspect;

use std::sync::Arc;

use async_trait::async_trait;
use podcode_protocol::{ToolResult, ToolSpec};
use podcode_tools::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::Browsers;
use crate::page::Tab;
use crate::pool::Pool;
use crate::texts;

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct NavigateArgs {
    /// The URL to open, e.g. `http://localhost:3000/`. A URL without a scheme gets `https://`.
    pub(crate) url: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct RefArgs {
    /// The element's ref from the latest snapshot, e.g. `e12`.
    #[serde(rename = "ref")]
    pub(crate) target: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct TypeArgs {
    /// The ref of an input, textarea or editable element, e.g. `e7`.
    #[serde(rename = "ref")]
    pub(crate) target: String,
    /// The text to type; it replaces the element's current text.
    pub(crate) text: String,
    /// Press Enter afterwards (submits the form). Default false.
    #[serde(default)]
    pub(crate) submit: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SelectArgs {
    /// The ref of a <select> element.
    #[serde(rename = "ref")]
    pub(crate) target: String,
    /// Option values or visible labels to select (one for a single select).
    pub(crate) values: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ScrollArgs {
    /// Scroll this element into view (instead of dx/dy).
    #[serde(rename = "ref", default)]
    pub(crate) target: Option<String>,
    /// Pixels to scroll right (negative: left).
    #[serde(default)]
    pub(crate) dx: Option<f64>,
    /// Pixels to scroll down (negative: up).
    #[serde(default)]
    pub(crate) dy: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ScreenshotArgs {
    /// Only this element.
    #[serde(rename = "ref", default)]
    pub(crate) target: Option<String>,
    /// The whole page, not only the viewport. Default false.
    #[serde(default)]
    pub(crate) full_page: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct LookArgs {
    /// What to judge, e.g. "Does the header overlap the content?"
    pub(crate) question: String,
    /// Only this element.
    #[serde(rename = "ref", default)]
    pub(crate) target: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Device {
    Desktop,
    Laptop,
    Tablet,
    Mobile,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ResizeArgs {
    /// Viewport width in CSS pixels (100–4000).
    #[serde(default)]
    pub(crate) width: Option<u32>,
    /// Viewport height in CSS pixels (100–4000).
    #[serde(default)]
    pub(crate) height: Option<u32>,
    /// A device size instead of width/height.
    #[serde(default)]
    pub(crate) device: Option<Device>,
}

#[derive(Clone, Copy)]
enum Kind {
    Navigate,
    Snapshot,
    Click,
    Type,
    Select,
    Scroll,
    Screenshot,
    Look,
    Measure,
    Diff,
    Resize,
}

fn schema<T: JsonSchema>() -> Value {
    podcode_builtins::params_schema::<T>()
}

pub(crate) struct BrowserTool {
    spec: ToolSpec,
    kind: Kind,
    pool: Arc<Pool>,
    browsers: Browsers,
}

pub(crate) fn all(pool: Arc<Pool>, browsers: Browsers) -> Vec<BrowserTool> {
    use Kind::*;
    let specs: [(&str, &str, Value, Kind); 11] = [
        (
            "browser_navigate",
            texts::NAVIGATE,
            schema::<NavigateArgs>(),
            Navigate,
        ),
        (
            "browser_snapshot",
            texts::SNAPSHOT,
            schema::<NoArgs>(),
            Snapshot,
        ),
        ("browser_click", texts::CLICK, schema::<RefArgs>(), Click),
        ("browser_type", texts::TYPE, schema::<TypeArgs>(), Type),
        (
            "browser_select",
            texts::SELECT,
            schema::<SelectArgs>(),
            Select,
        ),
        (
            "browser_scroll",
            texts::SCROLL,
            schema::<ScrollArgs>(),
            Scroll,
        ),
        (
            "browser_screenshot",
            texts::SCREENSHOT,
            schema::<ScreenshotArgs>(),
            Screenshot,
        ),
        ("browser_look", texts::LOOK, schema::<LookArgs>(), Look),
        (
            "browser_measure",
            texts::MEASURE,
            schema::<RefArgs>(),
            Measure,
        ),
        ("browser_diff", texts::DIFF, schema::<NoArgs>(), Diff),
        (
            "browser_resize",
            texts::RESIZE,
            schema::<ResizeArgs>(),
            Resize,
        ),
    ];
    specs
        .into_iter()
        .map(|(id, description, parameters, kind)| BrowserTool {
            // Ten definitions (~5 KB) a session without a page cannot use: offered once the
            // conversation has navigated.
            spec: match kind {
                Navigate => ToolSpec::new(id, description, parameters),
                _ => ToolSpec::new(id, description, parameters).offered_after("browser_navigate"),
            },
            kind,
            pool: pool.clone(),
            browsers: browsers.clone(),
        })
        .collect()
}

fn parse<T: serde::de::DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args)
        .map_err(|e| ToolError::failed(format!("the arguments could not be read: {e}")))
}

impl BrowserTool {
    async fn run(&self, tab: &Tab, args: Value, images: bool) -> Result<ToolResult, ToolError> {
        match self.kind {
            Kind::Navigate => actions::navigate(tab, parse(args)?).await,
            Kind::Snapshot => inspect::snapshot(tab).await,
            Kind::Click => actions::click(tab, parse(args)?).await,
            Kind::Type => actions::type_text(tab, parse(args)?).await,
            Kind::Select => actions::select(tab, parse(args)?).await,
            Kind::Scroll => actions::scroll(tab, parse(args)?).await,
            Kind::Screenshot => inspect::screenshot(tab, parse(args)?).await,
            Kind::Look => inspect::look(tab, parse(args)?, images).await,
            Kind::Measure => inspect::measure(tab, parse(args)?).await,
            Kind::Diff => inspect::diff(tab).await,
            Kind::Resize => actions::resize(tab, parse(args)?).await,
        }
    }
}

#[async_trait]
impl Tool for BrowserTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let first = match self.kind {
            Kind::Navigate => args["url"].as_str().and_then(|u| actions::target(u).ok()),
            _ => None,
        };
        let first = first.as_ref().map(|u| (&ctx, u.as_str()));
        let (mut slot, note) = tokio::select! {
            slot = self.pool.acquire(ctx.session_id(), &self.browsers, first) => slot?,
            _ = ctx.abort().cancelled() => return Err(ToolError::Aborted),
        };
        let Some(tab) = slot.tab() else {
            return Err(ToolError::failed(texts::BROWSER_FAILED));
        };
        tab.gate.begin(&ctx);
        let result = tokio::select! {
            r = self.run(tab, args, ctx.model_takes_images()) => r,
            _ = ctx.abort().cancelled() => Err(ToolError::Aborted),
        };
        tab.gate.end();
        let pid = slot.pid();
        slot.touch();
        drop(slot);
        let mut result = result.map_err(|e| match (e, note) {
            (ToolError::Failed { message, transient }, Some(note)) => ToolError::Failed {
                message: format!("{note}{message}"),
                transient,
            },
            (other, _) => other,
        })?;
        if let Some(note) = note {
            result.output = format!("{note}{}", result.output);
        }
        if let Value::Object(m) = &mut result.metadata {
            m.insert("browserPid".into(), pid.into());
        } else {
            result.metadata = serde_json::json!({ "browserPid": pid });
        }
        Ok(result)
    }
}
