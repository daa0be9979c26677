//! Plugin tool latency, against baselines measured in the same run:
//! - cold: a workspace with 20 opencode tool files, nothing cached — start the sidecar,
//!   import every file, make the first call (and the same with manifests cached, where only
//!   the called file is imported);
//! - warm: the median round trip of a trivial plugin tool through the whole pipeline
//!   (validate with Zod, permission, execute, record), against a no-op built-in.
//!
//! Run: `cargo bench -p podcode-plugins --bench plugin_roundtrip` (PODCODE_JS_RUNTIME=node
//! to measure Node).
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use podcode_plugins::*;
use podcode_protocol::{PermissionAction, PermissionRule};
use podcode_tools::testing::{self, Setup, harness};
use podcode_tools::{CallStatus, ToolRegistry};
use serde_json::json;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = dir.path().join(".opencode/tools");
    std::fs::create_dir_all(&tools).expect("mkdir");
    for i in 0..20 {
        let src = format!(
            "import {{ tool }} from \"@opencode-ai/plugin\"\n\nexport default tool({{\n  description: \"Echo number {i}\",\n  args: {{ text: tool.schema.string().describe(\"Text to echo\") }},\n  async execute(args) {{\n    return args.text\n  }},\n}})\n"
        );
        std::fs::write(tools.join(format!("echo{i}.ts")), src).expect("write");
    }
    dir
}

async fn load(
    ws: &Path,
    data: &Path,
    cache: &mut ManifestCache,
) -> (ToolRegistry, Arc<PluginHost>) {
    let host = PluginHost::new(
        detect_runtime(),
        HostOptions {
            data_dir: data.to_path_buf(),
            plugin_config: json!({}),
            directory: ws.to_path_buf(),
            worktree: ws.to_path_buf(),
            // Unconfined, as the published figures were measured (the sandbox costs one
            // helper exec at sidecar start, nothing per call).
            sandbox: None,
        },
    );
    let files = find_plugin_files(&PluginDirs {
        home: ws.join("home"),
        opencode: vec![ws.join("home/.config/opencode")],
        podcode_config: ws.join("cfg"),
        project_root: ws.to_path_buf(),
    });
    let out = load_plugin_tools(&files, true, &host, cache, &json!({})).await;
    let mut registry = ToolRegistry::new();
    registry.register_builtin(testing::noop("noop"));
    for (source, tools) in out.sources {
        registry.merge(source, tools);
    }
    assert!(registry.problems().is_empty(), "{:?}", registry.problems());
    (registry, host)
}

fn allow() -> Setup {
    Setup {
        rules: vec![PermissionRule::new("*", "*", PermissionAction::Allow)],
        ..Default::default()
    }
}

async fn bench() {
    let ws = workspace();
    let data = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plugin-bench-data");
    let runtime = detect_runtime().map(|r| r.name()).unwrap_or("none");
    // Install the host's dependencies outside the measurement (a once-per-machine cost).
    let (_, warmup) = load(ws.path(), &data, &mut ManifestCache::default()).await;
    warmup.shutdown().await;

    let mut cold = Vec::new();
    let mut cold_cached = Vec::new();
    for _ in 0..5 {
        let cache_file = ws.path().join("cache.json");
        let _ = std::fs::remove_file(&cache_file);
        let t = Instant::now();
        let mut cache = ManifestCache::load(cache_file.clone());
        let (registry, host) = load(ws.path(), &data, &mut cache).await;
        let h = harness(
            registry,
            Setup {
                workspace: Some(ws.path().to_path_buf()),
                ..allow()
            },
        );
        let out = h.call("echo7", r#"{"text":"hi"}"#).await;
        cold.push(t.elapsed());
        assert_eq!(out.model_text, "hi");
        host.shutdown().await;

        let t = Instant::now();
        let mut cache = ManifestCache::load(cache_file);
        let (registry, host) = load(ws.path(), &data, &mut cache).await;
        assert_eq!(host.spawn_count(), 0);
        let h = harness(
            registry,
            Setup {
                workspace: Some(ws.path().to_path_buf()),
                ..allow()
            },
        );
        let out = h.call("echo7", r#"{"text":"hi"}"#).await;
        cold_cached.push(t.elapsed());
        assert_eq!(out.status, CallStatus::Completed);
        host.shutdown().await;
    }

    let (registry, host) = load(ws.path(), &data, &mut ManifestCache::default()).await;
    let h = harness(
        registry,
        Setup {
            workspace: Some(ws.path().to_path_buf()),
            ..allow()
        },
    );
    for _ in 0..200 {
        h.call("echo3", r#"{"text":"x"}"#).await;
        h.call("noop", "{}").await;
    }
    let n = 2000;
    let (mut plugin, mut builtin) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let t = Instant::now();
        let out = h.call("echo3", r#"{"text":"x"}"#).await;
        plugin.push(t.elapsed());
        assert_eq!(out.model_text, "x");
        let t = Instant::now();
        h.call("noop", "{}").await;
        builtin.push(t.elapsed());
    }
    host.shutdown().await;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (p, b) = (median(plugin), median(builtin));
    println!(
        "plugin cold ({runtime}, 20 tool files, nothing cached): first call after {:.0} ms median of 5; target < 400 ms",
        ms(median(cold))
    );
    println!(
        "plugin cold ({runtime}, manifests cached): first call after {:.0} ms median of 5",
        ms(median(cold_cached))
    );
    println!(
        "plugin warm round trip ({runtime}, whole pipeline, {n} calls): median {:.3} ms; no-op built-in {:.3} ms; ratio {:.1}x; target < 1 ms",
        ms(p),
        ms(b),
        p.as_secs_f64() / b.as_secs_f64()
    );
}

fn main() {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(bench());
}
