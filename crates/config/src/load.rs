//! Reading and merging config files: the global file, then the project file, over the
//! defaults.
//!
//! Each file is parsed and checked on its own, so syntax errors, type errors and unknown-key
//! warnings name the file (and line, column and key) they came from. The files are then merged
//! as TOML values — tables deep-merged with the later file winning, arrays replaced, except the
//! top-level `permission` array, which is concatenated global-then-project so that, with "last
//! matching rule wins", the project refines the global rules — and the merged value is
//! deserialized once.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;
use toml::de::DeTable;

use crate::error::ConfigError;
use crate::locate::{ignored_path, key_at, line_col};
use crate::model::Config;
use crate::substitute::{Policy, ProjectAccess};

/// The result of [`load`]: the merged config, what was ignored, and which files took part.
#[derive(Debug, Clone, Default)]
pub struct LoadedConfig {
    /// The merged configuration every part of Podcode reads.
    pub config: Config,
    /// One line per unknown key: ``<file>: unknown key `<dotted.path>` ignored``.
    pub warnings: Vec<String>,
    /// Files that existed and were read, in merge order.
    pub files: Vec<PathBuf>,
    /// What each opencode config file among them gave, in merge order.
    pub opencode: Vec<crate::opencode::OpencodeImport>,
}

/// Loads the global config file and then the project config file (when given) over the
/// defaults. Missing files are skipped; a file that exists but cannot be read or parsed is an
/// error. The project file is taken as trusted; see [`load_with_trust`].
pub fn load(global: &Path, project: Option<&Path>) -> Result<LoadedConfig, ConfigError> {
    load_with_trust(global, project, true)
}

/// [`load`], where `project_trusted` says whether the user trusts the workspace. When not,
/// the project file may only narrow what the global one allows (see `untrusted`): what it
/// tries beyond that is dropped, with one warning naming the file and what was dropped.
pub fn load_with_trust(
    global: &Path,
    project: Option<&Path>,
    project_trusted: bool,
) -> Result<LoadedConfig, ConfigError> {
    // When both paths name the same file, read it once so its permission rules are not doubled.
    let project = project.filter(|p| !same_file(global, p));
    let mut files = vec![ConfigFile::podcode(global, false)];
    files.extend(project.map(|p| ConfigFile::podcode(p, true)));
    // Only Podcode's own files, which substitute nothing, so the root is never consulted.
    let access = ProjectAccess {
        root: Path::new(""),
        trusted: project_trusted,
        secrets: false,
    };
    load_files(&files, access, &|name| std::env::var(name).ok())
}

/// One file taking part in a load, in merge order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// Where the file is (it may not exist: missing files are skipped).
    pub path: PathBuf,
    /// The project's (may only narrow in an untrusted workspace) rather than the user's.
    pub project: bool,
    /// An opencode `opencode.json(c)` rather than a Podcode `config.toml`.
    pub opencode: bool,
}

impl ConfigFile {
    /// A Podcode `config.toml`; `project` says whether it is the project's file.
    pub fn podcode(path: &Path, project: bool) -> Self {
        Self {
            path: path.to_path_buf(),
            project,
            opencode: false,
        }
    }
}

/// The config of a workspace as a user who also uses opencode expects it: opencode's global
/// files, Podcode's global file, the project's opencode files, then the project's
/// `.podcode/config.toml` — so Podcode's own file wins over opencode's at each level, and
/// the project refines the user's. `opencode` is what [`crate::opencode_files`] found;
/// `access` is what the user decided about the workspace (trust, and whether its opencode
/// files may read secrets with `{file:}`/`{env:}`).
pub fn load_workspace(
    global: &Path,
    project: Option<&Path>,
    opencode: &[(PathBuf, bool)],
    access: ProjectAccess<'_>,
) -> Result<LoadedConfig, ConfigError> {
    let project = project.filter(|p| !same_file(global, p));
    let oc = |want_project: bool| {
        opencode
            .iter()
            .filter(move |(_, p)| *p == want_project)
            .map(|(path, p)| ConfigFile {
                path: path.clone(),
                project: *p,
                opencode: true,
            })
    };
    let mut files: Vec<ConfigFile> = oc(false).collect();
    files.push(ConfigFile::podcode(global, false));
    files.extend(oc(true));
    files.extend(project.map(|p| ConfigFile::podcode(p, true)));
    load_files(&files, access, &|name| std::env::var(name).ok())
}

/// Loads `files` in order over the defaults; `env` answers opencode's `{env:VAR}` (within
/// what `access` lets a project's file read).
pub fn load_files(
    files: &[ConfigFile],
    access: ProjectAccess<'_>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<LoadedConfig, ConfigError> {
    let project_trusted = access.trusted;
    let mut merged = toml::Table::new();
    let mut loaded = LoadedConfig::default();
    for source in files {
        let file = source.path.as_path();
        let Some(text) = read_optional(file)? else {
            continue;
        };
        let mut layer = if source.opencode {
            let policy = Policy {
                env,
                project: source.project.then_some(access),
            };
            let (table, report, refused) = crate::opencode::translate(file, &text, &policy)?;
            let config = check_layer(file, &table)?;
            if !refused.is_empty() {
                loaded
                    .warnings
                    .push(crate::substitute::warning(file, access, &refused));
            }
            loaded.opencode.push(report);
            Layer {
                config,
                table,
                warnings: Vec::new(),
            }
        } else {
            parse_layer(file, &text)?
        };
        if !project_trusted && source.project {
            let mut dropped = crate::untrusted::narrow(&mut layer.table, &merged);
            // The engine skips an untrusted project's own `[mcp]` servers by name; opencode's
            // are dropped here instead, so no server of the repository's choosing starts.
            if source.opencode
                && let Some(toml::Value::Table(servers)) = layer.table.remove("mcp")
            {
                dropped.extend(servers.keys().map(|k| format!("mcp {k}")));
            }
            if !dropped.is_empty() {
                loaded
                    .warnings
                    .push(crate::untrusted::warning(file, &dropped));
            }
        }
        accumulate(&merged, &mut layer.table, source.opencode);
        merge_tables(&mut merged, layer.table, true);
        loaded.warnings.extend(layer.warnings);
        loaded.files.push(file.to_path_buf());
    }
    if let Some(last) = loaded.files.last() {
        loaded.config = Config::deserialize(toml::Value::Table(merged)).map_err(|e| {
            // Each file deserialized on its own, so the merge of them should too; if it does
            // not, say so without pretending to know a position.
            ConfigError::Parse {
                file: last.clone(),
                line: 1,
                column: 1,
                key: None,
                message: format!(
                    "merged configuration is invalid: {}",
                    e.message().trim_end()
                ),
            }
        })?;
    }
    Ok(loaded)
}

/// Lists that add up across files instead of being replaced: `tools.disable` always (a
/// tool switched off stays off), and `plugins` when the layer is opencode's (opencode
/// concatenates its `plugin` lists). The earlier entries go first, without repeats.
fn accumulate(base: &toml::Table, layer: &mut toml::Table, opencode: bool) {
    let join = |before: Option<&toml::Value>, now: Option<&mut toml::Value>| {
        if let (Some(toml::Value::Array(before)), Some(toml::Value::Array(now))) = (before, now) {
            let mine = std::mem::take(now);
            now.extend(before.iter().cloned());
            for item in mine {
                if !now.contains(&item) {
                    now.push(item);
                }
            }
        }
    };
    let base_disable = base.get("tools").and_then(|t| t.get("disable"));
    join(
        base_disable,
        layer
            .get_mut("tools")
            .and_then(|t| t.as_table_mut())
            .and_then(|t| t.get_mut("disable")),
    );
    if opencode {
        join(base.get("plugins"), layer.get_mut("plugins"));
    }
}

/// A translated opencode layer must deserialize on its own, so a bad value names its file.
fn check_layer(file: &Path, table: &toml::Table) -> Result<Config, ConfigError> {
    Config::deserialize(toml::Value::Table(table.clone())).map_err(|e| ConfigError::Parse {
        file: file.to_path_buf(),
        line: 1,
        column: 1,
        key: None,
        message: e.message().trim_end().to_string(),
    })
}

/// Parses one config file's text on its own (no merging), returning the config and the
/// unknown-key warnings. `file` is only used in messages.
pub fn load_str(file: &Path, text: &str) -> Result<(Config, Vec<String>), ConfigError> {
    let layer = parse_layer(file, text)?;
    Ok((layer.config, layer.warnings))
}

/// One parsed file: its config, its raw table for merging, and its warnings.
struct Layer {
    config: Config,
    table: toml::Table,
    warnings: Vec<String>,
}

fn parse_layer(file: &Path, text: &str) -> Result<Layer, ConfigError> {
    let doc = DeTable::parse(text).map_err(|e| parse_error(file, text, None, &e))?;

    let mut warnings = Vec::new();
    let config: Config =
        serde_ignored::deserialize(toml::de::Deserializer::from(doc.clone()), |path| {
            warnings.push(format!(
                "{}: unknown key `{}` ignored",
                file.display(),
                ignored_path(&path)
            ))
        })
        .map_err(|e| parse_error(file, text, Some(&doc), &e))?;

    let table = toml::Table::deserialize(toml::de::Deserializer::from(doc.clone()))
        .map_err(|e| parse_error(file, text, Some(&doc), &e))?;

    Ok(Layer {
        config,
        table,
        warnings,
    })
}

/// Builds a `ConfigError::Parse` from a toml error, locating it by its span. `doc` is the
/// parsed document when the error is a type error (it names the key); `None` for syntax errors.
fn parse_error(
    file: &Path,
    text: &str,
    doc: Option<&Spanned<DeTable<'_>>>,
    error: &toml::de::Error,
) -> ConfigError {
    let span = error.span();
    let (line, column) = span.as_ref().map_or((1, 1), |s| line_col(text, s.start));
    let key = match (doc, &span) {
        (Some(doc), Some(span)) => key_at(doc, span),
        _ => None,
    };
    let mut message = error.message().trim_end().to_string();
    // The parser's "duplicate key" does not say which; its span covers the repeated key.
    if message == "duplicate key"
        && let Some(raw) = span.and_then(|s| text.get(s)).map(str::trim)
        && !raw.is_empty()
    {
        message.push_str(&format!(" `{raw}`"));
    }
    ConfigError::Parse {
        file: file.to_path_buf(),
        line,
        column,
        key,
        message,
    }
}

/// Merges `over` into `base`: tables deep-merge, anything else is replaced by `over`'s value,
/// except that at the top level (`top`) the `permission` arrays are concatenated.
fn merge_tables(base: &mut toml::Table, over: toml::Table, top: bool) {
    for (key, value) in over {
        let value = match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => {
                merge_tables(b, o, false);
                continue;
            }
            (Some(toml::Value::Array(b)), toml::Value::Array(o)) if top && key == "permission" => {
                b.extend(o);
                continue;
            }
            (_, value) => value,
        };
        base.insert(key, value);
    }
}

/// Reads a file, treating "does not exist" as `None`.
fn read_optional(file: &Path) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(Some(text)),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(source) => Err(ConfigError::Io {
            file: file.to_path_buf(),
            source,
        }),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    #[test]
    fn merge_deep_merges_tables_and_replaces_arrays() {
        let mut base = table(
            r#"
            model = "a"
            plugins = ["x", "y"]
            permission = [{ permission = "bash", pattern = "*", action = "ask" }]
            [plugin_config.p]
            keep = 1
            over = 1
            [agent.build]
            permission = [{ permission = "edit", pattern = "*", action = "deny" }]
            "#,
        );
        let over = table(
            r#"
            model = "b"
            plugins = ["z"]
            permission = [{ permission = "bash", pattern = "git *", action = "allow" }]
            [plugin_config.p]
            over = 2
            [agent.build]
            permission = [{ permission = "edit", pattern = "*", action = "allow" }]
            "#,
        );
        merge_tables(&mut base, over, true);
        let expected = table(
            r#"
            model = "b"
            plugins = ["z"]
            permission = [
              { permission = "bash", pattern = "*", action = "ask" },
              { permission = "bash", pattern = "git *", action = "allow" },
            ]
            [plugin_config.p]
            keep = 1
            over = 2
            [agent.build]
            permission = [{ permission = "edit", pattern = "*", action = "allow" }]
            "#,
        );
        assert_eq!(base, expected);
    }

    #[test]
    fn missing_files_are_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let loaded = load(
            &tmp.path().join("nope.toml"),
            Some(&tmp.path().join("missing/dir/config.toml")),
        )
        .unwrap();
        assert!(loaded.files.is_empty());
        assert!(loaded.warnings.is_empty());
        assert_eq!(loaded.config, Config::default());
    }

    #[test]
    fn same_file_is_read_once() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("config.toml");
        std::fs::write(
            &file,
            "[[permission]]\npermission = \"bash\"\npattern = \"*\"\naction = \"ask\"\n",
        )
        .unwrap();
        let loaded = load(&file, Some(&file)).unwrap();
        assert_eq!(loaded.files, vec![file]);
        assert_eq!(loaded.config.permission.len(), 1);
    }

    #[test]
    fn unreadable_file_is_an_io_error() {
        let tmp = tempfile::tempdir().unwrap();
        // A directory where the file should be cannot be read as text.
        let err = load(tmp.path(), None).unwrap_err();
        assert!(matches!(err, ConfigError::Io { .. }), "{err}");
        assert!(
            err.to_string()
                .starts_with(&tmp.path().display().to_string())
        );
    }
}
