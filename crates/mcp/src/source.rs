//! `McpSource`: every `[mcp.<name>]` server as one tool source. `start` waits for what the
//! first model request needs, as opencode does: servers marked `required` in full, a server
//! whose tools are not known yet (no manifest cached from an earlier start of this exact
//! config) up to its `first_request_wait`; the rest start in the background. Tools are
//! offered from the live listing when the server is ready, otherwise from the cached
//! manifest (like plugin manifests); a server with neither is reported as starting and its
//! tools join the session's next request once it is ready.
//! A failed server's tools stay listed (calls restart it) and the reason is a load problem.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use podcode_config::McpServerConfig;
use podcode_protocol::ToolSpec;
use podcode_tools::{LoadProblem, ProblemLevel, SourceKind, Tool, ToolOrigin};
use serde::{Deserialize, Serialize};

use crate::names::IdAllocator;
use crate::server::{McpServer, RemoteTool, ServerState};
use crate::tool::McpTool;

#[derive(Default, Serialize, Deserialize)]
struct CacheEntry {
    key: String,
    tools: Vec<RemoteTool>,
    /// The server declared the `resources` capability (older caches: no).
    #[serde(default)]
    resources: bool,
}

/// What a server offered when it last started: its tools, and whether it has resources.
struct Listing {
    tools: Vec<RemoteTool>,
    resources: bool,
}

/// Tool manifests per server, valid while the server's config is unchanged.
struct ManifestCache {
    file: PathBuf,
}

impl ManifestCache {
    fn key(config: &McpServerConfig) -> String {
        serde_json::to_string(config).unwrap_or_default()
    }

    fn read(&self) -> BTreeMap<String, CacheEntry> {
        std::fs::read(&self.file)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    fn get(&self, server: &McpServer) -> Option<Listing> {
        let mut all = self.read();
        let entry = all.remove(&server.name)?;
        (entry.key == Self::key(&server.config)).then_some(Listing {
            tools: entry.tools,
            resources: entry.resources,
        })
    }

    /// Records what a server that just started offers.
    fn put(&self, server: &McpServer) {
        let mut all = self.read();
        all.insert(
            server.name.clone(),
            CacheEntry {
                key: Self::key(&server.config),
                tools: server.tools(),
                resources: server.offers_resources(),
            },
        );
        if let Some(dir) = self.file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(bytes) = serde_json::to_vec_pretty(&all) {
            let tmp = self.file.with_extension("tmp");
            if std::fs::write(&tmp, bytes).is_ok() {
                let _ = std::fs::rename(&tmp, &self.file);
            }
        }
    }
}

/// One server's tools, ready to merge into the registry.
pub type SourceTools = (ToolOrigin, Vec<Arc<dyn Tool>>);

/// Every configured MCP server as one tool source: loads their tools (from the manifest cache while
/// a server is still starting) and reports their status.
pub struct McpSource {
    servers: Vec<Arc<McpServer>>,
    cache: Arc<ManifestCache>,
    /// Counts servers that finished starting, so a running session can notice new tools.
    ready: Arc<std::sync::atomic::AtomicU64>,
}

/// One server's line in `podcode mcp list`.
#[derive(Debug, Clone, Serialize)]
pub struct ServerStatus {
    /// The server's name in config.
    pub name: String,
    /// Its URL, or its command line.
    pub transport: String,
    /// Where it is in its life.
    pub state: ServerState,
    /// How many tools it listed.
    pub tools: usize,
    /// Why it last failed, if it did.
    pub last_error: Option<String>,
}

impl McpSource {
    /// The servers in `configs`, unsandboxed, caching tool manifests in `cache_file`.
    pub fn new(configs: &BTreeMap<String, McpServerConfig>, cache_file: PathBuf) -> Self {
        Self::new_sandboxed(configs, cache_file, None)
    }

    /// Like `new`; stdio servers start in `sandbox` (see `confine`).
    pub fn new_sandboxed(
        configs: &BTreeMap<String, McpServerConfig>,
        cache_file: PathBuf,
        sandbox: Option<crate::StdioSandbox>,
    ) -> Self {
        Self {
            servers: configs
                .iter()
                .map(|(name, c)| McpServer::sandboxed(name.clone(), c.clone(), sandbox.clone()))
                .collect(),
            cache: Arc::new(ManifestCache { file: cache_file }),
            ready: Arc::default(),
        }
    }

    /// Changes whenever a server finishes starting: the tool set should then be rebuilt
    /// before the next model request, so background servers join when ready.
    pub fn generation(&self) -> u64 {
        self.ready.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Every configured server, in name order.
    pub fn servers(&self) -> &[Arc<McpServer>] {
        &self.servers
    }

    /// Starts every enabled server. Waits for `required` ones, and up to its
    /// `first_request_wait` for each server with no cached manifest; the rest go on
    /// starting in the background (and cache their manifests when listed).
    pub async fn start(&self) {
        let mut required = Vec::new();
        let mut unknown = Vec::new();
        for server in self.servers.iter().filter(|s| s.config.enabled) {
            let known = server.status().0 == ServerState::Ready || self.cache.get(server).is_some();
            let s = server.clone();
            let cache = self.cache.clone();
            let ready = self.ready.clone();
            let task = tokio::spawn(async move {
                let was_ready = s.status().0 == ServerState::Ready;
                if s.client().await.is_ok() {
                    cache.put(&s);
                    // Only a server that just became ready changes the tool set.
                    if !was_ready {
                        ready.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                }
            });
            if server.config.required {
                required.push(task);
            } else if !known && server.config.first_request_wait > 0 {
                let wait = std::time::Duration::from_secs(server.config.first_request_wait);
                unknown.push(tokio::time::timeout(wait, task));
            }
        }
        for task in required {
            let _ = task.await;
        }
        // A server slower than its wait goes on starting: its task is not cancelled.
        futures_util::future::join_all(unknown).await;
    }

    /// Starts every enabled server and waits for all of them (for listing commands).
    pub async fn start_and_wait(&self) {
        let tasks: Vec<_> = self
            .servers
            .iter()
            .filter(|s| s.config.enabled)
            .map(|s| {
                let s = s.clone();
                let cache = self.cache.clone();
                tokio::spawn(async move {
                    if s.client().await.is_ok() {
                        cache.put(&s);
                    }
                })
            })
            .collect();
        for task in tasks {
            let _ = task.await;
        }
    }

    /// The tools to register now, and what the user should know about each server.
    pub fn tools(&self) -> (Vec<SourceTools>, Vec<LoadProblem>) {
        let mut ids = IdAllocator::new();
        let mut sources = Vec::new();
        let mut problems = Vec::new();
        let mut with_resources = Vec::new();
        for server in &self.servers {
            let source_name = format!("mcp:{}", server.name);
            let (state, error, _) = server.status();
            if state == ServerState::Disabled {
                continue;
            }
            let listed = if state == ServerState::Ready {
                Some(Listing {
                    tools: server.tools(),
                    resources: server.offers_resources(),
                })
            } else {
                self.cache.get(server)
            };
            match (state, &listed, error) {
                (ServerState::Failed, _, Some(reason)) => problems.push(LoadProblem {
                    source: source_name.clone(),
                    level: ProblemLevel::Error,
                    message: unavailable_text(&server.name, &reason),
                }),
                (ServerState::Starting, None, _) => problems.push(LoadProblem {
                    source: source_name.clone(),
                    level: ProblemLevel::Warning,
                    message: starting_text(&server.name),
                }),
                _ => {}
            }
            let Some(listed) = listed else { continue };
            if listed.resources {
                with_resources.push(server.clone());
            }
            let timeout_ms = server.config.timeout.saturating_mul(1000);
            let tools: Vec<Arc<dyn Tool>> = listed
                .tools
                .into_iter()
                .map(|t| {
                    let id = ids.id(&server.name, &t.name);
                    let mut spec = ToolSpec::new(id, t.description, t.input_schema);
                    spec.timeout_ms = Some(timeout_ms);
                    Arc::new(McpTool::new(spec, server.clone(), t.name)) as Arc<dyn Tool>
                })
                .collect();
            sources.push((ToolOrigin::new(SourceKind::Mcp, source_name), tools));
        }
        if !with_resources.is_empty() {
            sources.push((
                ToolOrigin::new(SourceKind::Mcp, crate::resources::SOURCE.to_string()),
                crate::resources::tools(&with_resources),
            ));
        }
        (sources, problems)
    }

    /// One status line per server, for `podcode mcp list` and `/mcp`.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.servers
            .iter()
            .map(|s| {
                let (state, last_error, tools) = s.status();
                let transport = match (&s.config.url, &s.config.command) {
                    (Some(url), _) => url.clone(),
                    (None, Some(cmd)) => std::iter::once(cmd.clone())
                        .chain(s.config.args.iter().cloned())
                        .collect::<Vec<_>>()
                        .join(" "),
                    (None, None) => "(no command or url)".into(),
                };
                ServerStatus {
                    name: s.name.clone(),
                    transport,
                    state,
                    tools,
                    last_error,
                }
            })
            .collect()
    }
}

/// The load problem for a server that failed to start or died.
pub fn unavailable_text(server: &str, reason: &str) -> String {
    format!(
        "MCP server `{server}` is unavailable: {reason}; its tools fail until it starts again (it is restarted on the next call)"
    )
}

/// The load problem for a server still starting whose tools are not known yet.
pub fn starting_text(server: &str) -> String {
    format!("MCP server `{server}` is starting in the background; its tools join once it is ready")
}
