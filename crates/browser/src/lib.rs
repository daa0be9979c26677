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
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
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

/// The browsers of one engine: how they start (its `[browser]` config) and which ones its
/// tools started. Each engine makes its own, so engines for different workspaces in one
/// process (`podcode acp`, `podcode serve`) keep their own settings, and closing one engine
/// closes only the browsers of its sessions. Browsers themselves sit in the process's pool,
/// by session id.
#[derive(Debug, Clone)]
pub struct Browsers {
    settings: Arc<BrowserSettings>,
    owner: u64,
}

impl Browsers {
    /// Browsers started with `settings`.
    pub fn new(settings: BrowserSettings) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self {
            settings: Arc::new(settings),
            owner: NEXT.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Registers the eleven tools, starting browsers with these settings.
    pub fn register(&self, registry: &mut ToolRegistry) {
        for tool in tools::all(pool::Pool::global(), self.clone()) {
            registry.register_builtin(Arc::new(tool));
        }
    }

    /// Closes every browser these tools started (the engine shuts down).
    pub async fn close_all(&self) {
        pool::Pool::global().close_owned(self.owner).await;
    }

    pub(crate) fn settings(&self) -> &BrowserSettings {
        &self.settings
    }

    pub(crate) fn owner(&self) -> u64 {
        self.owner
    }
}

/// Registers the eleven tools with the default settings (a `Browsers` of their own).
pub fn register(registry: &mut ToolRegistry) {
    Browsers::new(BrowserSettings::default()).register(registry);
}

/// Closes the browser of `session_id`, if one runs (the session ended).
pub async fn close_session(session_id: &str) {
    pool::Pool::global().close(session_id).await;
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
