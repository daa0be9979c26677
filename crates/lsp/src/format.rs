//! Formatters run on the files an edit changed, when the project declares one: rustfmt (a
//! Cargo project with a `rustfmt.toml` or a `[workspace]`), prettier (in package.json or a
//! prettier config file), biome (`biome.json`), ruff or black (their `pyproject.toml`
//! section or config file), gofmt and shfmt (when installed), under `[formatter.NAME]`
//! (opencode.json's `formatter`). Each runs in place on the file, in the commands' sandbox,
//! bounded in time; what it changed is journaled under the same call (so a revert restores
//! the text from before the edit), and the model is told the file was reformatted; a change
//! beyond whitespace (prettier's quotes, ruff's…) is shown to the user as a diff, since they
//! approved the text before it. One that fails leaves the file exactly as the tool wrote it
//! and says so.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use podcode_config::FormatterEntry;
use podcode_protocol::{ChangeOp, ChangeRecord};
use podcode_tools::ToolContext;

use crate::servers::find_program;

/// When a built-in formatter applies to a project.
#[derive(Debug, Clone, PartialEq)]
enum Declared {
    /// Always (when installed).
    Installed,
    /// One of these files exists at the root.
    AnyFile(&'static [&'static str]),
    /// package.json names the package, or one of these files exists.
    Package(&'static str, &'static [&'static str]),
    /// pyproject.toml has the section, or one of these files exists.
    Pyproject(&'static str, &'static [&'static str]),
    /// A Cargo project with a rustfmt config or a workspace.
    Rustfmt,
    /// Config named it.
    Config,
}

/// One formatter.
#[derive(Debug, Clone, PartialEq)]
pub struct FormatterSpec {
    /// Its name.
    pub name: String,
    /// Program and arguments, `$FILE` for the file.
    pub command: Vec<String>,
    /// File extensions it formats.
    pub extensions: Vec<String>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// Switched off by config.
    pub disabled: bool,
    declared: Declared,
}

fn spec(name: &str, command: &[&str], extensions: &[&str], declared: Declared) -> FormatterSpec {
    FormatterSpec {
        name: name.into(),
        command: command.iter().map(|s| (*s).to_string()).collect(),
        extensions: extensions.iter().map(|s| (*s).to_string()).collect(),
        env: BTreeMap::new(),
        disabled: false,
        declared,
    }
}

const PRETTIER_FILES: &[&str] = &[
    ".prettierrc",
    ".prettierrc.json",
    ".prettierrc.yaml",
    ".prettierrc.yml",
    ".prettierrc.json5",
    ".prettierrc.js",
    ".prettierrc.cjs",
    ".prettierrc.mjs",
    ".prettierrc.toml",
    "prettier.config.js",
    "prettier.config.cjs",
    "prettier.config.mjs",
];

/// The built-in formatters, in the order they are tried.
pub fn builtin_formatters() -> Vec<FormatterSpec> {
    let web = &[
        "js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts", "json", "css", "scss", "less",
        "html", "vue", "md", "yaml", "yml",
    ];
    vec![
        spec("rustfmt", &["rustfmt", "$FILE"], &["rs"], Declared::Rustfmt),
        spec(
            "biome",
            &["biome", "format", "--write", "$FILE"],
            &[
                "js", "jsx", "mjs", "cjs", "ts", "tsx", "json", "jsonc", "css",
            ],
            Declared::AnyFile(&["biome.json", "biome.jsonc"]),
        ),
        spec(
            "prettier",
            &["prettier", "--write", "$FILE"],
            web,
            Declared::Package("prettier", PRETTIER_FILES),
        ),
        spec(
            "ruff",
            &["ruff", "format", "$FILE"],
            &["py", "pyi"],
            Declared::Pyproject("[tool.ruff", &["ruff.toml", ".ruff.toml"]),
        ),
        spec(
            "black",
            &["black", "-q", "$FILE"],
            &["py", "pyi"],
            Declared::Pyproject("[tool.black", &[]),
        ),
        spec(
            "gofmt",
            &["gofmt", "-w", "$FILE"],
            &["go"],
            Declared::Installed,
        ),
        spec(
            "shfmt",
            &["shfmt", "-w", "$FILE"],
            &["sh", "bash"],
            Declared::Installed,
        ),
    ]
}

/// The built-ins with `config` applied (as `servers_with` does for servers).
pub fn formatters_with(
    config: &BTreeMap<String, FormatterEntry>,
) -> (Vec<FormatterSpec>, Vec<String>) {
    let mut all = builtin_formatters();
    let mut problems = Vec::new();
    for (name, c) in config {
        let exts = crate::servers::extensions_of(c.extensions.as_deref());
        match all.iter_mut().find(|f| &f.name == name) {
            Some(f) => {
                if let Some(cmd) = &c.command {
                    f.command = cmd.clone();
                }
                if let Some(e) = exts {
                    f.extensions = e;
                }
                f.env.extend(c.env.clone());
                f.disabled = c.disabled;
            }
            None => match (&c.command, exts) {
                (Some(cmd), Some(e)) if !cmd.is_empty() && !e.is_empty() => {
                    all.insert(
                        0,
                        FormatterSpec {
                            name: name.clone(),
                            command: cmd.clone(),
                            extensions: e,
                            env: c.env.clone(),
                            disabled: c.disabled,
                            declared: Declared::Config,
                        },
                    );
                }
                _ if c.disabled => {}
                _ => problems.push(format!(
                    "[formatter.{name}] is not a built-in formatter, so it needs `command` and `extensions`"
                )),
            },
        }
    }
    (all, problems)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The nearest folder from `file` up to `project` holding `name`.
fn nearest(file: &Path, project: &Path, name: &str) -> Option<PathBuf> {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d.join(name).exists() {
            return Some(d.to_path_buf());
        }
        if d == project || !d.starts_with(project) {
            return None;
        }
        dir = d.parent();
    }
    None
}

impl FormatterSpec {
    /// Whether the project declares it for `file` (and where its root is).
    fn declared_for(&self, file: &Path, project: &Path) -> bool {
        let any = |names: &[&str]| names.iter().any(|n| nearest(file, project, n).is_some());
        match &self.declared {
            Declared::Installed | Declared::Config => true,
            Declared::AnyFile(names) => any(names),
            Declared::Package(package, files) => {
                any(files)
                    || nearest(file, project, "package.json").is_some_and(|d| {
                        let text = read(&d.join("package.json"));
                        text.contains(&format!("\"{package}\""))
                    })
            }
            Declared::Pyproject(section, files) => {
                any(files)
                    || nearest(file, project, "pyproject.toml")
                        .is_some_and(|d| read(&d.join("pyproject.toml")).contains(section))
            }
            Declared::Rustfmt => {
                any(&["rustfmt.toml", ".rustfmt.toml"])
                    || nearest(file, project, "Cargo.toml")
                        .is_some_and(|d| read(&d.join("Cargo.toml")).contains("[workspace]"))
            }
        }
    }
}

impl FormatterSpec {
    /// When it runs, for `podcode lsp`.
    pub fn when(&self) -> String {
        match &self.declared {
            Declared::Installed => "always".into(),
            Declared::Config => "set up in config".into(),
            Declared::AnyFile(files) => format!("when {} exists", files.join(" or ")),
            Declared::Package(package, _) => {
                format!("when package.json names {package} or a {package} config file exists")
            }
            Declared::Pyproject(section, []) => {
                format!("when pyproject.toml has {section}]")
            }
            Declared::Pyproject(section, files) => {
                format!(
                    "when pyproject.toml has {section}] or {} exists",
                    files.join(" or ")
                )
            }
            Declared::Rustfmt => "in a Cargo project with a rustfmt.toml or a [workspace]".into(),
        }
    }

    /// Where its program is (see `find_program`).
    pub fn program(&self, project: &Path, in_project: bool) -> Option<PathBuf> {
        find_program(self.command.first()?, project, project, in_project)
    }
}

/// The formatters of one workspace.
pub struct Formatters {
    /// The project root.
    pub project: PathBuf,
    /// The formatters (built-ins under config).
    pub specs: Vec<FormatterSpec>,
    /// Programs in the project's `node_modules/.bin` may run (trusted workspace).
    pub project_programs: bool,
    /// The most one formatter may take.
    pub timeout: Duration,
}

impl Formatters {
    /// The formatter for `file` and its command (`$FILE` filled in), when the project
    /// declares one that is installed.
    pub fn for_file(&self, file: &Path) -> Option<(&FormatterSpec, Vec<String>)> {
        let ext = file.extension()?.to_str()?;
        self.specs
            .iter()
            .filter(|f| !f.disabled && f.extensions.iter().any(|e| e == ext))
            .filter(|f| f.declared_for(file, &self.project))
            .find_map(|f| {
                let (program, args) = f.command.split_first()?;
                let root = file.parent().unwrap_or(&self.project);
                let found = find_program(program, root, &self.project, self.project_programs)?;
                let mut cmd = vec![found.to_string_lossy().into_owned()];
                let path = file.to_string_lossy();
                cmd.extend(args.iter().map(|a| a.replace("$FILE", &path)));
                if f.name == "rustfmt"
                    && let Some(edition) = cargo_edition(file, &self.project)
                {
                    cmd.splice(1..1, ["--edition".to_string(), edition]);
                }
                Some((f, cmd))
            })
    }

    /// Formats `file` in place and journals the change under `ctx`'s call; returns what the
    /// model is told (reformatted, or the formatter failed), `None` when nothing ran or
    /// nothing changed.
    pub async fn format(&self, file: &Path, ctx: &ToolContext) -> Option<String> {
        let (spec, command) = self.for_file(file)?;
        let before = std::fs::read_to_string(file).ok()?;
        let shown = file
            .strip_prefix(&self.project)
            .unwrap_or(file)
            .display()
            .to_string();
        let dir = file.parent().unwrap_or(&self.project).to_path_buf();
        let (program, args) = command.split_first()?;
        let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        let (launch, argv) = match ctx.sandbox() {
            Some(sb) => {
                let policy = sb.policy([self.project.as_path(), dir.as_path()]);
                sb.wrap(&policy, std::ffi::OsStr::new(program), &args)
            }
            None => (program.into(), args),
        };
        let mut cmd = tokio::process::Command::new(launch);
        cmd.args(argv)
            .current_dir(&dir)
            .envs(&spec.env)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        if let Some(sb) = ctx.sandbox() {
            for var in sb.hidden_env() {
                cmd.env_remove(var);
            }
        }
        let failed = match tokio::time::timeout(self.timeout, cmd.output()).await {
            Err(_) => Some(format!("took longer than {} s", self.timeout.as_secs())),
            Ok(Err(e)) => Some(format!("could not start: {e}")),
            Ok(Ok(out)) if !out.status.success() => {
                let err = String::from_utf8_lossy(&out.stderr);
                let first = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                Some(format!("{}: {}", out.status, first.trim()))
            }
            Ok(Ok(_)) => None,
        };
        let after = std::fs::read_to_string(file).unwrap_or_default();
        if let Some(why) = failed {
            if after != before {
                let _ = std::fs::write(file, &before);
            }
            return Some(formatter_failed_text(&spec.name, &shown, &why));
        }
        if after == before {
            return None;
        }
        // The user approved the text before formatting: a change beyond layout is shown.
        let squeeze = |t: &str| t.split_whitespace().collect::<String>();
        if squeeze(&before) != squeeze(&after) {
            ctx.warn(format!(
                "{} changed more than layout in {shown}:\n{}",
                spec.name,
                podcode_tools::unified_diff(&shown, &before, &after).trim_end()
            ));
        }
        let change = ChangeRecord {
            file: file.to_string_lossy().into_owned(),
            op: ChangeOp::Modify,
            old_content: Some(before),
            new_content: Some(after),
        };
        if let Err(e) = ctx.record_change(change) {
            ctx.warn(format!("{} reformatted {shown}, but {e}", spec.name));
        }
        Some(reformatted_text(&spec.name, &shown))
    }
}

/// What the model reads after a formatter changed a file.
pub fn reformatted_text(formatter: &str, file: &str) -> String {
    format!("({formatter} reformatted {file}: read it again before editing it)")
}

/// What the model reads when a formatter failed.
pub fn formatter_failed_text(formatter: &str, file: &str, why: &str) -> String {
    format!("({formatter} could not format {file} ({why}); the file is as written)")
}

/// The `edition` of the nearest Cargo.toml (`edition = "2021"`).
fn cargo_edition(file: &Path, project: &Path) -> Option<String> {
    let dir = nearest(file, project, "Cargo.toml")?;
    read(&dir.join("Cargo.toml")).lines().find_map(|l| {
        let (key, value) = l.split_once('=')?;
        (key.trim() == "edition").then(|| value.trim().trim_matches('"').to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_formatter_applies_only_where_the_project_declares_it() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path();
        std::fs::write(
            project.join("package.json"),
            r#"{"devDependencies": {"prettier": "3"}}"#,
        )
        .unwrap();
        let prettier = builtin_formatters()
            .into_iter()
            .find(|f| f.name == "prettier")
            .unwrap();
        assert!(prettier.declared_for(&project.join("a.ts"), project));
        let rustfmt = builtin_formatters()
            .into_iter()
            .find(|f| f.name == "rustfmt")
            .unwrap();
        std::fs::write(
            project.join("Cargo.toml"),
            "[package]\nname = \"x\"\nedition = \"2021\"\n",
        )
        .unwrap();
        assert!(!rustfmt.declared_for(&project.join("src/a.rs"), project));
        std::fs::write(project.join("rustfmt.toml"), "").unwrap();
        assert!(rustfmt.declared_for(&project.join("src/a.rs"), project));
        assert_eq!(
            cargo_edition(&project.join("src/a.rs"), project).as_deref(),
            Some("2021")
        );
        let (all, problems) = formatters_with(
            &serde_json::from_value(serde_json::json!({
                "prettier": {"disabled": true},
                "mine": {"command": ["fmt", "$FILE"], "extensions": [".x"]},
                "bad": {"command": ["fmt"]},
            }))
            .unwrap(),
        );
        assert!(all.iter().find(|f| f.name == "prettier").unwrap().disabled);
        assert_eq!(all[0].name, "mine");
        assert_eq!(
            problems,
            vec![
                "[formatter.bad] is not a built-in formatter, so it needs `command` and `extensions`"
            ]
        );
    }

    #[test]
    fn model_facing_texts_are_pinned() {
        assert_eq!(
            reformatted_text("prettier", "src/a.ts"),
            "(prettier reformatted src/a.ts: read it again before editing it)"
        );
        assert_eq!(
            formatter_failed_text(
                "rustfmt",
                "src/a.rs",
                "exit status: 1: error: expected one of"
            ),
            "(rustfmt could not format src/a.rs (exit status: 1: error: expected one of); the file is as written)"
        );
    }
}
