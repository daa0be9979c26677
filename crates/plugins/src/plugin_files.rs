//! Where JS/TS plugin and tool files are found (DESIGN.md §4), in precedence order — later
//! wins on an id collision: global opencode folders, global podcode folders, then the
//! project's `.opencode/` and `.podcode/` folders (only in a trusted workspace).

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PluginFormat {
    /// A `plugins/` folder: a Podcode plugin or an opencode plugin (the host decides).
    Plugin,
    /// A `tool/` or `tools/` folder: opencode tool files.
    ToolFile,
}

impl PluginFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Plugin => "plugin",
            Self::ToolFile => "opencode-tools",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct PluginFile {
    pub path: PathBuf,
    pub format: PluginFormat,
    /// From the project (needs trust) rather than the user's global folders.
    pub project: bool,
}

pub struct PluginDirs {
    pub home: PathBuf,
    /// The global podcode config folder (`~/.config/podcode`).
    pub podcode_config: PathBuf,
    pub project_root: PathBuf,
}

const EXTENSIONS: &[&str] = &["ts", "mts", "cts", "js", "mjs", "cjs", "tsx", "jsx"];

fn is_module(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    !name.ends_with(".d.ts")
        && !name.starts_with('.')
        && path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| EXTENSIONS.contains(&e))
        && path.is_file()
}

fn modules_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| is_module(p))
        .collect();
    files.sort();
    files
}

/// Every plugin and tool folder, lowest precedence first: `(dir, format, project)`.
pub fn plugin_dirs(d: &PluginDirs) -> Vec<(PathBuf, PluginFormat, bool)> {
    use PluginFormat::*;
    let oc_global = d.home.join(".config/opencode");
    let mut dirs = Vec::new();
    for (base, project) in [(oc_global, false), (d.podcode_config.clone(), false)] {
        dirs.push((base.join("tool"), ToolFile, project));
        dirs.push((base.join("tools"), ToolFile, project));
        dirs.push((base.join("plugin"), Plugin, project));
        dirs.push((base.join("plugins"), Plugin, project));
    }
    for base in [
        d.project_root.join(".opencode"),
        d.project_root.join(".podcode"),
    ] {
        dirs.push((base.join("tool"), ToolFile, true));
        dirs.push((base.join("tools"), ToolFile, true));
        dirs.push((base.join("plugin"), Plugin, true));
        dirs.push((base.join("plugins"), Plugin, true));
    }
    dirs
}

/// All plugin files, in precedence order.
pub fn find_plugin_files(d: &PluginDirs) -> Vec<PluginFile> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (dir, format, project) in plugin_dirs(d) {
        for path in modules_in(&dir) {
            let key = path.canonicalize().unwrap_or_else(|_| path.clone());
            if seen.insert(key) {
                out.push(PluginFile {
                    path,
                    format,
                    project,
                });
            }
        }
    }
    out
}
