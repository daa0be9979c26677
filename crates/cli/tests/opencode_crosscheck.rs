//! opencode itself against Podcode on the same project: both run one prompt against the
//! scripted model (real HTTP + SSE), and the tools each sends for the project's opencode tool
//! file — names, descriptions and JSON Schemas — must be byte for byte the same. opencode
//! (`opencode-ai`, with the `@opencode-ai/plugin` it installs into a config dir) comes from
//! `crates/cli/tests/opencode-crosscheck/` (`npm install --no-save` there; `.ci/run` does it). Nothing needs
//! the network: the plugin package is copied into the project's `.opencode/node_modules` as
//! opencode would have installed it, and every registry lookup points at a closed port.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Env;
use podcode_providers::testing::Reply;
use serde_json::Value;

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../plugins/tests/fixtures/opencode-projects/crosscheck"
);
const OPENCODE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/opencode-crosscheck");

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_dir(&src, &dst);
        } else if src.is_file() {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// `name → (description, parameters as sent)` for every tool of the request that offered
/// tools, keeping the tools whose name starts with `prefix`.
fn sent_tools(requests: &[Value], prefix: &str) -> BTreeMap<String, (String, String)> {
    let body = requests
        .iter()
        .find(|r| r["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .unwrap_or_else(|| panic!("no request offered tools: {requests:#?}"));
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["function"])
        .filter(|f| f["name"].as_str().unwrap().starts_with(prefix))
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_string(),
                (
                    f["description"].as_str().unwrap_or_default().to_string(),
                    serde_json::to_string(&f["parameters"]).unwrap(),
                ),
            )
        })
        .collect()
}

fn dead_registry() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}/")
}

/// Runs `cmd`, killing it after `limit`; returns its stderr.
fn run_with_limit(mut cmd: Command, limit: Duration) -> String {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn opencode_and_podcode_send_the_same_tools_for_an_opencode_tool_file() {
    let opencode = PathBuf::from(OPENCODE_DIR).join("node_modules/.bin/opencode");
    assert!(
        opencode.is_file(),
        "opencode is not installed for this test: run `npm install --no-save` in {OPENCODE_DIR} (.ci/run does)"
    );
    let replies = (0..6).map(|_| Reply::new().text("ok")).collect();
    let env = Env::new(replies);
    copy_dir(Path::new(CORPUS), &env.repo());
    // A real repository: opencode reads a project's opencode.json only inside one.
    std::fs::remove_dir_all(env.repo().join(".git")).unwrap();
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(env.repo())
        .status()
        .unwrap();
    assert!(git.success());

    // Podcode first (opencode adds files to `.opencode/` as it starts).
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "hello"]);
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let podcode = sent_tools(&env.requests(), "shapes_");
    let before = env.requests().len();

    // opencode, pointed at the same scripted model, with its own home folders.
    let home = env.root.path().join("oc-home");
    let modules = env.repo().join(".opencode/node_modules");
    for entry in std::fs::read_dir(PathBuf::from(OPENCODE_DIR).join("node_modules"))
        .unwrap()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("opencode") && !name.starts_with('.') {
            copy_dir(&entry.path(), &modules.join(&name));
        }
    }
    std::fs::write(
        env.repo().join("opencode.json"),
        serde_json::json!({
            "$schema": "https://opencode.ai/config.json",
            "provider": {"scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": {"baseURL": env.server.base_url(), "apiKey": "test"},
                "models": {"test": {"name": "test"}}
            }},
            "model": "scripted/test"
        })
        .to_string(),
    )
    .unwrap();
    let mut cmd = Command::new(&opencode);
    cmd.args(["run", "hello"])
        .current_dir(env.repo())
        // opencode takes its working directory from PWD when it is set.
        .env("PWD", env.repo())
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("npm_config_registry", dead_registry())
        .env("npm_config_fetch_retries", "0")
        .env_remove("OPENCODE_CONFIG")
        .env_remove("OPENCODE_CONFIG_DIR");
    let stderr = run_with_limit(cmd, Duration::from_secs(180));
    let requests = env.requests();
    let opencode_tools = sent_tools(&requests[before..], "shapes_");
    assert!(
        !opencode_tools.is_empty(),
        "opencode sent no shapes_ tools; its stderr: {stderr}"
    );

    assert_eq!(
        podcode.keys().collect::<Vec<_>>(),
        opencode_tools.keys().collect::<Vec<_>>()
    );
    for (name, (description, schema)) in &opencode_tools {
        let (ours, our_schema) = &podcode[name];
        assert_eq!(ours, description, "{name}: description");
        assert_eq!(our_schema, schema, "{name}: JSON Schema bytes");
    }
}
