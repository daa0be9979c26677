//! A config dir's own `package.json` (`.opencode/`, `$XDG_CONFIG_HOME/opencode/`,
//! `~/.config/opencode/`, `$OPENCODE_CONFIG_DIR/`), installed the way opencode installs it:
//! into that dir's own `node_modules` (so a tool file there imports the packages, or a path
//! into `node_modules/@opencode-ai/plugin/…`, exactly as under opencode), with Bun when it is
//! on PATH and npm otherwise (npm first when the dir has a `package-lock.json`), plus
//! `@opencode-ai/plugin` at the version opencode pins when the package.json does not list it
//! (best effort, as in opencode). It runs once per content of package.json: a finished
//! install leaves `node_modules/.podcode-deps` holding its hash, so later starts spawn
//! nothing; a failed one leaves `node_modules/.podcode-deps-failed`, and the same
//! package.json is not tried again for a day (the report says so and how to retry now). A project's dir is project code: it is installed only in a trusted workspace.
//! Podcode writes no package.json of its own (opencode creates one in every config dir; here
//! a dir without one has nothing to install) and does not edit the user's (the pinned
//! `@opencode-ai/plugin` is added without saving).

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;

use crate::npm_install::{INSTALL_TIMEOUT, find_on_path, last_lines};
use crate::plugin_files::PluginDirs;

/// The `@opencode-ai/plugin` version added beside a config dir's dependencies: the opencode
/// release whose plugin API and tool schemas Podcode matches (opencode adds its own version).
pub const OPENCODE_PLUGIN_VERSION: &str = "1.18.33";

/// Packages the plugin host itself provides to plugin files: a config dir that only lists
/// these still loads when their install fails.
const HOST_PROVIDED: &[&str] = &["@opencode-ai/plugin"];

/// What still works when only host-provided packages are missing (user-facing).
const HOST_STANDS_IN: &str = "Podcode's own `@opencode-ai/plugin` serves `@opencode-ai/plugin` and `@opencode-ai/plugin/tool` imports";

/// Marks a `node_modules` whose install finished; holds the hash of what was installed.
const DONE: &str = ".podcode-deps";

/// Marks a package.json whose install failed: its hash, when (Unix seconds), the error. The
/// same package.json is not tried again for [`RETRY_AFTER`] (an unpublished version would
/// otherwise cost every start the installer's whole run).
const FAILED: &str = ".podcode-deps-failed";

/// How long a failed install of one package.json is remembered.
const RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The remembered failure of this very package.json, if it is recent, as the user reads it.
fn remembered_failure(marker: &Path, hash: &str) -> Option<String> {
    let text = std::fs::read_to_string(marker).ok()?;
    let mut lines = text.splitn(3, '\n');
    let (seen, at, message) = (lines.next()?, lines.next()?, lines.next()?);
    let age = unix_now().saturating_sub(at.trim().parse().ok()?);
    if seen.trim() != hash || age >= RETRY_AFTER.as_secs() {
        return None;
    }
    let ago = match age {
        0..60 => format!("{age} s"),
        60..3600 => format!("{} min", age / 60),
        _ => format!("{} h", age / 3600),
    };
    Some(format!(
        "{message} (this failed {ago} ago and is not retried for a day or until package.json changes; delete {} to retry now)",
        marker.display()
    ))
}

/// One config dir whose `package.json` may need installing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigDir {
    /// The config directory holding the `package.json`.
    pub dir: PathBuf,
    /// The project's own dir (needs trust) rather than one of the user's.
    pub project: bool,
}

/// The config dirs, lowest precedence first: opencode's user-level ones, then the project's
/// `.opencode/`.
pub fn config_dirs(d: &PluginDirs) -> Vec<ConfigDir> {
    let mut out: Vec<ConfigDir> = d
        .opencode
        .iter()
        .map(|dir| ConfigDir {
            dir: dir.clone(),
            project: false,
        })
        .collect();
    out.push(ConfigDir {
        dir: d.project_root.join(".opencode"),
        project: true,
    });
    out.dedup_by(|a, b| a.dir == b.dir);
    out
}

/// What happened to one config dir's dependencies (`podcode plugins` prints it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DepsReport {
    /// The config dir (its `package.json` and `node_modules` are inside).
    pub dir: PathBuf,
    /// The dependency names its package.json lists.
    pub packages: Vec<String>,
    /// What happened to the install.
    #[serde(flatten)]
    pub status: DepsStatus,
    /// What else is worth knowing (the pinned `@opencode-ai/plugin` could not be added).
    pub notes: Vec<String>,
}

/// The outcome of one config dir's dependency install.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum DepsStatus {
    /// Installed now, by `tool`, in `ms` milliseconds.
    Installed {
        /// The installer used (`bun` or `npm`).
        tool: String,
        /// How long it took, in milliseconds.
        ms: u64,
    },
    /// Installed by an earlier start for this very package.json.
    UpToDate,
    /// The install failed; files importing these packages will not load.
    Failed {
        /// The installer's error.
        message: String,
    },
    /// The install failed, but the host provides every package listed (a warning).
    HostProvided {
        /// The installer's error.
        message: String,
    },
    /// A project dir in a workspace that is not trusted.
    Skipped {
        /// Why, for the user.
        reason: String,
    },
}

impl DepsReport {
    /// The report line(s) for `podcode plugins`.
    pub fn lines(&self) -> Vec<String> {
        let file = self.dir.join("package.json");
        let file = file.display();
        let what = self.packages.join(", ");
        let mut out = match &self.status {
            DepsStatus::Installed { tool, ms } => {
                vec![format!(
                    "deps     {file}: installed {what} with {tool} ({ms} ms)"
                )]
            }
            DepsStatus::UpToDate => vec![format!("deps     {file}: {what} installed")],
            DepsStatus::Failed { message } | DepsStatus::HostProvided { message } => {
                vec![
                    format!("deps     {file}: not installed"),
                    format!("           {message}"),
                ]
            }
            DepsStatus::Skipped { reason } => {
                vec![
                    format!("deps     {file}: not installed"),
                    format!("           {reason}"),
                ]
            }
        };
        out.extend(self.notes.iter().map(|n| format!("           note: {n}")));
        out
    }
}

/// The dependency names of a package.json, in its order (`dependencies`, then
/// `optionalDependencies`); `None` when there is no package.json or it lists none.
fn declared(package_json: &str) -> Option<Vec<String>> {
    let v: serde_json::Value = serde_json::from_str(package_json).ok()?;
    let mut names = Vec::new();
    for key in ["dependencies", "optionalDependencies"] {
        if let Some(deps) = v.get(key).and_then(|d| d.as_object()) {
            names.extend(
                deps.keys()
                    .filter(|k| !names.contains(*k))
                    .cloned()
                    .collect::<Vec<_>>(),
            );
        }
    }
    (!names.is_empty()).then_some(names)
}

fn content_hash(package_json: &str) -> String {
    let mut h = DefaultHasher::new();
    package_json.hash(&mut h);
    OPENCODE_PLUGIN_VERSION.hash(&mut h);
    format!("{:016x}", h.finish())
}

/// Installs every config dir's dependencies that need it; dirs without a package.json (or
/// with no dependencies) are left out of the result.
pub async fn install_config_deps(dirs: &[ConfigDir], trusted: bool) -> Vec<DepsReport> {
    let mut out = Vec::new();
    for d in dirs {
        if let Some(r) = install_one(d, trusted).await {
            out.push(r);
        }
    }
    out
}

async fn install_one(d: &ConfigDir, trusted: bool) -> Option<DepsReport> {
    let text = std::fs::read_to_string(d.dir.join("package.json")).ok()?;
    let packages = declared(&text)?;
    let report = |status, notes| {
        Some(DepsReport {
            dir: d.dir.clone(),
            packages: packages.clone(),
            status,
            notes,
        })
    };
    if d.project && !trusted {
        let reason =
            "this workspace is not trusted to run its own code (run `podcode trust` to allow it)"
                .to_string();
        return report(DepsStatus::Skipped { reason }, vec![]);
    }
    let hash = content_hash(&text);
    let marker = d.dir.join("node_modules").join(DONE);
    let missing = || -> Vec<&String> {
        packages
            .iter()
            .filter(|p| {
                !d.dir
                    .join("node_modules")
                    .join(p)
                    .join("package.json")
                    .is_file()
            })
            .collect()
    };
    if std::fs::read_to_string(&marker).is_ok_and(|h| h.trim() == hash) {
        let absent = missing();
        if absent.is_empty() {
            return report(DepsStatus::UpToDate, vec![]);
        }
        // Only what the host stands in for can be absent here (see the failure case below).
        let names: Vec<&str> = absent.iter().map(|p| p.as_str()).collect();
        let message = format!(
            "{} not installed in {} (the last install failed; Podcode tries again when package.json changes); {HOST_STANDS_IN}",
            names.join(", "),
            d.dir.join("node_modules").display()
        );
        return report(DepsStatus::HostProvided { message }, vec![]);
    }
    let failed = d.dir.join("node_modules").join(FAILED);
    if let Some(message) = remembered_failure(&failed, &hash) {
        return report(DepsStatus::Failed { message }, vec![]);
    }
    let started = Instant::now();
    // The dir's own lock file names its package manager; otherwise Bun first, as opencode.
    let npm_locked = d.dir.join("package-lock.json").is_file();
    let found = if npm_locked {
        find_on_path("npm").or_else(|| find_on_path("bun"))
    } else {
        find_on_path("bun").or_else(|| find_on_path("npm"))
    };
    let (program, tool) = match found {
        Some(p) => {
            let tool = p
                .file_name()
                .map_or_else(|| "installer".into(), |n| n.to_string_lossy().into_owned());
            (p, tool)
        }
        None => {
            let message = format!(
                "could not install the dependencies of {}: neither bun nor npm is on PATH (install Node.js with npm, or Bun)",
                d.dir.join("package.json").display()
            );
            return report(DepsStatus::Failed { message }, vec![]);
        }
    };
    let install: Vec<&str> = if tool == "bun" {
        vec!["install"]
    } else {
        vec!["install", "--no-audit", "--no-fund", "--loglevel=error"]
    };
    if let Err(said) = run(&program, &install, &d.dir).await {
        let message = format!(
            "could not install the dependencies of {}: `{tool} {}` failed: {said} (is the registry reachable?)",
            d.dir.join("package.json").display(),
            install.join(" ")
        );
        if missing()
            .iter()
            .all(|p| HOST_PROVIDED.contains(&p.as_str()))
        {
            // Only what the host stands in for is missing: files load; do not retry each start.
            let _ = std::fs::create_dir_all(d.dir.join("node_modules"));
            let _ = std::fs::write(&marker, &hash);
            let message = format!("{message}; {HOST_STANDS_IN}");
            return report(DepsStatus::HostProvided { message }, vec![]);
        }
        let _ = std::fs::create_dir_all(d.dir.join("node_modules"));
        let _ = std::fs::write(&failed, format!("{hash}\n{}\n{message}", unix_now()));
        return report(DepsStatus::Failed { message }, vec![]);
    }
    let _ = std::fs::remove_file(&failed);
    let mut notes = Vec::new();
    let plugin = d.dir.join("node_modules/@opencode-ai/plugin/package.json");
    if !plugin.is_file() {
        let spec = format!("@opencode-ai/plugin@{OPENCODE_PLUGIN_VERSION}");
        let add: Vec<&str> = if tool == "bun" {
            vec!["add", "--no-save", "--exact", &spec]
        } else {
            vec![
                "install",
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                &spec,
            ]
        };
        if let Err(said) = run(&program, &add, &d.dir).await {
            notes.push(format!(
                "{spec} (which opencode adds to every config dir) was not added: {said}; imports of `@opencode-ai/plugin` still work"
            ));
        }
    }
    ignore_node_modules(&d.dir);
    let _ = std::fs::write(&marker, &hash);
    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    report(DepsStatus::Installed { tool, ms }, notes)
}

/// Keeps the installed tree out of git, as opencode does, when the dir has no `.gitignore`.
fn ignore_node_modules(dir: &Path) {
    let gitignore = dir.join(".gitignore");
    if !gitignore.exists() {
        let _ = std::fs::write(gitignore, "node_modules\n");
    }
}

/// Runs the installer in `dir`; the error is the tail of what it said.
async fn run(program: &Path, args: &[&str], dir: &Path) -> Result<(), String> {
    let child = tokio::process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    match tokio::time::timeout(INSTALL_TIMEOUT, child).await {
        Ok(Ok(out)) if out.status.success() => Ok(()),
        Ok(Ok(out)) => Err(last_lines(&out.stderr, &out.stdout)),
        Ok(Err(e)) => Err(format!("did not start: {e}")),
        Err(_) => Err(format!("took longer than {} s", INSTALL_TIMEOUT.as_secs())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_lists_dependencies_and_optional_ones_once() {
        assert_eq!(declared("{}"), None);
        assert_eq!(declared(r#"{"dependencies": {}}"#), None);
        assert_eq!(declared("not json"), None);
        assert_eq!(
            declared(
                r#"{"dependencies": {"b": "1", "a": "2"}, "optionalDependencies": {"a": "2", "c": "3"}}"#
            ),
            Some(vec!["b".to_string(), "a".into(), "c".into()])
        );
    }

    #[tokio::test]
    async fn a_failed_install_is_remembered_for_that_package_json_only() {
        let dir = tempfile::tempdir().unwrap();
        let write = |deps: &str| {
            std::fs::write(
                dir.path().join("package.json"),
                format!(r#"{{"dependencies": {{{deps}}}}}"#),
            )
            .unwrap()
        };
        // A local path that does not exist: every installer fails, without any network.
        write(r#""not-here": "file:./missing""#);
        let d = ConfigDir {
            dir: dir.path().to_path_buf(),
            project: false,
        };
        let message = |r: &DepsReport| match &r.status {
            DepsStatus::Failed { message } => message.clone(),
            other => panic!("the install fails: {other:?}"),
        };
        let first = message(&install_one(&d, true).await.unwrap());
        assert!(
            first.starts_with("could not install the dependencies of"),
            "{first}"
        );
        assert!(!first.contains("is not retried"), "{first}");
        let again = message(&install_one(&d, true).await.unwrap());
        assert!(again.starts_with(&first), "{again}");
        assert!(
            again
                .contains("ago and is not retried for a day or until package.json changes; delete"),
            "{again}"
        );
        // Another package.json is tried at once.
        write(r#""also-not-here": "file:./gone""#);
        let changed = message(&install_one(&d, true).await.unwrap());
        assert!(!changed.contains("is not retried"), "{changed}");
    }

    #[test]
    fn the_hash_follows_the_content() {
        assert_eq!(content_hash("{}"), content_hash("{}"));
        assert_ne!(content_hash("{}"), content_hash("{ }"));
    }

    #[test]
    fn config_dirs_are_the_users_then_the_projects() {
        let d = PluginDirs {
            home: "/h".into(),
            opencode: vec!["/x/opencode".into(), "/kit".into()],
            podcode_config: "/h/.config/podcode".into(),
            project_root: "/w".into(),
        };
        let dirs = config_dirs(&d);
        let shown: Vec<(String, bool)> = dirs
            .iter()
            .map(|c| (c.dir.display().to_string(), c.project))
            .collect();
        assert_eq!(
            shown,
            [
                ("/x/opencode".to_string(), false),
                ("/kit".into(), false),
                ("/w/.opencode".into(), true)
            ]
        );
    }
}
