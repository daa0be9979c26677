//! The API's JSON shapes (requests and responses), with the OpenAPI schema derived from
//! them, and their conversion from the engine's types. Events and permission requests are
//! the engine's own JSON (podcode-protocol's serde form), described here as objects.

use podcode_core::SessionRow;
use podcode_protocol::{CommandInfo, Item, StepUsage, ToolItem};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

pub use crate::dto_changes::{
    ChangeDetail, ChangeList, RevertOutcome, RevertRequest, group_changes,
};

/// A session as lists and pages show it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SessionInfo {
    pub id: String,
    pub title: String,
    pub agent: String,
    /// `provider/model-id`; null when never set.
    pub model: Option<String>,
    /// Where it works (its worktree, if it has one).
    pub directory: String,
    /// The worktree root of a worktree session.
    pub worktree: Option<String>,
    /// Set on sub-agent sessions.
    pub parent_id: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    /// Driven by this server now.
    pub open: bool,
    /// A turn is running.
    pub busy: bool,
    /// The project it belongs to when that is not this server's (null otherwise): it can be
    /// read here but not driven — prompts, model and agent changes and reverts are refused
    /// with 409; run `podcode serve` there to drive it.
    pub other_project: Option<String>,
}

impl SessionInfo {
    pub fn from_row(row: &SessionRow) -> Self {
        Self {
            id: row.id.clone(),
            title: row.title.clone(),
            agent: row.agent.clone(),
            model: row.model.clone(),
            directory: row.cwd.clone(),
            worktree: None,
            parent_id: row.parent_id.clone(),
            created_at: row.created_at,
            updated_at: row.updated_at,
            open: false,
            busy: false,
            other_project: None,
        }
    }
}

/// `POST /api/sessions`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CreateSession {
    pub title: Option<String>,
    /// Default `build`.
    pub agent: Option<String>,
    /// `provider/model-id`; default: the agent's, then the config's.
    pub model: Option<String>,
    /// Work in a git worktree of its own.
    #[serde(default)]
    pub worktree: bool,
}

/// `PATCH /api/sessions/{id}`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct RenameSession {
    pub title: String,
}

/// A session's token and cost totals (`cost` in USD, null when unknown).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub reasoning_tokens: u64,
    pub cost: Option<f64>,
}

impl From<StepUsage> for Usage {
    fn from(u: StepUsage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_tokens: u.cache_read_tokens,
            cache_write_tokens: u.cache_write_tokens,
            reasoning_tokens: u.reasoning_tokens,
            cost: u.cost,
        }
    }
}

/// One entry of a stored conversation: `podcode_protocol::Item` as JSON (the same items
/// front ends fold from the live events). Kinds a client does not know can be skipped.
// Built once per `GET` and serialised at once: a boxed call card would save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Transcript {
    User {
        message_id: String,
        text: String,
        files: Vec<String>,
    },
    Assistant {
        message_id: String,
        text: String,
    },
    Reasoning {
        message_id: String,
        text: String,
    },
    Tool {
        call_id: String,
        tool: String,
        /// The arguments as parsed from the model's request.
        #[schema(value_type = Object)]
        args: Value,
        title: String,
        /// `running`, `completed`, `failed`, `denied`, `interrupted`, `timed_out`.
        state: String,
        elapsed_ms: u64,
        /// The output, or the error text of a failed call.
        output: String,
        attachments: usize,
        spill_path: Option<String>,
        /// The diff of the file change it made, if any.
        diff: Option<String>,
        /// For a `task` call: the sub-agent's session.
        child_session_id: Option<String>,
    },
    /// The conversation sent to the model was compacted here (every message is kept).
    Compaction {
        /// `auto`, `overflow` or `manual`.
        reason: String,
        pruned: u32,
        summarized: u32,
        tokens_before: u64,
        tokens_after: u64,
    },
    /// What the model was told after the user reverted changes.
    RevertNote {
        text: String,
    },
}

impl From<Item> for Transcript {
    fn from(item: Item) -> Self {
        match item {
            Item::User {
                message_id,
                text,
                files,
            } => Self::User {
                message_id,
                text,
                files,
            },
            Item::Assistant { message_id, text } => Self::Assistant { message_id, text },
            Item::Reasoning { message_id, text } => Self::Reasoning { message_id, text },
            Item::Tool(ToolItem {
                call_id,
                tool,
                args,
                title,
                state,
                elapsed_ms,
                output,
                attachments,
                spill_path,
                diff,
                child_session_id,
            }) => Self::Tool {
                call_id,
                tool,
                args,
                title,
                state: state.as_str().to_string(),
                elapsed_ms,
                output,
                attachments,
                spill_path,
                diff,
                child_session_id,
            },
            Item::Compaction {
                reason,
                pruned,
                summarized,
                tokens_before,
                tokens_after,
            } => Self::Compaction {
                reason,
                pruned,
                summarized,
                tokens_before,
                tokens_after,
            },
            Item::RevertNote { text } => Self::RevertNote { text },
        }
    }
}

/// `GET /api/sessions/{id}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SessionDetail {
    pub session: SessionInfo,
    /// The session's own totals.
    pub usage: Usage,
    /// The totals of the session with every sub-agent session under it (its `task`
    /// calls' children, at any depth): what the whole piece of work spent. Equal to `usage`
    /// when it started no sub-agent.
    pub tree_usage: Usage,
    /// The stored conversation, up to the running turn's prompt when a turn runs.
    pub transcript: Vec<Transcript>,
    /// The event log position to stream this session's events after (`Last-Event-ID`):
    /// the events of the running turn, replayed whole, then what follows. A client that
    /// shows `transcript` and then streams from here shows every event exactly once.
    pub resume_after: i64,
    /// Open permission asks (`permission_asked` events), oldest first.
    #[schema(value_type = Vec<Object>)]
    pub asks: Vec<Value>,
}

/// `POST /api/sessions/{id}/prompt`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct PromptRequest {
    pub text: String,
    /// Files to attach (read through the `read` tool, with its permission rules).
    #[serde(default)]
    pub files: Vec<String>,
    /// Also attach every file the text mentions as `@path` (relative to the session's
    /// directory; `@"…"` for a path with spaces), as the terminal's prompt box does.
    #[serde(default)]
    pub mentions: bool,
}

/// `POST /api/sessions/{id}/command`: run a custom command as a turn.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CommandRequest {
    /// The command's name (`review`, `team/deploy`); a leading slash is dropped.
    pub name: String,
    /// What follows the name (`$ARGUMENTS`, split into `$1`…`$9`).
    #[serde(default)]
    pub arguments: String,
}

/// The answer to an accepted op: it runs in the engine; events report the outcome.
#[derive(Debug, Serialize, ToSchema)]
pub struct Accepted {
    pub session_id: String,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct ModelRequest {
    /// `provider/model-id`.
    pub model: String,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct AgentRequest {
    pub agent: String,
}

/// The answer to a permission ask.
#[derive(Debug, Deserialize, ToSchema)]
pub struct AskReply {
    /// `once`, `always` or `reject`.
    pub reply: String,
    /// With `reject`: what the model should do instead (it reads this).
    pub feedback: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Resolved {
    pub resolved: bool,
}

/// `GET /api/info`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ServerInfo {
    pub version: String,
    pub cwd: String,
    pub project: String,
    pub trusted: bool,
    /// What a new session uses: null when no model is configured.
    pub model: Option<String>,
    pub agent: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ModelPrices {
    pub input: f64,
    pub output: f64,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ModelEntry {
    /// `provider/model-id`.
    pub id: String,
    pub provider: String,
    pub model: String,
    /// Context window, in tokens.
    pub context: u64,
    /// Largest reply, in tokens.
    pub output: u64,
    /// USD per million tokens.
    pub cost: Option<ModelPrices>,
    pub tools: bool,
    pub images: bool,
    pub reasoning: bool,
    /// Why a session cannot switch to it here (no credentials for its provider, …); null
    /// when it can.
    pub unusable: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ModelList {
    /// The model a new session uses; null when none is usable.
    pub default: Option<String>,
    pub models: Vec<ModelEntry>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AgentEntry {
    pub name: String,
    pub description: Option<String>,
    /// `primary`, `subagent` or `all`.
    pub mode: String,
    pub model: Option<String>,
    /// `built-in`, `config`, or the file that defined it.
    pub source: String,
    pub hidden: bool,
    pub disabled: bool,
}

/// `GET /api/mcp`: one configured MCP server.
#[derive(Debug, Serialize, ToSchema)]
pub struct McpServer {
    pub name: String,
    pub transport: String,
    /// `disabled`, `starting`, `ready` or `failed`.
    pub state: String,
    pub tools: usize,
    pub last_error: Option<String>,
}

/// `GET /api/commands`: one custom command (a Markdown prompt file, or `[commands.NAME]`).
#[derive(Debug, Serialize, ToSchema)]
pub struct CommandEntry {
    /// What follows the slash (`review`, `team/deploy`).
    pub name: String,
    /// What it does (empty when its file says nothing).
    pub description: String,
    /// What to type after the name (`argument-hint`); null when the file says nothing.
    pub argument_hint: Option<String>,
    /// Where it was defined: a path (relative to the project, or `~/…`), or `config`.
    pub source: String,
    /// It came with the repository (a project folder), not from the user.
    pub from_repository: bool,
}

impl From<CommandInfo> for CommandEntry {
    fn from(c: CommandInfo) -> Self {
        Self {
            name: c.name,
            description: c.description,
            argument_hint: c.argument_hint,
            source: c.source,
            from_repository: c.from_repository,
        }
    }
}
