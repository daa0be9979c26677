//! The `webfetch` built-in: a web page as clean Markdown, plain text or raw HTML; a text
//! file as is; an image as an attachment.
//!
//! Data flow: `{url, format?, timeout?}` → the URL is parsed; `file:` URLs are read only
//! when an explicit `webfetch_private` rule allows the URL (a refusal names that rule as
//! TOML to paste), other non-HTTP schemes never → `net::fetch` checks every hop (scheme;
//! the resolved addresses: a private one asks `webfetch_private` for the origin, a public
//! one `webfetch` for the host), pins the checked addresses, follows
//! at most 5 redirects itself and streams at most 5 MiB, all within the timeout (time spent
//! waiting for the user's answer does not count) → on a blocking thread `convert` decides
//! what the body is and turns HTML into Markdown or text → the output, with a note when the
//! page was reached through redirects. Each failure has its own text (`texts`).

mod chunks;
mod convert;
mod net;

pub use net::is_private;
mod text;
mod texts;

use async_trait::async_trait;
use base64::Engine;
use podcode_protocol::{Attachment, PermissionAction, ToolResult, ToolSpec};
use podcode_tools::{Tool, ToolContext, ToolError};
use reqwest::Url;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::glob::parse_args;
use convert::Body;
use net::{Fetched, Gate};

const DEFAULT_TIMEOUT: u64 = 30;
const MAX_TIMEOUT: u64 = 120;

const DESCRIPTION: &str = "Fetches a URL over HTTP(S): a web page comes back as Markdown (or text, or raw HTML), a text or JSON file as it is, a png, jpeg, gif or webp image as an attachment.
Use it to read documentation or any page the user points to. It does not run JavaScript: pages that render only in a browser come back (nearly) empty.
- Follows up to 5 redirects; responses over 5 MiB are refused.
- The user may be asked to allow each new host and each localhost or private-address origin, redirects included. file:// URLs are refused unless allowed in the configuration; other non-HTTP URLs always.
- Long pages are truncated; the rest is saved to a file you can read.
Example: {\"url\": \"https://docs.rs/serde/latest/serde/\"}";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Format {
    #[default]
    Markdown,
    Text,
    Html,
}

impl Format {
    fn accept(self) -> &'static str {
        match self {
            Self::Markdown => {
                "text/markdown;q=1.0, text/x-markdown;q=0.9, text/plain;q=0.8, text/html;q=0.7, */*;q=0.1"
            }
            Self::Text => "text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, */*;q=0.1",
            Self::Html => {
                "text/html;q=1.0, application/xhtml+xml;q=0.9, text/plain;q=0.8, */*;q=0.1"
            }
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Markdown => "markdown",
            Self::Text => "text",
            Self::Html => "html",
        }
    }
}

fn default_timeout() -> u64 {
    DEFAULT_TIMEOUT
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct WebfetchArgs {
    /// The URL to fetch, starting with http:// or https://, e.g. `https://docs.rs/serde`.
    url: String,
    /// For HTML pages: `markdown` (headings, links, lists, code, tables), `text` (the words) or `html` (the source).
    #[serde(default)]
    format: Format,
    /// Seconds to wait for the whole download (at most 120).
    #[serde(default = "default_timeout")]
    #[schemars(range(min = 1, max = 120))]
    timeout: u64,
}

pub struct WebfetchTool {
    spec: ToolSpec,
}

impl WebfetchTool {
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new(
                "webfetch",
                DESCRIPTION,
                crate::params_schema::<WebfetchArgs>(),
            )
            .idempotent(true),
        }
    }
}

impl Default for WebfetchTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Tool for WebfetchTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let args: WebfetchArgs = parse_args("webfetch", args)?;
        let raw = args.url.trim();
        let url = Url::parse(raw)
            .map_err(|e| ToolError::failed(texts::invalid_url(raw, &e.to_string())))?;
        let seconds = args.timeout.clamp(1, MAX_TIMEOUT);
        let fetched = if url.scheme() == "file" {
            if ctx.rule_action("webfetch_private", url.as_str()) != PermissionAction::Allow {
                return Err(ToolError::failed(texts::blocked_file(
                    url.as_str(),
                    &podcode_tools::allow_rules(&[("webfetch_private", url.as_str())]),
                )));
            }
            let target = url.clone();
            let body = tokio::task::spawn_blocking(move || net::read_file_url(&target))
                .await
                .map_err(|e| {
                    ToolError::failed(format!("the download stopped unexpectedly: {e}"))
                })??;
            let html = [".html", ".htm", ".xhtml"]
                .iter()
                .any(|ext| url.path().to_ascii_lowercase().ends_with(ext));
            Fetched {
                url: url.clone(),
                redirects: 0,
                status: 200,
                content_type: html.then(|| "text/html".to_string()),
                body,
            }
        } else {
            let mut gate = Gate::new(&ctx, seconds);
            tokio::select! {
                fetched = net::fetch(&mut gate, url.clone(), args.format.accept()) => fetched?,
                _ = ctx.abort().cancelled() => return Err(ToolError::Aborted),
            }
        };
        let requested = url.to_string();
        let final_url = fetched.url.to_string();
        let bytes = fetched.body.len();
        let status = fetched.status;
        let content_type = fetched.content_type.clone();
        let format = args.format;
        let body = tokio::task::spawn_blocking(move || render(fetched, format))
            .await
            .map_err(|e| ToolError::failed(format!("the download stopped unexpectedly: {e}")))??;
        let metadata = json!({
            "url": requested, "finalUrl": final_url, "contentType": content_type,
            "status": status, "bytes": bytes, "format": format.as_str(),
        });
        let mut result = match body {
            Rendered::Text { text, redirected } => {
                let mut output = if redirected {
                    texts::redirected(&final_url)
                } else {
                    String::new()
                };
                if text.trim().is_empty() {
                    output.push_str(&texts::empty_page(&final_url));
                } else {
                    output.push_str(&text);
                }
                ToolResult::text(output)
            }
            Rendered::Image { mime, data } => {
                let mut result = ToolResult::text(texts::image(&final_url, mime, data.len()));
                result.attachments.push(Attachment {
                    mime: mime.into(),
                    url: format!(
                        "data:{mime};base64,{}",
                        base64::engine::general_purpose::STANDARD.encode(&data)
                    ),
                    filename: fetched_name(&final_url),
                });
                result
            }
        };
        result = result.with_title(requested).with_metadata(metadata);
        Ok(result)
    }
}

enum Rendered {
    Text { text: String, redirected: bool },
    Image { mime: &'static str, data: Vec<u8> },
}

/// What the model gets from a download, in the requested format.
fn render(fetched: Fetched, format: Format) -> Result<Rendered, ToolError> {
    let redirected = fetched.redirects > 0;
    let shown = fetched.url.to_string();
    let body = convert::classify(fetched.content_type.as_deref(), fetched.body)
        .map_err(|ct| ToolError::failed(texts::unsupported_type(&shown, &ct)))?;
    Ok(match body {
        Body::Image { mime, data } => Rendered::Image { mime, data },
        Body::Text(text) => Rendered::Text { text, redirected },
        Body::Html(html) => {
            let text = match format {
                Format::Markdown => convert::html_to_markdown(&html),
                Format::Text => convert::html_to_text(&html),
                Format::Html => html,
            };
            Rendered::Text { text, redirected }
        }
    })
}

/// The last path segment of a URL, as an attachment's file name.
fn fetched_name(url: &str) -> Option<String> {
    let url = Url::parse(url).ok()?;
    let name = url.path_segments()?.next_back()?.to_string();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attachment_names_come_from_the_path() {
        assert_eq!(
            fetched_name("http://h/a/logo.png?x=1").as_deref(),
            Some("logo.png")
        );
        assert_eq!(fetched_name("http://h/"), None);
    }
}
