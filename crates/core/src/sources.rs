//! Where tools come from. Every kind of source — the built-ins, JS/TS plugin and tool files
//! (in the plugin host), executables, MCP servers — implements one `ToolSource` trait: it
//! loads (or reloads) what it offers as labelled groups of tools, with the problems it met
//! and the hooks its plugins bring, and it tells cheaply whether a reload would give
//! something new (`stamp`). `toolset::ToolSet` merges the sources in order.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use podcode_config::Dirs;
use podcode_plugins::{
    DiscoveryOptions, FileReport, HostOptions, ManifestCache, PluginDirs, PluginHooks, PluginHost,
};
use podcode_tools::{LoadProblem, ProblemLevel, Tool, ToolHook, ToolOrigin};
use serde_json::Value;

/// What one load of a source gave.
#[derive(Default)]
pub struct SourceLoad {
    /// Groups of tools, each under the label `podcode tools` shows as their source.
    pub groups: Vec<(ToolOrigin, Vec<Arc<dyn Tool>>)>,
    /// Problems met while loading, for the user.
    pub problems: Vec<LoadProblem>,
    /// Pipeline hooks (`tool.execute.before/after`, `permission.ask`, `shell.env`).
    pub hooks: Vec<Arc<dyn ToolHook>>,
    /// The source's `stamp` as of what this load read, when the load worked it out on the
    /// way (a source that says so in `stamps_its_loads` is not asked before its load).
    pub stamp: Option<u64>,
}

impl SourceLoad {
    /// Records a problem with `source`.
    pub fn problem(&mut self, source: &str, level: ProblemLevel, message: String) {
        self.problems.push(LoadProblem {
            source: source.into(),
            level,
            message,
        });
    }
}

/// One place tools come from.
#[async_trait]
pub trait ToolSource: Send + Sync {
    /// A short name for reports (`builtin`, `plugins`, `executables`, `mcp`).
    fn name(&self) -> &'static str;
    /// Loads what the source offers now; called again on every reload.
    async fn load(&self) -> SourceLoad;
    /// Changes whenever a new `load` could offer something else (files changed on disk, a
    /// background server became ready). Sources that never change return 0.
    fn stamp(&self) -> u64 {
        0
    }
    /// True when `load` gives its stamp (`SourceLoad::stamp`), computed from the same look
    /// at the disk as what it loaded: the set's builder then need not ask `stamp` first.
    fn stamps_its_loads(&self) -> bool {
        false
    }
    /// Called once the set built from the newest `load` is in use: resources of earlier
    /// loads can go (no call runs on them between model requests).
    async fn retire(&self) {}
    /// Stops everything the source started (processes, servers).
    async fn shutdown(&self) {}
}

/// The Rust built-ins (`read`, `bash`, …), always first; the `browser_*` tools start
/// browsers as this engine's `[browser]` config says.
pub struct Builtins {
    /// The workspace's language servers: the `lsp` tool is offered when one is installed.
    pub(crate) lsp: Option<Arc<podcode_lsp::LspManager>>,
    #[cfg(feature = "browser")]
    pub(crate) browsers: podcode_browser::Browsers,
}

/// The built-ins with the default `[browser]` settings.
impl Default for Builtins {
    fn default() -> Self {
        Self {
            lsp: None,
            #[cfg(feature = "browser")]
            browsers: podcode_browser::Browsers::new(Default::default()),
        }
    }
}

#[async_trait]
impl ToolSource for Builtins {
    fn name(&self) -> &'static str {
        "builtin"
    }
    async fn load(&self) -> SourceLoad {
        let mut registry = podcode_tools::ToolRegistry::new();
        podcode_builtins::register_all(&mut registry);
        if let Some(lsp) = self.lsp.as_ref().filter(|m| m.any_installed()) {
            registry.register_builtin(Arc::new(podcode_lsp::LspTool::new(lsp.clone())));
        }
        #[cfg(feature = "browser")]
        self.browsers.register(&mut registry);
        SourceLoad {
            groups: vec![(
                ToolOrigin::builtin(),
                registry.tools().iter().map(|t| t.tool.clone()).collect(),
            )],
            ..SourceLoad::default()
        }
    }
    /// Closes the browsers the `browser_*` tools started.
    async fn shutdown(&self) {
        #[cfg(feature = "browser")]
        self.browsers.close_all().await;
    }
}

/// What the plugin source needs to know about the workspace.
#[derive(Clone)]
pub struct PluginSettings {
    /// Where config and data live.
    pub dirs: Dirs,
    /// The engine's directory.
    pub cwd: PathBuf,
    /// The workspace root.
    pub project: PathBuf,
    /// Whether the workspace is trusted (project plugins load only then).
    pub trusted: bool,
    /// npm plugin packages from config (`plugins`).
    pub npm_plugins: Vec<String>,
    /// `plugin_config` from config.
    pub plugin_config: Value,
    /// The config in opencode's shape, handed to plugins' `config` hook (what the hooks add
    /// is applied: `config_added`).
    pub config: Value,
    /// The sandbox the plugin host runs in (`None`: unconfined).
    pub sandbox: Option<podcode_sandbox::Sandbox>,
    /// Serves the plugin `client`'s toasts and session reads.
    pub client: Option<Arc<crate::plugin_client::EngineClient>>,
}

impl PluginSettings {
    fn plugin_dirs(&self) -> PluginDirs {
        PluginDirs {
            home: self.dirs.home.clone(),
            opencode: self.dirs.opencode.dirs(),
            podcode_config: self.dirs.config_dir.clone(),
            project_root: self.project.clone(),
        }
    }

    /// Every folder tool and plugin files are loaded from (watched for reloads).
    pub fn tool_dirs(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = podcode_plugins::plugin_dirs(&self.plugin_dirs())
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
}

/// The newest plugin load: its host (sidecar), reports and hooks.
pub struct PluginState {
    /// The host whose sidecar runs the plugins.
    pub host: Arc<PluginHost>,
    /// Each plugin file's outcome.
    pub reports: Vec<FileReport>,
    /// The plugins' pipeline hooks, when any.
    pub hooks: Option<Arc<PluginHooks>>,
    /// The config dirs' own package.json installs (`.opencode/package.json`, …).
    pub config_deps: Vec<podcode_plugins::DepsReport>,
    /// What this load's plugins depended on (imported helpers, packages), for `stamp`.
    pub watched: std::collections::BTreeSet<PathBuf>,
    /// What the plugins' `config` hooks added (rules, MCP servers) and what they changed
    /// that is not applied.
    pub config_added: podcode_config::HookAdditions,
    /// The MCP servers the hooks added, keyed by their config (kept across reloads that
    /// add the same servers, so they are not restarted).
    pub mcp: Option<(String, Arc<podcode_mcp::McpSource>)>,
}

/// JS/TS plugins and tool files (Podcode and opencode formats) and npm plugin packages,
/// run in one sidecar. Each load starts a fresh host so changed helper modules are imported
/// anew; the previous host is shut down by `retire`.
pub struct Plugins {
    settings: PluginSettings,
    current: Mutex<Option<Arc<PluginState>>>,
    retired: Mutex<Vec<Arc<PluginHost>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl Plugins {
    /// The plugin source for `settings`; nothing loads until `load`.
    pub fn new(settings: PluginSettings) -> Self {
        Self {
            settings,
            current: Mutex::new(None),
            retired: Mutex::new(Vec::new()),
        }
    }

    /// The engine's side of the plugin `client` (toasts, session reads).
    pub(crate) fn client(&self) -> Option<&Arc<crate::plugin_client::EngineClient>> {
        self.settings.client.as_ref()
    }

    /// The newest load's host, reports and hooks (`None` before the first load).
    pub fn state(&self) -> Option<Arc<PluginState>> {
        lock(&self.current).clone()
    }

    /// The MCP servers plugins' `config` hooks added, started (waited for like configured
    /// ones before the first request); the previous load's source when they are the same.
    async fn added_mcp(
        &self,
        added: &podcode_config::HookAdditions,
    ) -> Option<(String, Arc<podcode_mcp::McpSource>)> {
        if added.mcp.is_empty() {
            return None;
        }
        let s = &self.settings;
        let key = serde_json::to_string(&added.mcp).unwrap_or_default();
        let previous = self
            .state()
            .and_then(|st| st.mcp.clone())
            .filter(|(k, _)| *k == key);
        let source = match previous {
            Some((_, source)) => source,
            None => Arc::new(podcode_mcp::McpSource::new_sandboxed(
                &added.mcp,
                s.dirs.data_dir.join("cache/mcp-manifests-plugins.json"),
                crate::sandbox::stdio_sandbox(
                    &s.dirs.home,
                    [s.project.as_path(), s.cwd.as_path()],
                    s.sandbox.clone(),
                    &added.mcp,
                ),
            )),
        };
        source.start().await;
        Some((key, source))
    }

    /// The permission rules plugins' `config` hooks added (after the config's own).
    pub fn added_rules(&self) -> Vec<podcode_protocol::PermissionRule> {
        self.state()
            .map(|st| st.config_added.rules.clone())
            .unwrap_or_default()
    }
}

#[async_trait]
impl ToolSource for Plugins {
    fn name(&self) -> &'static str {
        "plugins"
    }

    async fn load(&self) -> SourceLoad {
        let s = &self.settings;
        // The files' part of the stamp is taken before they are read (an edit during the
        // load shows at the next refresh); what they import is only known after the load,
        // so that part is taken then. The set's builder, stamping before the load, could
        // not include imports not yet made: the first refresh loaded every plugin again
        // and restarted the sidecar.
        let files_stamp = podcode_plugins::files_fingerprint(&s.tool_dirs());
        let host = PluginHost::new(
            podcode_plugins::detect_runtime(),
            HostOptions {
                data_dir: s.dirs.data_dir.clone(),
                plugin_config: s.plugin_config.clone(),
                directory: s.cwd.clone(),
                worktree: s.project.clone(),
                sandbox: s.sandbox.clone(),
            },
        );
        if let Some(c) = &s.client {
            host.set_client(c.clone());
        }
        let dirs = s.plugin_dirs();
        let config_deps =
            podcode_plugins::install_config_deps(&podcode_plugins::config_dirs(&dirs), s.trusted)
                .await;
        let (mut files, npm_errors) = podcode_plugins::resolve_npm_plugins_installing(
            &s.npm_plugins,
            &dirs,
            &s.dirs.data_dir.join("cache/npm"),
        )
        .await;
        files.extend(podcode_plugins::find_plugin_files(&dirs));
        let mut cache = ManifestCache::load(s.dirs.data_dir.join("cache/manifests.json"));
        let plugins = podcode_plugins::load_plugin_tools(
            &files,
            s.trusted,
            &host,
            &mut cache,
            &s.plugin_config,
        )
        .await;
        let mut out = SourceLoad {
            groups: plugins.sources,
            problems: plugins.problems,
            stamp: Some(podcode_plugins::combine_fingerprints(
                files_stamp,
                podcode_plugins::watched_fingerprint(&plugins.watched),
            )),
            ..SourceLoad::default()
        };
        for (name, message) in npm_errors {
            out.problem(&name, ProblemLevel::Error, message);
        }
        for r in &config_deps {
            let source = r.dir.join("package.json").display().to_string();
            match &r.status {
                podcode_plugins::DepsStatus::Failed { message } => {
                    out.problem(&source, ProblemLevel::Error, message.clone())
                }
                podcode_plugins::DepsStatus::HostProvided { message } => {
                    out.problem(&source, ProblemLevel::Warning, message.clone())
                }
                podcode_plugins::DepsStatus::Skipped { reason } => {
                    out.problem(&source, ProblemLevel::Warning, format!("skipped: {reason}"))
                }
                _ => {}
            }
        }
        let hooks = plugins.hooks.map(Arc::new);
        let mut config_added = podcode_config::HookAdditions::default();
        if let Some(h) = &hooks {
            if h.handles("config") {
                let (after, errors) = h.config(s.config.clone()).await;
                for e in errors {
                    out.problem("plugins", ProblemLevel::Warning, e);
                }
                config_added = podcode_config::hook_additions(&s.config, &after);
                for what in &config_added.ignored {
                    out.problem(
                        "plugins",
                        ProblemLevel::Warning,
                        crate::listing::config_not_applied_text(what),
                    );
                }
            }
            out.hooks.push(h.clone());
        }
        let mcp = self.added_mcp(&config_added).await;
        if let Some((_, source)) = &mcp {
            let (groups, problems) = source.tools();
            out.groups.extend(groups);
            out.problems.extend(problems);
        }
        let state = Arc::new(PluginState {
            host,
            reports: plugins.reports,
            hooks,
            config_deps,
            watched: plugins.watched,
            config_added,
            mcp,
        });
        if let Some(old) = lock(&self.current).replace(state) {
            lock(&self.retired).push(old.host.clone());
        }
        out
    }

    fn stamp(&self) -> u64 {
        let state = self.state();
        let none = std::collections::BTreeSet::new();
        let watched = state.as_ref().map_or(&none, |s| &s.watched);
        podcode_plugins::fingerprint(&self.settings.tool_dirs(), watched)
    }

    fn stamps_its_loads(&self) -> bool {
        true
    }

    async fn retire(&self) {
        let old: Vec<_> = std::mem::take(&mut *lock(&self.retired));
        for host in old {
            host.shutdown().await;
        }
    }

    async fn shutdown(&self) {
        self.retire().await;
        if let Some(state) = self.state() {
            state.host.shutdown().await;
        }
    }
}

/// Executables in `~/.config/podcode/tools/` and (trusted) `.podcode/tools/`.
pub struct Executables {
    /// Where to look and how to run `describe`.
    pub opts: DiscoveryOptions,
}

#[async_trait]
impl ToolSource for Executables {
    fn name(&self) -> &'static str {
        "executables"
    }
    async fn load(&self) -> SourceLoad {
        let found = podcode_plugins::discover(&self.opts).await;
        SourceLoad {
            groups: found.sources,
            problems: found.problems,
            ..SourceLoad::default()
        }
    }
    fn stamp(&self) -> u64 {
        let dirs: Vec<PathBuf> = self
            .opts
            .global_dirs
            .iter()
            .chain(&self.opts.project_dirs)
            .cloned()
            .collect();
        podcode_plugins::fingerprint(&dirs, &Default::default())
    }
}

/// `[mcp.<name>]` servers. Required ones are awaited; the rest start in the background and
/// offer their cached manifests, so they never delay the first model request.
pub struct Mcp {
    /// The servers.
    pub source: Arc<podcode_mcp::McpSource>,
    /// Servers the project's config names while the workspace is not trusted (left out).
    pub untrusted: Vec<String>,
}

#[async_trait]
impl ToolSource for Mcp {
    fn name(&self) -> &'static str {
        "mcp"
    }
    async fn load(&self) -> SourceLoad {
        let mut out = SourceLoad::default();
        for name in &self.untrusted {
            out.problem(
                &format!("mcp:{name}"),
                ProblemLevel::Warning,
                format!(
                    "skipped MCP server `{name}` from the project's config: this workspace is not trusted to run its own code (run `podcode trust` to allow it)"
                ),
            );
        }
        self.source.start().await;
        let (groups, problems) = self.source.tools();
        out.groups = groups;
        out.problems.extend(problems);
        out
    }
    fn stamp(&self) -> u64 {
        self.source.generation().rotate_left(32)
    }
}
