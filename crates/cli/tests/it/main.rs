//! Every integration test of `cli` in one binary: one link and one executable on disk
//! instead of one per file (each file below was its own test target before, and is now a
//! module; its own `//!` says what it covers).
// Test code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

mod acp;
mod acp_history;
mod acp_workspace;
mod agents;
mod bounds;
mod cli;
mod config_secrets;
mod hidden_chars;
mod mcp;
mod opencode_crosscheck;
mod opencode_projects;
mod revert_note;
mod run;
mod run_browser;
mod run_browser_gate;
mod run_commands;
mod run_format;
mod run_lsp;
mod run_mcp;
mod run_overflow;
mod run_plugin_auth;
mod run_plugin_events;
mod run_plugin_hooks;
mod run_plugins;
mod run_skills;
mod run_todo;
mod run_webfetch_gate;
mod safety;
mod sandbox;
mod serve;
mod titles;
mod tree_totals;
mod tui;
mod tui_session;
mod tui_subagent;
mod worktree;
