//! Starting a command: the engine for the directory (its config warnings printed once),
//! and the async runtime commands that run tools use.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use podcode_core::Engine;
use podcode_protocol::sanitize_for_terminal;

pub fn engine(cwd: Option<PathBuf>) -> Result<Engine> {
    let mut engine = engine_quiet(cwd)?;
    // The small helper installed beside this binary, or this binary itself
    // (`podcode __sandbox-exec`).
    if let Ok(exe) = std::env::current_exe() {
        engine.use_sandbox_helper(podcode_core::sandbox_helper::helper_beside(&exe));
    }
    for warning in engine.sandbox_warnings() {
        eprintln!("warning: {}", sanitize_for_terminal(&warning));
    }
    Ok(engine)
}

/// The engine with its config warnings printed, without the sandbox's start-up note.
pub fn engine_quiet(cwd: Option<PathBuf>) -> Result<Engine> {
    let engine = Engine::load(cwd)?;
    for warning in engine.warnings() {
        eprintln!("warning: {}", sanitize_for_terminal(warning));
    }
    Ok(engine)
}

/// `engine`, after asking on a terminal whether to trust a workspace that ships its own
/// tool or plugin files.
pub fn trusted_engine(cwd: Option<PathBuf>) -> Result<Arc<Engine>> {
    let mut engine = engine(cwd)?;
    crate::trust_prompt::ask_to_trust(&mut engine);
    Ok(Arc::new(engine))
}

/// A multi-threaded runtime for commands that run tools.
pub fn tokio_runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
