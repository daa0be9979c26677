//! Turning plugin files into tools without waiting for JS: each file's load result (tool
//! manifests, hooks, warnings — or its load error) is cached, keyed on the plugin config,
//! the format, the host and runtime versions, and everything the load depended on
//! (`plugin_deps`: the file and the modules it imports, the packages they resolved to, the
//! node_modules folders on their resolution paths), so a warm start imports nothing and
//! spawns no sidecar, and an edited helper or a newly installed package is noticed. A
//! failure of the machine rather than the plugin (no runtime, host not startable) is never
//! cached. Only new or changed files are imported (which starts the sidecar). The outcome
//! is a tool source per file, the hooks of every plugin that has any, and a report per file
//! (with its load time and whether it came from the cache) for `podcode plugins`.

use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use podcode_protocol::ToolSpec;
use podcode_tools::{LoadProblem, ProblemLevel, SourceKind, Tool, ToolOrigin};
use serde::Serialize;
use serde_json::{Value, json};

use crate::host::{ClientCall, LoadError, LoadResult, PluginHost};
use crate::manifest_cache::ManifestCache;
use crate::plugin_deps::watch_list;
use crate::plugin_files::PluginFile;
use crate::plugin_tool::{HookedFile, PluginHooks, PluginTool};

/// How loading one plugin file went.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum FileStatus {
    /// It loaded.
    Loaded {
        /// How the host read it.
        format: String,
        /// The tool ids it defines.
        tools: Vec<String>,
        /// The hooks it registers.
        hooks: Vec<String>,
    },
    /// It did not load.
    Failed {
        /// Why, for the user.
        message: String,
    },
    /// It was not loaded.
    Skipped {
        /// Why (e.g. an untrusted project).
        reason: String,
    },
}

/// One plugin file's outcome, for `podcode plugins`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileReport {
    /// The file.
    pub file: PluginFile,
    /// How its load went.
    #[serde(flatten)]
    pub status: FileStatus,
    /// Problems that did not stop the load.
    pub warnings: Vec<String>,
    /// What the plugin told the opencode `client` while it loaded, and host notes (the
    /// host's zod stood in for a missing one).
    pub logs: Vec<ClientCall>,
    /// How long importing the file took (when it was imported, possibly in an earlier run).
    pub load_ms: Option<u64>,
    /// The result came from the manifest cache: nothing was imported this time.
    pub cached: bool,
}

/// Everything one load of the plugin files gave: tools per file, hooks, problems and per-file
/// reports.
pub struct PluginTools {
    /// One entry per file: its origin label and its tools.
    pub sources: Vec<(ToolOrigin, Vec<Arc<dyn Tool>>)>,
    /// Files that failed, for the user.
    pub problems: Vec<LoadProblem>,
    /// The hooks the files register, when any do.
    pub hooks: Option<PluginHooks>,
    /// One report per file.
    pub reports: Vec<FileReport>,
    /// Every path this load depended on (imported helpers, package.json files, node_modules
    /// folders on their resolution paths), for `fingerprint`.
    pub watched: BTreeSet<PathBuf>,
}

/// The part of the cache key that is not a file: format, plugin config, host and runtime.
fn stamp(file: &PluginFile, config: &Value, environment: &str) -> String {
    let mut h = DefaultHasher::new();
    config.to_string().hash(&mut h);
    file.format.as_str().hash(&mut h);
    environment.hash(&mut h);
    format!("{:016x}", h.finish())
}

/// One file's outcome and where it came from.
struct Outcome {
    result: Result<LoadResult, String>,
    load_ms: Option<u64>,
    cached: bool,
}

/// The cached outcome of `file` if nothing it depended on changed, else a fresh import
/// (cached unless the machine, not the plugin, failed). Adds what it watches to `watched`.
async fn load_one(
    file: &PluginFile,
    host: &Arc<PluginHost>,
    cache: &mut ManifestCache,
    key_stamp: String,
    watched: &mut BTreeSet<PathBuf>,
) -> Outcome {
    let name = file.path.display().to_string();
    let key = format!("plugin:{name}");
    if let Some(entry) = cache.get_entry(&key, &key_stamp) {
        watched.extend(entry.deps);
        let result = match entry.value.get("error").and_then(Value::as_str) {
            Some(e) => Err(e.to_string()),
            None => serde_json::from_value(entry.value).map_err(|e| e.to_string()),
        };
        return Outcome {
            result,
            load_ms: Some(entry.load_ms),
            cached: true,
        };
    }
    let started = Instant::now();
    let mark = host.denial_mark();
    let fresh = host.load(file).await.map(|(_, r)| r);
    // A load the sandbox made fail says what it refused and how to allow it, and is not
    // cached: it may load once the setting is changed.
    let note = fresh
        .as_ref()
        .err()
        .and_then(|e| host.sandbox_note(&e.message, mark));
    let failed = fresh.as_ref().err().map(|e| {
        let text = error_text(&name, e);
        match &note {
            Some(note) => format!("{text}\n{note}"),
            None => text,
        }
    });
    let load_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (value, deps) = match &fresh {
        Ok(r) => (
            serde_json::to_value(r).unwrap_or(Value::Null),
            watch_list(&file.path, Some(&r.dependencies)),
        ),
        Err(e) => (
            json!({"error": failed.clone().unwrap_or_default()}),
            watch_list(&file.path, e.dependencies.as_ref()),
        ),
    };
    watched.extend(deps.iter().cloned());
    match &fresh {
        Err(e) if e.environment || note.is_some() => cache.remove(&key),
        _ => cache.put_entry(&key, key_stamp, deps, load_ms, value),
    }
    Outcome {
        result: fresh.map_err(|_| failed.unwrap_or_default()),
        load_ms: Some(load_ms),
        cached: false,
    }
}

fn error_text(name: &str, e: &LoadError) -> String {
    match (e.line, e.column) {
        (Some(l), Some(c)) => format!("{name}:{l}:{c}: {}", e.message),
        (Some(l), None) => format!("{name}:{l}: {}", e.message),
        _ => e.message.clone(),
    }
}

/// Loads `files` into the host's sidecar (unchanged files from the manifest cache, without
/// importing them) and wraps their tools and hooks.
pub async fn load_plugin_tools(
    files: &[PluginFile],
    trusted: bool,
    host: &Arc<PluginHost>,
    cache: &mut ManifestCache,
    plugin_config: &Value,
) -> PluginTools {
    let mut out = PluginTools {
        sources: Vec::new(),
        problems: Vec::new(),
        hooks: None,
        reports: Vec::new(),
        watched: BTreeSet::new(),
    };
    let mut hooked = Vec::new();
    let environment = host.environment_stamp();
    let mut watched = BTreeSet::new();
    for file in files {
        let name = file.path.display().to_string();
        if file.project && !trusted {
            let reason = "this workspace is not trusted to run its own code (run `podcode trust` to allow it)".to_string();
            out.problems.push(LoadProblem {
                source: name,
                level: ProblemLevel::Warning,
                message: format!("skipped: {reason}"),
            });
            out.reports.push(FileReport {
                file: file.clone(),
                status: FileStatus::Skipped { reason },
                warnings: vec![],
                logs: vec![],
                load_ms: None,
                cached: false,
            });
            continue;
        }
        let key_stamp = stamp(file, plugin_config, &environment);
        let Outcome {
            result: outcome,
            load_ms,
            cached,
        } = load_one(file, host, cache, key_stamp, &mut watched).await;
        match outcome {
            Err(message) => {
                out.problems.push(LoadProblem {
                    source: name,
                    level: ProblemLevel::Error,
                    message: message.clone(),
                });
                out.reports.push(FileReport {
                    file: file.clone(),
                    status: FileStatus::Failed { message },
                    warnings: vec![],
                    logs: vec![],
                    load_ms,
                    cached,
                });
            }
            Ok(result) => {
                for w in &result.warnings {
                    out.problems.push(LoadProblem {
                        source: name.clone(),
                        level: ProblemLevel::Warning,
                        message: w.clone(),
                    });
                }
                let format = result
                    .format
                    .clone()
                    .unwrap_or_else(|| file.format.as_str().to_string());
                if !result.hooks.is_empty() {
                    hooked.push(HookedFile {
                        file: file.clone(),
                        hooks: result.hooks.clone(),
                        auth: result.auth.clone(),
                        opencode: format != "podcode",
                    });
                }
                let kind = if format == "opencode-tools" {
                    SourceKind::ToolFile
                } else {
                    SourceKind::Plugin
                };
                let tools: Vec<Arc<dyn Tool>> = result
                    .tools
                    .iter()
                    .map(|m| {
                        let mut spec = ToolSpec::new(
                            m.id.clone(),
                            m.description.clone(),
                            m.parameters.clone(),
                        )
                        .with_truncation(m.truncation)
                        .idempotent(m.idempotent);
                        spec.timeout_ms = m.timeout;
                        Arc::new(PluginTool::new(spec, file.clone(), host.clone())) as Arc<dyn Tool>
                    })
                    .collect();
                out.reports.push(FileReport {
                    file: file.clone(),
                    status: FileStatus::Loaded {
                        format,
                        tools: result.tools.iter().map(|t| t.id.clone()).collect(),
                        hooks: result.hooks.clone(),
                    },
                    warnings: result.warnings.clone(),
                    logs: result.logs.clone(),
                    load_ms,
                    cached,
                });
                out.sources.push((ToolOrigin::new(kind, name), tools));
            }
        }
    }
    cache.save();
    out.watched = watched;
    if !hooked.is_empty() {
        out.hooks = Some(PluginHooks {
            host: host.clone(),
            files: hooked,
        });
    }
    out
}
