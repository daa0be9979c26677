//! Plugin tools end to end: real plugin files (the seed examples among them) loaded by the
//! real Bun/Node sidecar and called through the real pipeline and SQLite store.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use podcode_plugins::*;
use podcode_protocol::{Event, PermissionAction, PermissionReply, PermissionRule};
use podcode_tools::testing::{Harness, Setup, harness};
use podcode_tools::{CallStatus, RawArgs, ToolHook, ToolRegistry};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("js/test/fixtures")
}

/// The fixtures import zod themselves (as the seed tells plugin authors to): install it once.
fn fixture_deps() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if !fixtures().join("node_modules/zod/package.json").exists() {
            let ok = std::process::Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                .current_dir(fixtures())
                .status()
                .expect("npm");
            assert!(ok.success(), "npm ci in {}", fixtures().display());
        }
    });
}

struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    /// `files`: (fixture path relative to fixtures/, destination relative to the workspace).
    fn new(files: &[(&str, &str)]) -> Self {
        fixture_deps();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(
            fixtures().join("node_modules"),
            dir.path().join("node_modules"),
        )
        .unwrap();
        let ws = Self { dir };
        for (from, to) in files {
            ws.copy(from, to);
        }
        ws
    }
    fn copy(&self, from: &str, to: &str) {
        let dest = self.dir.path().join(to);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(fixtures().join(from), dest).unwrap();
    }
    fn write(&self, to: &str, text: &str) -> PathBuf {
        let dest = self.dir.path().join(to);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::write(&dest, text).unwrap();
        dest
    }
    fn root(&self) -> &Path {
        self.dir.path()
    }
}

struct Loaded {
    registry: ToolRegistry,
    hooks: Vec<Arc<dyn ToolHook>>,
    host: Arc<PluginHost>,
    reports: Vec<FileReport>,
    workspace: PathBuf,
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("plugin-host-data")
}

async fn load_with(
    ws: &Workspace,
    runtime: Option<JsRuntime>,
    config: Value,
    cache: &mut ManifestCache,
) -> Loaded {
    let host = PluginHost::new(
        runtime,
        HostOptions {
            data_dir: data_dir(),
            plugin_config: config.clone(),
            directory: ws.root().to_path_buf(),
            worktree: ws.root().to_path_buf(),
            // Podcode's default sandbox (workspace-write; the plugin host keeps the network).
            sandbox: Some(
                podcode_tools::testing::default_sandbox(
                    &data_dir(),
                    &data_dir().join("tool-output"),
                )
                .with_network(true),
            ),
        },
    );
    let files = find_plugin_files(&PluginDirs {
        home: ws.root().join("home"),
        opencode: vec![ws.root().join("home/.config/opencode")],
        podcode_config: ws.root().join("global-config"),
        project_root: ws.root().to_path_buf(),
    });
    let out = load_plugin_tools(&files, true, &host, cache, &config).await;
    let mut registry = ToolRegistry::new();
    registry.register_builtin(podcode_tools::testing::noop("grep"));
    for (source, tools) in out.sources {
        registry.merge(source, tools);
    }
    for p in out.problems {
        registry.add_problem(&p.source, p.level, p.message);
    }
    let hooks: Vec<Arc<dyn ToolHook>> = out
        .hooks
        .map(|h| Arc::new(h) as Arc<dyn ToolHook>)
        .into_iter()
        .collect();
    Loaded {
        registry,
        hooks,
        host,
        reports: out.reports,
        workspace: ws.root().to_path_buf(),
    }
}

async fn load(ws: &Workspace, config: Value) -> Loaded {
    load_with(ws, detect_runtime(), config, &mut ManifestCache::default()).await
}

fn bun() -> Option<JsRuntime> {
    detect_runtime().filter(|r| matches!(r, JsRuntime::Bun(_)))
}

fn node() -> JsRuntime {
    let path = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join("node"))
        .find(|p| p.is_file())
        .expect("node on PATH");
    JsRuntime::Node(path)
}

fn run(l: Loaded, setup: Setup) -> (Harness, Arc<PluginHost>) {
    let mut setup = setup;
    setup.hooks.extend(l.hooks);
    setup.workspace = Some(l.workspace);
    (harness(l.registry, setup), l.host)
}

fn allow() -> Setup {
    Setup {
        rules: vec![PermissionRule::new("*", "*", PermissionAction::Allow)],
        ..Default::default()
    }
}

/// A one-route HTTP server on 127.0.0.1 standing in for the deploy API.
async fn deploy_api() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = [0u8; 2048];
            let n = sock.read(&mut buf).await.unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]).to_string();
            let (status, body) = if req.starts_with("GET /status/api ") {
                (
                    "200 OK",
                    r#"{"health":"healthy","release":"v1.2.3","deployedAt":"2026-12-01T10:00:00Z"}"#,
                )
            } else {
                ("404 Not Found", "{}")
            };
            let resp = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(resp.as_bytes()).await;
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_seed_deploy_status_plugin_runs_unchanged_with_its_config() {
    let ws = Workspace::new(&[(
        ".podcode/plugins/deploy-status.ts",
        ".podcode/plugins/deploy-status.mjs",
    )]);
    let endpoint = deploy_api().await;
    let l = load(&ws, json!({"deploy-status": {"endpoint": endpoint}})).await;
    assert!(
        l.registry.problems().is_empty(),
        "{:?}",
        l.registry.problems()
    );
    let spec = l.registry.get("deploy_status").unwrap().tool.spec().clone();
    assert!(spec.idempotent);
    assert_eq!(
        spec.parameters["properties"]["service"]["description"],
        "Service name, e.g. 'api' or 'web'."
    );
    let (h, host) = run(l, allow());
    let out = h.call("deploy_status", r#"{"service":"api"}"#).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        "Service api is healthy on release v1.2.3, deployed 2026-12-01T10:00:00Z."
    );
    assert_eq!(out.result.title, "api — healthy");
    assert_eq!(out.result.metadata, json!({"release": "v1.2.3"}));
    let missing = h.call("deploy_status", r#"{"service":"web"}"#).await;
    assert_eq!(
        missing.model_text,
        "The deploy_status tool failed: status 404 for web"
    );
    let invalid = h.call("deploy_status", r#"{"service": 3}"#).await;
    assert!(
        invalid
            .model_text
            .starts_with("The deploy_status tool was called with invalid arguments: `service`: "),
        "{}",
        invalid.model_text
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_throwing_server_is_a_load_error_and_everything_else_loads() {
    let ws = Workspace::new(&[
        (
            ".podcode/plugins/deploy-status.ts",
            ".podcode/plugins/deploy-status.mjs",
        ),
        (".opencode/tools/math.ts", ".opencode/tools/math.ts"),
    ]);
    ws.write(
        ".opencode/tools/broken.ts",
        "export default {\n  description: 'x',\n  args: {,\n}\n",
    );
    let l = load(&ws, json!({})).await;
    let problems: Vec<String> = l
        .registry
        .problems()
        .iter()
        .map(|p| p.message.clone())
        .collect();
    assert!(
        problems
            .iter()
            .any(|m| m.contains("deploy-status: set plugin_config.deploy-status.endpoint")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|m| m.contains("broken.ts:3")),
        "syntax error with its line: {problems:?}"
    );
    assert!(l.registry.get("math_add").is_some() && l.registry.get("math_multiply").is_some());
    let statuses: Vec<&str> = l
        .reports
        .iter()
        .map(|r| match &r.status {
            FileStatus::Loaded { .. } => "loaded",
            FileStatus::Failed { .. } => "failed",
            FileStatus::Skipped { .. } => "skipped",
        })
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == "failed").count(),
        2,
        "{statuses:?}"
    );
    l.host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn opencode_tool_files_and_plugins_run_with_their_zod_validation() {
    let ws = Workspace::new(&[
        (".opencode/tools/math.ts", ".opencode/tools/math.ts"),
        (
            ".opencode/tools/python-add.ts",
            ".opencode/tools/python-add.ts",
        ),
        (".opencode/tools/add.py", ".opencode/tools/add.py"),
        (
            ".opencode/plugins/my-tools.ts",
            ".opencode/plugins/my-tools.ts",
        ),
        (
            ".opencode/tools/github-search.ts",
            ".opencode/tools/github-search.ts",
        ),
    ]);
    let l = load(&ws, json!({})).await;
    let (h, host) = run(l, allow());
    assert_eq!(
        h.call("math_add", r#"{"a": 2, "b": 3}"#).await.model_text,
        "5"
    );
    assert_eq!(
        h.call("math_multiply", r#"{"a": 2, "b": 3}"#)
            .await
            .model_text,
        "6"
    );
    let bad = h.call("math_add", r#"{"a": "two"}"#).await;
    assert_eq!(bad.status, CallStatus::Failed);
    assert!(
        bad.model_text
            .starts_with("The math_add tool was called with invalid arguments: `a`: "),
        "{}",
        bad.model_text
    );
    assert!(bad.model_text.contains("`b`: "), "{}", bad.model_text);
    assert_eq!(
        h.call("greet", r#"{"name": "Ada"}"#).await.model_text,
        "Hello, Ada!"
    );
    assert_eq!(
        h.call("calculate", r#"{"expression": "6*7"}"#)
            .await
            .model_text,
        "Result: 42"
    );
    if bun().is_some() {
        assert_eq!(
            h.call("python-add", r#"{"a": 1, "b": 2}"#).await.model_text,
            "3"
        );
    }
    // No internet here: the example's fetch fails, and the model reads a tool error.
    let gh = h.call("github-search", r#"{"query": "podcode"}"#).await;
    assert!(
        gh.status == CallStatus::Failed || gh.model_text.starts_with("GitHub API error"),
        "{}",
        gh.model_text
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ctx_ask_record_change_and_metadata_cross_the_wire() {
    let ws = Workspace::new(&[
        (
            ".podcode/plugins/write-file.ts",
            ".podcode/plugins/write-file.ts",
        ),
        (".opencode/tools/metadata.ts", ".opencode/tools/metadata.ts"),
    ]);
    let l = load(&ws, json!({})).await;
    let (h, host) = run(
        l,
        Setup {
            replies: vec![
                PermissionReply::Once,
                PermissionReply::Reject {
                    feedback: Some("not there".into()),
                },
            ],
            ..Default::default()
        },
    );
    let target = ws.root().join("out.txt");
    let args = json!({"path": target, "body": "hello plugin"}).to_string();
    // Plugin tools are gated by their id first (`*`), then the tool's own ctx.ask.
    let out = h.call("write_file", &args).await;
    let asks = h.user.asks();
    assert_eq!(asks[0].request.permission, "write_file");
    assert_eq!(out.status, CallStatus::Denied, "{}", out.model_text);
    assert_eq!(
        out.model_text,
        format!(
            "The user rejected the write permission for \"{}\" and said: not there",
            target.display()
        )
    );
    assert!(!target.exists());

    let (h, host2) = run(
        load(&ws, json!({})).await,
        Setup {
            rules: vec![
                PermissionRule::new("write_file", "*", PermissionAction::Allow),
                PermissionRule::new("metadata", "*", PermissionAction::Allow),
            ],
            replies: vec![PermissionReply::Once],
            ..Default::default()
        },
    );
    let mut events = h.runtime.subscribe();
    let out = h.call("write_file", &args).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello plugin");
    let ask = &h.user.asks()[0];
    assert_eq!(
        (
            ask.request.permission.as_str(),
            ask.request.patterns.clone()
        ),
        ("write", vec![target.display().to_string()])
    );
    assert_eq!(ask.request.metadata["preview"], "hello plugin");
    let changes = h
        .store
        .changes(Some(&h.session), Some(&out.call_id))
        .unwrap();
    assert_eq!(changes.len(), 1, "recordChange journaled under the call");
    assert_eq!(changes[0].new_content.as_deref(), Some("hello plugin"));
    assert_eq!(out.result.title, "wrote out.txt");
    while events.try_recv().is_ok() {}

    let meta = h.call_json("metadata", json!({"path": "data.csv"})).await;
    assert_eq!(meta.status, CallStatus::Completed, "{}", meta.model_text);
    let titles: Vec<String> = std::iter::from_fn(|| events.try_recv().ok())
        .filter_map(|e| match e {
            Event::ToolMetadata { title, .. } => title,
            _ => None,
        })
        .collect();
    assert_eq!(titles, ["Processing dataset...", "Dataset processed"]);
    host.shutdown().await;
    host2.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_reaches_the_plugin_and_a_crash_or_hang_never_takes_the_agent_down() {
    let ws = Workspace::new(&[(
        ".opencode/tools/cancellation.ts",
        ".opencode/tools/cancellation.ts",
    )]);
    ws.write(".opencode/tools/crash.ts", "import { tool } from \"@opencode-ai/plugin\"\nexport default tool({ description: \"exits\", args: {}, async execute() { process.exit(3) } })\n");
    ws.write(".opencode/tools/spin.ts", "import { tool } from \"@opencode-ai/plugin\"\nexport default tool({ description: \"spins\", args: {}, async execute() { for (;;) {} } })\n");
    ws.write(".opencode/tools/ok.ts", "import { tool } from \"@opencode-ai/plugin\"\nexport default tool({ description: \"ok\", args: {}, async execute() { return \"still here\" } })\n");
    let l = load(&ws, json!({})).await;
    assert!(
        l.registry.problems().is_empty(),
        "{:?}",
        l.registry.problems()
    );
    // The stuck tool gets a short limit in a harness of its own; every other call a long
    // one, so a sidecar that restarts slowly on a busy machine is not taken for a stuck one.
    let mut stuck = ToolRegistry::new();
    let spin = l.registry.get("spin").unwrap();
    stuck.merge(spin.source.clone(), vec![spin.tool.clone()]);
    let short = harness(
        stuck,
        Setup {
            opts: Box::new(|o| {
                o.default_timeout = Duration::from_secs(2);
                o.abort_grace = Duration::from_secs(3);
            }),
            workspace: Some(ws.root().to_path_buf()),
            ..allow()
        },
    );
    let (h, host) = run(
        l,
        Setup {
            opts: Box::new(|o| {
                o.default_timeout = Duration::from_secs(300);
                o.abort_grace = Duration::from_secs(30);
            }),
            ..allow()
        },
    );

    let abort = CancellationToken::new();
    let trigger = abort.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let out = h
        .call_with("cancellation", RawArgs::Text("{}".into()), abort)
        .await;
    assert_eq!(out.status, CallStatus::Aborted, "{}", out.model_text);
    assert!(
        out.model_text.ends_with("Task was cancelled"),
        "{}",
        out.model_text
    );

    let crashed = h.call("crash", "{}").await;
    assert_eq!(crashed.status, CallStatus::Failed);
    assert!(
        crashed.model_text.contains("the plugin host")
            && crashed.model_text.contains("stopped unexpectedly"),
        "{}",
        crashed.model_text
    );
    assert_eq!(
        h.call("ok", "{}").await.model_text,
        "still here",
        "the sidecar restarts"
    );

    let spun = short.call("spin", "{}").await;
    assert_eq!(spun.status, CallStatus::TimedOut, "{}", spun.model_text);
    assert_eq!(
        h.call("ok", "{}").await.model_text,
        "still here",
        "a stuck sidecar is replaced"
    );
    assert!(host.spawn_count() >= 3);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cached_manifests_list_tools_without_starting_the_sidecar() {
    let ws = Workspace::new(&[(".opencode/tools/math.ts", ".opencode/tools/math.ts")]);
    let cache_file = ws.root().join("cache.json");
    let mut cache = ManifestCache::load(cache_file.clone());
    let first = load_with(&ws, detect_runtime(), json!({}), &mut cache).await;
    assert_eq!(first.host.spawn_count(), 1);
    first.host.shutdown().await;
    let mut cache = ManifestCache::load(cache_file.clone());
    let warm = load_with(&ws, detect_runtime(), json!({}), &mut cache).await;
    assert_eq!(
        warm.host.spawn_count(),
        0,
        "no sidecar for cached manifests"
    );
    assert!(warm.registry.get("math_add").is_some());
    // The first call starts it lazily.
    let (h, host) = run(warm, allow());
    assert_eq!(
        h.call("math_add", r#"{"a": 1, "b": 1}"#).await.model_text,
        "2"
    );
    assert_eq!(host.spawn_count(), 1);
    host.shutdown().await;
    // A changed file is imported again.
    ws.write(".opencode/tools/math.ts", "import { tool } from \"@opencode-ai/plugin\"\nexport const add = tool({ description: \"v2\", args: {}, async execute() { return \"two\" } })\n");
    let mut cache = ManifestCache::load(cache_file);
    let changed = load_with(&ws, detect_runtime(), json!({}), &mut cache).await;
    assert_eq!(
        changed
            .registry
            .get("math_add")
            .unwrap()
            .tool
            .spec()
            .description,
        "v2"
    );
    assert!(changed.registry.get("math_multiply").is_none());
    changed.host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn protected_ids_are_refused_and_hooks_run_around_calls() {
    let ws = Workspace::new(&[
        (".podcode/plugins/hooks.ts", ".podcode/plugins/hooks.ts"),
        (
            ".opencode/plugins/env-guard.ts",
            ".opencode/plugins/env-guard.ts",
        ),
        (".opencode/tools/math.ts", ".opencode/tools/math.ts"),
    ]);
    ws.write(".opencode/tools/grep.ts", "import { tool } from \"@opencode-ai/plugin\"\nexport default tool({ description: \"mine\", args: {}, async execute() { return \"x\" } })\nexport const extra = tool({ description: \"extra\", args: {}, async execute() { return \"extra ok\" } })\n");
    let l = load(&ws, json!({})).await;
    let refused: Vec<&str> = l
        .registry
        .problems()
        .iter()
        .map(|p| p.message.as_str())
        .collect();
    assert!(
        refused.contains(&"plugin: refusing to override protected built-in tool grep"),
        "{refused:?}"
    );
    assert!(l.registry.get("grep_extra").is_some());
    let (h, host) = run(l, allow());
    let out = h.call("math_add", r#"{"a": 1, "b": 2}"#).await;
    assert_eq!(
        out.model_text, "3 (checked)",
        "after-hook rewrote the output"
    );
    assert_eq!(out.result.title, "after math_add");
    // The opencode plugin's throwing before-hook blocks the call with its message.
    let env = h.call("use_client", "{}").await;
    assert!(
        env.model_text
            .contains("client.session.revert is not supported in Podcode (it offers client.app.log, client.tui.showToast, client.auth.set and client.session.list/get/messages/status/update/prompt/command)"),
        "{}",
        env.model_text
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn node_runs_typescript_tools_and_explains_when_bun_is_needed() {
    let ws = Workspace::new(&[
        (".opencode/tools/math.ts", ".opencode/tools/math.ts"),
        (".opencode/tools/db-query.ts", ".opencode/tools/db-query.ts"),
    ]);
    let l = load_with(&ws, Some(node()), json!({}), &mut ManifestCache::default()).await;
    let needs_bun: Vec<&str> = l
        .registry
        .problems()
        .iter()
        .map(|p| p.message.as_str())
        .filter(|m| m.contains("needs Bun"))
        .collect();
    assert_eq!(needs_bun.len(), 1, "{:?}", l.registry.problems());
    assert!(needs_bun[0].contains("npm install -g bun"));
    let (h, host) = run(l, allow());
    assert_eq!(
        h.call("math_multiply", r#"{"a": 4, "b": 5}"#)
            .await
            .model_text,
        "20"
    );
    host.shutdown().await;
}

/// The plugin host runs in Podcode's default sandbox: a plugin tool writing inside the
/// workspace works, one writing outside fails with the runtime's EACCES error and a note
/// saying which setting allows it, also when the plugin's error does not name the path.
#[tokio::test]
async fn a_plugin_writing_outside_the_workspace_fails_with_a_clear_error() {
    if !podcode_sandbox::KernelSupport::detect().has_landlock() {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("plugin-escape.txt");
    let quiet = outside.path().join("quiet-escape.txt");
    let ws = Workspace::new(&[]);
    ws.write(
        ".opencode/tools/scribble.ts",
        &format!(
            "import {{ tool }} from \"@opencode-ai/plugin\"\nimport {{ writeFileSync }} from \"node:fs\"\nexport const inside = tool({{ description: \"writes inside\", args: {{}}, async execute(_a, ctx) {{ writeFileSync(ctx.directory + \"/made.txt\", \"ok\"); return \"wrote\" }} }})\nexport const outside = tool({{ description: \"writes outside\", args: {{}}, async execute() {{ writeFileSync({:?}, \"x\"); return \"wrote\" }} }})\nexport const quiet = tool({{ description: \"hides why\", args: {{}}, async execute() {{ try {{ writeFileSync({:?}, \"x\") }} catch {{ throw new Error(\"could not save the notes\") }} return \"wrote\" }} }})\n",
            target.display().to_string(),
            quiet.display().to_string()
        ),
    );
    let l = load(&ws, json!({})).await;
    let (h, host) = run(l, allow());
    let ok = h.call("scribble_inside", "{}").await;
    assert_eq!(ok.status, CallStatus::Completed, "{}", ok.model_text);
    assert!(ws.root().join("made.txt").exists());

    let out = h.call("scribble_outside", "{}").await;
    assert_eq!(out.status, CallStatus::Failed, "{}", out.model_text);
    assert!(!target.exists());
    assert!(out.model_text.contains("EACCES"), "{}", out.model_text);
    assert!(
        out.model_text.contains(&format!(
            "The sandbox (workspace-write) stopped writing {}. To allow it, add the directory to `writable` under `[sandbox]` in the config, or set `mode = \"full\"` there.",
            target.display()
        )),
        "{}",
        out.model_text
    );
    // An error that names no path: the sandbox's own log says what it refused in this
    // call (not the earlier call's write).
    let out = h.call("scribble_quiet", "{}").await;
    assert_eq!(out.status, CallStatus::Failed, "{}", out.model_text);
    assert!(
        out.model_text.contains(&format!(
            "could not save the notes\nThe sandbox (workspace-write) stopped writing {}. To allow it",
            quiet.display()
        )),
        "{}",
        out.model_text
    );
    host.shutdown().await;
}
