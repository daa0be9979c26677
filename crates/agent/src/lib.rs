//! The agent loop. `Agent::run_turn` takes one user prompt through as many model requests
//! ("steps") as it needs: each step streams the model's answer, records every part in the
//! store as it completes, runs the tool calls it asked for through the tool pipeline
//! (idempotent ones in parallel, results back in call order) and feeds the results into
//! the next step, until the model answers without tools, the user aborts, or `max_steps`
//! is reached (then one last request without tools asks for a summary).
//!
//! Long sessions: before each request the prompt is checked against the model's context
//! budget (`budget`); past it, old tool outputs are pruned and then the older turns are
//! summarised (`compaction`), and a provider's overflow error compacts and retries once.
//! The store keeps every original; `load_history` replays recorded compactions.
//!
//! Events (`podcode_protocol::Event`) go out on the tool runtime's broadcast channel, so a
//! front end subscribes once (`ToolRuntime::subscribe`) and sees text deltas, steps, tool
//! calls and the turn's end in order. The conversation lives in the store; `load_history`
//! rebuilds the provider-neutral `Vec<Message>` from it, valid for every provider even after
//! an abort or a killed process (every tool call gets a result).

mod agent;
mod agent_files;
mod attach;
mod budget;
mod calls;
mod catalog;
mod compaction;
mod error;
mod history;
mod profile;
mod prompt;
mod record;
mod step;
mod texts;

pub use agent::{Agent, AgentOptions, CommandTurn, ReloadedTools, ToolReloader};
pub use agent_files::{AgentFile, parse as parse_agent_file};
pub use attach::FileData;
pub use budget::{Budget, estimate_fixed, estimate_messages, estimate_part, estimate_tools};
pub use catalog::{AgentCatalog, AgentDirs, AgentProblem, CatalogEntry};
pub use compaction::{PROTECTED_MESSAGES, Reason as CompactionReason};
pub use error::AgentError;
pub use history::{
    History, PartKind, ReasoningData, StepData, StepStatus, StoredPart, TextData, ToolData,
    load_history,
};
pub use podcode_config::AgentMode;
pub use profile::{AgentProfile, EXPLORE_TOOLS, PLAN_TOOLS, filter_registry, resolve_profile};
pub use prompt::{
    BASE_PROMPT, GitPrefetch, SystemContext, environment_facts, git_summary, system_prompt,
};
pub use texts::*;
