//! The config data model: what `config.toml` may contain, with every field's default.
//!
//! This module owns only the shape of the data; reading, merging and error reporting live in
//! `load`.

use std::collections::BTreeMap;

use podcode_protocol::PermissionRule;
use serde::{Deserialize, Deserializer, Serialize};

/// The whole Podcode configuration (global and project files merged).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct Config {
    /// Default model as `provider/model`, e.g. `openai/gpt-4o`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Truncation limits for tool output.
    pub tool_output: ToolOutputConfig,
    /// Tool execution settings.
    pub tool: ToolConfig,
    /// Permission rules in file order (global first, then project); the last match wins.
    pub permission: Vec<PermissionRule>,
    /// Per-plugin configuration handed to the plugin's `server()` as `config`.
    #[serde(deserialize_with = "deserialize_plugin_config")]
    pub plugin_config: BTreeMap<String, serde_json::Value>,
    /// Agent profiles by name.
    pub agent: BTreeMap<String, AgentConfig>,
    /// Sub-agent settings (`task` tool).
    pub task: TaskConfig,
    /// Model providers by name.
    pub provider: BTreeMap<String, ProviderConfig>,
    /// MCP servers by name; their tools are named `<server>_<tool>`.
    pub mcp: BTreeMap<String, McpServerConfig>,
    /// npm packages to load as plugins.
    pub plugins: Vec<String>,
    /// When and how a long session's context is compacted: `[compaction]`.
    pub compaction: CompactionConfig,
    /// The sandbox for `bash`, executable tools and the plugin host.
    pub sandbox: crate::SandboxConfig,
    /// Tools switched off for every agent (opencode's `tools: {"name": false}`).
    pub tools: ToolSwitches,
    /// The headless browser of the `browser_*` tools.
    pub browser: BrowserConfig,
    /// Language servers: diagnostics after edits and the `lsp` tool (`[lsp]`, `[lsp.NAME]`).
    pub lsp: LspConfig,
    /// Formatters run on the files an edit changed (`[formatter]`, `[formatter.NAME]`).
    pub formatter: FormatterConfig,
    /// Custom commands by name (`[commands.review]`; opencode.json's `command`), besides
    /// the Markdown files in the commands folders.
    pub commands: BTreeMap<String, CommandConfig>,
}

/// A custom command: `[commands.NAME]`, the same fields a command file's front matter has.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct CommandConfig {
    /// The prompt: `$ARGUMENTS`, `$1`…`$9`, `!`cmd`` and `@path` are filled in.
    pub template: String,
    /// What the command does, shown where commands are listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The agent profile that runs it (default: the session's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The model that runs it, as `provider/model` (default: the session's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Run it as a sub-agent (its own session, like a `task` call).
    pub subtask: bool,
}

/// `[compaction]`: before a request whose prompt would pass `threshold` of the model's
/// context window, old tool outputs are pruned and, if that is not enough, the older
/// conversation is summarised. The store keeps every original message either way.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct CompactionConfig {
    /// Compact automatically (a context-overflow error from the provider still compacts).
    pub auto: bool,
    /// The fraction of the usable context window (window minus the reply's room) that
    /// triggers compaction, between 0.1 and 1.0.
    pub threshold: f64,
    /// Replace old tool outputs with a one-line marker before summarising.
    pub prune: bool,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        Self {
            auto: true,
            threshold: 0.85,
            prune: true,
        }
    }
}

/// `[provider.<name>.models."<id>"]`: what Podcode knows about a model, over the catalog's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct ModelOverride {
    /// The context window, in tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<u64>,
    /// The most tokens one reply may have.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<u64>,
    /// Prices in USD per million tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostOverride>,
}

/// `cost = { input = 3, output = 15, cache_read = 0.3, cache_write = 3.75 }` (USD per
/// million tokens; cache prices default to the input price).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct CostOverride {
    /// USD per million prompt tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<f64>,
    /// USD per million completion tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<f64>,
    /// USD per million prompt tokens read from the provider's cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// USD per million prompt tokens written to the provider's cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

/// `[tools]`: tools no agent is offered, whatever their source (built-ins too).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct ToolSwitches {
    /// Tool ids or wildcard patterns (`github_*`); every file's entries add up.
    pub disable: Vec<String>,
}

impl ToolSwitches {
    /// The first entry that switches `id` off, if any. `*` matches any run of characters.
    pub fn switched_off_by(&self, id: &str) -> Option<&str> {
        self.disable
            .iter()
            .find(|p| wildcard(p, id))
            .map(String::as_str)
    }
}

/// `*`-only wildcard match (opencode's tool switches know no other wildcard).
fn wildcard(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Limits past which tool output is truncated and spilled to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct ToolOutputConfig {
    /// Most lines of one call's output the model gets; the rest goes to a spill file.
    pub max_lines: usize,
    /// Most bytes of one call's output the model gets; the rest goes to a spill file.
    pub max_bytes: usize,
}

impl Default for ToolOutputConfig {
    fn default() -> Self {
        Self {
            max_lines: 2000,
            max_bytes: 51200,
        }
    }
}

/// Tool execution settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct ToolConfig {
    /// Per-call timeout in seconds.
    pub timeout: u64,
}

impl Default for ToolConfig {
    fn default() -> Self {
        Self { timeout: 300 }
    }
}

/// `[lsp]`: how language servers report after edits; `[lsp.NAME]` changes a built-in server,
/// adds one, or switches one off.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct LspConfig {
    /// No language server at all.
    pub disabled: bool,
    /// The most an edit waits for diagnostics, in milliseconds.
    pub wait_ms: u64,
    /// Report warnings after edits too, not only errors.
    pub warnings: bool,
    /// The most diagnostics shown per file after an edit.
    pub per_file: usize,
    /// Seconds without use after which a server is shut down (started again when needed).
    pub idle_secs: u64,
    /// Servers by name: a built-in's name changes it, another adds one.
    #[serde(flatten)]
    pub servers: BTreeMap<String, LspServerConfig>,
}

impl Default for LspConfig {
    fn default() -> Self {
        Self {
            disabled: false,
            wait_ms: 3000,
            warnings: false,
            per_file: 20,
            idle_secs: 600,
            servers: BTreeMap::new(),
        }
    }
}

/// `[formatter]`: `disabled = true` runs none; `[formatter.NAME]` changes a built-in one,
/// adds one (`command` with `$FILE`, `extensions`), or switches one off.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct FormatterConfig {
    /// No formatter at all.
    pub disabled: bool,
    /// Formatters by name.
    #[serde(flatten)]
    pub formatters: BTreeMap<String, FormatterEntry>,
}

/// `[formatter.NAME]` (opencode.json's `formatter.NAME`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct FormatterEntry {
    /// Program and arguments; `$FILE` is the file to format in place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// File extensions it formats (with or without the dot).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// Switches it off.
    pub disabled: bool,
}

/// `[lsp.NAME]` (opencode.json's `lsp.NAME`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct LspServerConfig {
    /// Program and arguments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// File extensions it handles (with or without the dot).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// `initializationOptions` sent to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initialization: Option<serde_json::Value>,
    /// Switches it off.
    pub disabled: bool,
}

/// `[browser]`: which Chromium the `browser_*` tools start, and when an unused one closes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct BrowserConfig {
    /// Path of the Chromium or Chrome binary; unset: `chromium`, `chromium-browser`,
    /// `google-chrome`, … on `PATH`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    /// Seconds without a browser call after which a session's browser is closed.
    pub idle_timeout: u64,
}

impl Default for BrowserConfig {
    fn default() -> Self {
        Self {
            executable: None,
            idle_timeout: 600,
        }
    }
}

/// An agent profile: `[agent.<name>]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct AgentConfig {
    /// Instructions added to the base system prompt (replacing a built-in profile's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Model for this profile, as `provider/model`; unset: the config's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Which tools this profile is offered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolFilter>,
    /// Rules applied after the config-level rules, so they refine them for this agent.
    pub permission: Vec<PermissionRule>,
    /// This profile's sandbox mode and network setting, when they differ from `[sandbox]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::SandboxOverride>,
    /// One line saying what the agent is for (the `task` tool lists it for sub-agents).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `primary` (the user picks it), `subagent` (only `task` starts it) or `all`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<AgentMode>,
    /// Sampling temperature sent with each request; unset: the provider's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Model requests with tools per turn before the agent must summarize.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<u32>,
}

/// Who may use an agent profile: the user (`primary`), the `task` tool (`subagent`), or both.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentMode {
    /// Only the user picks it (`--agent`, the TUI's agent switch).
    Primary,
    /// Only the `task` tool starts it, as a sub-agent.
    Subagent,
    /// Both the user and the `task` tool may use it.
    #[default]
    All,
}

impl AgentMode {
    /// The config spelling (`primary`, `subagent`, `all`), for listings.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentMode::Primary => "primary",
            AgentMode::Subagent => "subagent",
            AgentMode::All => "all",
        }
    }
}

/// Sub-agent settings: `[task]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct TaskConfig {
    /// How deep sub-agents may nest: 1 lets the user's session start sub-agents, 2 lets
    /// those start their own, and so on.
    pub max_depth: u32,
}

impl Default for TaskConfig {
    fn default() -> Self {
        Self { max_depth: 2 }
    }
}

/// Which tools an agent is offered: `allow` (when set) is the only ids offered; `deny` is
/// removed afterwards.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct ToolFilter {
    /// When set, the only tool ids (or `*` patterns) offered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Tool ids (or `*` patterns) never offered, applied after `allow`.
    pub deny: Vec<String>,
}

/// A model provider: `[provider.<name>]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct ProviderConfig {
    /// Endpoint to send requests to, for a self-hosted or proxy server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Extra HTTP headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// The wire protocol the server speaks; unset means the built-in provider's, or
    /// OpenAI-compatible for a provider of your own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api: Option<ProviderApi>,
    /// Per-model facts over the built-in catalog: `[provider.<name>.models."<id>"]`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub models: BTreeMap<String, ModelOverride>,
}

/// `api = "openai"` (chat completions) or `api = "anthropic"` (messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderApi {
    /// OpenAI-compatible chat completions.
    Openai,
    /// Anthropic's messages API.
    Anthropic,
}

/// An MCP server: `[mcp.<name>]`. Either `command` (stdio) or `url` (streamable HTTP).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "snake_case")]
pub struct McpServerConfig {
    /// Program to start for a stdio server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Arguments for `command`.
    pub args: Vec<String>,
    /// Extra environment variables for `command`.
    pub env: BTreeMap<String, String>,
    /// Working directory for `command`; unset: Podcode's own working directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Endpoint of a streamable-HTTP server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Extra HTTP headers sent to `url` (e.g. an authorization header).
    pub headers: BTreeMap<String, String>,
    /// When false the server is not started and its tools are not offered.
    pub enabled: bool,
    /// Per-call timeout in seconds.
    pub timeout: u64,
    /// Seconds to wait for the server to start and list its tools.
    pub startup_timeout: u64,
    /// When true, failing to start the server is fatal instead of a warning.
    pub required: bool,
    /// Seconds the first model request waits for a server whose tools are not known yet
    /// (none cached from an earlier start of this exact config), as opencode waits for its
    /// servers; a server slower than this joins when ready. 0: never wait.
    pub first_request_wait: u64,
    /// The most of one message (one JSON-RPC line) from a stdio server held in memory: a
    /// long result's texts are streamed to disk and not counted; anything else over it
    /// (an image's data, an error's message) fails the call at once, saying its size.
    pub max_message_bytes: u64,
    /// A stdio server runs in Podcode's sandbox (network on, writes to the workspace);
    /// `false` starts it as it is.
    pub sandbox: bool,
}

impl Default for McpServerConfig {
    fn default() -> Self {
        Self {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            enabled: true,
            timeout: 120,
            startup_timeout: 30,
            required: false,
            first_request_wait: 10,
            max_message_bytes: 16 * 1024 * 1024,
            sandbox: true,
        }
    }
}

/// Reads each plugin's table as TOML and converts it to JSON, so TOML datetimes reach the
/// plugin as RFC 3339 strings rather than as serde's private datetime wrapper.
fn deserialize_plugin_config<'de, D>(
    deserializer: D,
) -> Result<BTreeMap<String, serde_json::Value>, D::Error>
where
    D: Deserializer<'de>,
{
    let raw = BTreeMap::<String, toml::Value>::deserialize(deserializer)?;
    Ok(raw.into_iter().map(|(k, v)| (k, toml_to_json(v))).collect())
}

/// Converts a TOML value to JSON. Non-finite floats become `null`; datetimes become strings.
pub(crate) fn toml_to_json(value: toml::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        toml::Value::String(s) => J::String(s),
        toml::Value::Integer(i) => J::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f).map_or(J::Null, J::Number),
        toml::Value::Boolean(b) => J::Bool(b),
        toml::Value::Datetime(d) => J::String(d.to_string()),
        toml::Value::Array(items) => J::Array(items.into_iter().map(toml_to_json).collect()),
        toml::Value::Table(table) => J::Object(
            table
                .into_iter()
                .map(|(k, v)| (k, toml_to_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults() {
        let c = Config::default();
        assert_eq!(c.model, None);
        assert_eq!(c.tool_output.max_lines, 2000);
        assert_eq!(c.tool_output.max_bytes, 51200);
        assert_eq!(c.tool.timeout, 300);
        assert!(c.permission.is_empty());
        assert!(c.plugin_config.is_empty());
        assert!(c.agent.is_empty() && c.provider.is_empty() && c.mcp.is_empty());
        assert!(c.plugins.is_empty());

        let m = McpServerConfig::default();
        assert!(m.enabled);
        assert_eq!((m.timeout, m.startup_timeout, m.required), (120, 30, false));
        assert_eq!(m.first_request_wait, 10);
        assert_eq!(m.max_message_bytes, 16 * 1024 * 1024);
    }

    #[test]
    fn empty_document_gives_defaults() {
        let c: Config = toml::from_str("").unwrap();
        assert_eq!(c, Config::default());
        let m: McpServerConfig = toml::from_str("command = \"x\"").unwrap();
        assert_eq!(m.command.as_deref(), Some("x"));
        assert!(m.enabled);
        assert_eq!(m.timeout, 120);
    }

    #[test]
    fn plugin_config_converts_to_json() {
        let c: Config = toml::from_str(
            r#"
            [plugin_config.p]
            when = 1979-05-27T07:32:00Z
            nested = { list = [1, 2.5, true], s = "x" }
            "#,
        )
        .unwrap();
        assert_eq!(
            c.plugin_config["p"],
            json!({"when": "1979-05-27T07:32:00Z", "nested": {"list": [1, 2.5, true], "s": "x"}})
        );
    }

    #[test]
    fn tool_switches_match_ids_and_star_patterns() {
        let s = ToolSwitches {
            disable: vec![
                "write".into(),
                "github_*".into(),
                "*_debug".into(),
                "a*b*c".into(),
            ],
        };
        assert_eq!(s.switched_off_by("write"), Some("write"));
        assert_eq!(s.switched_off_by("writer"), None);
        assert_eq!(s.switched_off_by("github_issues"), Some("github_*"));
        assert_eq!(s.switched_off_by("github"), None);
        assert_eq!(s.switched_off_by("x_debug"), Some("*_debug"));
        assert_eq!(s.switched_off_by("abxc"), Some("a*b*c"));
        assert_eq!(s.switched_off_by("acb"), None);
        assert_eq!(s.switched_off_by("read"), None);
    }

    #[test]
    fn round_trips_through_toml() {
        let mut c = Config {
            model: Some("openai/gpt-4o".into()),
            ..Config::default()
        };
        c.mcp.insert("m".into(), McpServerConfig::default());
        let text = toml::to_string(&c).unwrap();
        let back: Config = toml::from_str(&text).unwrap();
        assert_eq!(back, c);
    }
}
