//! Tool reloading for long-lived front ends (`podcode run`, the TUI): before each model
//! request the agent asks `Reloader`, which rebuilds the tool set when tool or plugin files
//! changed on disk or a background MCP server became ready. The rebuilt set brings its
//! plugins' hooks with it: the runtime swaps them in, and the plugins' `event` hooks are fed
//! from the front end's event stream (`forward_events`) — the old plugins' feed stops.
//! Each rebuild loads plugins in a fresh host (so helper modules are imported anew); the
//! previous host is shut down then — between model requests no call is running on it —
//! so a long session keeps one JavaScript sidecar, not one per reload.

use std::sync::Arc;

use async_trait::async_trait;
use podcode_agent::{ReloadedTools, ToolReloader};
use podcode_plugins::PluginHooks;
use podcode_protocol::Event;
use podcode_tools::ToolRegistry;
use tokio::sync::{Mutex, broadcast};
use tokio::task::AbortHandle;

use crate::app::{App, LoadedTools};
use crate::commands::plugins::plugin_lines;

/// Tool and plugin files on disk, and how many MCP servers have finished starting: when
/// either changes, the tool set is rebuilt before the next model request.
pub fn tools_stamp(app: &App) -> u64 {
    podcode_plugins::fingerprint(&app.tool_dirs()) ^ app.mcp_source().generation().rotate_left(32)
}

/// Where plugins' `event` hooks read events from, and where their failures are reported.
#[derive(Clone)]
pub struct EventFeed {
    /// A new receiver on the front end's event stream (`None` once it is gone).
    pub subscribe: Arc<dyn Fn() -> Option<broadcast::Receiver<Event>> + Send + Sync>,
    pub warn: Arc<dyn Fn(String) + Send + Sync>,
}

#[derive(Default)]
struct Feeding {
    feed: Option<EventFeed>,
    current: Option<AbortHandle>,
}

pub struct Reloader {
    app: Arc<App>,
    stamp: std::sync::Mutex<u64>,
    /// The plugin host of the newest tool set, shut down by `shutdown`.
    host: Mutex<Arc<podcode_plugins::PluginHost>>,
    /// The newest complete (unfiltered) tool set, its plugin hooks and its `podcode plugins`
    /// report.
    latest: std::sync::Mutex<Latest>,
    feeding: std::sync::Mutex<Feeding>,
}

struct Latest {
    registry: Arc<ToolRegistry>,
    plugin_hooks: Option<Arc<PluginHooks>>,
    report: Vec<String>,
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl Reloader {
    /// Starts from the tool set already loaded, taking its registry (read it back with
    /// `registry()`).
    pub fn new(app: Arc<App>, loaded: &mut LoadedTools) -> Self {
        let stamp = std::sync::Mutex::new(tools_stamp(&app));
        let report = plugin_lines(loaded);
        let registry = Arc::new(std::mem::take(&mut loaded.registry));
        Self {
            app,
            stamp,
            host: Mutex::new(loaded.host.clone()),
            latest: std::sync::Mutex::new(Latest {
                registry,
                plugin_hooks: loaded.plugin_hooks.clone(),
                report,
            }),
            feeding: std::sync::Mutex::new(Feeding::default()),
        }
    }

    /// The newest complete tool set (a front end building a runtime for another agent
    /// narrows it to that agent's tools).
    pub fn registry(&self) -> Arc<ToolRegistry> {
        lock(&self.latest).registry.clone()
    }

    /// The plugin report of the newest tool set.
    pub fn plugin_report(&self) -> Vec<String> {
        lock(&self.latest).report.clone()
    }

    /// Feeds `feed`'s events to the current plugins' `event` hooks, and to those of every
    /// later reload.
    pub fn forward_events(&self, feed: EventFeed) {
        let hooks = lock(&self.latest).plugin_hooks.clone();
        let mut feeding = lock(&self.feeding);
        feeding.feed = Some(feed);
        Self::restart_feed(&mut feeding, hooks.as_ref());
    }

    fn restart_feed(feeding: &mut Feeding, hooks: Option<&Arc<PluginHooks>>) {
        if let Some(old) = feeding.current.take() {
            old.abort();
        }
        let (Some(feed), Some(hooks)) = (&feeding.feed, hooks) else {
            return;
        };
        if let Some(events) = (feed.subscribe)() {
            feeding.current = hooks.forward_events(events, feed.warn.clone());
        }
    }

    pub async fn shutdown(&self) {
        if let Some(f) = lock(&self.feeding).current.take() {
            f.abort();
        }
        self.host.lock().await.shutdown().await;
    }
}

#[async_trait]
impl ToolReloader for Reloader {
    async fn reload(&self) -> Option<ReloadedTools> {
        let now = tools_stamp(&self.app);
        {
            let mut stamp = lock(&self.stamp);
            if *stamp == now {
                return None;
            }
            *stamp = now;
        }
        let mut loaded = self.app.tools().await;
        let old = std::mem::replace(&mut *self.host.lock().await, loaded.host.clone());
        let report = plugin_lines(&loaded);
        let registry = Arc::new(std::mem::take(&mut loaded.registry));
        *lock(&self.latest) = Latest {
            registry: registry.clone(),
            plugin_hooks: loaded.plugin_hooks.clone(),
            report,
        };
        Self::restart_feed(&mut lock(&self.feeding), loaded.plugin_hooks.as_ref());
        old.shutdown().await;
        Some(ReloadedTools {
            registry,
            hooks: loaded.hooks,
        })
    }
}
