//! The sidecar as a process, with the real Bun/Node host: what a plugin spawns ends with
//! Podcode, a string cut mid-emoji arrives with U+FFFD in place of the broken half, an unreadable frame fails only its call (at once) and the sidecar goes on, and
//! a long result is streamed into truncation and the spill file.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use podcode_plugins::*;
use podcode_protocol::{PermissionAction, PermissionRule};
use podcode_tools::testing::{Harness, Setup, harness};
use podcode_tools::{CallStatus, ToolRegistry};
use serde_json::json;

const TOOLS: &str = r#"import { tool } from "@opencode-ai/plugin"
import { spawn } from "node:child_process"
export const sleeper = tool({ description: "spawns a long sleep", args: {}, async execute() {
  const child = spawn("sleep", ["987"], { stdio: "ignore" })
  return String(child.pid)
} })
export const half = tool({ description: "half a surrogate pair", args: {}, async execute() {
  return `broken ${"😀".slice(0, 1)} here, ${"😀".slice(1)} there, whole 😀`
} })
export const garbled = tool({ description: "writes frames that are not UTF-8", args: {}, async execute() {
  // Straight to the frame pipe, past the host: one broken answer for each id this call may have.
  // Highest id first: the frame carrying this call's own id comes last, so when this call fails
  // every frame naming a later id (the next call's) has been read already, with nobody waiting.
  const { writeSync } = await import("node:fs")
  for (let id = 199; id >= 0; id--) writeSync(1, Buffer.concat([Buffer.from(`{"jsonrpc":"2.0","id":${id},"result":{"output":"`), Buffer.from([0xff]), Buffer.from(`"}}\n`)]))
  return "unreachable"
} })
export const ok = tool({ description: "ok", args: {}, async execute() { return "still here" } })
export const big = tool({ description: "a long result", args: { mb: tool.schema.number() }, async execute({ mb }) {
  const line = "0123456789abcdef".repeat(4).slice(0, 63) + "\n"
  return line.repeat(mb * 1024 * 1024 / 64) + "THE END"
} })
"#;

async fn load(root: &Path, data: &Path, runtime: JsRuntime) -> (ToolRegistry, Arc<PluginHost>) {
    std::fs::create_dir_all(root.join(".opencode/tools")).unwrap();
    std::fs::write(root.join(".opencode/tools/proc.mjs"), TOOLS).unwrap();
    let host = PluginHost::new(
        Some(runtime),
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
    let out = load_plugin_tools(
        &files,
        true,
        &host,
        &mut ManifestCache::default(),
        &json!({}),
    )
    .await;
    let mut registry = ToolRegistry::new();
    for (source, tools) in out.sources {
        registry.merge(source, tools);
    }
    assert!(registry.problems().is_empty(), "{:?}", registry.problems());
    (registry, host)
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

fn setup() -> Setup {
    Setup {
        rules: vec![PermissionRule::new("*", "*", PermissionAction::Allow)],
        opts: Box::new(|o| {
            // Long enough that a call failing "at once" cannot be a timeout.
            o.default_timeout = Duration::from_secs(600);
        }),
        ..Default::default()
    }
}

/// Some process has exactly these arguments (NUL-separated, as in `/proc/PID/cmdline`).
fn running_args(cmdline: &[u8]) -> bool {
    std::fs::read_dir("/proc").is_ok_and(|d| {
        d.flatten()
            .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == cmdline))
    })
}

async fn call(h: &Harness, tool: &str, args: &str) -> podcode_tools::CallOutcome {
    h.call(tool, args).await
}

#[tokio::test(flavor = "multi_thread")]
async fn what_a_plugin_spawns_ends_when_the_host_shuts_down() {
    for runtime in runtimes() {
        let ws = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let (registry, host) = load(ws.path(), data.path(), runtime.clone()).await;
        let h = harness(registry, setup());
        let out = call(&h, "proc_sleeper", "{}").await;
        assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
        // The host runs in its own PID namespace: the pid the plugin returns means nothing
        // here, so the sleep is found by its arguments.
        assert!(
            out.model_text.trim().parse::<i32>().is_ok(),
            "{}",
            out.model_text
        );
        // The pid comes back as soon as the child is forked; its `sleep` command line may
        // show a moment later on a busy machine (a stressed CI run saw it not yet there).
        for _ in 0..400 {
            if running_args(b"sleep\0987\0") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            running_args(b"sleep\0987\0"),
            "{runtime:?}: the sleep runs while the host does"
        );
        host.shutdown().await;
        // Ending is asynchronous: give the kernel a moment, without timing anything.
        for _ in 0..400 {
            if !running_args(b"sleep\0987\0") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            !running_args(b"sleep\0987\0"),
            "{runtime:?}: sleep 987 outlived the host"
        );
    }
}

/// A result string cut mid-emoji (a lone high and a lone low surrogate) is delivered with
/// U+FFFD in place of each broken half, under Bun and Node alike.
#[tokio::test(flavor = "multi_thread")]
async fn half_a_surrogate_pair_arrives_as_a_replacement_character_and_the_host_goes_on() {
    for runtime in runtimes() {
        let ws = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let (registry, host) = load(ws.path(), data.path(), runtime.clone()).await;
        let h = harness(registry, setup());
        let out = call(&h, "proc_half", "{}").await;
        assert_eq!(
            out.status,
            CallStatus::Completed,
            "{runtime:?}: {}",
            out.model_text
        );
        assert_eq!(
            out.model_text, "broken \u{fffd} here, \u{fffd} there, whole 😀",
            "{runtime:?}"
        );
        assert_eq!(call(&h, "proc_ok", "{}").await.model_text, "still here");
        assert_eq!(host.spawn_count(), 1, "the same sidecar went on");
        host.shutdown().await;
    }
}

/// A frame that is not UTF-8 fails only the call it answers, at once, saying what a frame
/// must be; the same sidecar serves the next call.
#[tokio::test(flavor = "multi_thread")]
async fn an_unreadable_frame_fails_that_call_at_once_and_the_host_goes_on() {
    for runtime in runtimes() {
        let ws = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let (registry, host) = load(ws.path(), data.path(), runtime.clone()).await;
        let h = harness(registry, setup());
        let out = call(&h, "proc_garbled", "{}").await;
        assert_eq!(
            out.status,
            CallStatus::Failed,
            "{runtime:?}: {}",
            out.model_text
        );
        assert!(
            out.model_text.starts_with(
                "The proc_garbled tool failed: the plugin's reply could not be read ("
            ),
            "{}",
            out.model_text
        );
        assert!(
            out.model_text
                .ends_with("); it must be one line of JSON-RPC in UTF-8"),
            "{}",
            out.model_text
        );
        assert_eq!(call(&h, "proc_ok", "{}").await.model_text, "still here");
        assert_eq!(host.spawn_count(), 1, "the same sidecar went on");
        host.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_result_is_streamed_into_truncation_and_a_complete_spill_file() {
    for runtime in runtimes() {
        let ws = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let (registry, host) = load(ws.path(), data.path(), runtime.clone()).await;
        let h = harness(registry, setup());
        let out = call(&h, "proc_big", r#"{"mb": 8}"#).await;
        assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
        let t = out.truncated.clone().expect("truncated");
        let spilled = std::fs::read_to_string(&t.spill_path).unwrap();
        let line = format!("{}\n", &"0123456789abcdef".repeat(4)[..63]);
        let lines = (8 * 1024 * 1024) / 64;
        assert_eq!(spilled.len(), lines * line.len() + "THE END".len());
        assert!(spilled.starts_with(&line) && spilled.ends_with("\nTHE END"));
        assert_eq!(t.total_lines as usize, lines + 1);
        assert!(out.model_text.len() < 200 * 1024, "{runtime:?}");
        host.shutdown().await;
    }
}
