//! The engine's side of the sandbox: the `[sandbox]` config (and an agent profile's
//! override) turned into the `Sandbox` launchers the tool runtime (bash, executable tools)
//! and the plugin host get, the provider API key variables hidden from them and masked in
//! output, what this kernel enforces (`sandbox_report`, for `podcode sandbox status`), and
//! the one-time warning when it cannot. The helper is the `podcode` binary itself
//! (`podcode __sandbox-exec`), set by the front end with `use_sandbox_helper`; an engine
//! without a helper runs commands unsandboxed and says so in its warnings.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use podcode_config::{Config, SandboxConfig, SandboxMode};
use podcode_sandbox::{Mode, Sandbox, Secret, Settings};

pub use podcode_sandbox::{
    HELPER_SUBCOMMAND, KernelSupport, LandlockSupport, NamespaceSupport, PROTECTED_NAMES,
    WRITABLE_DEVICES, hide_own_memory, run_helper,
};

use crate::engine::Engine;
use crate::error::EngineError;

/// Package manager caches under `$HOME` stdio MCP servers may write (when they exist).
const MCP_CACHES: [&str; 4] = [".npm", ".cache", ".bun/install/cache", ".local/share/uv"];

/// What `podcode sandbox status` shows.
#[derive(Debug, Clone)]
pub struct SandboxReport {
    /// What this kernel can enforce.
    pub kernel: KernelSupport,
    /// `read-only`, `workspace-write` or `full`.
    pub mode: String,
    /// Whether commands and executable tools may use the network.
    pub command_network: bool,
    /// Whether the plugin host may use the network.
    pub plugin_network: bool,
    /// The roots every sandboxed process may write (besides its session's directories).
    pub writable: Vec<PathBuf>,
    /// Where per-session temp dirs live.
    pub temp_root: PathBuf,
    /// The variables removed from sandboxed processes' environments.
    pub hidden_env: Vec<String>,
    /// Whether a helper is configured (false: nothing is sandboxed).
    pub has_helper: bool,
    /// Paths in the workspace that stay read-only (`.git`, `.podcode`, `.opencode`, a
    /// worktree's git dirs), as they exist now.
    pub protected: Vec<PathBuf>,
    /// Credential stores that read as empty inside the sandbox.
    pub hidden_files: Vec<PathBuf>,
}

fn mode_of(mode: SandboxMode) -> Mode {
    match mode {
        SandboxMode::ReadOnly => Mode::ReadOnly,
        SandboxMode::WorkspaceWrite => Mode::WorkspaceWrite,
        SandboxMode::Full => Mode::Full,
    }
}

/// The provider API key variables: the built-in providers' and every `api_key_env`.
pub(crate) fn key_variables(config: &Config) -> Vec<String> {
    let mut names: Vec<String> = podcode_providers::BUILTIN_PROVIDERS
        .iter()
        .filter_map(|p| p.api_key_env.map(str::to_string))
        .collect();
    for p in config.provider.values() {
        if let Some(name) = &p.api_key_env
            && !names.contains(name)
        {
            names.push(name.clone());
        }
    }
    names
}

/// The server's bearer token variable (`podcode serve`): never passed to a command.
const SERVER_TOKEN_ENV: &str = "PODCODE_SERVER_TOKEN";

/// Variables removed from spawned processes: the key variables but those `allow_env`
/// passes, and always the server token.
fn hidden_env(config: &Config) -> Vec<String> {
    let mut out: Vec<String> = key_variables(config)
        .into_iter()
        .filter(|n| !config.sandbox.allow_env.contains(n))
        .collect();
    out.push(SERVER_TOKEN_ENV.to_string());
    out
}

/// `~/x` → `<home>/x`; relative entries are taken from the workspace.
fn expand(entry: &str, home: &Path, project: &Path) -> PathBuf {
    match entry.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None => project.join(entry),
    }
}

impl Engine {
    /// Makes `helper` (normally this `podcode` binary) the sandbox helper. Until it is
    /// called, nothing is sandboxed (and `sandbox_warnings` says so).
    pub fn use_sandbox_helper(&mut self, helper: PathBuf) {
        self.sandbox_helper = Some(helper);
    }

    /// `use_sandbox_helper` with the small helper installed beside this process's binary,
    /// or the binary itself (`podcode __sandbox-exec`).
    pub fn use_own_sandbox_helper(&mut self) {
        if let Ok(exe) = std::env::current_exe() {
            self.use_sandbox_helper(podcode_sandbox::helper_beside(&exe));
        }
    }

    pub(crate) fn sandbox_config(&self) -> &SandboxConfig {
        &self.config().sandbox
    }

    /// The sandbox for `bash` and executable tools in a session of agent `agent` (its
    /// profile may override mode and network).
    pub(crate) fn command_sandbox(&self, agent: &str) -> Option<Arc<Sandbox>> {
        let cfg = self.sandbox_config();
        let over = self.config().agent.get(agent).and_then(|a| a.sandbox);
        let settings = Settings {
            mode: mode_of(over.and_then(|o| o.mode).unwrap_or(cfg.mode)),
            network: over.and_then(|o| o.network).unwrap_or(cfg.network),
        };
        self.launcher(settings).map(Arc::new)
    }

    /// Where executable tools' `describe` step runs: the `[sandbox]` setting of commands,
    /// with the workspace writable (as a call's directory is).
    pub(crate) fn describe_sandbox(&self) -> Option<podcode_plugins::DescribeSandbox> {
        let cfg = self.sandbox_config();
        let sandbox = self.launcher(Settings {
            mode: mode_of(cfg.mode),
            network: cfg.network,
        })?;
        Some(podcode_plugins::DescribeSandbox {
            sandbox: Arc::new(sandbox),
            writable: vec![self.project().to_path_buf(), self.cwd().to_path_buf()],
        })
    }

    /// Where stdio MCP servers run: like the plugin host (its network setting), with the
    /// workspace writable, and the package managers' caches that exist (`npx -y …`,
    /// `uvx …` and `bunx …` servers install themselves there at every start). A sandbox
    /// can only open folders that exist, so when a sandboxed stdio server is configured
    /// `~/.npm` and `~/.cache` are made first (npm and XDG tools would make them anyway):
    /// otherwise the first `npx -y` server on a fresh account could never install itself.
    pub(crate) fn mcp_sandbox(
        &self,
        servers: &std::collections::BTreeMap<String, podcode_config::McpServerConfig>,
    ) -> Option<podcode_mcp::StdioSandbox> {
        stdio_sandbox(
            &self.dirs().home,
            [self.project(), self.cwd()],
            self.plugin_sandbox(),
            servers,
        )
    }

    /// The sandbox the plugin sidecar runs in (its own network setting).
    pub(crate) fn plugin_sandbox(&self) -> Option<Sandbox> {
        let cfg = self.sandbox_config();
        // Plugins are code the user installed: one that keeps state in its own folder in the
        // home works, its writes kept in the plugins' home layer, never in the real home.
        let layer = self.plugin_home_layer();
        self.plain_launcher(Settings {
            mode: mode_of(cfg.mode),
            network: cfg.plugin_network,
        })
        .map(|s| s.with_home_layer(self.dirs().home.clone(), layer))
    }

    /// Where the plugin host's writes to the home directory are kept (`upper/` holds them).
    pub fn plugin_home_layer(&self) -> PathBuf {
        self.dirs().data_dir.join("plugin-home")
    }

    /// The sandbox of commands and executable tools: credential stores read as empty in it.
    /// The plugin host and MCP servers (code the user installed, some of which read opencode's
    /// credentials themselves) get `plugin_sandbox`, without that.
    fn launcher(&self, settings: Settings) -> Option<Sandbox> {
        self.plain_launcher(settings)
            .map(|s| s.with_hidden_files(self.credential_files()))
    }

    fn plain_launcher(&self, settings: Settings) -> Option<Sandbox> {
        let helper = self.sandbox_helper.clone()?;
        Some(
            Sandbox::new(helper, settings)
                .with_writable(self.extra_writable())
                .with_temp_root(self.dirs().data_dir.join("tmp"))
                .with_hidden_env(hidden_env(self.config())),
        )
    }

    /// Credential stores no sandboxed process may read: Podcode's `auth.json`, and
    /// opencode's `auth.json` and `mcp-auth.json`.
    fn credential_files(&self) -> Vec<PathBuf> {
        let opencode = self.dirs().home.join(".local/share/opencode");
        vec![
            podcode_config::AuthStore::in_data_dir(&self.dirs().data_dir)
                .file()
                .to_path_buf(),
            opencode.join("auth.json"),
            opencode.join("mcp-auth.json"),
        ]
    }

    fn extra_writable(&self) -> Vec<PathBuf> {
        let mut roots = vec![self.dirs().spill_dir()];
        roots.extend(
            self.sandbox_config()
                .writable
                .iter()
                .map(|w| expand(w, &self.dirs().home, self.project())),
        );
        roots
    }

    /// The key values masked in every tool output (allowed ones included).
    pub(crate) fn secrets(&self) -> Vec<Secret> {
        let names = key_variables(self.config());
        podcode_sandbox::secrets_from_env(names.iter().map(String::as_str))
    }

    /// What the kernel enforces and what each kind of tool gets.
    pub fn sandbox_report(&self) -> SandboxReport {
        let cfg = self.sandbox_config();
        let roots = [self.project(), self.cwd()];
        SandboxReport {
            kernel: self.kernel_support(true),
            protected: podcode_sandbox::protected_paths(roots),
            mode: mode_of(cfg.mode).to_string(),
            command_network: cfg.network,
            plugin_network: cfg.plugin_network,
            writable: self.extra_writable(),
            temp_root: self.dirs().data_dir.join("tmp"),
            hidden_env: hidden_env(self.config()),
            has_helper: self.sandbox_helper.is_some(),
            hidden_files: self.credential_files(),
        }
    }

    /// What the kernel supports; namespaces as last probed this boot unless `fresh`.
    fn kernel_support(&self, fresh: bool) -> KernelSupport {
        match &self.sandbox_helper {
            Some(helper) => KernelSupport::detect_cached(helper, &self.probe_cache(), fresh),
            None => KernelSupport::detect(),
        }
    }
}

/// A command prepared by `Engine::sandbox_run`: spawn `command`, then `explain` what
/// the sandbox refused.
pub struct SandboxRun {
    /// The command, wrapped in the sandbox helper when sandboxed.
    pub command: std::process::Command,
    sandbox: Option<Sandbox>,
    policy: Option<podcode_sandbox::Policy>,
}

impl Drop for SandboxRun {
    fn drop(&mut self) {
        if let Some(log) = self.policy.as_ref().and_then(|p| p.denial_log.as_ref()) {
            let _ = std::fs::remove_file(log);
        }
    }
}

impl SandboxRun {
    /// What the sandbox refused while the command ran (from its denial log, so also
    /// when the command exited 0): one line each, saying which setting allows it.
    pub fn explain(&self) -> Vec<String> {
        let (Some(sb), Some(policy)) = (self.sandbox.as_ref(), self.policy.as_ref()) else {
            return Vec::new();
        };
        let Some(log) = policy.denial_log.as_ref().filter(|_| sb.is_active()) else {
            return Vec::new();
        };
        podcode_sandbox::read_log(log)
            .iter()
            .map(|d| podcode_sandbox::denied_note(sb.mode(), d, false))
            .collect()
    }

    /// The policy the command runs under, as JSON (`None` when nothing is sandboxed).
    pub fn policy_json(&self) -> Option<String> {
        self.policy.as_ref().map(podcode_sandbox::Policy::to_json)
    }
}

impl Engine {
    /// `argv` (program and arguments, exactly as given: no shell) run in the sandbox the
    /// `bash` tool uses in a session of agent `agent` (`build` when `None`), in the
    /// working directory, with the same environment changes and a temp dir of its own.
    pub fn sandbox_run(
        &self,
        agent: Option<&str>,
        argv: &[std::ffi::OsString],
    ) -> Result<SandboxRun, EngineError> {
        let Some((program, args)) = argv.split_first() else {
            return Err(EngineError::Io("no command to run".to_string()));
        };
        let sandbox = self
            .command_sandbox(agent.unwrap_or("build"))
            .map(|s| (*s).clone());
        let mut command;
        let mut policy = None;
        match &sandbox {
            Some(sb) => {
                let temp = if sb.is_active() {
                    sb.session_temp("sandbox-run").map_err(|e| {
                        EngineError::Io(format!(
                            "could not create the sandbox's temp directory: {e}"
                        ))
                    })?
                } else {
                    None
                };
                let roots = [self.cwd(), self.project()];
                let mut p = sb.policy(roots.into_iter().chain(temp.as_deref()));
                if sb.is_active() {
                    p.denial_log = sb.denial_log("sandbox-run");
                }
                let (program, argv) = sb.wrap(&p, program, args);
                command = std::process::Command::new(program);
                command.args(argv);
                for name in sb.hidden_env() {
                    command.env_remove(name);
                }
                if let Some(t) = temp {
                    command.env("TMPDIR", t);
                }
                policy = Some(p);
            }
            None => {
                command = std::process::Command::new(program);
                command.args(args);
            }
        }
        command.current_dir(self.cwd());
        Ok(SandboxRun {
            command,
            sandbox,
            policy,
        })
    }
}

/// Removes per-session temp dirs not touched for a week (like spill files).
pub(crate) fn clean_temp_dirs(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let week = std::time::Duration::from_secs(7 * 24 * 3600);
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > week);
        if old {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The sandbox of [`Engine::mcp_sandbox`] for `servers` (also the ones plugins' `config`
/// hooks add): `sandbox` with `roots` and the package managers' caches writable.
pub(crate) fn stdio_sandbox<'a>(
    home: &Path,
    roots: impl IntoIterator<Item = &'a Path>,
    sandbox: Option<Sandbox>,
    servers: &std::collections::BTreeMap<String, podcode_config::McpServerConfig>,
) -> Option<podcode_mcp::StdioSandbox> {
    let sandboxed_stdio = servers
        .values()
        .any(|s| s.enabled && s.sandbox && s.command.is_some());
    if sandboxed_stdio && home.is_dir() {
        for cache in &MCP_CACHES[..2] {
            let _ = std::fs::create_dir(home.join(cache));
        }
    }
    let mut writable: Vec<PathBuf> = roots.into_iter().map(Path::to_path_buf).collect();
    writable.extend(
        MCP_CACHES
            .iter()
            .map(|c| home.join(c))
            .filter(|p| p.is_dir()),
    );
    Some(podcode_mcp::StdioSandbox {
        sandbox: Arc::new(sandbox?),
        writable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_variables_cover_builtin_and_configured_providers() {
        let mut config = Config::default();
        config.provider.insert(
            "mine".into(),
            podcode_config::ProviderConfig {
                api_key_env: Some("MINE_KEY".into()),
                ..Default::default()
            },
        );
        config.sandbox.allow_env = vec!["GROQ_API_KEY".into()];
        let keys = key_variables(&config);
        for k in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "MINE_KEY",
            "GROQ_API_KEY",
        ] {
            assert!(keys.contains(&k.to_string()), "{k}");
        }
        let hidden = hidden_env(&config);
        assert!(hidden.contains(&"MINE_KEY".to_string()));
        assert!(!hidden.contains(&"GROQ_API_KEY".to_string()));
    }

    #[test]
    fn an_agent_profile_overrides_mode_and_network_and_full_mode_wraps_nothing() {
        let root = tempfile::tempdir().unwrap();
        let config_dir = root.path().join("config");
        std::fs::create_dir_all(&config_dir).unwrap();
        std::fs::create_dir_all(root.path().join("work")).unwrap();
        std::fs::write(
            config_dir.join("config.toml"),
            "[sandbox]\nnetwork = true\nwritable = [\"~/.cache\"]\n\n[agent.plan.sandbox]\nmode = \"read-only\"\nnetwork = false\n",
        )
        .unwrap();
        let dirs = podcode_config::Dirs {
            config_dir,
            ..podcode_config::Dirs::under(root.path())
        };
        let mut engine = Engine::load_in(Some(root.path().join("work")), dirs).unwrap();
        assert!(
            engine.command_sandbox("build").is_none(),
            "no helper, no sandbox"
        );
        assert_eq!(
            engine.sandbox_warnings(),
            vec!["sandbox: no sandbox helper is set for this engine, so commands and plugins run unsandboxed".to_string()]
        );
        engine.use_sandbox_helper(PathBuf::from("/bin/podcode"));
        let build = engine.command_sandbox("build").unwrap();
        assert_eq!(
            build.settings(),
            Settings {
                mode: Mode::WorkspaceWrite,
                network: true
            }
        );
        let policy = build.policy([]);
        assert!(policy.writable.contains(&root.path().join("home/.cache")));
        assert!(
            policy
                .writable
                .contains(&root.path().join("data/tool-output"))
        );
        let plan = engine.command_sandbox("plan").unwrap();
        assert_eq!(
            plan.settings(),
            Settings {
                mode: Mode::ReadOnly,
                network: false
            }
        );
        assert!(engine.plugin_sandbox().unwrap().settings().network);
    }

    #[test]
    fn writable_entries_expand_home_and_the_workspace() {
        assert_eq!(
            expand("~/.cache", Path::new("/h"), Path::new("/w")),
            PathBuf::from("/h/.cache")
        );
        assert_eq!(
            expand("build", Path::new("/h"), Path::new("/w")),
            PathBuf::from("/w/build")
        );
        assert_eq!(
            expand("/abs", Path::new("/h"), Path::new("/w")),
            PathBuf::from("/abs")
        );
    }
}
