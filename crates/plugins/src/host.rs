//! `PluginHost`: the JS runtime side of the plugin system. It picks the runtime (Bun if on
//! PATH, else Node 20+), materialises the embedded host files (its own dependencies, zod and
//! sucrase, are bundled among them: no install, no network) into a content-addressed folder
//! under the data directory, and starts the sidecar lazily — only when a plugin file must really be
//! imported or a plugin tool runs. A dead sidecar is replaced on next use; files it had
//! loaded are loaded again transparently.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::plugin_files::PluginFile;
use crate::sidecar::{RpcError, Sidecar};

include!(concat!(env!("OUT_DIR"), "/host_files.rs"));

/// The JavaScript runtime the plugin host runs in, with its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsRuntime {
    /// Bun (preferred: loads TypeScript directly, starts fast).
    Bun(PathBuf),
    /// Node.js (the fallback).
    Node(PathBuf),
}

impl JsRuntime {
    /// `bun` or `node`, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Bun(_) => "bun",
            Self::Node(_) => "node",
        }
    }
    fn program(&self) -> &Path {
        match self {
            Self::Bun(p) | Self::Node(p) => p,
        }
    }
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Bun first (TypeScript, `Bun.$`, `bun:sqlite` natively), then Node. `PODCODE_JS_RUNTIME`
/// (`bun`|`node`) forces one.
pub fn detect_runtime() -> Option<JsRuntime> {
    let forced = std::env::var("PODCODE_JS_RUNTIME").ok();
    let bun = || which("bun").map(JsRuntime::Bun);
    let node = || which("node").map(JsRuntime::Node);
    match forced.as_deref() {
        Some("bun") => bun(),
        Some("node") => node(),
        _ => bun().or_else(node),
    }
}

/// One call a plugin made to the opencode `client` while it loaded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientCall {
    /// `log` (`client.app.log`), `toast` (`client.tui.showToast`), or `host` (a note from
    /// the host about the load, e.g. that its zod stood in for a missing one).
    pub kind: String,
    /// The log level, or the toast's variant.
    pub level: String,
    /// The log's service, or the toast's title.
    #[serde(default)]
    pub service: String,
    /// The log text, or the toast's message.
    pub message: String,
    /// Structured detail the plugin passed, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Value>,
}

impl ClientCall {
    /// One line for `podcode plugins`: `log info wakelock: Plugin initializing`.
    pub fn line(&self) -> String {
        if self.kind == "host" {
            return format!("note: {}", self.message);
        }
        let who = if self.service.is_empty() {
            String::new()
        } else {
            format!("{}: ", self.service)
        };
        format!("{} {} {who}{}", self.kind, self.level, self.message)
    }
}

/// What loading one file produced (cached with what it depended on, see `plugin_source`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadResult {
    /// The id the plugin gave itself, when it did.
    #[serde(default)]
    pub plugin_id: Option<String>,
    /// How the host read the file (a Podcode plugin, an opencode plugin, opencode tool files).
    #[serde(default)]
    pub format: Option<String>,
    /// The tools the file defines.
    #[serde(default)]
    pub tools: Vec<ToolManifest>,
    /// The hooks it registers (`tool.execute.before`, …).
    #[serde(default)]
    pub hooks: Vec<String>,
    /// Its `auth` hooks: the provider each signs in for and its login methods.
    #[serde(default)]
    pub auth: Vec<crate::AuthHook>,
    /// Problems that did not stop the load.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// What the plugin told the opencode `client` while it loaded (`client.app.log`,
    /// `client.tui.showToast`), in call order.
    #[serde(default)]
    pub logs: Vec<ClientCall>,
    /// Files and packages the load used, for the manifest cache's staleness check.
    #[serde(default, skip_serializing)]
    pub dependencies: Dependencies,
}

/// One tool a plugin file defines, as the host reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolManifest {
    /// The tool's id.
    pub id: String,
    /// What the model reads about it.
    pub description: String,
    /// JSON Schema of its arguments (from its zod schema).
    pub parameters: Value,
    /// Which end of oversized output is kept.
    #[serde(default)]
    pub truncation: podcode_protocol::Truncation,
    /// Safe to retry.
    #[serde(default)]
    pub idempotent: bool,
    /// Its own timeout in milliseconds, if it set one.
    #[serde(default)]
    pub timeout: Option<u64>,
}

/// What every sidecar the host starts is given.
pub struct HostOptions {
    /// Where the host's files and installs live.
    pub data_dir: PathBuf,
    /// `plugin_config` from config, handed to each plugin.
    pub plugin_config: Value,
    /// The session directory (`ctx.directory`).
    pub directory: PathBuf,
    /// The workspace root (`ctx.worktree`).
    pub worktree: PathBuf,
    /// The sandbox the sidecar runs in (it may write the workspace and its own temp dir);
    /// `None` runs it unconfined.
    pub sandbox: Option<podcode_sandbox::Sandbox>,
}

/// The plugin host: starts the Bun/Node sidecar on demand, loads plugin files into it, and restarts
/// it after a crash.
pub struct PluginHost {
    runtime: Option<JsRuntime>,
    opts: HostOptions,
    state: Mutex<State>,
    spawns: AtomicU64,
    /// Serves the plugin `client` (toasts, session reads); set by the engine.
    client: std::sync::Mutex<Option<Arc<dyn crate::ClientBackend>>>,
    /// The running sidecar's sandbox policy, with the denial log its supervisor fills for
    /// the sidecar's whole life (`sandbox_note` reads what a call added to it).
    policy: std::sync::Mutex<Option<podcode_sandbox::Policy>>,
    /// `PluginInput`'s data (`plugin_input`), built on the first load.
    input: std::sync::OnceLock<Value>,
}

impl Drop for PluginHost {
    fn drop(&mut self) {
        self.set_policy(None);
    }
}

#[derive(Default)]
struct State {
    sidecar: Option<Sidecar>,
    /// Files the current sidecar has imported, with the file stamp they were imported at.
    loaded: HashMap<PathBuf, (String, LoadResult)>,
}

impl PluginHost {
    /// A host for `runtime` (`None`: no JS runtime found; every load then says so).
    pub fn new(runtime: Option<JsRuntime>, opts: HostOptions) -> Arc<Self> {
        Arc::new(Self {
            runtime,
            opts,
            state: Mutex::new(State::default()),
            spawns: AtomicU64::new(0),
            client: std::sync::Mutex::new(None),
            policy: std::sync::Mutex::new(None),
            input: std::sync::OnceLock::new(),
        })
    }

    /// Where the plugin `client`'s toasts and session reads go (sidecars started later).
    pub fn set_client(&self, backend: Arc<dyn crate::ClientBackend>) {
        if let Ok(mut c) = self.client.lock() {
            *c = Some(backend);
        }
    }

    /// The JS runtime in use, if one was found.
    pub fn runtime(&self) -> Option<&JsRuntime> {
        self.runtime.as_ref()
    }

    /// How many sidecar processes this host has started (0 while everything is cached).
    pub fn spawn_count(&self) -> u64 {
        self.spawns.load(Ordering::SeqCst)
    }

    fn host_dir(&self) -> PathBuf {
        self.opts
            .data_dir
            .join("plugin-host")
            .join(format!("{:016x}", host_version()))
    }

    /// What a load result depends on besides the plugin's own files: the host's version and
    /// the runtime (its path and its binary's stamp, which changes when it is upgraded).
    pub fn environment_stamp(&self) -> String {
        let runtime = self
            .runtime
            .as_ref()
            .map(|r| {
                format!(
                    "{}:{}:{}",
                    r.name(),
                    r.program().display(),
                    file_stamp(r.program())
                )
            })
            .unwrap_or_default();
        format!("{:016x}/{runtime}", host_version())
    }

    /// Writes the embedded files (the host's dependencies are bundled among them, so this
    /// needs no network and no package manager), once per version. Built in a private
    /// folder and renamed into place, so concurrent podcode processes never see (or run) a
    /// half-written host.
    fn prepare(&self) -> Result<PathBuf, String> {
        let dir = self.host_dir();
        if dir.join(".installed").exists() {
            return Ok(dir);
        }
        let tmp = dir.with_extension(podcode_protocol::new_id("tmp"));
        let _ = std::fs::remove_dir_all(&tmp);
        let written = write_host_files(&tmp);
        if let Err(e) = written {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
        // Only complete folders are ever renamed into place; if another process won the
        // race its folder is just as good, and ours is discarded.
        if std::fs::rename(&tmp, &dir).is_err() && !dir.join(".installed").exists() {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(format!(
                "could not move the plugin host into {}",
                dir.display()
            ));
        }
        let _ = std::fs::remove_dir_all(&tmp);
        Ok(dir)
    }

    async fn sidecar(&self, state: &mut State) -> Result<Sidecar, String> {
        if let Some(sc) = &state.sidecar
            && sc.is_alive()
        {
            return Ok(sc.clone());
        }
        state.loaded.clear();
        let Some(runtime) = &self.runtime else {
            return Err(
                "no JavaScript runtime found: install Bun (npm install -g bun) or Node.js 20+"
                    .into(),
            );
        };
        let dir = self.prepare()?;
        let mut policy = self.sandbox_policy()?;
        if let (Some(p), Some(sb)) = (
            policy.as_mut(),
            self.opts.sandbox.as_ref().filter(|s| s.is_active()),
        ) {
            p.denial_log = sb.denial_log("plugin-host");
        }
        self.set_policy(policy.clone());
        let sc = Sidecar::spawn(
            runtime.name(),
            runtime.program(),
            &dir.join("host.mjs"),
            &dir,
            self.opts.sandbox.as_ref().zip(policy.as_ref()),
        )
        .map_err(|e| format!("could not start {}: {e}", runtime.program().display()))?;
        self.spawns.fetch_add(1, Ordering::SeqCst);
        sc.set_client(self.client.lock().ok().and_then(|c| c.clone()));
        // What plugins tell the opencode `client` after loading goes to this log file.
        sc.set_log_file(self.opts.data_dir.join("logs").join("plugins.log"));
        sc.request(
            "initialize",
            // `directory`: the sidecar works there, so a plugin's `process.cwd()` and `$`
            // are the session's directory, as in opencode.
            json!({"protocolVersion": 1, "hostDir": dir, "directory": self.opts.directory}),
        )
        .await
        .map_err(|e| format!("the plugin host did not start: {e}"))?;
        state.sidecar = Some(sc.clone());
        Ok(sc)
    }

    /// The sidecar's sandbox policy: the workspace, the session directory and the plugin
    /// host's own temp dir are writable (besides the sandbox's own roots).
    fn sandbox_policy(&self) -> Result<Option<podcode_sandbox::Policy>, String> {
        let Some(sb) = &self.opts.sandbox else {
            return Ok(None);
        };
        let temp = sb
            .session_temp("plugin-host")
            .map_err(|e| format!("could not create the plugin host's temp directory: {e}"))?;
        let roots = [self.opts.directory.as_path(), self.opts.worktree.as_path()];
        Ok(Some(sb.policy(roots.into_iter().chain(temp.as_deref()))))
    }

    /// Replaces the running sidecar's policy, removing the old one's denial log.
    fn set_policy(&self, policy: Option<podcode_sandbox::Policy>) {
        let mut cur = self.policy.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(log) = cur.as_ref().and_then(|p| p.denial_log.as_ref()) {
            let _ = std::fs::remove_file(log);
        }
        *cur = policy;
    }

    fn current_policy(&self) -> Option<podcode_sandbox::Policy> {
        self.policy
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Where the sidecar's denial log ends now: a call passes it to `sandbox_note`, which
    /// then reads only what the sandbox refused after the call began.
    pub fn denial_mark(&self) -> usize {
        self.current_policy()
            .and_then(|p| p.denial_log)
            .map_or(0, |log| podcode_sandbox::log_len(&log))
    }

    /// What a plugin call's error gains when the sandbox caused it: what it refused (from
    /// the sidecar's denial log past `mark`) and which setting allows it.
    pub fn sandbox_note(&self, message: &str, mark: usize) -> Option<String> {
        let sb = self.opts.sandbox.as_ref()?;
        let policy = match self.current_policy() {
            Some(p) => p,
            None => self.sandbox_policy().ok()??,
        };
        let denial = podcode_sandbox::denial_for(&policy, message, &self.opts.directory, mark)?;
        Some(podcode_sandbox::denied_note(sb.mode(), &denial, true))
    }

    /// Imports `file` into the running sidecar (starting it if needed) unless already done.
    pub async fn load(&self, file: &PluginFile) -> Result<(Sidecar, LoadResult), LoadError> {
        let mut state = self.state.lock().await;
        let sc = self
            .sidecar(&mut state)
            .await
            .map_err(LoadError::environment)?;
        let stamp = file_stamp(&file.path);
        if let Some((at, done)) = state.loaded.get(&file.path)
            && *at == stamp
        {
            return Ok((sc, done.clone()));
        }
        let params = json!({
            "path": file.path,
            "format": file.format.as_str(),
            "pluginConfig": self.opts.plugin_config,
            "input": self.plugin_input(),
        });
        let result = sc
            .request("load", params)
            .await
            .map_err(LoadError::from_rpc)?;
        let result: LoadResult = serde_json::from_value(result).map_err(|e| {
            LoadError::plain(format!("the plugin host answered `load` unexpectedly: {e}"))
        })?;
        state
            .loaded
            .insert(file.path.clone(), (stamp, result.clone()));
        Ok((sc, result))
    }

    /// opencode's `PluginInput` data, found once (it runs git).
    fn plugin_input(&self) -> Value {
        self.input
            .get_or_init(|| {
                crate::plugin_input::plugin_input(&self.opts.directory, &self.opts.worktree)
            })
            .clone()
    }

    /// Stops the sidecar (a stuck plugin); the next call starts a fresh one.
    pub async fn restart(&self) {
        let mut state = self.state.lock().await;
        if let Some(sc) = state.sidecar.take() {
            sc.kill();
        }
        state.loaded.clear();
    }

    /// Asks the sidecar to exit, waits for it, and ends whatever it left running.
    pub async fn shutdown(&self) {
        let mut state = self.state.lock().await;
        if let Some(sc) = state.sidecar.take() {
            sc.stop(std::time::Duration::from_secs(2)).await;
        }
    }
}

/// A hash of the embedded host files (computed by the build script).
fn host_version() -> u64 {
    HOST_VERSION
}

fn write_host_files(tmp: &Path) -> Result<(), String> {
    for (rel, bytes) in HOST_FILES {
        let path = tmp.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    std::fs::write(tmp.join(".installed"), b"ok")
        .map_err(|e| format!("cannot write {}: {e}", tmp.display()))
}

/// Size and modification time: a changed file is imported again (the host busts the
/// module cache with a version query).
pub fn file_stamp(path: &Path) -> String {
    std::fs::metadata(path)
        .map(|m| {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
            format!("{}:{}", m.len(), mtime.map(|d| d.as_nanos()).unwrap_or(0))
        })
        .unwrap_or_default()
}

/// Why a file did not load, with its position when the runtime reported one.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadError {
    /// The runtime's error message.
    pub message: String,
    /// 1-based line in the file, when known.
    pub line: Option<u64>,
    /// 1-based column, when known.
    pub column: Option<u64>,
    /// The machine, not the plugin, failed (no JS runtime, the host could not be written or
    /// started, the sidecar died): never cached, so the next start tries again.
    pub environment: bool,
    /// What the failed load looked for (`data.dependencies`), when the host got that far.
    pub dependencies: Option<Dependencies>,
}

impl LoadError {
    fn plain(message: String) -> Self {
        Self {
            message,
            line: None,
            column: None,
            environment: false,
            dependencies: None,
        }
    }

    fn environment(message: String) -> Self {
        Self {
            environment: true,
            ..Self::plain(message)
        }
    }

    fn from_rpc(e: RpcError) -> Self {
        Self {
            line: e.data.get("line").and_then(Value::as_u64),
            column: e.data.get("column").and_then(Value::as_u64),
            environment: e.crashed,
            dependencies: e
                .data
                .get("dependencies")
                .and_then(|d| serde_json::from_value(d.clone()).ok()),
            message: e.message,
        }
    }
}

/// What a load depended on, as the sidecar resolved it (see docs/plugin-host-protocol.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Dependencies {
    /// The plugin file and every local module it imports, transitively.
    #[serde(default)]
    pub files: Vec<PathBuf>,
    /// npm packages it imported.
    #[serde(default)]
    pub packages: Vec<PackageDep>,
}

/// One npm package a load imported, and where it resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageDep {
    /// The package's name.
    pub name: String,
    /// Its installed version, when its package.json gives one.
    #[serde(default)]
    pub version: Option<String>,
    /// The package.json it resolved to.
    pub package_json: PathBuf,
}
