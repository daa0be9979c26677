//! Tool reloading for long-lived front ends (`podcode run`, the TUI): before each model
//! request the agent asks `Reloader`, which rebuilds the tool set when tool or plugin files
//! changed on disk or a background MCP server became ready. Every plugin host it starts is
//! kept so the front end can shut them all down at the end.

use std::sync::Arc;

use async_trait::async_trait;
use podcode_agent::ToolReloader;
use podcode_tools::ToolRegistry;
use tokio::sync::Mutex;

use crate::app::{App, LoadedTools};
use crate::commands::plugins::plugin_lines;

/// Tool and plugin files on disk, and how many MCP servers have finished starting: when
/// either changes, the tool set is rebuilt before the next model request.
pub fn tools_stamp(app: &App) -> u64 {
    podcode_plugins::fingerprint(&app.tool_dirs()) ^ app.mcp_source().generation().rotate_left(32)
}

pub struct Reloader {
    app: Arc<App>,
    stamp: std::sync::Mutex<u64>,
    /// Every plugin host started for this process, shut down at the end.
    hosts: Mutex<Vec<Arc<podcode_plugins::PluginHost>>>,
    /// The newest complete (unfiltered) tool set and its `podcode plugins` report.
    latest: std::sync::Mutex<(Arc<ToolRegistry>, Vec<String>)>,
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
            hosts: Mutex::new(vec![loaded.host.clone()]),
            latest: std::sync::Mutex::new((registry, report)),
        }
    }

    /// The newest complete tool set (a front end building a runtime for another agent
    /// narrows it to that agent's tools).
    pub fn registry(&self) -> Arc<ToolRegistry> {
        match self.latest.lock() {
            Ok(l) => l.0.clone(),
            Err(p) => p.into_inner().0.clone(),
        }
    }

    /// The plugin report of the newest tool set.
    pub fn plugin_report(&self) -> Vec<String> {
        match self.latest.lock() {
            Ok(l) => l.1.clone(),
            Err(p) => p.into_inner().1.clone(),
        }
    }

    pub async fn shutdown(&self) {
        for host in self.hosts.lock().await.iter() {
            host.shutdown().await;
        }
    }
}

#[async_trait]
impl ToolReloader for Reloader {
    async fn reload(&self) -> Option<Arc<ToolRegistry>> {
        let now = tools_stamp(&self.app);
        {
            let mut stamp = self.stamp.lock().ok()?;
            if *stamp == now {
                return None;
            }
            *stamp = now;
        }
        let mut loaded = self.app.tools().await;
        self.hosts.lock().await.push(loaded.host.clone());
        let report = plugin_lines(&loaded);
        let registry = Arc::new(std::mem::take(&mut loaded.registry));
        if let Ok(mut l) = self.latest.lock() {
            *l = (registry.clone(), report);
        }
        Some(registry)
    }
}
