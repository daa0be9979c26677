//! The agent loop. `Agent::run_turn` takes one user prompt through as many model requests
//! ("steps") as it needs: each step streams the model's answer, records every part in the
//! store as it completes, runs the tool calls it asked for through the tool pipeline
//! (idempotent ones in parallel, results back in call order) and feeds the results into
//! the next step, until the model answers without tools, the user aborts, or `max_steps`
//! is reached (then one last request without tools asks for a summary).
//!
//! Events (`podcode_protocol::Event`) go out on the tool runtime's broadcast channel, so a
//! front end subscribes once (`ToolRuntime::subscribe`) and sees text deltas, steps, tool
//! calls and the turn's end in order. The conversation lives in the store; `load_history`
//! rebuilds the provider-neutral `Vec<Message>` from it, valid for every provider even after
//! an abort or a killed process (every tool call gets a result).

mod agent;
mod agent_files;
mod attach;
mod calls;
mod catalog;
mod error;
mod history;
mod profile;
mod prompt;
mod record;
mod step;
mod texts;

pub use agent::{Agent, AgentOptions, ReloadedTools, ToolReloader};
pub use agent_files::{AgentFile, parse as parse_agent_file};
pub use attach::FileData;
pub use catalog::{AgentCatalog, AgentDirs, AgentProblem, CatalogEntry};
pub use error::AgentError;
pub use history::{
    History, PartKind, ReasoningData, StepData, StepStatus, StoredPart, TextData, ToolData,
    load_history,
};
pub use podcode_config::AgentMode;
pub use profile::{AgentProfile, EXPLORE_TOOLS, PLAN_TOOLS, filter_registry, resolve_profile};
pub use prompt::{BASE_PROMPT, SystemContext, environment_facts, git_summary, system_prompt};
pub use texts::*;
