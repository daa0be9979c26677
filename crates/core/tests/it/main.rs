//! Every integration test of `core` in one binary: one link and one executable on disk
//! instead of one per file (each file below was its own test target before, and is now a
//! module; its own `//!` says what it covers).
// Test code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod engine;
mod fork;
mod items;
mod plugin_client;
mod registry;
mod task;
mod toolset;
mod workspace;
mod worktree;
