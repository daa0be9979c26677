//! `Engine`: everything a front end needs to start, in one place — the directories, the
//! merged config (its warnings kept for the front end to show), workspace trust, the
//! store (opened on first use), the tool set of every source (loaded on first use and kept
//! fresh by `ToolSets`), and the engine-wide event bus every session also publishes to.
//! Sessions are opened from here (`session.rs`); stored history and the change journal are
//! read and reverted through here (`history.rs`, `changes.rs`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use podcode_agent::{AgentCatalog, AgentDirs};
use podcode_config::{Config, Dirs, TrustList, project_config_file, project_root};
use podcode_protocol::{Event, PermissionRule};
use podcode_store::{NewSession, Store};
use podcode_tools::{Asker, PermissionEngine, RuntimeOptions, ToolHook, ToolRegistry, ToolRuntime};
use tokio::sync::{OnceCell, broadcast};

use crate::error::EngineError;
use crate::sources::{Builtins, Executables, Mcp, PluginSettings, Plugins, ToolSource};
use crate::toolset::ToolSets;

/// The engine every front end drives: one per working directory. It owns the config, the store, the
/// tool sets of every source and the event bus, and opens sessions over them.
pub struct Engine {
    dirs: Dirs,
    cwd: PathBuf,
    project: PathBuf,
    config: Config,
    trusted: AtomicBool,
    warnings: Vec<String>,
    /// What each opencode config file gave (`podcode plugins` reports it).
    opencode: Vec<podcode_config::OpencodeImport>,
    store: crate::session_diff::StoreSlot,
    mcp: OnceLock<Arc<podcode_mcp::McpSource>>,
    tools: Arc<OnceCell<Arc<ToolSets>>>,
    bus: broadcast::Sender<Event>,
    /// The sandbox helper (`sandbox.rs`); `Dirs::sandbox_helper` or `use_sandbox_helper`.
    pub(crate) sandbox_helper: Option<PathBuf>,
    /// Agent profiles (built-ins, agent files, config), read on first use.
    agents: OnceLock<Arc<AgentCatalog>>,
    /// The event log (`event_log.rs`), started by the first `serving::event_log` call.
    pub(crate) event_log: OnceLock<Arc<crate::event_log::EventLog>>,
    /// Sessions with a turn running now, whoever drives them (`active.rs`).
    pub(crate) active: Arc<crate::active::ActiveSessions>,
    /// The workspace's language servers (`language_servers.rs`), made on first use.
    pub(crate) lsp: OnceLock<Option<Arc<podcode_lsp::LspManager>>>,
    /// Models every session's agent has warned about (`AgentOptions::warned_models`).
    pub(crate) warned_models: Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
    /// The git status a session's opening starts reading for its first turn.
    pub(crate) git_prefetch: podcode_agent::GitPrefetch,
    /// New sessions held back for every front end of the process (`shared_drafts`).
    pub(crate) shared_drafts: crate::Drafts,
}

/// What a session records about where it runs.
pub struct NewSessionSpec<'a> {
    /// The agent profile the session starts with.
    pub agent: &'a str,
    /// Its title (may be empty).
    pub title: &'a str,
    /// The model it starts with (`provider/model-id`), if not the config's.
    pub model: Option<&'a str>,
}

impl Engine {
    /// Reads config and trust for `cwd` (the process's directory when `None`), with the
    /// places `dirs` names (built once at start-up with `Dirs::from_env`; engines for other
    /// directories of the same process are given the same value). Nothing here reads the
    /// environment.
    pub fn load_in(cwd: Option<PathBuf>, dirs: Dirs) -> Result<Engine, EngineError> {
        let cwd = match cwd {
            Some(dir) => dir
                .canonicalize()
                .map_err(|e| EngineError::Io(format!("--cwd {}: {e}", dir.display())))?,
            None => std::env::current_dir()
                .map_err(|e| EngineError::Io(format!("cannot read the current directory: {e}")))?,
        };
        let project = project_root(&cwd);
        let trusted = TrustList::load(&dirs.data_dir)?.is_trusted(&project);
        let secrets = trusted && TrustList::load_secrets(&dirs.data_dir)?.is_trusted(&project);
        // An untrusted project's config may only narrow (ask/deny), never allow.
        let loaded = load_config(&dirs, &cwd, &project, trusted, secrets)?;
        let (bus, _) = broadcast::channel(4096);
        // `[lsp.NAME]` / `[formatter.NAME]` entries that name nothing are config warnings too.
        let lsp_problems = podcode_lsp::servers_with(&loaded.config.lsp.servers).1;
        let formatter_problems =
            podcode_lsp::formatters_with(&loaded.config.formatter.formatters).1;
        let warnings = [loaded.warnings, lsp_problems, formatter_problems].concat();
        Ok(Engine {
            sandbox_helper: dirs.sandbox_helper.clone(),
            dirs,
            cwd,
            project,
            config: loaded.config,
            trusted: AtomicBool::new(trusted),
            warnings,
            opencode: loaded.opencode,
            store: Arc::new(Mutex::new(None)),
            mcp: OnceLock::new(),
            tools: Arc::new(OnceCell::new()),
            bus,
            agents: OnceLock::new(),
            event_log: OnceLock::new(),
            active: Arc::default(),
            lsp: OnceLock::new(),
            warned_models: Arc::default(),
            git_prefetch: Default::default(),
            shared_drafts: crate::Drafts::new(),
        })
    }

    /// MCP servers a client hands over for this engine's sessions (`podcode acp`), added
    /// to the configured ones; call before the tools first load. A name the config already
    /// uses keeps the config's server.
    pub fn add_mcp_servers(&mut self, servers: Vec<crate::ClientMcpServer>) {
        for server in servers {
            self.config
                .mcp
                .entry(server.name.clone())
                .or_insert_with(|| server.into_config());
        }
    }

    /// What was taken from each opencode config file (`opencode.json(c)`), in merge order.
    pub fn opencode_imports(&self) -> &[podcode_config::OpencodeImport] {
        &self.opencode
    }

    /// Config warnings (unknown keys, deprecated settings) for the front end to show once.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
    /// The directory the engine was started in.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }
    /// The workspace root (the git root above `cwd`, or `cwd`).
    pub fn project(&self) -> &Path {
        &self.project
    }
    /// The merged configuration (global, project, opencode files).
    pub fn config(&self) -> &Config {
        &self.config
    }
    /// Where config and data live.
    pub fn dirs(&self) -> &Dirs {
        &self.dirs
    }
    /// Whether the user trusts this workspace (project config, plugins and tools load only then).
    pub fn is_trusted(&self) -> bool {
        self.trusted.load(Ordering::SeqCst)
    }
    pub(crate) fn project_key(&self) -> String {
        self.project.to_string_lossy().into_owned()
    }

    /// Every event of every session of this engine (plugins' `event` hooks read it too).
    pub fn subscribe_all(&self) -> broadcast::Receiver<Event> {
        self.bus.subscribe()
    }
    pub(crate) fn bus(&self) -> &broadcast::Sender<Event> {
        &self.bus
    }

    /// Marks this workspace trusted (or not) and remembers it; takes effect for tools that
    /// load after the call.
    /// Revoking trust also takes back the permission to read secrets.
    pub fn set_trusted(&self, trusted: bool) -> Result<(), EngineError> {
        if !trusted {
            TrustList::load_secrets(&self.dirs.data_dir)?.set(&self.project, false)?;
        }
        // A decision made now replaces an earlier "no" to the question.
        TrustList::load_declined(&self.dirs.data_dir)?.set(&self.project, false)?;
        TrustList::load(&self.dirs.data_dir)?.set(&self.project, trusted)?;
        self.trusted.store(trusted, Ordering::SeqCst);
        Ok(())
    }

    /// Remembers that the user answered no to trusting this workspace: the question is not
    /// asked again (the start-up note says how to trust it later).
    pub fn decline_trust(&self) -> Result<(), EngineError> {
        TrustList::load_declined(&self.dirs.data_dir)?.set(&self.project, true)?;
        Ok(())
    }

    /// Whether the user answered no to trusting this workspace (and has not trusted it since).
    pub fn trust_declined(&self) -> bool {
        TrustList::load_declined(&self.dirs.data_dir).is_ok_and(|l| l.is_trusted(&self.project))
    }

    /// Trusts this workspace now, before anything loaded: remembers it and re-reads the
    /// project's config, which applies whole from here on.
    pub fn trust_now(&mut self) -> Result<(), EngineError> {
        self.set_trusted(true)?;
        self.reload_config()
    }

    /// Trusts this workspace and lets its opencode config read secrets (files outside the
    /// project, secret-named variables), remembers both, and re-reads the config.
    pub fn allow_secrets_now(&mut self) -> Result<(), EngineError> {
        self.set_trusted(true)?;
        TrustList::load_secrets(&self.dirs.data_dir)?.set(&self.project, true)?;
        self.reload_config()
    }

    fn reload_config(&mut self) -> Result<(), EngineError> {
        let secrets = TrustList::load_secrets(&self.dirs.data_dir)?.is_trusted(&self.project);
        let loaded = load_config(&self.dirs, &self.cwd, &self.project, true, secrets)?;
        self.config = loaded.config;
        self.agents = OnceLock::new();
        self.opencode = loaded.opencode;
        self.warnings = loaded.warnings;
        Ok(())
    }

    /// The `{file:}`/`{env:}` references of the project's opencode config that were left
    /// empty (`key ({reference})`), for the start-up question.
    pub fn refused_references(&self) -> Vec<String> {
        self.opencode
            .iter()
            .filter(|i| i.project)
            .flat_map(|i| i.refused.iter().cloned())
            .collect()
    }

    /// Every agent profile of this workspace: the built-ins, agent files (global, and the
    /// project's when it is trusted) and `[agent.NAME]` in config, with the files that
    /// could not be used.
    pub fn agents(&self) -> Arc<AgentCatalog> {
        self.agents
            .get_or_init(|| {
                let dirs = AgentDirs::standard(
                    &self.dirs.opencode,
                    &self.dirs.config_dir,
                    &self.project,
                    self.is_trusted(),
                );
                Arc::new(AgentCatalog::load(&self.config, &dirs))
            })
            .clone()
    }

    /// Where this workspace's skills may live, highest precedence first.
    pub fn skill_roots(&self) -> podcode_skills::Roots {
        podcode_skills::Roots::skills(&self.dirs, &self.cwd, &self.project)
    }

    /// What `podcode skills` lists: the skills found now, the files refused and why, the
    /// shadowed ones, each with where it came from.
    pub fn skill_lines(&self) -> Vec<String> {
        let roots = self.skill_roots();
        let catalog = podcode_skills::SkillCatalog::discover(&roots);
        podcode_skills::catalog_lines(&catalog, &roots)
            .iter()
            .map(|l| podcode_protocol::sanitize_for_terminal(l).into_owned())
            .collect()
    }

    /// Every trusted workspace root.
    pub fn trusted_roots(&self) -> Result<Vec<String>, EngineError> {
        Ok(TrustList::load(&self.dirs.data_dir)?
            .roots()
            .map(str::to_string)
            .collect())
    }

    /// How many tool and plugin files the workspace ships itself (`.podcode/`, `.opencode/`).
    pub fn project_tool_files(&self) -> usize {
        let dirs = [
            ".podcode/tools",
            ".podcode/tool",
            ".podcode/plugins",
            ".podcode/plugin",
            ".opencode/tools",
            ".opencode/tool",
            ".opencode/plugins",
            ".opencode/plugin",
        ];
        dirs.iter()
            .filter_map(|d| std::fs::read_dir(self.project.join(d)).ok())
            .map(|entries| entries.flatten().filter(|e| e.path().is_file()).count())
            .sum()
    }

    /// The store, opened on first use.
    pub fn store(&self) -> Result<Arc<Store>, EngineError> {
        let mut slot = match self.store.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if let Some(s) = slot.as_ref() {
            return Ok(s.clone());
        }
        let path = self.dirs.db_path();
        let store = Arc::new(Store::open(&path).map_err(|source| EngineError::OpenStore {
            path: path.display().to_string(),
            source,
        })?);
        // Settle writes a crash interrupted, so `changes` and `revert` agree with the disk.
        // Said on stderr: the store opens before any full-screen UI takes the terminal.
        for note in podcode_tools::recover_interrupted_writes(&store) {
            eprintln!("podcode: {note}");
        }
        *slot = Some(store.clone());
        Ok(store)
    }

    /// The configured MCP servers (created once; started by the first tool load). A server
    /// the project's own config defines runs a command chosen by the repository, so it is
    /// left out until the workspace is trusted.
    pub fn mcp_source(&self) -> Arc<podcode_mcp::McpSource> {
        self.mcp
            .get_or_init(|| {
                let mut servers = self.config.mcp.clone();
                for name in self.untrusted_mcp_servers() {
                    servers.remove(&name);
                }
                Arc::new(podcode_mcp::McpSource::new_sandboxed(
                    &servers,
                    self.dirs.data_dir.join("cache/mcp-manifests.json"),
                    self.mcp_sandbox(&servers),
                ))
            })
            .clone()
    }

    fn untrusted_mcp_servers(&self) -> Vec<String> {
        if self.is_trusted() {
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

    /// The tool sources in precedence order: built-ins, plugin and tool files, executables
    /// (global before project; project ones only when trusted), MCP servers.
    fn sources(&self) -> (Vec<Arc<dyn ToolSource>>, Arc<Plugins>) {
        let trusted = self.is_trusted();
        let plugins = Arc::new(Plugins::new(PluginSettings {
            dirs: self.dirs.clone(),
            cwd: self.cwd.clone(),
            project: self.project.clone(),
            trusted,
            npm_plugins: self.config.plugins.clone(),
            plugin_config: serde_json::to_value(&self.config.plugin_config).unwrap_or_default(),
            config: podcode_config::opencode_view(&self.config),
            sandbox: self.plugin_sandbox(),
            client: Some(Arc::new(crate::plugin_client::EngineClient::new(
                self.dirs.db_path(),
                self.project.clone(),
                self.active.clone(),
                self.auth_store(),
            ))),
        }));
        let executables = Executables {
            opts: podcode_plugins::DiscoveryOptions {
                global_dirs: vec![self.dirs.config_dir.join("tools")],
                project_dirs: vec![self.project.join(".podcode/tools")],
                trusted,
                cache_file: self.dirs.data_dir.join("cache/executables.json"),
                sandbox: self.describe_sandbox(),
            },
        };
        let mcp = Mcp {
            source: self.mcp_source(),
            untrusted: self.untrusted_mcp_servers(),
        };
        let builtins = Builtins {
            lsp: self.lsp(),
            #[cfg(feature = "browser")]
            browsers: podcode_browser::Browsers::new(podcode_browser::BrowserSettings {
                executable: self.config.browser.executable.as_ref().map(Into::into),
                idle_timeout: std::time::Duration::from_secs(
                    self.config.browser.idle_timeout.max(1),
                ),
            }),
        };
        let skills = crate::skills_source::Skills::new(self.skill_roots());
        let sources: Vec<Arc<dyn ToolSource>> = vec![
            Arc::new(builtins),
            Arc::new(skills),
            plugins.clone(),
            Arc::new(executables),
            Arc::new(mcp),
        ];
        (sources, plugins)
    }

    /// Stored provider credentials (`<data>/auth.json`).
    pub fn auth_store(&self) -> podcode_config::AuthStore {
        podcode_config::AuthStore::in_data_dir(&self.dirs.data_dir)
    }

    /// The cell the live tool set is kept in (for what reads it later, e.g. a signed client).
    pub(crate) fn tools_cell(&self) -> Arc<OnceCell<Arc<ToolSets>>> {
        self.tools.clone()
    }

    /// The live tool set, loaded on first use.
    pub async fn tool_sets(&self) -> Arc<ToolSets> {
        self.tools
            .get_or_init(|| async {
                let temp = self.dirs.data_dir.join("tmp");
                std::thread::spawn(move || crate::sandbox::clean_temp_dirs(&temp));
                let (sources, plugins) = self.sources();
                let switches = self.config.tools.clone();
                let client = plugins.client().cloned();
                let diffs = crate::session_diff::lookup(self.store.clone(), self.project.clone());
                let sets = ToolSets::start_switched(
                    sources,
                    Some(plugins),
                    self.bus.clone(),
                    switches,
                    Some(diffs),
                )
                .await;
                if let Some(c) = client {
                    c.attach(sets.notice_sender());
                }
                Arc::new(sets)
            })
            .await
            .clone()
    }

    /// Whether a loaded plugin registers hook `name` (false before the plugins loaded).
    pub fn plugins_have_hook(&self, name: &str) -> bool {
        self.tools
            .get()
            .and_then(|sets| sets.plugins()?.state()?.hooks.clone())
            .is_some_and(|hooks| hooks.handles(name))
    }

    /// The permission rules every session starts from: the built-ins' defaults, then the
    /// config's (an agent profile's or `--allow` rules come after them).
    pub(crate) fn base_rules(&self) -> Vec<PermissionRule> {
        let mut rules = podcode_builtins::default_rules();
        // Starting a sub-agent needs no ask of its own: what it does asks as usual. Loading
        // a skill only reads instructions (as opencode, allowed unless a rule says
        // otherwise: `permission = "skill"` per skill name).
        for permission in ["task", "skill", "lsp"] {
            rules.push(PermissionRule::new(
                permission,
                "*",
                podcode_protocol::PermissionAction::Allow,
            ));
        }
        // Files a front end uploaded for a prompt are read without an ask.
        rules.push(self.attachment_rule());
        rules.extend(self.config.permission.iter().cloned());
        // What plugins' `config` hooks added, once the plugins have loaded.
        if let Some(plugins) = self.tools.get().and_then(|sets| sets.plugins().cloned()) {
            rules.extend(plugins.added_rules());
        }
        rules
    }

    /// A pipeline over `registry` whose asks go to `asker`; `extra_rules` (an agent
    /// profile's, or `--allow` policies) come after the defaults and the config's rules;
    /// spawned processes run in agent `agent`'s sandbox.
    pub(crate) fn runtime(
        &self,
        registry: ToolRegistry,
        hooks: Vec<Arc<dyn ToolHook>>,
        asker: Arc<dyn Asker>,
        extra_rules: &[PermissionRule],
        agent: &str,
        events: podcode_tools::EventSink,
    ) -> Result<ToolRuntime, EngineError> {
        let store = self.store()?;
        let mut rules = self.base_rules();
        rules.extend(extra_rules.iter().cloned());
        let engine = PermissionEngine::new(rules, store.clone(), self.project_key(), asker);
        let mut opts = RuntimeOptions::new(self.dirs.spill_dir());
        opts.max_lines = self.config.tool_output.max_lines;
        opts.max_bytes = self.config.tool_output.max_bytes;
        opts.default_timeout = std::time::Duration::from_secs(self.config.tool.timeout);
        opts.sandbox = self.command_sandbox(agent);
        opts.secrets = self.secrets();
        opts.events = Some(events);
        opts.after_edit = self.edit_follow_up();
        // The pipeline keeps its call log and change journal in the store, through the
        // narrow traits of `podcode-records` (it never holds the store itself).
        let records = podcode_tools::Records::all(store);
        Ok(ToolRuntime::new(registry, records, engine, hooks, opts))
    }

    /// Creates a session row in this workspace: the one place sessions are born.
    pub fn create_session(&self, spec: &NewSessionSpec<'_>) -> Result<String, EngineError> {
        let cwd = self.cwd.to_string_lossy().into_owned();
        let row = self.store()?.create_session(&NewSession {
            agent: spec.agent.into(),
            cwd: cwd.clone(),
            main_cwd: cwd,
            model: spec.model.map(str::to_string),
            title: spec.title.into(),
            ..Default::default()
        })?;
        self.announce_session(&row);
        Ok(row.id)
    }

    /// Tells the engine's bus (plugins' `event` hooks read it) that `row` was just stored.
    pub(crate) fn announce_session(&self, row: &podcode_store::SessionRow) {
        let _ = self.bus.send(Event::SessionCreated {
            session_id: row.id.clone(),
            parent_id: row.parent_id.clone(),
            title: row.title.clone(),
            directory: row.cwd.clone(),
            agent: row.agent.clone(),
            created_at: row.created_at,
        });
    }

    /// Forgets the cached plugin and tool manifests, so every file is loaded again.
    pub fn drop_manifest_caches(&self) {
        podcode_plugins::ManifestCache::drop_all(&self.dirs.data_dir.join("cache"));
    }

    /// Stops plugin sidecars and MCP servers.
    pub async fn shutdown(&self) {
        if let Some(sets) = self.tools.get() {
            sets.shutdown().await;
        }
        if let Some(Some(lsp)) = self.lsp.get() {
            lsp.shutdown().await;
        }
    }
}

impl Engine {
    /// Starts every configured MCP server, waits for each (up to its startup timeout) and
    /// reports its state, tool count and last error.
    pub async fn mcp_status(&self) -> Vec<podcode_mcp::ServerStatus> {
        let source = self.mcp_source();
        source.start_and_wait().await;
        source.status()
    }
}

/// The workspace's config: opencode's files (`opencode.json(c)`: global, `$OPENCODE_CONFIG`,
/// `$OPENCODE_CONFIG_DIR`, project) as layers under Podcode's global and project files.
fn load_config(
    dirs: &Dirs,
    cwd: &Path,
    project: &Path,
    trusted: bool,
    secrets: bool,
) -> Result<podcode_config::LoadedConfig, EngineError> {
    let opencode = podcode_config::opencode_files(&dirs.opencode, cwd, project);
    let access = podcode_config::ProjectAccess {
        root: project,
        trusted,
        secrets,
    };
    Ok(podcode_config::load_workspace(
        &dirs.global_config_file(),
        Some(&project_config_file(project)),
        &opencode,
        access,
    )?)
}
