//! Stdio MCP servers start in the sandbox (real helper, real Landlock, a real stdio server
//! run with Node): a server that writes inside the workspace starts and lists its tools;
//! one that writes to `$HOME` at start is refused the write and fails to start, saying
//! why; with `sandbox = false` the same server starts as it is.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use podcode_config::McpServerConfig;
use podcode_mcp::{McpSource, ServerState, StdioSandbox};

/// `sh -c "echo started > <marker> && exec node huge-line.mjs"` in `workspace`, `HOME=home`.
fn server(marker: &Path, workspace: &Path, home: &Path, sandbox: bool) -> McpServerConfig {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/huge-line.mjs");
    McpServerConfig {
        command: Some("sh".into()),
        args: vec![
            "-c".into(),
            format!(
                "echo started > '{}' && exec node '{}'",
                marker.display(),
                script.display()
            ),
        ],
        env: [("HOME".to_string(), home.display().to_string())].into(),
        cwd: Some(workspace.display().to_string()),
        sandbox,
        ..Default::default()
    }
}

#[tokio::test]
async fn stdio_servers_may_write_the_workspace_but_not_home() {
    let tmp = tempfile::tempdir().unwrap();
    let (workspace, home, data) = (
        tmp.path().join("ws"),
        tmp.path().join("home"),
        tmp.path().join("data"),
    );
    for d in [&workspace, &home, &data] {
        std::fs::create_dir_all(d).unwrap();
    }
    let configs: BTreeMap<String, McpServerConfig> = [
        (
            "inside".to_string(),
            server(&workspace.join("inside.txt"), &workspace, &home, true),
        ),
        (
            "home".to_string(),
            server(&home.join(".tool-state"), &workspace, &home, true),
        ),
        (
            "trusted".to_string(),
            server(&home.join(".trusted-state"), &workspace, &home, false),
        ),
    ]
    .into();
    let sandbox =
        podcode_tools::testing::default_sandbox(&data, &data.join("spill")).with_network(true);
    let source = McpSource::new_sandboxed(
        &configs,
        data.join("mcp.json"),
        Some(StdioSandbox {
            sandbox: Arc::new(sandbox),
            writable: vec![workspace.clone()],
        }),
    );
    source.start_and_wait().await;
    let status = |name: &str| {
        source
            .servers()
            .iter()
            .find(|s| s.name == name)
            .unwrap()
            .status()
    };

    let (state, error, tools) = status("inside");
    assert_eq!(state, ServerState::Ready, "{error:?}");
    assert!(tools > 0);
    assert!(workspace.join("inside.txt").exists());

    let (state, error, _) = status("home");
    assert_eq!(state, ServerState::Failed);
    let error = error.unwrap_or_default();
    assert!(error.contains("Permission denied"), "{error}");
    // The sandbox's own log names what it refused.
    assert!(
        error.ends_with(&format!(
            "(Podcode's sandbox stopped writing {}: add the directory to `writable` under [sandbox], or set `sandbox = false` under [mcp.home])",
            home.join(".tool-state").display()
        )),
        "{error}"
    );
    assert!(!home.join(".tool-state").exists());

    // Opted out: the same write works.
    let (state, error, _) = status("trusted");
    assert_eq!(state, ServerState::Ready, "{error:?}");
    assert!(home.join(".trusted-state").exists());
}
