//! Tool reloading for long-lived front ends (`podcode run`, the TUI): before each model
//! request the agent asks `Reloader`, which rebuilds the tool set when tool or plugin files
//! changed on disk or a background MCP server became ready. Every plugin host it starts is
//! kept so the front end can shut them all down at the end.

use std::sync::Arc;

use async_trait::async_trait;
use podcode_agent::ToolReloader;
use podcode_tools::ToolRegistry;
use tokio::sync::Mutex;

use crate::app::App;

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
}

impl Reloader {
    /// `first` is the host of the tool set already loaded.
    pub fn new(app: Arc<App>, first: Arc<podcode_plugins::PluginHost>) -> Self {
        let stamp = std::sync::Mutex::new(tools_stamp(&app));
        Self {
            app,
            stamp,
            hosts: Mutex::new(vec![first]),
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
    async fn reload(&self) -> Option<ToolRegistry> {
        let now = tools_stamp(&self.app);
        {
            let mut stamp = self.stamp.lock().ok()?;
            if *stamp == now {
                return None;
            }
            *stamp = now;
        }
        let loaded = self.app.tools().await;
        self.hosts.lock().await.push(loaded.host.clone());
        Some(loaded.registry)
    }
}
