//! MCP servers inside the agent loop: the first model request waits (up to
//! `first_request_wait`) for a server whose tools are not known yet, so a one-shot `run`
//! offers them, as opencode does; a server that is not waited for starts in the background
//! and its tools join the running session as soon as it is ready. A server a plugin's
//! `config` hook adds is offered like a configured one.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::*;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use podcode_providers::testing::Reply;

fn everything() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp/tests/servers/node_modules/.bin/mcp-server-everything");
    assert!(
        p.exists(),
        "{} missing: run `npm ci` in crates/mcp/tests/servers (bash .ci/run does)",
        p.display()
    );
    p
}

fn tool_names(request: &serde_json::Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// An executable script in the test's root that runs `prelude`, then the everything server.
fn wrapped_everything(env: &Env, name: &str, prelude: &str) -> PathBuf {
    let path = env.root.path().join(name);
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\n{prelude}\nexec {} \"$@\"\n",
            everything().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Whether `podcode tools --json` lists `id`.
fn tools_list(env: &Env, id: &str) -> (bool, serde_json::Value) {
    let out = env.run(&["tools", "--json"]);
    let listing: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["id"] == id);
    (listed, listing)
}

#[test]
fn a_background_mcp_server_joins_the_running_session_when_ready() {
    let env = Env::new(vec![
        Reply::new().tool_call(
            "call_1",
            "bash",
            r#"{"command": "sleep 4", "description": "wait"}"#,
        ),
        Reply::new().text("done"),
    ]);
    // A server that takes a second to come up and is not waited for, so it cannot be ready
    // for the first request.
    let slow = wrapped_everything(&env, "slow-everything.sh", "sleep 1");
    let config = std::fs::read_to_string(env.repo().join(".podcode/config.toml")).unwrap();
    env.write(
        ".podcode/config.toml",
        &format!(
            "{config}\n[mcp.everything]\ncommand = \"{}\"\nfirst_request_wait = 0\n",
            slow.display()
        ),
    );

    // A project-defined server runs repository-chosen code: untrusted, it is skipped.
    let untrusted = env.run(&["tools", "--json"]);
    let listing: serde_json::Value = serde_json::from_slice(&untrusted.stdout).unwrap();
    assert!(listing["problems"].as_array().unwrap().iter().any(|p| {
        p["message"]
            .as_str()
            .unwrap()
            .starts_with("skipped MCP server `everything` from the project's config")
    }));
    assert!(env.run(&["trust"]).status.success());

    let out = env.run(&["run", "wait, then use the new tools", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = env.requests();
    assert_eq!(requests.len(), 2);
    let first = tool_names(&requests[0]);
    assert!(first.contains(&"read".to_string()));
    assert!(
        !first.iter().any(|t| t.starts_with("everything_")),
        "the first request did not wait: {first:?}"
    );
    let second = tool_names(&requests[1]);
    assert!(
        second.contains(&"everything_echo".to_string()),
        "joined when ready: {second:?}"
    );
}

#[test]
fn an_opencode_json_mcp_server_is_offered_in_the_first_request() {
    let env = Env::new(vec![Reply::new().text("done")]);
    // Slow to come up, as an `npx -y` server is: the first request waits for it.
    let slow = wrapped_everything(&env, "slow-everything.sh", "sleep 2");
    env.write(
        "opencode.json",
        &serde_json::json!({
            "mcp": {"everything": {"type": "local", "command": [slow.to_string_lossy()]}}
        })
        .to_string(),
    );
    assert!(env.run(&["trust"]).status.success());

    let (listed, listing) = tools_list(&env, "everything_echo");
    assert!(listed, "podcode tools lists the server's tools: {listing}");

    // Nothing cached from the listing above: the run must wait for the server itself.
    std::fs::remove_file(env.root.path().join("data/cache/mcp-manifests.json")).unwrap();
    let out = env.run(&["run", "use the server", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = tool_names(&env.requests()[0]);
    assert!(
        first.contains(&"everything_echo".to_string()),
        "the first request offers the server's tools: {first:?}"
    );
}

#[test]
fn a_sandboxed_npx_style_server_can_make_its_cache_on_a_fresh_account() {
    let env = Env::new(vec![Reply::new().text("done")]);
    // As `npx -y` does at every start: write its package cache under ~/.npm. The account is
    // fresh (no ~/.npm yet) and the server runs in the sandbox, which can only open folders
    // that exist.
    let home = env.root.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    assert!(!home.join(".npm").exists());
    let npx_like = wrapped_everything(
        &env,
        "npx-like.sh",
        "mkdir -p \"$HOME/.npm/_cacache\" && touch \"$HOME/.npm/_cacache/index\" || exit 1\ntouch \"$HOME/outside\" 2>/dev/null",
    );
    let config = std::fs::read_to_string(env.repo().join(".podcode/config.toml")).unwrap();
    env.write(
        ".podcode/config.toml",
        &format!(
            "{config}\n[mcp.everything]\ncommand = \"{}\"\n",
            npx_like.display()
        ),
    );
    assert!(env.run(&["trust"]).status.success());
    let status = env.run(&["sandbox", "status"]);
    assert!(
        text(&status.stdout).contains("Landlock  available"),
        "{}",
        text(&status.stdout)
    );

    let (listed, listing) = tools_list(&env, "everything_echo");
    assert!(listed, "the server started and listed its tools: {listing}");
    assert!(home.join(".npm/_cacache/index").exists());
    // The sandbox still keeps it out of the rest of the account.
    assert!(!home.join("outside").exists());
}

/// Written like plugin packs that bring their own MCP server: the `config` hook adds a server,
/// a permission rule and a command to opencode's config object.
const PACK: &str = r#"import type { Plugin } from "@opencode-ai/plugin"
import { appendFileSync } from "node:fs"

export const Pack: Plugin = async ({ directory }) => ({
  config: async (config) => {
    appendFileSync(`${directory}/config-seen.json`, JSON.stringify({
      keys: Object.keys(config).sort(), mcp: Object.keys(config.mcp), model: config.model,
    }) + "\n")
    config.mcp = config.mcp ?? {}
    config.mcp.pack = { type: "local", command: [process.env.PACK_SERVER], enabled: true }
    config.permission = { ...config.permission, webfetch: "deny" }
    config.command = { ...config.command, review: { template: "Review $ARGUMENTS" } }
  },
})
"#;

#[test]
fn a_plugins_config_hook_adds_an_mcp_server_and_a_permission_rule() {
    let env = Env::new(vec![Reply::new().text("ok")]);
    env.write(".opencode/plugins/pack.ts", PACK);
    assert!(env.run(&["trust"]).status.success());
    // The server the plugin names, passed the way a pack would find its own binary.
    let server = everything();
    let run = |args: &[&str]| {
        let mut cmd = env.cmd(args);
        cmd.env("PACK_SERVER", &server);
        cmd.output().unwrap()
    };
    let out = run(&["run", "hello"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The first request offers the added server's tools, and no webfetch (denied outright).
    let first = &env.requests()[0];
    let names = tool_names(first);
    assert!(names.iter().any(|n| n == "pack_echo"), "{names:?}");
    assert!(!names.iter().any(|n| n == "webfetch"), "{names:?}");
    let seen = env.read("config-seen.json");
    let seen: serde_json::Value = serde_json::from_str(seen.lines().next().unwrap()).unwrap();
    assert_eq!(
        seen["keys"],
        serde_json::json!([
            "$schema",
            "agent",
            "command",
            "mcp",
            "model",
            "permission",
            "plugin"
        ])
    );
    // `podcode plugins` says what was applied, and what was not.
    let plugins = text(&run(&["plugins"]).stdout);
    assert!(
        plugins.contains("config hooks added: MCP server pack, rule webfetch * deny"),
        "{plugins}"
    );
    assert!(
        plugins.contains(
            "a plugin's config hook changed command.review (Podcode has no custom commands yet): Podcode does not apply that"
        ),
        "{plugins}"
    );
    let out = run(&[
        "tool",
        "call",
        "pack_echo",
        r#"{"message":"from the pack"}"#,
        "--yes",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Echo: from the pack");
}
