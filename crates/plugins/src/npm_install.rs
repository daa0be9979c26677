//! npm plugin packages listed in config (`plugins = [...]`, opencode's `"plugin": [...]`),
//! installed by Podcode itself the way opencode does: each spec (`pkg`, `pkg@1.0.5`,
//! `@scope/pkg@latest`, `pkg@^2`, `file:../pkg.tgz`, a tarball path) once, into its own folder
//! `<data>/cache/npm/<spec>-<hash>/`, with Bun (`bun add`) when it is on PATH and npm
//! (`npm install`) otherwise. A folder that finished installing holds `.podcode-installed`
//! naming the package, so later starts spawn nothing. A failed install (offline, unknown
//! package or version) is an error naming the spec and what the installer said; nothing is
//! left half-installed to be mistaken for a package.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::plugin_files::{
    PluginDirs, PluginFile, PluginFormat, package_entry, resolve_npm_plugins,
};

/// Marks a cache folder whose install finished; holds the package name.
const DONE: &str = ".podcode-installed";

/// How long one install may take before it is given up.
pub(crate) const INSTALL_TIMEOUT: Duration = Duration::from_secs(300);

/// The package name a spec names, when the spec says it (`@scope/pkg@1.2.3` →
/// `@scope/pkg`); `None` for paths, URLs and `file:` specs (the install tells).
pub fn spec_name(spec: &str) -> Option<&str> {
    let spec = spec.trim();
    let looks_like_path = spec.starts_with('.')
        || spec.starts_with('/')
        || spec.starts_with('~')
        || spec.contains(':')
        || spec.ends_with(".tgz")
        || spec.ends_with(".tar.gz");
    if looks_like_path || spec.is_empty() {
        return None;
    }
    let (scope_len, rest) = match spec.strip_prefix('@') {
        Some(rest) => match rest.find('/') {
            Some(slash) => (slash + 2, &spec[slash + 2..]),
            None => return None,
        },
        None => (0, spec),
    };
    let name_len = scope_len + rest.find('@').unwrap_or(rest.len());
    Some(&spec[..name_len])
}

/// Does the spec pin a version, range or tag (`pkg@1.2.3`, `@s/p@latest`)?
pub fn spec_has_version(spec: &str) -> bool {
    spec_name(spec).is_some_and(|name| name.len() < spec.trim().len())
}

/// The cache folder of one spec: readable, and unique per spec.
pub fn install_dir(cache_root: &Path, spec: &str) -> PathBuf {
    let mut h = DefaultHasher::new();
    spec.hash(&mut h);
    let readable: String = spec
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    cache_root.join(format!("{readable}-{:08x}", h.finish() as u32))
}

/// A program on PATH.
pub(crate) fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// Which installer runs: Bun when it is on PATH, npm otherwise.
fn installer(spec: &str) -> Option<(PathBuf, Vec<String>)> {
    let find = find_on_path;
    if let Some(bun) = find("bun") {
        return Some((bun, vec!["add".into(), spec.into()]));
    }
    find("npm").map(|npm| {
        (
            npm,
            [
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                spec,
            ]
            .map(String::from)
            .to_vec(),
        )
    })
}

/// Resolves the npm plugin specs from config to entry files: a bare name already installed
/// in the project's `node_modules` (or the global config folder's) is used from there, as
/// before; anything else (a version, a range, a tag, a tarball, or a package not installed)
/// is installed into the cache under `cache_root` once. Errors are `(spec, message)`.
pub async fn resolve_npm_plugins_installing(
    specs: &[String],
    dirs: &PluginDirs,
    cache_root: &Path,
) -> (Vec<PluginFile>, Vec<(String, String)>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for spec in specs {
        // A local path is loaded from where it is, as opencode does: edits take effect on
        // the next reload instead of being shadowed by a copy installed once.
        if let Some(path) = local_path(spec, &dirs.project_root, &dirs.home) {
            match local_entry(&path) {
                Some(path) => files.push(PluginFile {
                    path,
                    format: PluginFormat::Plugin,
                    project: false,
                }),
                None => errors.push((spec.clone(), local_entry_text(spec, &path))),
            }
            continue;
        }
        if !spec_has_version(spec) && spec_name(spec).is_some() {
            let (found, _) = resolve_npm_plugins(std::slice::from_ref(spec), dirs);
            if !found.is_empty() {
                files.extend(found);
                continue;
            }
        }
        match ensure_installed(spec, cache_root, &dirs.project_root).await {
            Ok(dir) => match package_entry(&dir) {
                Some(path) => files.push(PluginFile {
                    path,
                    format: PluginFormat::Plugin,
                    project: false,
                }),
                None => errors.push((
                    spec.clone(),
                    format!(
                        "plugin package {spec} has no entry file (exports, module or main) in {}",
                        dir.display()
                    ),
                )),
            },
            Err(message) => errors.push((spec.clone(), message)),
        }
    }
    (files, errors)
}

/// The file or folder a local plugin spec (`./my-plugin`, `/abs/x.ts`, `~/p`, `file:../p`)
/// names, resolved against `base` (the project); `None` for package specs and tarballs,
/// which are installed.
pub fn local_path(spec: &str, base: &Path, home: &Path) -> Option<PathBuf> {
    let spec = spec.trim();
    if spec.ends_with(".tgz") || spec.ends_with(".tar.gz") {
        return None;
    }
    let path = spec.strip_prefix("file:").unwrap_or(spec);
    let local = spec.starts_with("file:")
        || path.starts_with('.')
        || path.starts_with('/')
        || path.starts_with('~');
    if !local {
        return None;
    }
    Some(match path.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None if path == "~" => home.to_path_buf(),
        None => base.join(path),
    })
}

/// The plugin file at a local path: the file itself, or a folder's entry (its package.json's
/// exports/module/main, else `index.ts`, `index.js` or `index.mjs`).
fn local_entry(path: &Path) -> Option<PathBuf> {
    if path.is_file() {
        return Some(path.to_path_buf());
    }
    if !path.is_dir() {
        return None;
    }
    package_entry(path).or_else(|| {
        ["index.ts", "index.js", "index.mjs"]
            .iter()
            .map(|f| path.join(f))
            .find(|p| p.is_file())
    })
}

/// Why a local plugin path loads nothing (user-facing).
fn local_entry_text(spec: &str, path: &Path) -> String {
    if !path.exists() {
        return format!("plugin path {spec} does not exist ({})", path.display());
    }
    format!(
        "plugin path {spec} ({}) has no plugin file: name a .ts/.js/.mjs file, or a folder whose package.json names its entry (exports, module or main) or that holds index.ts or index.js",
        path.display()
    )
}

/// The installed package folder of `spec`, installing it first if this is the first time.
/// `base` resolves relative `file:` specs and paths (the config file's project).
pub async fn ensure_installed(
    spec: &str,
    cache_root: &Path,
    base: &Path,
) -> Result<PathBuf, String> {
    let dir = install_dir(cache_root, spec);
    if let Ok(name) = std::fs::read_to_string(dir.join(DONE)) {
        let pkg = dir.join("node_modules").join(name.trim());
        if pkg.join("package.json").is_file() {
            return Ok(pkg);
        }
    }
    let fail = |why: String| format!("could not install plugin package {spec}: {why}");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
    // The folder's own package.json keeps the install here and records what was added.
    std::fs::write(
        dir.join("package.json"),
        "{\n  \"name\": \"podcode-plugin-install\",\n  \"private\": true\n}\n",
    )
    .map_err(|e| fail(format!("cannot write in {}: {e}", dir.display())))?;
    let target = absolute_spec(spec, base);
    let Some((program, args)) = installer(&target) else {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(fail(
            "neither bun nor npm is on PATH (install Node.js with npm, or Bun)".into(),
        ));
    };
    let tool = program
        .file_name()
        .map_or_else(|| "installer".into(), |n| n.to_string_lossy().into_owned());
    let run = tokio::process::Command::new(&program)
        .args(&args)
        .current_dir(&dir)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = match tokio::time::timeout(INSTALL_TIMEOUT, run).await {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(fail(format!("{tool} did not start: {e}")));
        }
        Err(_) => {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(fail(format!(
                "{tool} took longer than {} s (is the registry reachable?)",
                INSTALL_TIMEOUT.as_secs()
            )));
        }
    };
    let name = installed_name(&dir, spec);
    match (output.status.success(), name) {
        (true, Some(name)) => {
            std::fs::write(dir.join(DONE), &name)
                .map_err(|e| fail(format!("cannot write in {}: {e}", dir.display())))?;
            Ok(dir.join("node_modules").join(name))
        }
        (ok, _) => {
            let _ = std::fs::remove_dir_all(&dir);
            let said = last_lines(&output.stderr, &output.stdout);
            let why = if ok {
                format!("{tool} finished but installed no package")
            } else {
                format!("`{tool} {}` failed: {said}", args.join(" "))
            };
            Err(fail(format!(
                "{why} (is the registry reachable? Podcode retries on the next start)"
            )))
        }
    }
}

/// A relative `file:` spec or path, made absolute against `base`.
fn absolute_spec(spec: &str, base: &Path) -> String {
    let (prefix, path) = match spec.strip_prefix("file:") {
        Some(p) => ("file:", p),
        None if spec.starts_with("./") || spec.starts_with("../") => ("", spec),
        None => return spec.to_string(),
    };
    if Path::new(path).is_absolute() {
        return spec.to_string();
    }
    format!("{prefix}{}", base.join(path).display())
}

/// The package the install added: the spec's name, else the one dependency recorded.
fn installed_name(dir: &Path, spec: &str) -> Option<String> {
    if let Some(name) = spec_name(spec)
        && dir
            .join("node_modules")
            .join(name)
            .join("package.json")
            .is_file()
    {
        return Some(name.to_string());
    }
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let pkg: serde_json::Value = serde_json::from_str(&text).ok()?;
    let deps = pkg.get("dependencies")?.as_object()?;
    let mut names = deps.keys();
    match (names.next(), names.next()) {
        (Some(one), None) => Some(one.clone()),
        _ => None,
    }
}

pub(crate) fn last_lines(stderr: &[u8], stdout: &[u8]) -> String {
    let text = String::from_utf8_lossy(if stderr.is_empty() { stdout } else { stderr });
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let tail = &lines[lines.len().saturating_sub(3)..];
    if tail.is_empty() {
        "no output".into()
    } else {
        tail.join(" / ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_local_plugin_path_is_loaded_from_where_it_is() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("project");
        let home = root.path().join("home");
        std::fs::create_dir_all(project.join("my-plugin")).unwrap();
        std::fs::create_dir_all(home.join("plugins")).unwrap();
        std::fs::write(
            project.join("my-plugin/index.ts"),
            "export const P = async () => ({})",
        )
        .unwrap();
        std::fs::write(
            home.join("plugins/one.js"),
            "export const O = async () => ({})",
        )
        .unwrap();
        std::fs::create_dir_all(project.join("empty")).unwrap();
        let dirs = PluginDirs {
            home: home.clone(),
            opencode: vec![],
            podcode_config: home.join(".config/podcode"),
            project_root: project.clone(),
        };
        let specs: Vec<String> = [
            "./my-plugin",
            "~/plugins/one.js",
            "file:./empty",
            "./gone.ts",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let cache = root.path().join("cache");
        let (files, errors) = resolve_npm_plugins_installing(&specs, &dirs, &cache).await;
        let paths: Vec<_> = files.iter().map(|f| f.path.clone()).collect();
        assert_eq!(
            paths,
            [
                project.join("./my-plugin").join("index.ts"),
                home.join("plugins/one.js")
            ]
        );
        assert!(!cache.exists(), "nothing was installed");
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0].1.starts_with("plugin path file:./empty ("),
            "{errors:?}"
        );
        assert!(
            errors[0].1.ends_with("or that holds index.ts or index.js"),
            "{errors:?}"
        );
        assert!(
            errors[1]
                .1
                .starts_with("plugin path ./gone.ts does not exist"),
            "{errors:?}"
        );
        assert_eq!(local_path("left-pad", &project, &home), None);
        assert_eq!(local_path("./p.tgz", &project, &home), None);
    }

    #[test]
    fn spec_names_and_versions() {
        for (spec, name, versioned) in [
            ("opencode-wakatime", Some("opencode-wakatime"), false),
            ("pkg@1.0.5", Some("pkg"), true),
            ("@scope/pkg", Some("@scope/pkg"), false),
            ("@scope/pkg@latest", Some("@scope/pkg"), true),
            ("@scope/pkg@^2.1", Some("@scope/pkg"), true),
            ("file:../pkg.tgz", None, false),
            ("./vendor/pkg-1.0.0.tgz", None, false),
            ("https://x.invalid/p.tgz", None, false),
        ] {
            assert_eq!(spec_name(spec), name, "{spec}");
            assert_eq!(spec_has_version(spec), versioned, "{spec}");
        }
    }

    #[test]
    fn each_spec_has_its_own_folder() {
        let root = Path::new("/d/cache/npm");
        let a = install_dir(root, "@scope/pkg@1.2.3");
        assert!(a.starts_with(root));
        assert!(
            a.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("_scope_pkg_1.2.3-")
        );
        assert_ne!(a, install_dir(root, "@scope/pkg@1.2.4"));
        assert_eq!(a, install_dir(root, "@scope/pkg@1.2.3"));
    }

    #[test]
    fn relative_file_specs_resolve_against_the_project() {
        let base = Path::new("/w/repo");
        assert_eq!(
            absolute_spec("file:vendor/p.tgz", base),
            "file:/w/repo/vendor/p.tgz"
        );
        assert_eq!(absolute_spec("./p.tgz", base), "/w/repo/./p.tgz");
        assert_eq!(absolute_spec("file:/abs/p.tgz", base), "file:/abs/p.tgz");
        assert_eq!(absolute_spec("pkg@1", base), "pkg@1");
    }
}
