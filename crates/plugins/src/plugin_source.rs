//! Turning plugin files into tools without waiting for JS: each file's load result (tool
//! manifests, hooks, warnings — or its load error) is cached per file content and plugin
//! config, so a warm start imports nothing and spawns no sidecar. Only new or changed
//! files are imported (which starts the sidecar). The outcome is a tool source per file,
//! the hooks of every plugin that has any, and a report line per file for `podcode plugins`.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use podcode_protocol::ToolSpec;
use podcode_tools::{LoadProblem, ProblemLevel, SourceKind, Tool, ToolSource};
use serde::Serialize;
use serde_json::{Value, json};

use crate::host::{LoadResult, PluginHost};
use crate::manifest_cache::ManifestCache;
use crate::plugin_files::PluginFile;
use crate::plugin_tool::{HookedFile, PluginHooks, PluginTool};

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum FileStatus {
    Loaded {
        format: String,
        tools: Vec<String>,
        hooks: Vec<String>,
    },
    Failed {
        message: String,
    },
    Skipped {
        reason: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileReport {
    pub file: PluginFile,
    #[serde(flatten)]
    pub status: FileStatus,
    pub warnings: Vec<String>,
}

pub struct PluginTools {
    pub sources: Vec<(ToolSource, Vec<Arc<dyn Tool>>)>,
    pub problems: Vec<LoadProblem>,
    pub hooks: Option<PluginHooks>,
    pub reports: Vec<FileReport>,
}

fn stamp(file: &PluginFile, config: &Value) -> Option<String> {
    let bytes = std::fs::read(&file.path).ok()?;
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    config.to_string().hash(&mut h);
    file.format.as_str().hash(&mut h);
    Some(format!("{:016x}", h.finish()))
}

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
    };
    let mut hooked = Vec::new();
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
            });
            continue;
        }
        let key = format!("plugin:{name}");
        let stamp = stamp(file, plugin_config);
        let cached = stamp.as_deref().and_then(|s| cache.get_value(&key, s));
        let outcome: Result<LoadResult, String> =
            match cached {
                Some(v) => match v.get("error").and_then(Value::as_str) {
                    Some(e) => Err(e.to_string()),
                    None => serde_json::from_value(v).map_err(|e| e.to_string()),
                },
                None => {
                    let fresh = host.load(file).await.map(|(_, r)| r).map_err(|e| {
                        match (e.line, e.column) {
                            (Some(l), Some(c)) => format!("{name}:{l}:{c}: {}", e.message),
                            (Some(l), None) => format!("{name}:{l}: {}", e.message),
                            _ => e.message,
                        }
                    });
                    if let Some(s) = stamp {
                        let value = match &fresh {
                            Ok(r) => serde_json::to_value(r).unwrap_or(Value::Null),
                            Err(e) => json!({"error": e}),
                        };
                        cache.put_value(&key, s, value);
                    }
                    fresh
                }
            };
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
                });
                out.sources.push((ToolSource::new(kind, name), tools));
            }
        }
    }
    cache.save();
    if !hooked.is_empty() {
        out.hooks = Some(PluginHooks {
            host: host.clone(),
            files: hooked,
        });
    }
    out
}
