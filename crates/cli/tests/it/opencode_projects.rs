//! Real opencode setups, unchanged, through the real binary: the corpus in
//! crates/plugins/tests/fixtures/opencode-projects/ (a repository with `opencode.jsonc`, an
//! npm plugin list, MCP servers, tool switches and `.opencode/` files; a dotfiles-style
//! `$XDG_CONFIG_HOME/opencode`; an `OPENCODE_CONFIG_DIR` kit) copied into a temp workspace,
//! then `podcode tools --json` must offer exactly what opencode offers there, and nothing it
//! switches off, with opencode's schema bytes; `podcode plugins --json` says what was taken
//! from where. The npm plugin is a tarball `npm pack` makes from the fixture package, so no
//! registry is needed; a second test points the installer at a closed port.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../plugins/tests/fixtures/opencode-projects"
);

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

struct Ws {
    tmp: tempfile::TempDir,
}

impl Ws {
    fn new() -> Self {
        Self::with_project("project")
    }
    /// The corpus with `project` (a folder of the corpus) as the repository.
    fn with_project(project: &str) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let corpus = Path::new(CORPUS);
        copy_dir(&corpus.join(project), &tmp.path().join("repo"));
        std::fs::create_dir_all(tmp.path().join("repo/.git")).unwrap();
        copy_dir(&corpus.join("xdg"), &tmp.path().join("xdg"));
        copy_dir(&corpus.join("kit"), &tmp.path().join("kit"));
        Ws { tmp }
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }
    /// Packs the fixture npm package into the repository (`opencode-hello-1.0.5.tgz`).
    fn pack_npm_plugin(&self) {
        let out = Command::new("npm")
            .args(["pack", "--silent", "--pack-destination"])
            .arg(self.path("repo"))
            .arg(Path::new(CORPUS).join("npm-plugin-pkg"))
            .output()
            .expect("npm is needed to pack the fixture plugin");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(self.path("repo/opencode-hello-1.0.5.tgz").is_file());
    }
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_podcode"));
        c.args(args)
            .current_dir(self.path("repo"))
            .env("HOME", self.path("home"))
            .env("PODCODE_CONFIG_DIR", self.path("config"))
            .env("PODCODE_DATA_DIR", self.path("data"))
            .env("XDG_CONFIG_HOME", self.path("xdg"))
            .env("OPENCODE_CONFIG_DIR", self.path("kit"))
            .env_remove("OPENCODE_CONFIG")
            .env_remove("XDG_DATA_HOME")
            // No test needs the registry: `file:` specs only; anything else fails at once.
            .env("npm_config_registry", dead_registry())
            .env("npm_config_fetch_retries", "0")
            .stdin(Stdio::null());
        c
    }
    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }
    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

/// A loopback registry URL nothing listens on.
fn dead_registry() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}/")
}

/// The built-in ids, from a workspace with no config at all.
fn builtin_ids() -> BTreeSet<String> {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("repo/.git")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_podcode"))
        .args(["tools", "--json"])
        .current_dir(tmp.path().join("repo"))
        .env("HOME", tmp.path().join("home"))
        .env("PODCODE_CONFIG_DIR", tmp.path().join("config"))
        .env("PODCODE_DATA_DIR", tmp.path().join("data"))
        .env("XDG_CONFIG_HOME", tmp.path().join("xdg"))
        .env_remove("OPENCODE_CONFIG_DIR")
        .env_remove("OPENCODE_CONFIG")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

/// The `podcode plugins --json` entry for config dir `dir`'s dependencies.
fn deps_of(report: &Value, dir: &Path) -> Value {
    report["config_dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["dir"] == dir.display().to_string().as_str())
        .unwrap_or_else(|| panic!("{} in {report:#}", dir.display()))
        .clone()
}

fn tool<'a>(listing: &'a Value, id: &str) -> &'a Value {
    listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("{id} offered"))
}

#[test]
fn an_opencode_project_offers_what_opencode_offers() {
    let ws = Ws::new();
    ws.pack_npm_plugin();
    assert!(ws.run(&["trust"]).status.success());
    let listing = ws.json(&["tools", "--json"]);

    let offered: BTreeSet<String> = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    let mut expected = builtin_ids();
    expected.remove("write"); // "tools": {"write": false} in the project
    expected.remove("webfetch"); // "tools": {"webfetch": false} in the dotfiles
    for id in [
        "notes",
        "barezod",
        "logged",
        "hello_npm",
        "dotfile",
        "kit_status",
    ] {
        expected.insert(id.to_string());
    }
    assert_eq!(offered, expected, "{listing:#}");

    let off: BTreeSet<(String, String)> = listing["switched_off"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().into(),
                t["by"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want: BTreeSet<(String, String)> = [
        ("write", "write"),
        ("webfetch", "webfetch"),
        ("mytools_a", "mytools_*"),
        ("mytools_b", "mytools_*"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(off, want);

    // opencode's bytes: `$schema` first, description first, no empty `required`.
    let schema = |id: &str| serde_json::to_string(&tool(&listing, id)["parameters"]).unwrap();
    assert_eq!(
        schema("notes"),
        r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"text":{"description":"The note","type":"string"},"tags":{"description":"Labels","default":[],"type":"array","items":{"type":"string"}},"priority":{"type":"string","enum":["low","high"]}},"required":["text"]}"#
    );
    assert_eq!(
        schema("barezod"),
        r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"text":{"description":"Text to count","type":"string"},"unique":{"anyOf":[{"type":"boolean"},{"type":"null"}]}},"required":["text","unique"]}"#
    );
    assert_eq!(
        schema("kit_status"),
        r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"verbose":{"description":"More detail","type":"boolean"}}}"#
    );
    assert_eq!(
        schema("dotfile"),
        r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{}}"#
    );
    assert_eq!(
        schema("hello_npm"),
        r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"name":{"description":"Who to greet","type":"string"}},"required":["name"]}"#
    );

    // `podcode plugins` says what was taken from where, the client logs and the host zod.
    let report = ws.json(&["plugins", "--json"]);
    let imports = report["opencode_config"].as_array().unwrap();
    let files: Vec<&str> = imports
        .iter()
        .map(|i| i["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            ws.path("xdg/opencode/opencode.jsonc").display().to_string(),
            ws.path("kit/opencode.json").display().to_string(),
            ws.path("repo/opencode.jsonc").display().to_string(),
        ]
    );
    assert_eq!(
        imports[2]["taken"],
        serde_json::json!([
            "plugin file:./opencode-hello-1.0.5.tgz",
            "mcp docs",
            "mcp tracker",
            "tools off: write, mytools_*",
            "permission (3 rules)"
        ])
    );
    assert_eq!(imports[2]["not_used"], serde_json::json!(["theme"]));
    let report_of = |suffix: &str| {
        report["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| {
                f["report"]["file"]["path"]
                    .as_str()
                    .unwrap()
                    .ends_with(suffix)
            })
            .unwrap_or_else(|| panic!("{suffix} in {report:#}"))
            .clone()
    };
    assert_eq!(
        report_of("plugins/logger.ts")["report"]["logs"],
        serde_json::json!([
            // Every client path reads as a function (its call rejects), so feature tests pass.
            {"kind": "log", "level": "info", "service": "logger", "message": "session API present"},
            {"kind": "log", "level": "warn", "service": "logger", "message": "loaded without a TUI"}
        ])
    );
    assert_eq!(
        report_of("opencode-hello/index.js")["report"]["logs"][0]["message"],
        "hello plugin ready"
    );
    assert_eq!(
        report_of("tools/barezod.ts")["report"]["logs"][0]["message"],
        "zod is not installed beside this file, so it uses Podcode's zod 3.25.76 (run `npm install zod` in its folder to choose another)"
    );
    assert_eq!(
        report_of("tools/mytools.ts")["tools"],
        serde_json::json!([
            {"id": "mytools_a", "status": "switched off by config"},
            {"id": "mytools_b", "status": "switched off by config"}
        ])
    );
    // The kit lists only `@opencode-ai/plugin`, which the host provides: its failed install
    // (no registry here) is a warning, and the kit's files load.
    let kit_deps = deps_of(&report, &ws.path("kit"));
    assert_eq!(kit_deps["status"], "host_provided", "{kit_deps:#}");
    assert!(
        kit_deps["message"]
            .as_str()
            .unwrap()
            .ends_with("Podcode's own `@opencode-ai/plugin` serves `@opencode-ai/plugin` and `@opencode-ai/plugin/tool` imports"),
        "{kit_deps:#}"
    );
    // The plugin was installed once, into the data dir's cache; a second start spawns no installer.
    let cache = ws.path("data/cache/npm");
    let installs: Vec<_> = std::fs::read_dir(&cache).unwrap().flatten().collect();
    assert_eq!(installs.len(), 1, "{cache:?}");
    let text = String::from_utf8(ws.run(&["plugins"]).stdout).unwrap();
    assert!(
        text.contains("log info opencode-hello: hello plugin ready"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "opencode config {}",
            ws.path("repo/opencode.jsonc").display()
        )),
        "{text}"
    );
    assert!(
        text.contains("           took plugin file:./opencode-hello-1.0.5.tgz"),
        "{text}"
    );
    assert!(
        text.contains("           note: zod is not installed beside this file"),
        "{text}"
    );
    let tools = String::from_utf8(ws.run(&["tools"]).stdout).unwrap();
    assert!(
        tools.contains("  mytools_a (from ") && tools.contains("; entry \"mytools_*\")"),
        "{tools}"
    );
}

#[test]
fn an_untrusted_opencode_project_installs_and_runs_nothing_of_its_own() {
    let ws = Ws::new();
    ws.pack_npm_plugin();
    let listing = ws.json(&["tools", "--json"]);
    let ids: Vec<&str> = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    for id in ["notes", "barezod", "logged", "hello_npm"] {
        assert!(!ids.contains(&id), "{id} must wait for trust: {ids:?}");
    }
    // The user's own (dotfiles, kit) still load, and switching off still narrows.
    assert!(
        ids.contains(&"dotfile") && ids.contains(&"kit_status"),
        "{ids:?}"
    );
    assert!(
        !ids.contains(&"write") && !ids.contains(&"webfetch"),
        "{ids:?}"
    );
    assert!(
        !ws.path("data/cache/npm").exists(),
        "nothing installed before trust"
    );
}

#[test]
fn an_npm_plugin_that_cannot_be_installed_is_an_error_naming_the_spec() {
    let ws = Ws::new();
    std::fs::write(
        ws.path("repo/opencode.jsonc"),
        r#"{ "plugin": ["@acme/opencode-deploy@1.2.3"] }"#,
    )
    .unwrap();
    assert!(ws.run(&["trust"]).status.success());
    // A loopback port nothing listens on: the registry is unreachable.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = ws
        .cmd(&["tools", "--json"])
        .env("npm_config_registry", format!("http://127.0.0.1:{port}/"))
        .output()
        .unwrap();
    let listing: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problem = listing["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["source"] == "@acme/opencode-deploy@1.2.3")
        .unwrap_or_else(|| panic!("{listing:#}"));
    let message = problem["message"].as_str().unwrap();
    assert!(
        message.starts_with("could not install plugin package @acme/opencode-deploy@1.2.3: `"),
        "{message}"
    );
    assert!(
        message.ends_with("(is the registry reachable? Podcode retries on the next start)"),
        "{message}"
    );
    assert_eq!(problem["level"], "error");
}

#[test]
fn a_config_dirs_package_json_is_installed_once_and_its_imports_load() {
    let ws = Ws::with_project("deps-project");
    let dot = ws.path("repo/.opencode");
    let package_json = std::fs::read(dot.join("package.json")).unwrap();

    // Not before trust: the project's dependencies are project code.
    let listing = ws.json(&["tools", "--json"]);
    assert!(
        listing["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["id"] != "greet"),
        "{listing:#}"
    );
    assert!(
        !dot.join("node_modules").exists(),
        "nothing installed before trust"
    );

    assert!(ws.run(&["trust"]).status.success());
    let listing = ws.json(&["tools", "--json"]);
    // The description comes from the installed package, imported at load.
    assert_eq!(
        tool(&listing, "greet")["description"],
        "Greets someone the team's way (ahoy)"
    );
    assert!(
        dot.join("node_modules/@acme/greeting/package.json")
            .is_file()
    );
    assert!(
        dot.join("node_modules/@opencode-ai/plugin/dist/tool.js")
            .is_file()
    );
    // The user's package.json is left as it was.
    assert_eq!(
        std::fs::read(dot.join("package.json")).unwrap(),
        package_json
    );

    let out = ws.run(&["tool", "call", "greet", r#"{"name":"Ada"}"#, "--yes"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("ahoy, Ada!"), "{said}");

    // Installed once: the next start reports it installed and spawns no installer.
    let report = ws.json(&["plugins", "--json"]);
    let deps = deps_of(&report, &dot);
    assert_eq!(deps["status"], "up_to_date", "{deps:#}");
    assert_eq!(
        deps["packages"],
        serde_json::json!(["@acme/greeting", "@opencode-ai/plugin"])
    );
    let text = String::from_utf8(ws.run(&["plugins"]).stdout).unwrap();
    assert!(
        text.contains(&format!(
            "deps     {}: @acme/greeting, @opencode-ai/plugin installed",
            dot.join("package.json").display()
        )),
        "{text}"
    );

    // A changed package.json installs again; with the registry unreachable that is an
    // error naming the file, and the tool that needs the package is not offered.
    std::fs::write(
        dot.join("package.json"),
        r#"{ "dependencies": { "@acme/greeting": "file:../vendor/acme-greeting", "left-pad": "1.3.0" } }"#,
    )
    .unwrap();
    std::fs::remove_dir_all(dot.join("node_modules")).unwrap();
    let listing = ws.json(&["tools", "--json"]);
    let shown = dot.join("package.json").display().to_string();
    let problem = listing["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["source"] == shown.as_str())
        .unwrap_or_else(|| panic!("{listing:#}"));
    let message = problem["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("could not install the dependencies of {shown}: `")),
        "{message}"
    );
    assert!(
        message.ends_with("(is the registry reachable?)"),
        "{message}"
    );
    assert_eq!(problem["level"], "error");
}
