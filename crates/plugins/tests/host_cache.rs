//! The plugin host's environment and its manifest cache, end to end with the real sidecar:
//! first use with no network and an empty data dir, environment failures never cached as
//! the plugin's error, and cache entries keyed on everything a load depended on (imported
//! helpers, installed packages).
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use podcode_plugins::*;
use podcode_protocol::{PermissionAction, PermissionRule};
use podcode_tools::testing::{Setup, harness};
use podcode_tools::{CallStatus, ToolRegistry};
use serde_json::json;

/// A plugin that uses the host's own zod (through the shim) and TypeScript syntax, so it
/// needs both bundled dependencies on Node.
const LABEL_TOOL: &str = r#"import { tool } from "@opencode-ai/plugin"
import { label } from "./lib/label.mjs"
export default tool({
  description: label("describes"),
  args: { name: tool.schema.string().describe("who") },
  async execute(args: { name: string }): Promise<string> { return label(args.name) },
})
"#;

fn write(root: &Path, rel: &str, text: &str) -> PathBuf {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

fn runtimes() -> Vec<JsRuntime> {
    let find = |name: &str| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    };
    let mut out = vec![JsRuntime::Node(find("node").expect("node on PATH"))];
    if let Some(bun) = find("bun") {
        out.push(JsRuntime::Bun(bun));
    }
    out
}

struct Run {
    registry: ToolRegistry,
    host: Arc<PluginHost>,
    reports: Vec<FileReport>,
    watched: std::collections::BTreeSet<std::path::PathBuf>,
}

async fn load(root: &Path, data: &Path, runtime: Option<JsRuntime>, cache: &Path) -> Run {
    let host = PluginHost::new(
        runtime,
        HostOptions {
            data_dir: data.to_path_buf(),
            plugin_config: json!({}),
            directory: root.to_path_buf(),
            worktree: root.to_path_buf(),
            // Podcode's default sandbox (workspace-write; the plugin host keeps the network).
            sandbox: Some(
                podcode_tools::testing::default_sandbox(data, &data.join("tool-output"))
                    .with_network(true),
            ),
        },
    );
    let files = find_plugin_files(&PluginDirs {
        home: root.join("home"),
        opencode: vec![root.join("home/.config/opencode")],
        podcode_config: root.join("global-config"),
        project_root: root.to_path_buf(),
    });
    let mut cache = ManifestCache::load(cache.to_path_buf());
    let out = load_plugin_tools(&files, true, &host, &mut cache, &json!({})).await;
    let mut registry = ToolRegistry::new();
    for (source, tools) in out.sources {
        registry.merge(source, tools);
    }
    for p in out.problems {
        registry.add_problem(&p.source, p.level, p.message);
    }
    Run {
        registry,
        host,
        reports: out.reports,
        watched: out.watched,
    }
}

fn description(run: &Run, id: &str) -> String {
    run.registry
        .get(id)
        .map(|t| t.tool.spec().description.clone())
        .unwrap_or_else(|| panic!("no tool {id}: {:?}", run.registry.problems()))
}

fn allow() -> Setup {
    Setup {
        rules: vec![PermissionRule::new("*", "*", PermissionAction::Allow)],
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_tool_loads_and_runs_with_no_registry_and_an_empty_data_dir() {
    // Anything that tried to install packages would fail: the registry is a closed port.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    // SAFETY: set before any thread of this test reads the environment; the sidecars
    // inherit it.
    unsafe {
        std::env::set_var("npm_config_registry", format!("http://127.0.0.1:{port}/"));
    }
    for runtime in runtimes() {
        let ws = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        write(ws.path(), ".opencode/tools/label.ts", LABEL_TOOL);
        write(
            ws.path(),
            ".opencode/tools/lib/label.mjs",
            "export const label = (s) => `label ${s}`\n",
        );
        let run = load(
            ws.path(),
            data.path(),
            Some(runtime.clone()),
            &data.path().join("cache.json"),
        )
        .await;
        assert_eq!(description(&run, "label"), "label describes", "{runtime:?}");
        let h = harness(run.registry, allow());
        let out = h.call("label", r#"{"name": "offline"}"#).await;
        assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
        assert_eq!(out.model_text, "label offline");
        let invalid = h.call("label", r#"{"name": 3}"#).await;
        assert_eq!(
            invalid.status,
            CallStatus::Failed,
            "the host's zod validates"
        );
        run.host.shutdown().await;
        let host_dirs: Vec<_> = std::fs::read_dir(data.path().join("plugin-host"))
            .unwrap()
            .flatten()
            .collect();
        assert_eq!(host_dirs.len(), 1);
        assert!(
            !host_dirs[0].path().join("node_modules").exists(),
            "nothing was installed"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_runtime_is_not_cached_as_the_plugins_error() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let cache = data.path().join("cache.json");
    write(ws.path(), ".opencode/tools/label.ts", LABEL_TOOL);
    write(
        ws.path(),
        ".opencode/tools/lib/label.mjs",
        "export const label = (s) => `label ${s}`\n",
    );
    let none = load(ws.path(), data.path(), None, &cache).await;
    match &none.reports[0].status {
        FileStatus::Failed { message } => {
            assert!(
                message.starts_with("no JavaScript runtime found"),
                "{message}"
            )
        }
        other => panic!("{other:?}"),
    }
    let back = load(ws.path(), data.path(), detect_runtime(), &cache).await;
    assert_eq!(description(&back, "label"), "label describes");
    assert!(!back.reports[0].cached);
    back.host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edited_helper_changes_the_manifest_without_touching_the_plugin_file() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let cache = data.path().join("cache.json");
    write(ws.path(), ".opencode/tools/label.ts", LABEL_TOOL);
    let helper = write(
        ws.path(),
        ".opencode/tools/lib/label.mjs",
        "export const label = (s) => `label ${s}`\n",
    );
    let first = load(ws.path(), data.path(), detect_runtime(), &cache).await;
    assert_eq!(description(&first, "label"), "label describes");
    assert!(!first.reports[0].cached);
    assert!(first.reports[0].load_ms.is_some());
    first.host.shutdown().await;

    let dirs = [ws.path().join(".opencode/tools")];
    let before = fingerprint(&dirs, &first.watched);
    let warm = load(ws.path(), data.path(), detect_runtime(), &cache).await;
    assert_eq!(warm.host.spawn_count(), 0, "nothing changed: no sidecar");
    assert!(warm.reports[0].cached);
    assert_eq!(description(&warm, "label"), "label describes");

    std::fs::write(&helper, "export const label = (s) => `tag ${s}`\n").unwrap();
    assert_ne!(
        fingerprint(&dirs, &first.watched),
        before,
        "a running session reloads when a helper changes"
    );
    let edited = load(ws.path(), data.path(), detect_runtime(), &cache).await;
    assert_eq!(description(&edited, "label"), "tag describes");
    assert!(!edited.reports[0].cached);
    edited.host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_package_is_retried_once_it_is_installed_where_the_error_says() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let cache = data.path().join("cache.json");
    write(
        ws.path(),
        ".opencode/tools/shout.mjs",
        "import { tool } from \"@opencode-ai/plugin\"\nimport { shout } from \"podcode-shout\"\nexport default tool({ description: shout(\"loud\"), args: {}, async execute() { return shout(\"hi\") } })\n",
    );
    let failed = load(ws.path(), data.path(), detect_runtime(), &cache).await;
    let FileStatus::Failed { message } = &failed.reports[0].status else {
        panic!("{:?}", failed.reports[0]);
    };
    assert!(
        message.contains("cannot find package 'podcode-shout'"),
        "{message}"
    );
    failed.host.shutdown().await;
    let again = load(ws.path(), data.path(), detect_runtime(), &cache).await;
    assert!(
        again.reports[0].cached,
        "an unchanged failure is not retried"
    );
    assert_eq!(again.host.spawn_count(), 0);

    // "install it there": a package appears in the workspace's node_modules.
    let pkg = ws.path().join("node_modules/podcode-shout");
    write(
        &pkg,
        "package.json",
        r#"{"name":"podcode-shout","version":"1.0.0","type":"module","exports":"./index.mjs"}"#,
    );
    write(
        &pkg,
        "index.mjs",
        "export const shout = (s) => s.toUpperCase()\n",
    );
    let installed = load(ws.path(), data.path(), detect_runtime(), &cache).await;
    assert_eq!(description(&installed, "shout"), "LOUD");
    installed.host.shutdown().await;

    // A new version of the package is a new manifest.
    write(
        &pkg,
        "package.json",
        r#"{"name":"podcode-shout","version":"2.0.0","type":"module","exports":"./index.mjs"}"#,
    );
    write(&pkg, "index.mjs", "export const shout = (s) => `${s}!`\n");
    let upgraded = load(ws.path(), data.path(), detect_runtime(), &cache).await;
    assert_eq!(description(&upgraded, "shout"), "loud!");
    upgraded.host.shutdown().await;
}
