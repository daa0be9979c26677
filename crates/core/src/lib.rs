//! The Podcode engine: the one API every front end (`podcode run`, the TUI, `podcode tool
//! call`, `mcp serve`) uses. `Engine::load_in` reads config and trust for a directory (with the
//! places `Dirs` names, read from the environment once by the front end); the
//! engine owns the store, the tool set of every source (`sources`: built-ins, plugins,
//! executables, MCP, merged by `toolset::ToolSet`) and its reloading, and opens sessions.
//! A `Session` takes `Op`s and yields one ordered stream of `Event`s; permission asks are
//! `Event::PermissionAsked`, answered by `Op::PermissionReply` from whichever front end or
//! policy answers them. Stored history and the change journal are read through the engine
//! too, so front ends depend on this crate and `podcode-protocol` only.

mod active;
pub mod answer;
mod asker;
mod attachments;
mod auth_login;
pub mod call_text;
pub mod change_text;
mod changes;
mod child;
mod choices;
mod client_mcp;
mod commands;
mod drafts;
mod engine;
mod error;
mod event_log;
mod history;
mod language_servers;
pub mod list_text;
mod listing;
mod mentions;
pub mod one_turn;
mod plugin_auth;
mod plugin_client;
mod registry;
mod revert_note;
mod sandbox;
mod sandbox_status;
mod sequence;
mod serving;
mod session;
mod session_diff;
mod session_fork;
mod session_list;
mod skills_source;
mod sources;
mod task;
#[cfg(feature = "test-support")]
pub mod testing;
mod tool_session;
mod toolset;
mod totals;
pub mod trust_text;
pub mod turn_text;
mod worktree;
mod worktree_notes;
mod worktree_state;

pub use attachments::{MAX_ATTACHMENT_BYTES, attachment_name};
pub use auth_login::{AuthAction, AuthListing, LoginPrompter, TerminalPrompter};
pub use changes::{ChangeEntry, conflict_text, unified_diff};
pub use choices::Choice;
pub use client_mcp::ClientMcpServer;
pub use commands::unknown_command_text;
pub use drafts::Drafts;
pub use engine::{Engine, NewSessionSpec};
pub use error::EngineError;
pub use event_log::{EventLog, LoggedEvent, ResumePoint, event_type};
pub use history::format_time;
pub use sandbox::{SandboxReport, SandboxRun};
pub use sandbox_status::PendingWarnings;
/// The sandbox helper and kernel probe, for the binary's hidden `__sandbox-exec` and
/// `podcode sandbox status`.
pub mod sandbox_helper {
    pub use crate::sandbox::{
        HELPER_SUBCOMMAND, KernelSupport, LandlockSupport, NamespaceSupport, PROTECTED_NAMES,
        WRITABLE_DEVICES, hide_own_memory, run_helper,
    };
    /// Where `podcode-sandbox-helper` is installed beside a `podcode` executable, if it is.
    pub use podcode_sandbox::helper_beside;
}
pub use child::busy_child_text;
pub use listing::{ToolInfo, ToolListing};
pub use mentions::mentioned_files;
pub use plugin_client::SESSION_NOT_OPEN;
pub use registry::{EngineFactory, LiveSession, Resume, SessionRegistry};
pub use revert_note::revert_note_line;
pub use sequence::Numbered;
pub use session::{BUSY_TEXT, Port, Session, SessionOptions, SessionPick};
pub use sources::{
    Builtins, Executables, Mcp, PluginSettings, PluginState, Plugins, SourceLoad, ToolSource,
};
pub use task::{depth_limit_text, foreign_task_text, task_description, unknown_subagent_text};
pub use tool_session::ToolSession;
pub use toolset::{SessionTools, ToolSet, ToolSets};
pub use totals::Totals;
pub use worktree::{PruneNote, WorktreeInfo, fork as fork_worktree};

/// Agent profiles as front ends list them (`podcode agents`).
pub use podcode_agent::{AgentCatalog, AgentMode, AgentProblem, AgentProfile, CatalogEntry};
/// Stored rows and tool-call types front ends read through the engine.
pub use podcode_config::Dirs;
pub use podcode_mcp::ServerStatus;
pub use podcode_providers::{ModelInfo, Prices};
pub use podcode_store::{ApprovalRow, SessionRow, ToolCallState, WorktreeRow};
pub use podcode_tools::{CallOutcome, CallStatus, LoadProblem, ProblemLevel};
