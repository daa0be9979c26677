//! What a tool is (its `ToolSpec`) and what a call returns (`ToolResult`), in the shape the
//! seeds define: `title` and `metadata` are UI only, `output` is the only text the model reads.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The longest `title` a result may carry; longer titles are cut with an ellipsis.
pub const TITLE_MAX_CHARS: usize = 60;

/// Which end of an oversized output survives truncation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Truncation {
    /// Keep the start (most tools: the first lines answer the question).
    #[default]
    Head,
    /// Keep the end (command output, where the error is usually last).
    Tail,
}

/// Everything the model (and `podcode tools`) sees of a tool, independent of where it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls the tool by (see `is_valid_tool_id`).
    pub id: String,
    /// What the model reads to decide when and how to use the tool.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
    /// Which end of an oversized output is kept.
    #[serde(default)]
    pub truncation: Truncation,
    /// Safe to run twice: the pipeline may retry it after a transient failure.
    #[serde(default)]
    pub idempotent: bool,
    /// Per-tool execution timeout in milliseconds; `None` uses the configured default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Offered to the model only once the conversation holds a call of this tool (the
    /// browser's page tools after `browser_navigate`): definitions a session cannot use yet
    /// stay out of every request. A call made before that still runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_after: Option<String>,
}

impl ToolSpec {
    /// A spec with head truncation, no retries and the default timeout.
    pub fn new(id: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Self {
            id: id.into(),
            description: description.into(),
            parameters,
            truncation: Truncation::Head,
            idempotent: false,
            timeout_ms: None,
            offered_after: None,
        }
    }

    /// Offers the tool only once the conversation has called `first`.
    pub fn offered_after(mut self, first: impl Into<String>) -> Self {
        self.offered_after = Some(first.into());
        self
    }

    /// Keeps the other end of oversized output (e.g. `Tail` for command logs).
    pub fn with_truncation(mut self, truncation: Truncation) -> Self {
        self.truncation = truncation;
        self
    }

    /// Marks the tool safe to retry.
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }
}

/// A file or image handed back with a result, e.g. `{mime: "image/png", url: "data:…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// Media type, e.g. `image/png`.
    pub mime: String,
    /// Where the content is: usually a `data:` URL carrying it inline.
    pub url: String,
    /// A file name to show or save it under, when the tool knows one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolResult {
    /// Short label for the UI (clipped to `TITLE_MAX_CHARS`); the model never sees it.
    #[serde(default)]
    pub title: String,
    /// The text the model reads.
    #[serde(default)]
    pub output: String,
    /// Structured detail for front ends (diffs, counts); the model never sees it.
    #[serde(default)]
    pub metadata: Value,
    /// Files or images sent to the model with the output, when it accepts them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
}

impl ToolResult {
    /// The opencode form: a bare string means `{output: string}`.
    pub fn text(output: impl Into<String>) -> Self {
        Self {
            output: output.into(),
            ..Self::default()
        }
    }

    /// Sets the UI title, clipped to `TITLE_MAX_CHARS`.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = clip_title(&title.into());
        self
    }

    /// Sets the front-end metadata.
    pub fn with_metadata(mut self, metadata: Value) -> Self {
        self.metadata = metadata;
        self
    }
}

/// Cuts a title to `TITLE_MAX_CHARS` characters, ending in `…` when anything was cut.
pub fn clip_title(title: &str) -> String {
    if title.chars().count() <= TITLE_MAX_CHARS {
        return title.to_string();
    }
    let mut out: String = title.chars().take(TITLE_MAX_CHARS - 1).collect();
    out.push('…');
    out
}

/// `^[A-Za-z][A-Za-z0-9_-]{0,63}$`: the ids every provider accepts as a function name.
pub fn is_valid_tool_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 64
        && bytes[0].is_ascii_alphabetic()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_over_sixty_chars_end_in_an_ellipsis() {
        let long = "x".repeat(80);
        let clipped = clip_title(&long);
        assert_eq!(clipped.chars().count(), 60);
        assert!(clipped.ends_with('…'));
        assert_eq!(clip_title("short"), "short");
        let exact = "é".repeat(60);
        assert_eq!(clip_title(&exact), exact);
    }

    #[test]
    fn tool_ids_follow_the_provider_rule() {
        for ok in [
            "read",
            "deploy_status",
            "math_add",
            "a",
            "A-b_9",
            &"a".repeat(64),
        ] {
            assert!(is_valid_tool_id(ok), "{ok}");
        }
        for bad in [
            "",
            "1abc",
            "_x",
            "has space",
            "dot.ted",
            "ü",
            &"a".repeat(65),
        ] {
            assert!(!is_valid_tool_id(bad), "{bad}");
        }
    }

    #[test]
    fn bare_string_result_is_output_only() {
        let r: ToolResult = ToolResult::text("hi");
        assert_eq!(r.output, "hi");
        assert!(r.title.is_empty());
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["output"], "hi");
    }
}
