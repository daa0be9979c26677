//! Where Podcode keeps its files: the global config directory, the data directory (database,
//! spilled tool output), opencode's user-level config places, and the project root and
//! project config file for a working directory.
//!
//! [`Dirs`] is the one value that says where these are. It is built once from the
//! environment when the program starts (`Dirs::from_env`, the only reader of `HOME`,
//! `XDG_CONFIG_HOME`, `XDG_DATA_HOME`, `PODCODE_CONFIG_DIR`, `PODCODE_DATA_DIR`,
//! `PODCODE_SANDBOX_HELPER`, `OPENCODE_CONFIG` and `OPENCODE_CONFIG_DIR`) and handed to every
//! engine, so engines for different directories or homes in one process (`podcode acp`,
//! `podcode serve`, tests) each see their own places. Resolution reads the variables through
//! a getter so tests never have to mutate the process environment.

use std::path::{Path, PathBuf};

/// The user-level directories Podcode reads and writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirs {
    /// The global Podcode config directory (holds `config.toml`, global plugins and tools).
    pub config_dir: PathBuf,
    /// The user data directory (database, spilled tool output).
    pub data_dir: PathBuf,
    /// The user's home directory.
    pub home: PathBuf,
    /// opencode's user-level config places (read so an opencode setup works unchanged).
    pub opencode: OpencodeDirs,
    /// The sandbox helper program `$PODCODE_SANDBOX_HELPER` names, if any (a front end may
    /// set one of its own on the engine instead).
    pub sandbox_helper: Option<PathBuf>,
}

impl Dirs {
    /// Resolve the directories from the process environment.
    /// Call it once, at start-up, and pass the value down.
    pub fn from_env() -> Dirs {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// Resolve the directories from variables supplied by `get`.
    ///
    /// - `config_dir`: `$PODCODE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/podcode`, else
    ///   `$HOME/.config/podcode`.
    /// - `data_dir`: `$PODCODE_DATA_DIR`, else `$XDG_DATA_HOME/podcode`, else
    ///   `$HOME/.local/share/podcode`.
    /// - `home`: `$HOME`, else `$USERPROFILE`, else `.`.
    /// - `opencode`: as [`OpencodeDirs::from_vars`].
    /// - `sandbox_helper`: `$PODCODE_SANDBOX_HELPER`.
    ///
    /// Empty variables count as unset. Following the XDG base directory spec, a relative
    /// `XDG_*` path is ignored.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Dirs {
        let opencode = OpencodeDirs::from_vars(&get);
        let var = |name: &str| get(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let xdg = |name: &str| var(name).filter(|p| p.is_absolute());

        let home = var("HOME")
            .or_else(|| var("USERPROFILE"))
            .unwrap_or_else(|| PathBuf::from("."));
        let config_dir = var("PODCODE_CONFIG_DIR")
            .or_else(|| xdg("XDG_CONFIG_HOME").map(|p| p.join("podcode")))
            .unwrap_or_else(|| home.join(".config").join("podcode"));
        let data_dir = var("PODCODE_DATA_DIR")
            .or_else(|| xdg("XDG_DATA_HOME").map(|p| p.join("podcode")))
            .unwrap_or_else(|| home.join(".local").join("share").join("podcode"));

        Dirs {
            config_dir,
            data_dir,
            sandbox_helper: var("PODCODE_SANDBOX_HELPER"),
            home,
            opencode,
        }
    }

    /// Everything under one root, as a test or an embedding wants it: `<root>/config`,
    /// `<root>/data`, `<root>/home`, opencode's global dir `<root>/home/.config/opencode`, no
    /// `OPENCODE_CONFIG`/`OPENCODE_CONFIG_DIR` and no sandbox helper. Nothing is read from
    /// the environment.
    pub fn under(root: &Path) -> Dirs {
        let home = root.join("home");
        Dirs {
            config_dir: root.join("config"),
            data_dir: root.join("data"),
            opencode: OpencodeDirs {
                config_dir: home.join(".config").join("opencode"),
                config_file: None,
                custom_dir: None,
            },
            sandbox_helper: None,
            home,
        }
    }

    /// The SQLite database: `<data_dir>/podcode.db`.
    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join("podcode.db")
    }

    /// Where oversized tool output is spilled: `<data_dir>/tool-output`.
    pub fn spill_dir(&self) -> PathBuf {
        self.data_dir.join("tool-output")
    }

    /// The global config file: `<config_dir>/config.toml`.
    pub fn global_config_file(&self) -> PathBuf {
        self.config_dir.join("config.toml")
    }
}

/// opencode's own user-level config places, read so an opencode setup works unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpencodeDirs {
    /// opencode's global config dir: `$XDG_CONFIG_HOME/opencode`, else
    /// `$HOME/.config/opencode` (holds `opencode.json`, `plugin/`, `tool/`).
    pub config_dir: PathBuf,
    /// `$OPENCODE_CONFIG`: one more config file.
    pub config_file: Option<PathBuf>,
    /// `$OPENCODE_CONFIG_DIR`: a config dir like `.opencode/` (config, plugins, tools,
    /// its own `package.json`), chosen by the user.
    pub custom_dir: Option<PathBuf>,
}

impl OpencodeDirs {
    /// From variables supplied by `get` (empty ones count as unset; a relative
    /// `XDG_CONFIG_HOME` is ignored, as in [`Dirs::from_vars`]).
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> OpencodeDirs {
        let var = |name: &str| get(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = var("HOME")
            .or_else(|| var("USERPROFILE"))
            .unwrap_or_else(|| PathBuf::from("."));
        let config_dir = var("XDG_CONFIG_HOME")
            .filter(|p| p.is_absolute())
            .map(|p| p.join("opencode"))
            .unwrap_or_else(|| home.join(".config").join("opencode"));
        OpencodeDirs {
            config_dir,
            config_file: var("OPENCODE_CONFIG"),
            custom_dir: var("OPENCODE_CONFIG_DIR"),
        }
    }

    /// The user-level config dirs, lowest precedence first (global, then the custom one).
    pub fn dirs(&self) -> Vec<PathBuf> {
        std::iter::once(self.config_dir.clone())
            .chain(self.custom_dir.clone())
            .collect()
    }
}

/// The project root for a working directory: the nearest ancestor (including cwd) containing
/// `.git` (dir or file), else cwd itself.
pub fn project_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// `<project_root>/.podcode/config.toml`
pub fn project_config_file(project_root: &Path) -> PathBuf {
    project_root.join(".podcode").join("config.toml")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn dirs(vars: &[(&str, &str)]) -> Dirs {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Dirs::from_vars(|name| map.get(name).cloned())
    }

    #[test]
    fn podcode_vars_win() {
        let d = dirs(&[
            ("HOME", "/home/u"),
            ("XDG_CONFIG_HOME", "/xdg/config"),
            ("XDG_DATA_HOME", "/xdg/data"),
            ("PODCODE_CONFIG_DIR", "/pc/config"),
            ("PODCODE_DATA_DIR", "/pc/data"),
            ("PODCODE_SANDBOX_HELPER", "/pc/helper"),
            ("OPENCODE_CONFIG_DIR", "/oc/kit"),
        ]);
        assert_eq!(d.config_dir, PathBuf::from("/pc/config"));
        assert_eq!(d.sandbox_helper, Some(PathBuf::from("/pc/helper")));
        assert_eq!(d.opencode.config_dir, PathBuf::from("/xdg/config/opencode"));
        assert_eq!(d.opencode.custom_dir, Some(PathBuf::from("/oc/kit")));
        assert_eq!(d.data_dir, PathBuf::from("/pc/data"));
        assert_eq!(d.home, PathBuf::from("/home/u"));
    }

    #[test]
    fn xdg_beats_home() {
        let d = dirs(&[
            ("HOME", "/home/u"),
            ("XDG_CONFIG_HOME", "/xdg/config"),
            ("XDG_DATA_HOME", "/xdg/data"),
        ]);
        assert_eq!(d.config_dir, PathBuf::from("/xdg/config/podcode"));
        assert_eq!(d.data_dir, PathBuf::from("/xdg/data/podcode"));
    }

    #[test]
    fn home_fallback_and_derived_paths() {
        let d = dirs(&[("HOME", "/home/u")]);
        assert_eq!(d.config_dir, PathBuf::from("/home/u/.config/podcode"));
        assert_eq!(d.data_dir, PathBuf::from("/home/u/.local/share/podcode"));
        assert_eq!(
            d.db_path(),
            PathBuf::from("/home/u/.local/share/podcode/podcode.db")
        );
        assert_eq!(
            d.spill_dir(),
            PathBuf::from("/home/u/.local/share/podcode/tool-output")
        );
        assert_eq!(
            d.global_config_file(),
            PathBuf::from("/home/u/.config/podcode/config.toml")
        );
    }

    #[test]
    fn empty_and_relative_xdg_are_ignored() {
        let d = dirs(&[
            ("HOME", "/home/u"),
            ("PODCODE_CONFIG_DIR", ""),
            ("XDG_CONFIG_HOME", "relative/config"),
            ("XDG_DATA_HOME", ""),
        ]);
        assert_eq!(d.config_dir, PathBuf::from("/home/u/.config/podcode"));
        assert_eq!(d.data_dir, PathBuf::from("/home/u/.local/share/podcode"));
    }

    #[test]
    fn project_root_finds_nearest_git() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        let nested = root.join("a").join("b");
        std::fs::create_dir_all(&nested).unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        assert_eq!(project_root(&nested), root);
        assert_eq!(project_root(&root), root);

        // A `.git` file (worktree or submodule) counts too, and the nearest one wins.
        std::fs::write(root.join("a").join(".git"), "gitdir: elsewhere\n").unwrap();
        assert_eq!(project_root(&nested), root.join("a"));
    }

    #[test]
    fn opencode_dirs_follow_xdg_and_its_own_variables() {
        let get = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let d = OpencodeDirs::from_vars(get(&[("HOME", "/home/u")]));
        assert_eq!(d.config_dir, PathBuf::from("/home/u/.config/opencode"));
        assert_eq!((d.config_file, d.custom_dir), (None, None));
        let d = OpencodeDirs::from_vars(get(&[
            ("HOME", "/home/u"),
            ("XDG_CONFIG_HOME", "/xdg"),
            ("OPENCODE_CONFIG", "/etc/oc.json"),
            ("OPENCODE_CONFIG_DIR", "/opt/kit"),
        ]));
        assert_eq!(d.config_dir, PathBuf::from("/xdg/opencode"));
        assert_eq!(d.config_file, Some(PathBuf::from("/etc/oc.json")));
        assert_eq!(
            d.dirs(),
            [PathBuf::from("/xdg/opencode"), PathBuf::from("/opt/kit")]
        );
    }

    #[test]
    fn project_root_without_git_is_cwd() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("plain");
        std::fs::create_dir(&dir).unwrap();
        // The temp dir could itself sit inside a git checkout; only assert when it does not.
        if tmp.path().ancestors().all(|a| !a.join(".git").exists()) {
            assert_eq!(project_root(&dir), dir);
        }
        assert_eq!(
            project_config_file(&dir),
            dir.join(".podcode").join("config.toml")
        );
    }
}
