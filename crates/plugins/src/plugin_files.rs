//! Where JS/TS plugin and tool files are found (DESIGN.md §4), in precedence order — later
//! wins on an id collision: global opencode folders (`$XDG_CONFIG_HOME/opencode` or
//! `~/.config/opencode`, then `$OPENCODE_CONFIG_DIR`), global podcode folders, then the
//! project's `.opencode/` and `.podcode/` folders (only in a trusted workspace).

use std::path::{Path, PathBuf};

/// How a plugin file is loaded, by the folder it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PluginFormat {
    /// A `plugins/` folder: a Podcode plugin or an opencode plugin (the host decides).
    Plugin,
    /// A `tool/` or `tools/` folder: opencode tool files.
    ToolFile,
}

impl PluginFormat {
    /// The name shown in listings.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Plugin => "plugin",
            Self::ToolFile => "opencode-tools",
        }
    }
}

/// A plugin or tool file found in a folder.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct PluginFile {
    /// Its path.
    pub path: PathBuf,
    /// How it is loaded.
    pub format: PluginFormat,
    /// From the project (needs trust) rather than the user's global folders.
    pub project: bool,
}

/// The folders plugin files are looked for in.
pub struct PluginDirs {
    /// The user's home directory.
    pub home: PathBuf,
    /// opencode's user-level config dirs, lowest precedence first (`OpencodeDirs::dirs`).
    pub opencode: Vec<PathBuf>,
    /// The global podcode config folder (`~/.config/podcode`).
    pub podcode_config: PathBuf,
    /// The project root (its `.opencode/` and `.podcode/`; loaded when trusted).
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
    let mut dirs = Vec::new();
    let globals = d.opencode.iter().chain(std::iter::once(&d.podcode_config));
    for (base, project) in globals.map(|b| (b.clone(), false)) {
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

/// Resolves npm packages listed in config (`plugins = ["name"]`) to their entry file, from
/// the project's `node_modules` (walking up) and then the global config folder's. Packages
/// found inside the project run repository-chosen code, so they count as project files.
pub fn resolve_npm_plugins(
    names: &[String],
    d: &PluginDirs,
) -> (Vec<PluginFile>, Vec<(String, String)>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let mut bases: Vec<(PathBuf, bool)> = d
        .project_root
        .ancestors()
        .map(|a| (a.join("node_modules"), true))
        .collect();
    bases.push((d.podcode_config.join("node_modules"), false));
    for name in names {
        let found = bases.iter().find_map(|(base, project)| {
            let dir = base.join(name);
            dir.join("package.json")
                .is_file()
                .then_some((dir, *project))
        });
        let Some((dir, project)) = found else {
            errors.push((
                name.clone(),
                format!(
                    "plugin package {name} is not installed: run `npm install {name}` in {} or {}",
                    d.project_root.display(),
                    d.podcode_config.display()
                ),
            ));
            continue;
        };
        match package_entry(&dir) {
            Some(path) => files.push(PluginFile {
                path,
                format: PluginFormat::Plugin,
                project,
            }),
            None => errors.push((
                name.clone(),
                format!(
                    "plugin package {name} has no entry file (exports, module or main) in {}",
                    dir.display()
                ),
            )),
        }
    }
    (files, errors)
}

/// The ESM entry of a package: `exports` (string, or `.` → import/default), `module`, `main`, `index.js`.
pub(crate) fn package_entry(dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let pkg: serde_json::Value = serde_json::from_str(&text).ok()?;
    let pick = |v: &serde_json::Value| -> Option<String> {
        match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Object(m) => ["import", "default", "node"]
                .iter()
                .find_map(|k| m.get(*k).and_then(|x| x.as_str()).map(str::to_string)),
            _ => None,
        }
    };
    let exports = pkg.get("exports");
    let candidate = exports
        .and_then(|e| {
            if e.is_string() {
                pick(e)
            } else {
                e.get(".").and_then(pick).or_else(|| pick(e))
            }
        })
        .or_else(|| {
            pkg.get("module")
                .and_then(|m| m.as_str())
                .map(str::to_string)
        })
        .or_else(|| pkg.get("main").and_then(|m| m.as_str()).map(str::to_string))
        .unwrap_or_else(|| "index.js".to_string());
    let path = dir.join(candidate);
    path.is_file().then_some(path)
}

/// A cheap summary of every tool and plugin file (paths, sizes, modification times) in the
/// given folders, and of everything a plugin load depended on (`watched`: imported helpers,
/// package.json files, node_modules folders on their resolution paths, as
/// `PluginTools::watched` lists them): when it changes, the tool set is rebuilt before the
/// next model turn. `files_fingerprint(dirs)` and `watched_fingerprint(watched)` combined,
/// so a load can take each part at its own moment.
pub fn fingerprint(dirs: &[PathBuf], watched: &std::collections::BTreeSet<PathBuf>) -> u64 {
    combine_fingerprints(files_fingerprint(dirs), watched_fingerprint(watched))
}

/// `fingerprint`'s part for the tool and plugin files in `dirs`.
pub fn files_fingerprint(dirs: &[PathBuf]) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    // The folders come in fours under one parent (`tool`, `tools`, `plugin`, `plugins`),
    // usually missing: a missing parent is looked at once, not its four children. This
    // runs before every model request.
    let mut missing: Option<&Path> = None;
    for dir in dirs {
        let parent = dir.parent();
        if parent.is_some() && parent == missing {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            missing = parent.filter(|p| !p.exists());
            continue;
        };
        let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for f in files {
            f.hash(&mut h);
            crate::host::file_stamp(&f).hash(&mut h);
        }
    }
    h.finish()
}

/// `fingerprint`'s part for what the plugins' loads depended on.
pub fn watched_fingerprint(watched: &std::collections::BTreeSet<PathBuf>) -> u64 {
    use std::hash::{DefaultHasher, Hasher};
    let mut h = DefaultHasher::new();
    crate::plugin_deps::hash_watched(watched, &mut h);
    h.finish()
}

/// The two parts as `fingerprint` joins them.
pub fn combine_fingerprints(files: u64, watched: u64) -> u64 {
    files ^ watched.rotate_left(29)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(root: &Path) -> PluginDirs {
        PluginDirs {
            home: root.join("home"),
            opencode: vec![root.join("home/.config/opencode")],
            podcode_config: root.join("cfg"),
            project_root: root.join("repo"),
        }
    }

    #[test]
    fn npm_plugins_resolve_from_the_project_then_the_global_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let d = dirs(tmp.path());
        let pkg = tmp.path().join("repo/node_modules/podcode-deploy");
        std::fs::create_dir_all(pkg.join("dist")).unwrap();
        std::fs::write(
            pkg.join("package.json"),
            r#"{"name":"podcode-deploy","exports":{".":{"import":"./dist/index.mjs"}}}"#,
        )
        .unwrap();
        std::fs::write(pkg.join("dist/index.mjs"), "export default {}").unwrap();
        let global = tmp.path().join("cfg/node_modules/other");
        std::fs::create_dir_all(&global).unwrap();
        std::fs::write(global.join("package.json"), r#"{"main":"main.js"}"#).unwrap();
        std::fs::write(global.join("main.js"), "").unwrap();
        let names = vec![
            "podcode-deploy".to_string(),
            "other".to_string(),
            "missing".to_string(),
        ];
        let (files, errors) = resolve_npm_plugins(&names, &d);
        assert_eq!(files[0].path, pkg.join("./dist/index.mjs"));
        assert!(files[0].project);
        assert_eq!(files[1].path, global.join("main.js"));
        assert!(!files[1].project);
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0]
                .1
                .starts_with("plugin package missing is not installed: run `npm install missing`"),
            "{}",
            errors[0].1
        );
    }

    #[test]
    fn the_fingerprint_changes_when_a_tool_file_changes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("tools");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.ts"), "one").unwrap();
        let before = fingerprint(std::slice::from_ref(&dir), &Default::default());
        assert_eq!(
            before,
            fingerprint(std::slice::from_ref(&dir), &Default::default())
        );
        std::fs::write(dir.join("a.ts"), "two!").unwrap();
        assert_ne!(
            before,
            fingerprint(std::slice::from_ref(&dir), &Default::default())
        );
        std::fs::write(dir.join("b.ts"), "").unwrap();
        let with_b = fingerprint(std::slice::from_ref(&dir), &Default::default());
        std::fs::remove_file(dir.join("b.ts")).unwrap();
        assert_ne!(with_b, fingerprint(&[dir], &Default::default()));
    }
}
