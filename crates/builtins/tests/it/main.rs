//! Every integration test of `builtins` in one binary: one link and one executable on disk
//! instead of one per file (each file below was its own test target before, and is now a
//! module; its own `//!` says what it covers).
// Test code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

mod apply_patch;
mod bash;
mod bash_sandbox;
mod edit;
mod glob;
mod grep;
mod list;
mod read;
mod safety;
mod secrets;
mod symbols;
mod sync_to_main;
mod webfetch;
mod webfetch_gate;
mod write;
