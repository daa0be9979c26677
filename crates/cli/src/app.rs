//! Loading everything a command needs, in one place: directories, the merged config (its
//! warnings printed once), workspace trust, the tool registry (built-ins, then global and
//! project executables, MCP servers), the store, and a runtime wired to a permission `Asker`.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use podcode_config::{Config, Dirs, TrustList, project_config_file, project_root};
use podcode_plugins::{
    FileReport, HostOptions, ManifestCache, PluginDirs, PluginHooks, PluginHost,
};
use podcode_protocol::PermissionRule;
use podcode_store::{NewSession, Store};
use podcode_tools::{
    Asker, CallIdentity, PermissionEngine, RuntimeOptions, ToolHook, ToolRegistry, ToolRuntime,
};

/// The merged tool set and what came with it.
pub struct LoadedTools {
    pub registry: ToolRegistry,
    pub hooks: Vec<Arc<dyn ToolHook>>,
    pub plugin_hooks: Option<Arc<PluginHooks>>,
    pub reports: Vec<FileReport>,
    pub host: Arc<PluginHost>,
}

pub struct App {
    pub dirs: Dirs,
    pub cwd: PathBuf,
    pub project: PathBuf,
    pub config: Config,
    pub trusted: bool,
    /// The configured MCP servers, started once per process and shared by every rebuild
    /// of the tool set.
    mcp: std::sync::OnceLock<Arc<podcode_mcp::McpSource>>,
}

impl App {
    pub fn load(cwd: Option<PathBuf>) -> Result<App> {
        let cwd = match cwd {
            Some(dir) => dir
                .canonicalize()
                .with_context(|| format!("--cwd {}", dir.display()))?,
            None => std::env::current_dir().context("cannot read the current directory")?,
        };
        let dirs = Dirs::from_env();
        let project = project_root(&cwd);
        let loaded = podcode_config::load(
            &dirs.global_config_file(),
            Some(&project_config_file(&project)),
        )?;
        for warning in &loaded.warnings {
            eprintln!("warning: {warning}");
        }
        let trusted = TrustList::load(&dirs.data_dir)?.is_trusted(&project);
        Ok(App {
            dirs,
            cwd,
            project,
            config: loaded.config,
            trusted,
            mcp: std::sync::OnceLock::new(),
        })
    }

    /// Built-ins first; then plugin and tool files and executables, global before project
    /// (project ones only when trusted). Later sources win on a collision, never silently.
    pub async fn tools(&self) -> LoadedTools {
        let mut registry = ToolRegistry::new();
        podcode_builtins::register_all(&mut registry);

        let plugin_config = serde_json::to_value(&self.config.plugin_config).unwrap_or_default();
        let host = PluginHost::new(
            podcode_plugins::detect_runtime(),
            HostOptions {
                data_dir: self.dirs.data_dir.clone(),
                plugin_config: plugin_config.clone(),
                directory: self.cwd.clone(),
                worktree: self.project.clone(),
            },
        );
        let dirs = PluginDirs {
            home: self.dirs.home.clone(),
            podcode_config: self.dirs.config_dir.clone(),
            project_root: self.project.clone(),
        };
        let (mut files, npm_errors) =
            podcode_plugins::resolve_npm_plugins(&self.config.plugins, &dirs);
        files.extend(podcode_plugins::find_plugin_files(&dirs));
        let mut cache = ManifestCache::load(self.dirs.data_dir.join("cache/manifests.json"));
        let plugins = podcode_plugins::load_plugin_tools(
            &files,
            self.trusted,
            &host,
            &mut cache,
            &plugin_config,
        )
        .await;
        for (source, tools) in plugins.sources {
            registry.merge(source, tools);
        }
        for p in plugins.problems {
            registry.add_problem(&p.source, p.level, p.message);
        }
        for (name, message) in npm_errors {
            registry.add_problem(&name, podcode_tools::ProblemLevel::Error, message);
        }

        let opts = podcode_plugins::DiscoveryOptions {
            global_dirs: vec![self.dirs.config_dir.join("tools")],
            project_dirs: vec![self.project.join(".podcode/tools")],
            trusted: self.trusted,
            cache_file: self.dirs.data_dir.join("cache/executables.json"),
        };
        let found = podcode_plugins::discover(&opts).await;
        for (source, tools) in found.sources {
            registry.merge(source, tools);
        }
        for p in found.problems {
            registry.add_problem(&p.source, p.level, p.message);
        }
        // MCP servers last: required ones are awaited, the rest start in the background and
        // offer their cached manifests, so they never delay the first model request.
        // Each tool holds its server, so the source itself need not outlive this call.
        for name in self.untrusted_mcp_servers() {
            registry.add_problem(
                &format!("mcp:{name}"),
                podcode_tools::ProblemLevel::Warning,
                format!(
                    "skipped MCP server `{name}` from the project's config: this workspace is not trusted to run its own code (run `podcode trust` to allow it)"
                ),
            );
        }
        let mcp = self.mcp_source();
        mcp.start().await;
        let (mcp_sources, mcp_problems) = mcp.tools();
        for (source, tools) in mcp_sources {
            registry.merge(source, tools);
        }
        for p in mcp_problems {
            registry.add_problem(&p.source, p.level, p.message);
        }
        let plugin_hooks = plugins.hooks.map(Arc::new);
        let mut hooks: Vec<Arc<dyn ToolHook>> = Vec::new();
        if let Some(h) = &plugin_hooks {
            if h.handles("config") {
                let config = serde_json::to_value(&self.config).unwrap_or_default();
                for e in h.broadcast("config", config, serde_json::json!({})).await {
                    registry.add_problem("plugins", podcode_tools::ProblemLevel::Warning, e);
                }
            }
            hooks.push(h.clone());
        }
        LoadedTools {
            registry,
            hooks,
            plugin_hooks,
            reports: plugins.reports,
            host,
        }
    }

    /// The configured MCP servers as a tool source (created once; not started yet). A server
    /// that the project's own config defines runs a command chosen by the repository, so it
    /// is left out until the workspace is trusted.
    pub fn mcp_source(&self) -> Arc<podcode_mcp::McpSource> {
        self.mcp
            .get_or_init(|| {
                let mut servers = self.config.mcp.clone();
                for name in self.untrusted_mcp_servers() {
                    servers.remove(&name);
                }
                Arc::new(podcode_mcp::McpSource::new(
                    &servers,
                    self.dirs.data_dir.join("cache/mcp-manifests.json"),
                ))
            })
            .clone()
    }

    /// MCP servers named in the project's config file while the workspace is not trusted.
    pub fn untrusted_mcp_servers(&self) -> Vec<String> {
        if self.trusted {
            return Vec::new();
        }
        let file = project_config_file(&self.project);
        match std::fs::read_to_string(&file) {
            Ok(text) => podcode_config::load_str(&file, &text)
                .map(|(c, _)| c.mcp.into_keys().collect())
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }

    /// Every folder tools and plugins are loaded from (for `podcode_plugins::fingerprint`,
    /// to notice files changed on disk and reload the tool set).
    pub fn tool_dirs(&self) -> Vec<PathBuf> {
        let dirs = PluginDirs {
            home: self.dirs.home.clone(),
            podcode_config: self.dirs.config_dir.clone(),
            project_root: self.project.clone(),
        };
        let mut out: Vec<PathBuf> = podcode_plugins::plugin_dirs(&dirs)
            .into_iter()
            .map(|(dir, _, _)| dir)
            .collect();
        for dir in [
            self.dirs.config_dir.join("tools"),
            self.project.join(".podcode/tools"),
        ] {
            if !out.contains(&dir) {
                out.push(dir);
            }
        }
        out
    }

    pub fn open_store(&self) -> Result<Arc<Store>> {
        let path = self.dirs.db_path();
        let store = Store::open(&path)
            .with_context(|| format!("cannot open the store at {}", path.display()))?;
        // Settle writes a crash interrupted, so `changes` and `revert` agree with the disk.
        podcode_tools::recover_interrupted_writes(&store)
            .iter()
            .for_each(|n| eprintln!("podcode: {n}"));
        Ok(Arc::new(store))
    }

    pub fn project_key(&self) -> String {
        self.project.to_string_lossy().into_owned()
    }

    pub fn runtime(
        &self,
        registry: ToolRegistry,
        hooks: Vec<Arc<dyn ToolHook>>,
        store: Arc<Store>,
        asker: Arc<dyn Asker>,
    ) -> ToolRuntime {
        self.runtime_with_rules(registry, hooks, store, asker, &[])
    }

    /// `runtime` with extra rules after the config's (an agent profile's, which refine them).
    pub fn runtime_with_rules(
        &self,
        registry: ToolRegistry,
        hooks: Vec<Arc<dyn ToolHook>>,
        store: Arc<Store>,
        asker: Arc<dyn Asker>,
        extra_rules: &[PermissionRule],
    ) -> ToolRuntime {
        let mut rules = podcode_builtins::default_rules();
        rules.extend(self.config.permission.iter().cloned());
        rules.extend(extra_rules.iter().cloned());
        let engine = PermissionEngine::new(rules, store.clone(), self.project_key(), asker);
        let mut opts = RuntimeOptions::new(self.dirs.spill_dir());
        opts.max_lines = self.config.tool_output.max_lines;
        opts.max_bytes = self.config.tool_output.max_bytes;
        opts.default_timeout = std::time::Duration::from_secs(self.config.tool.timeout);
        ToolRuntime::new(registry, store, engine, hooks, opts)
    }

    pub fn new_session(&self, store: &Store, agent: &str, title: &str) -> Result<String> {
        let cwd = self.cwd.to_string_lossy().into_owned();
        let row = store.create_session(&NewSession {
            agent: agent.into(),
            cwd: cwd.clone(),
            main_cwd: cwd,
            title: title.into(),
            ..Default::default()
        })?;
        Ok(row.id)
    }

    pub fn identity(&self, session_id: &str) -> CallIdentity {
        CallIdentity {
            session_id: session_id.into(),
            message_id: String::new(),
            call_id: String::new(),
            parent_id: None,
            root_id: None,
            agent: "cli".into(),
            main_cwd: self.cwd.clone(),
            directory: self.cwd.clone(),
            worktree: self.project.clone(),
        }
    }
}

/// A multi-threaded runtime for commands that run tools.
pub fn tokio_runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
