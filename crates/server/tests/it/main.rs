//! Every integration test of `server` in one binary: one link and one executable on disk
//! instead of one per file (each file below was its own test target before, and is now a
//! module; its own `//!` says what it covers).
// Test code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod browser;
mod common;

mod api;
mod api_attach;
mod api_fork;
mod assets;
mod commands;
mod drive;
mod security;
mod web_asks;
mod web_attach;
mod web_cards;
mod web_changes;
mod web_commands;
mod web_fork;
mod web_hostile;
mod web_layout;
mod web_misc;
mod web_page;
mod web_pickers;
mod web_plugins;
mod web_stream;
