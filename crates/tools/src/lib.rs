//! The tool runtime: what a tool is (`Tool`), where tools are merged (`ToolRegistry`), and the
//! one pipeline every call goes through (`ToolRuntime::call`): resolve ▸ parse ▸ validate ▸
//! before-hooks ▸ permission ▸ execute ▸ after-hooks ▸ truncate+spill ▸ record, one module
//! per stage under `pipeline/`. The runtime is also the only writer of the call log.
//!
//! Nothing here opens a database: what the pipeline keeps (the call log, the change journal,
//! remembered approvals) goes through the small traits of `podcode-records` (`Records`), and
//! journaled writes, revert and crash recovery live together in `journal/`.
//!
//! No concrete tools live here; built-ins, plugins, MCP and executables implement `Tool`.

mod confine;
mod context;
mod fsafe;
mod hooks;
mod journal;
mod permission;
mod pipeline;
mod records;
mod registry;
mod schema;
mod texts;
mod tool;
mod truncate;

#[cfg(feature = "test-support")]
pub mod testing;

pub use confine::Confinement;
pub use context::{CallIdentity, ToolContext};
pub use hooks::{AfterEdit, BeforeDecision, HookCall, ToolHook};
pub use journal::{
    Applied, FileWrite, RevertError, RevertOptions, RevertOutcome, RevertTarget, WriteError,
    apply_journaled, diff_stats, is_reverted, recover_interrupted_writes, revert, unified_diff,
};
pub use permission::{
    AskRequest, Asker, FixedAsker, PermissionEngine, PermissionError, tool_permission,
    wildcard_match,
};
pub use pipeline::{
    CallOutcome, CallRequest, CallStatus, EventSink, PreparedCall, RawArgs, RuntimeOptions,
    ToolRuntime,
};
pub use podcode_protocol::{PromptSection, PromptText, argument_lines, prompt_text};
pub use podcode_records::{
    ApprovalRow, Approvals, CallLog, ChangeJournal, Conversation, Intent, MessageRow,
    PendingChange, RecordError, WorktreeRecords, WorktreeRow,
};
pub use records::Records;
pub use registry::{
    LoadProblem, PROTECTED_TOOL_IDS, ProblemLevel, RegisteredTool, SourceKind, SwitchedOff,
    ToolOrigin, ToolRegistry, is_protected,
};
pub use schema::{ArgIssue, apply_defaults, validate_args, warm_validation};
pub use texts::*;
pub use tool::{Tool, ToolError};
pub use truncate::{OutputSink, SpillInfo, Truncated, clean_spill_dir};
