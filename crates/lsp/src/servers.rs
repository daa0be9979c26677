//! Which language server handles a file: the built-in table (rust-analyzer, the TypeScript
//! language server, pyright/basedpyright, gopls, clangd, the bash language server) under
//! the config's `[lsp.NAME]` entries (which add servers, change one, or switch one off),
//! where its program is (the project's `node_modules/.bin`, then `PATH`; Podcode never
//! downloads one), and the folder it works in (the nearest one holding a marker file such as
//! `Cargo.toml`, up to the project root).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use podcode_config::LspServerConfig;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One language server Podcode may start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSpec {
    /// Its name (`typescript`, `rust-analyzer`, a config key).
    pub name: String,
    /// Program and arguments; the first alternative found is used.
    pub commands: Vec<Vec<String>>,
    /// File extensions it handles, without the dot.
    pub extensions: Vec<String>,
    /// Files whose folder is a workspace root for it (nearest wins).
    pub root_markers: Vec<String>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// `initializationOptions`.
    pub initialization: Value,
    /// How to install it, for `podcode lsp`.
    pub install: String,
    /// Switched off by config.
    pub disabled: bool,
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

fn builtin(
    name: &str,
    commands: &[&[&str]],
    extensions: &[&str],
    root_markers: &[&str],
    install: &str,
) -> ServerSpec {
    ServerSpec {
        name: name.into(),
        commands: commands.iter().map(|c| strings(c)).collect(),
        extensions: strings(extensions),
        root_markers: strings(root_markers),
        env: BTreeMap::new(),
        initialization: Value::Null,
        install: install.into(),
        disabled: false,
    }
}

/// The built-in servers.
pub fn builtin_servers() -> Vec<ServerSpec> {
    vec![
        builtin(
            "rust-analyzer",
            &[&["rust-analyzer"]],
            &["rs"],
            &["Cargo.toml"],
            "rustup component add rust-analyzer",
        ),
        builtin(
            "typescript",
            &[&["typescript-language-server", "--stdio"]],
            &["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"],
            &["tsconfig.json", "jsconfig.json", "package.json"],
            "npm install -g typescript-language-server typescript",
        ),
        builtin(
            "pyright",
            &[
                &["pyright-langserver", "--stdio"],
                &["basedpyright-langserver", "--stdio"],
            ],
            &["py", "pyi"],
            &[
                "pyrightconfig.json",
                "pyproject.toml",
                "setup.py",
                "setup.cfg",
                "requirements.txt",
            ],
            "npm install -g pyright",
        ),
        builtin(
            "gopls",
            &[&["gopls"]],
            &["go"],
            &["go.mod", "go.work"],
            "go install golang.org/x/tools/gopls@latest",
        ),
        builtin(
            "clangd",
            &[&["clangd"]],
            &["c", "cc", "cpp", "cxx", "h", "hh", "hpp"],
            &[
                "compile_commands.json",
                "compile_flags.txt",
                ".clangd",
                "CMakeLists.txt",
            ],
            "apt install clangd (or your system's package)",
        ),
        builtin(
            "bash",
            &[&["bash-language-server", "start"]],
            &["sh", "bash"],
            &[],
            "npm install -g bash-language-server",
        ),
    ]
}

/// The LSP `languageId` of a file extension.
pub fn language_id(extension: &str) -> &str {
    match extension {
        "rs" => "rust",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "py" | "pyi" => "python",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hh" | "hpp" => "cpp",
        "sh" | "bash" => "shellscript",
        other => other,
    }
}

/// Where a server's program is: `<project>/node_modules/.bin/<program>` (walking up from
/// `root` to `project`; only when `in_project`: the workspace is trusted), else on `PATH`.
pub fn find_program(
    program: &str,
    root: &Path,
    project: &Path,
    in_project: bool,
) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return p.is_file().then_some(p);
    }
    let mut dir = in_project.then_some(root);
    while let Some(d) = dir {
        let candidate = d.join("node_modules/.bin").join(program);
        if candidate.is_file() {
            return Some(candidate);
        }
        if d == project {
            break;
        }
        dir = d.parent();
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(program))
            .find(|p| p.is_file() && !missing_rustup_component(p, program))
    })
}

/// A rustup proxy (`~/.cargo/bin/rust-analyzer` → `rustup`) whose component no toolchain
/// has: running it only prints "Unknown binary".
fn missing_rustup_component(path: &Path, program: &str) -> bool {
    let is_proxy = std::fs::read_link(path)
        .ok()
        .and_then(|t| t.file_name().map(|n| n == "rustup"))
        .unwrap_or(false);
    if !is_proxy {
        return false;
    }
    let home = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".rustup")));
    let Some(Ok(toolchains)) = home.map(|h| std::fs::read_dir(h.join("toolchains"))) else {
        return false;
    };
    !toolchains
        .flatten()
        .any(|t| t.path().join("bin").join(program).is_file())
}

impl ServerSpec {
    /// Whether it handles `path` (by extension).
    pub fn handles(&self, path: &Path) -> bool {
        path.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| self.extensions.iter().any(|x| x == e))
    }

    /// The folder it works in for `file`: the nearest holding a root marker, up to
    /// `project` (which is the answer when none does).
    pub fn root_for(&self, file: &Path, project: &Path) -> PathBuf {
        let mut dir = file.parent();
        while let Some(d) = dir {
            if !d.starts_with(project) {
                break;
            }
            if self.root_markers.iter().any(|m| d.join(m).exists()) {
                return d.to_path_buf();
            }
            if d == project {
                break;
            }
            dir = d.parent();
        }
        project.to_path_buf()
    }

    /// The command to run in `root`, its program resolved (from the project's
    /// `node_modules/.bin` only when `in_project`); `None` when none is installed.
    pub fn command_for(
        &self,
        root: &Path,
        project: &Path,
        in_project: bool,
    ) -> Option<Vec<String>> {
        self.commands.iter().find_map(|c| {
            let (program, args) = c.split_first()?;
            let found = find_program(program, root, project, in_project)?;
            let mut out = vec![found.to_string_lossy().into_owned()];
            out.extend(args.iter().cloned());
            Some(out)
        })
    }
}

/// Config's file extensions without their dots (`[".ts", "tsx"]` → `ts`, `tsx`).
pub(crate) fn extensions_of(list: Option<&[String]>) -> Option<Vec<String>> {
    list.map(|e| {
        e.iter()
            .map(|x| x.trim_start_matches('.').to_string())
            .collect()
    })
}

/// The built-ins with `config` applied: an entry named like a built-in changes it, another
/// one adds a server (it needs `command` and `extensions`; without them it is reported).
pub fn servers_with(config: &BTreeMap<String, LspServerConfig>) -> (Vec<ServerSpec>, Vec<String>) {
    let mut servers = builtin_servers();
    let mut problems = Vec::new();
    for (name, c) in config {
        let exts = extensions_of(c.extensions.as_deref());
        match servers.iter_mut().find(|s| &s.name == name) {
            Some(s) => {
                if let Some(cmd) = &c.command {
                    s.commands = vec![cmd.clone()];
                }
                if let Some(e) = exts {
                    s.extensions = e;
                }
                s.env.extend(c.env.clone());
                if let Some(init) = &c.initialization {
                    s.initialization = init.clone();
                }
                s.disabled = c.disabled;
            }
            None => match (&c.command, exts) {
                (Some(cmd), Some(e)) if !cmd.is_empty() && !e.is_empty() => {
                    servers.push(ServerSpec {
                        name: name.clone(),
                        commands: vec![cmd.clone()],
                        extensions: e,
                        root_markers: Vec::new(),
                        env: c.env.clone(),
                        initialization: c.initialization.clone().unwrap_or(Value::Null),
                        install: format!("install {} yourself", cmd[0]),
                        disabled: c.disabled,
                    })
                }
                _ if c.disabled => {}
                _ => problems.push(format!(
                    "[lsp.{name}] is not a built-in server, so it needs `command` and `extensions`"
                )),
            },
        }
    }
    (servers, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_come_from_the_nearest_marker_inside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        std::fs::create_dir_all(project.join("web/src")).unwrap();
        std::fs::write(project.join("web/package.json"), "{}").unwrap();
        let ts = builtin_servers()
            .into_iter()
            .find(|s| s.name == "typescript")
            .unwrap();
        assert!(ts.handles(Path::new("a/b.tsx")) && !ts.handles(Path::new("b.rs")));
        assert_eq!(
            ts.root_for(&project.join("web/src/a.ts"), project),
            project.join("web")
        );
        assert_eq!(ts.root_for(&project.join("other/a.ts"), project), project);
        std::fs::create_dir_all(project.join("web/node_modules/.bin")).unwrap();
        let bin = project.join("web/node_modules/.bin/typescript-language-server");
        std::fs::write(&bin, "").unwrap();
        assert_eq!(
            ts.command_for(&project.join("web"), project, true),
            Some(vec![bin.to_string_lossy().into_owned(), "--stdio".into()])
        );
        // An untrusted repository's own programs are never started.
        assert_ne!(
            ts.command_for(&project.join("web"), project, false),
            Some(vec![bin.to_string_lossy().into_owned(), "--stdio".into()])
        );
    }

    #[test]
    fn config_changes_adds_and_switches_off_servers() {
        let config: BTreeMap<String, LspServerConfig> = serde_json::from_value(serde_json::json!({
            "pyright": {"disabled": true},
            "typescript": {"command": ["tsls", "--stdio"], "extensions": [".ts"]},
            "zig": {"command": ["zls"], "extensions": ["zig"]},
            "broken": {"command": ["x"]},
        }))
        .unwrap();
        let (servers, problems) = servers_with(&config);
        let get = |n: &str| servers.iter().find(|s| s.name == n).unwrap();
        assert!(get("pyright").disabled);
        assert_eq!(
            get("typescript").commands,
            vec![vec!["tsls".to_string(), "--stdio".into()]]
        );
        assert_eq!(get("typescript").extensions, vec!["ts".to_string()]);
        assert!(get("zig").handles(Path::new("a.zig")));
        assert_eq!(
            problems,
            vec!["[lsp.broken] is not a built-in server, so it needs `command` and `extensions`"]
        );
    }
}
