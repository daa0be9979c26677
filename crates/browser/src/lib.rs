//! The eleven `browser_*` built-ins on a real headless Chromium, driven over the DevTools
//! protocol by `chromiumoxide`.
//!
//! Data flow: a call's arguments → `tools` (one `Tool` per id, texts in `texts`) → the
//! session's browser from `pool` (launched lazily by `launch` with a fresh profile, closed
//! at session end, after an idle timeout, or replaced after a crash) → `page` acts on the
//! one tab (every document request of the tab passes `gate` first: scheme, private
//! addresses, the `browser` permission per host) and waits for the page to settle →
//! `snapshot` turns the accessibility tree into text with stable refs, `diff` compares
//! snapshots and screenshots → a `ToolResult` (text, PNG attachments).

mod diff;
mod gate;
mod intercept;
mod launch;
mod page;
mod pool;
mod snapshot;
mod spawn;
mod texts;
mod tools;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use podcode_tools::ToolRegistry;

pub use diff::changed_share;

/// The eleven ids, in the order `podcode tools` lists them.
pub const TOOL_IDS: [&str; 11] = [
    "browser_navigate",
    "browser_snapshot",
    "browser_click",
    "browser_type",
    "browser_select",
    "browser_scroll",
    "browser_screenshot",
    "browser_look",
    "browser_measure",
    "browser_diff",
    "browser_resize",
];

/// How browsers are started (`[browser]` in the config).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrowserSettings {
    /// The Chromium (or Chrome) binary; `None` looks on `PATH` for the usual names.
    pub executable: Option<PathBuf>,
    /// A browser nobody used for this long is closed (its session keeps working: the next
    /// call starts a new one).
    pub idle_timeout: Duration,
}

impl Default for BrowserSettings {
    fn default() -> Self {
        Self {
            executable: None,
            idle_timeout: Duration::from_secs(600),
        }
    }
}

fn settings_cell() -> &'static RwLock<BrowserSettings> {
    static SETTINGS: OnceLock<RwLock<BrowserSettings>> = OnceLock::new();
    SETTINGS.get_or_init(|| RwLock::new(BrowserSettings::default()))
}

/// Sets how browsers started from now on are launched (the engine calls this with the
/// loaded config). Browsers already running keep their settings.
pub fn configure(settings: BrowserSettings) {
    if let Ok(mut s) = settings_cell().write() {
        *s = settings;
    }
}

pub(crate) fn settings() -> BrowserSettings {
    settings_cell()
        .read()
        .map(|s| s.clone())
        .unwrap_or_default()
}

/// Registers the eleven tools; they share the process's browser pool (one browser per
/// session id).
pub fn register(registry: &mut ToolRegistry) {
    let pool = pool::Pool::global();
    for tool in tools::all(pool) {
        registry.register_builtin(Arc::new(tool));
    }
}

/// Closes the browser of `session_id`, if one runs (the session ended).
pub async fn close_session(session_id: &str) {
    pool::Pool::global().close(session_id).await;
}

/// Closes every browser this process started (the engine shuts down).
pub async fn close_all() {
    pool::Pool::global().close_all().await;
}

/// How many browsers run now (for tests and `podcode` diagnostics).
pub fn running() -> usize {
    pool::Pool::global().running()
}

/// The process ids of the running browsers' main processes (of sessions not in a call).
pub fn browser_pids() -> Vec<u32> {
    pool::Pool::global().pids()
}

/// A browser's process and all its descendants (renderers, GPU, zygote).
pub fn process_tree(pid: u32) -> Vec<u32> {
    launch::process_tree(pid)
}

/// Memory (PSS, shared pages split) in bytes of the process trees of `pids` (Linux).
pub fn tree_memory(pids: &[u32]) -> u64 {
    pool::tree_memory(pids)
}
