//! `podcode mcp list`, and MCP tools in `podcode tools` and `podcode tool call`, against the
//! real `@modelcontextprotocol/server-everything` (installed by `.ci/run` with `npm ci` in
//! `crates/mcp/tests/servers`). Every test gets its own HOME, config and data folders.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Output};

struct Env {
    root: tempfile::TempDir,
}

impl Env {
    fn new(config: &str) -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("repo/.git")).unwrap();
        std::fs::create_dir_all(root.path().join("config")).unwrap();
        std::fs::write(root.path().join("config/config.toml"), config).unwrap();
        Self { root }
    }
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_podcode"))
            .args(args)
            .current_dir(self.root.path().join("repo"))
            .env("HOME", self.root.path().join("home"))
            .env("PODCODE_CONFIG_DIR", self.root.path().join("config"))
            .env("PODCODE_DATA_DIR", self.root.path().join("data"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The real server is a test prerequisite, never a reason to skip.
/// Tool `id` as `podcode tools --json` lists it.
fn listed_tool(env: &Env, id: &str) -> serde_json::Value {
    let out = env.run(&["tools", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("{id} not listed: {v}"))
        .clone()
}

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

#[test]
fn mcp_list_shows_state_tools_and_errors_then_tools_are_offered() {
    let bin = everything();
    let env = Env::new(&format!(
        "[mcp.everything]\ncommand = \"{}\"\n\n[mcp.broken]\ncommand = \"/nonexistent/mcp-server\"\n",
        bin.display()
    ));

    let out = env.run(&["mcp", "list"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("SERVER      STATE     TOOLS  TRANSPORT\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("broken      failed        0  /nonexistent/mcp-server\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "last error: could not start `/nonexistent/mcp-server`: No such file or directory"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("everything  ready   "), "{stdout}");

    let out = env.run(&["mcp", "list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["servers"][1]["name"], "everything");
    assert_eq!(v["servers"][1]["state"], "ready");
    assert!(v["servers"][1]["tools"].as_u64().unwrap() >= 5);

    // The manifest cached by `mcp list` lets `podcode tools` offer the tools at once.
    let echo = listed_tool(&env, "everything_echo");
    assert_eq!(echo["source"]["kind"], "mcp");
    assert_eq!(echo["source"]["name"], "mcp:everything");
    assert_eq!(echo["parameters"]["required"][0], "message");

    let out = env.run(&[
        "tool",
        "call",
        "everything_echo",
        r#"{"message":"hi"}"#,
        "--yes",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Echo: hi");

    // The server declares resources (cached with its manifest): the resource tools are
    // offered, and reading is a `read`, allowed by default without an ask.
    let read = listed_tool(&env, "read_mcp_resource");
    assert_eq!(read["source"]["name"], "mcp:resources");
    let out = env.run(&[
        "tool",
        "call",
        "read_mcp_resource",
        r#"{"server":"everything","uri":"demo://resource/dynamic/text/2"}"#,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with(
            "Resource: demo://resource/dynamic/text/2\nMIME: text/plain\nResource 2: "
        ),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn no_servers_configured_says_how_to_add_one() {
    let env = Env::new("");
    let out = env.run(&["mcp", "list"]);
    assert!(out.status.success());
    assert_eq!(
        text(&out.stdout),
        "no MCP servers configured; add one to config.toml:\n\n[mcp.everything]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-everything\"]\n"
    );
}

const STATUS_TOOL: &str = r#"#!/bin/sh
if [ "$1" = describe ]; then
  echo '{"id":"deploy_status","description":"Check a deploy.","parameters":{"type":"object","properties":{"service":{"type":"string"}},"required":["service"]}}'
  exit 0
fi
cat > /dev/null
echo "service is healthy"
"#;

fn obj(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn first_text(r: &rmcp::model::CallToolResult) -> String {
    serde_json::to_value(&r.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_serve_offers_builtins_and_executables_to_a_real_client() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use std::os::unix::fs::PermissionsExt;

    let env = Env::new("");
    let tools = env.root.path().join("config/tools");
    std::fs::create_dir_all(&tools).unwrap();
    let tool = tools.join("deploy_status");
    std::fs::write(&tool, STATUS_TOOL).unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let repo = env.root.path().join("repo");
    std::fs::write(repo.join("notes.txt"), "first line\n").unwrap();

    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_podcode"));
    cmd.args([
        "mcp",
        "serve",
        "--allow",
        "deploy_status",
        "--allow",
        "edit:*",
    ])
    .current_dir(&repo)
    .env("HOME", env.root.path().join("home"))
    .env("PODCODE_CONFIG_DIR", env.root.path().join("config"))
    .env("PODCODE_DATA_DIR", env.root.path().join("data"))
    .env_remove("XDG_CONFIG_HOME")
    .env_remove("XDG_DATA_HOME");
    let (transport, stderr) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let client = ().serve(transport).await.unwrap();
    let mut banner = String::new();
    {
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(stderr.unwrap());
        lines.read_line(&mut banner).await.unwrap();
    }
    let session = banner
        .split_whitespace()
        .find(|w| w.starts_with("ses_"))
        .unwrap_or_else(|| panic!("no session id in {banner:?}"))
        .trim_end_matches([')', '`'])
        .to_string();

    let listed = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
    for id in ["read", "write", "bash", "deploy_status"] {
        assert!(names.contains(&id), "{id} missing from {names:?}");
    }

    let r = client
        .call_tool(
            CallToolRequestParams::new("read")
                .with_arguments(obj(serde_json::json!({"filePath": "notes.txt"}))),
        )
        .await
        .unwrap();
    assert_ne!(r.is_error, Some(true), "{}", first_text(&r));
    assert!(first_text(&r).contains("first line"), "{}", first_text(&r));

    let r = client
        .call_tool(
            CallToolRequestParams::new("deploy_status")
                .with_arguments(obj(serde_json::json!({"service": "api"}))),
        )
        .await
        .unwrap();
    assert_ne!(r.is_error, Some(true), "{}", first_text(&r));
    assert_eq!(first_text(&r).trim(), "service is healthy");

    // An ask no --allow rule opened is rejected, and the client's model is told why.
    let r = client
        .call_tool(CallToolRequestParams::new("bash").with_arguments(obj(
            serde_json::json!({"command": "touch x", "description": "touch"}),
        )))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(true));
    assert!(
        first_text(&r)
            .contains("podcode mcp serve rejects permission asks that no --allow rule opened; ask the user to restart the server with --allow for this permission. Asked: bash asks for bash: touch x\ncommand:\n  touch x\ndescription:\n  touch"),
        "{}",
        first_text(&r)
    );

    // Changes are journaled under the connection's session and revertable.
    let r = client
        .call_tool(CallToolRequestParams::new("write").with_arguments(obj(
            serde_json::json!({"filePath": "notes.txt", "content": "changed\n"}),
        )))
        .await
        .unwrap();
    assert_ne!(r.is_error, Some(true), "{}", first_text(&r));
    assert_eq!(
        std::fs::read_to_string(repo.join("notes.txt")).unwrap(),
        "changed\n"
    );
    let _ = client.cancel().await;
    let out = env.run(&["revert", "--session", &session]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("notes.txt")).unwrap(),
        "first line\n"
    );
}

#[test]
fn three_servers_with_no_first_request_wait_do_not_delay_startup() {
    let bin = everything();
    let config: String = ["one", "two", "three"]
        .iter()
        .map(|n| {
            format!(
                "[mcp.{n}]\ncommand = \"{}\"\nfirst_request_wait = 0\n\n",
                bin.display()
            )
        })
        .collect();
    let with = Env::new(&config);
    let without = Env::new("");
    let time = |env: &Env| {
        let t = std::time::Instant::now();
        let out = env.run(&["tools", "--json"]);
        (t.elapsed(), out)
    };
    let (base, _) = time(&without);
    let (elapsed, out) = time(&with);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Structural: the tool set was built while all three were still starting.
    let starting = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["message"]
                .as_str()
                .unwrap_or_default()
                .ends_with("is starting in the background; its tools join once it is ready")
        })
        .count();
    assert_eq!(starting, 3, "{v}");
    eprintln!(
        "NUMBER `podcode tools` with 3 stdio MCP servers not waited for: {elapsed:?} (without MCP: {base:?})"
    );
}

/// The official MCP inspector's command-line mode, as any MCP client would drive
/// `podcode mcp serve` over stdio.
fn inspector(env: &Env, method_args: &[&str]) -> serde_json::Value {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp/tests/servers/node_modules/.bin/mcp-inspector");
    assert!(
        bin.exists(),
        "{} missing: run `npm ci` in crates/mcp/tests/servers (bash .ci/run does)",
        bin.display()
    );
    let root = env.root.path();
    let out = Command::new(bin)
        .arg("--cli")
        .args([
            "-e",
            &format!("PODCODE_CONFIG_DIR={}", root.join("config").display()),
        ])
        .args([
            "-e",
            &format!("PODCODE_DATA_DIR={}", root.join("data").display()),
        ])
        .args(["-e", &format!("HOME={}", root.join("home").display())])
        .arg(env!("CARGO_BIN_EXE_podcode"))
        .args(["mcp", "serve"])
        .args(method_args)
        .current_dir(root.join("repo"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}

#[test]
fn the_official_inspector_lists_and_calls_podcode_tools() {
    let env = Env::new("");
    std::fs::write(env.root.path().join("repo/notes.txt"), "served over MCP\n").unwrap();
    let listed = inspector(&env, &["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for id in ["read", "edit", "bash", "grep"] {
        assert!(names.contains(&id), "{names:?}");
    }
    let read = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read")
        .unwrap();
    assert_eq!(read["inputSchema"]["type"], "object");
    let called = inspector(
        &env,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "read",
            "--tool-arg",
            "filePath=notes.txt",
        ],
    );
    assert_eq!(called["isError"], false);
    assert_eq!(
        called["content"][0]["text"],
        "     1\tserved over MCP\n\n(End of file - total 1 lines)"
    );
}
