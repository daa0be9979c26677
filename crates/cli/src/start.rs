//! Starting a command: the engine for the directory (its config warnings printed once),
//! and the async runtime commands that run tools use. Each command starts here once, so
//! this is where the environment's places (`Dirs::from_env`) are read, for the process:
//! every other engine of the process is given the same value (by the session registry in
//! `serve`, by `acp`'s engine factory).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use podcode_core::{Dirs, Engine, PendingWarnings};
use podcode_protocol::sanitize_for_terminal;

pub fn engine(cwd: Option<PathBuf>) -> Result<Engine> {
    engine_in(cwd, Dirs::from_env())
}

/// `engine` with the places `dirs` names (a process that makes several engines reads the
/// environment once: `podcode acp`).
pub fn engine_in(cwd: Option<PathBuf>, dirs: Dirs) -> Result<Engine> {
    let mut engine = quiet(cwd, dirs)?;
    engine.use_own_sandbox_helper();
    warn(engine.sandbox_warnings());
    Ok(engine)
}

/// Prints each on stderr after `warning: `.
pub fn warn(warnings: Vec<String>) {
    for warning in warnings {
        eprintln!("warning: {}", sanitize_for_terminal(&warning));
    }
}

/// The engine with its config warnings printed, without the sandbox's start-up note.
pub fn engine_quiet(cwd: Option<PathBuf>) -> Result<Engine> {
    quiet(cwd, Dirs::from_env())
}

fn quiet(cwd: Option<PathBuf>, dirs: Dirs) -> Result<Engine> {
    let engine = Engine::load_in(cwd, dirs)?;
    warn(engine.warnings().to_vec());
    Ok(engine)
}

/// `engine`, after asking on a terminal whether to trust a workspace that ships its own
/// tool or plugin files.
pub fn trusted_engine(cwd: Option<PathBuf>) -> Result<Arc<Engine>> {
    let (engine, mut warnings) = trusted_engine_probing(cwd)?;
    warn(warnings.take());
    Ok(engine)
}

/// `trusted_engine` whose sandbox warnings are for the caller to `warn` (`take` waits for
/// the sandbox's probe, which meanwhile runs beside the command).
pub fn trusted_engine_probing(cwd: Option<PathBuf>) -> Result<(Arc<Engine>, PendingWarnings)> {
    let mut engine = quiet(cwd, Dirs::from_env())?;
    engine.use_own_sandbox_helper();
    let warnings = engine.sandbox_warnings_later();
    crate::trust_prompt::ask_to_trust(&mut engine);
    Ok((Arc::new(engine), warnings))
}

/// Says which tools could not load: the command still runs with what did load.
pub async fn warn_tool_errors(engine: &Engine) {
    let errors = engine.tool_errors().await.into_iter();
    warn(errors.map(|(m, s)| format!("{m} ({s})")).collect());
}

/// A multi-threaded runtime for commands that run tools.
pub fn tokio_runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
