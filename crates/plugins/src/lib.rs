//! Tool sources found on disk. Executable tools (any language: `describe` → JSON Schema,
//! `run` → output) and JS/TS plugins and opencode tool files, run in a Bun or Node sidecar
//! (`PluginHost`) that speaks JSON-RPC over stdio. Discovery honours workspace trust,
//! caches manifests so listing tools spawns nothing, and reports every problem per file.

mod auth;
mod client_backend;
mod config_deps;
mod discovery;
mod executable;
mod frames;
mod host;
mod manifest_cache;
mod npm_install;
mod opencode_events;
mod plugin_deps;
mod plugin_files;
mod plugin_input;
mod plugin_source;
mod plugin_tool;
mod sidecar;

pub use auth::{
    AuthChoice, AuthHook, AuthMethod, AuthOptions, AuthPrompt, AuthStep, FetchGuard, FetchResponse,
};
pub use client_backend::{ClientBackend, ClientError, Toast};
pub use config_deps::{
    ConfigDir, DepsReport, DepsStatus, OPENCODE_PLUGIN_VERSION, config_dirs, install_config_deps,
};
pub use discovery::{Discovered, DiscoveryOptions, discover};
pub use executable::{
    DescribeSandbox, ExecutableTool, describe_executable, describe_executable_in,
};
pub use host::{
    ClientCall, Dependencies, HOST_FILES, HostOptions, JsRuntime, LoadError, LoadResult,
    PackageDep, PluginHost, ToolManifest, detect_runtime, file_stamp,
};
pub use manifest_cache::{CachedEntry, ManifestCache};
pub use npm_install::{
    ensure_installed, install_dir, local_path, resolve_npm_plugins_installing, spec_has_version,
    spec_name,
};
pub use opencode_events::{DiffLookup, OpencodeEvents};
pub use plugin_files::{
    PluginDirs, PluginFile, PluginFormat, combine_fingerprints, files_fingerprint,
    find_plugin_files, fingerprint, plugin_dirs, resolve_npm_plugins, watched_fingerprint,
};
pub use plugin_input::{SERVER_URL, project};
pub use plugin_source::{FileReport, FileStatus, PluginTools, load_plugin_tools};
pub use plugin_tool::{CALLED_HOOKS, EventFeed, HookedFile, PluginHooks, PluginTool};
pub use sidecar::{RpcError, Sidecar};
