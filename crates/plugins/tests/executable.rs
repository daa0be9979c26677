//! Executable tools end to end: real scripts on disk, described, cached, and called through
//! the real pipeline and store.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use podcode_plugins::{DiscoveryOptions, discover};
use podcode_protocol::{PermissionAction, PermissionRule};
use podcode_tools::testing::{Setup, harness};
use podcode_tools::{CallStatus, ProblemLevel, RawArgs, ToolRegistry};
use tokio_util::sync::CancellationToken;

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

const ADD: &str = r#"#!/usr/bin/env python3
import json, os, sys
if sys.argv[1] == "describe":
    with open(os.path.join(os.path.dirname(__file__), "describe.count"), "a") as f:
        f.write("x")
    print(json.dumps({"description": "Add two numbers.", "idempotent": True, "parameters": {"type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number", "default": 10}}, "required": ["a"]}}))
else:
    args = json.load(sys.stdin)
    print(args["a"] + args["b"], os.environ["PODCODE_TOOL_ID"], os.path.basename(os.getcwd()))
"#;

fn opts(global: &Path, project: &Path, trusted: bool, cache: &Path) -> DiscoveryOptions {
    DiscoveryOptions {
        global_dirs: vec![global.to_path_buf()],
        project_dirs: vec![project.to_path_buf()],
        trusted,
        cache_file: cache.to_path_buf(),
        sandbox: None,
    }
}

async fn registry_for(o: &DiscoveryOptions) -> ToolRegistry {
    let found = discover(o).await;
    let mut r = ToolRegistry::new();
    for (source, tools) in found.sources {
        r.merge(source, tools);
    }
    for p in found.problems {
        r.add_problem(&p.source, p.level, p.message);
    }
    r
}

fn allow_all() -> Setup {
    Setup {
        rules: vec![PermissionRule::new("*", "*", PermissionAction::Allow)],
        ..Default::default()
    }
}

#[tokio::test]
async fn an_executable_is_described_once_and_called_through_the_pipeline() {
    let tmp = tempfile::tempdir().unwrap();
    let global = tmp.path().join("global");
    script(&global, "add", ADD);
    let o = opts(
        &global,
        &tmp.path().join("none"),
        false,
        &tmp.path().join("cache.json"),
    );
    let r = registry_for(&o).await;
    assert!(r.problems().is_empty(), "{:?}", r.problems());
    let spec = r.get("add").unwrap().tool.spec().clone();
    assert_eq!(spec.description, "Add two numbers.");
    assert!(spec.idempotent);
    // Cached: a second discovery does not run `describe` again.
    let _ = registry_for(&o).await;
    assert_eq!(
        std::fs::read_to_string(global.join("describe.count")).unwrap(),
        "x"
    );

    let h = harness(r, allow_all());
    let out = h.call("add", r#"{"a": 1}"#).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(out.model_text, "11 add work\n");
    let bad = h.call("add", r#"{"a": "one"}"#).await;
    assert_eq!(
        bad.model_text,
        "The add tool was called with invalid arguments: `a`: \"one\" is not of type \"number\". Please rewrite the input so it satisfies the expected schema."
    );
}

#[tokio::test]
async fn a_changed_file_is_described_again() {
    let tmp = tempfile::tempdir().unwrap();
    let global = tmp.path().join("global");
    let file = script(&global, "add", ADD);
    let o = opts(
        &global,
        &tmp.path().join("none"),
        false,
        &tmp.path().join("cache.json"),
    );
    registry_for(&o).await;
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&file, ADD.replace("Add two numbers.", "Adds numbers.")).unwrap();
    let r = registry_for(&o).await;
    assert_eq!(
        r.get("add").unwrap().tool.spec().description,
        "Adds numbers."
    );
}

#[tokio::test]
async fn broken_executables_are_reported_and_the_others_still_load() {
    let tmp = tempfile::tempdir().unwrap();
    let global = tmp.path().join("global");
    script(&global, "add", ADD);
    script(&global, "garbage", "#!/bin/sh\necho 'not json'\n");
    script(
        &global,
        "fails",
        "#!/bin/sh\necho 'missing dependency foo' >&2\nexit 3\n",
    );
    script(&global, "helper.js", "not an executable tool");
    let r = registry_for(&opts(
        &global,
        &tmp.path().join("none"),
        false,
        &tmp.path().join("c.json"),
    ))
    .await;
    assert!(r.get("add").is_some());
    let msgs: Vec<&str> = r.problems().iter().map(|p| p.message.as_str()).collect();
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert!(
        msgs.iter()
            .any(|m| m
                .contains("fails describe` exited with exit status: 3: missing dependency foo")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("garbage describe` printed an invalid manifest")),
        "{msgs:?}"
    );
}

#[tokio::test]
async fn project_tools_load_only_in_a_trusted_workspace() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("repo/.podcode/tools");
    script(&project, "add", ADD);
    let untrusted = registry_for(&opts(
        &tmp.path().join("g"),
        &project,
        false,
        &tmp.path().join("c.json"),
    ))
    .await;
    assert!(untrusted.get("add").is_none());
    let p = &untrusted.problems()[0];
    assert_eq!(p.level, ProblemLevel::Warning);
    assert!(
        p.message.contains("not trusted") && p.message.contains("podcode trust"),
        "{}",
        p.message
    );
    let trusted = registry_for(&opts(
        &tmp.path().join("g"),
        &project,
        true,
        &tmp.path().join("c.json"),
    ))
    .await;
    assert!(trusted.get("add").is_some(), "{:?}", trusted.problems());
}

/// A file open for writing cannot be executed ("Text file busy"); a child another thread forks
/// while a tool file is being saved holds it open for that instant. Here the test holds it.
#[tokio::test]
async fn a_tool_still_open_for_writing_loads_once_its_writer_lets_go() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let global = tmp.path().join("g");
    std::fs::create_dir_all(&global).unwrap();
    let path = global.join("add");
    let mut held = std::fs::File::create(&path).unwrap();
    held.write_all(ADD.as_bytes()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let closer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        drop(held);
    });
    let r = registry_for(&opts(
        &global,
        &tmp.path().join("p"),
        false,
        &tmp.path().join("c.json"),
    ))
    .await;
    closer.join().unwrap();
    assert!(r.get("add").is_some(), "{:?}", r.problems());
}

#[tokio::test]
async fn failures_aborts_and_timeouts_reach_the_model_and_kill_the_process_group() {
    let tmp = tempfile::tempdir().unwrap();
    let global = tmp.path().join("global");
    let pidfile = tmp.path().join("grandchild.pid");
    script(
        &global,
        "broken",
        "#!/bin/sh\nif [ \"$1\" = describe ]; then echo '{\"description\":\"d\"}'; exit 0; fi\necho partial\necho 'could not reach the server' >&2\nexit 2\n",
    );
    // `hang` is aborted; `stuck`, the same with a limit of 1 s, times out. The abort case
    // has a long limit so a busy machine cannot turn it into a timeout.
    script(
        &global,
        "hang",
        &format!(
            "#!/bin/sh\nif [ \"$1\" = describe ]; then echo '{{\"description\":\"d\",\"timeout\":600}}'; exit 0; fi\nsleep 3031 &\necho $! > {}\nwait\n",
            pidfile.display()
        ),
    );
    script(
        &global,
        "stuck",
        &format!(
            "#!/bin/sh\nif [ \"$1\" = describe ]; then echo '{{\"description\":\"d\",\"timeout\":1}}'; exit 0; fi\nsleep 3031 &\necho $! > {}\nwait\n",
            pidfile.display()
        ),
    );
    let r = registry_for(&opts(
        &global,
        &tmp.path().join("none"),
        false,
        &tmp.path().join("c.json"),
    ))
    .await;
    // The tool writes its pid file into the workspace (the sandbox keeps it there).
    let h = harness(
        r,
        Setup {
            workspace: Some(tmp.path().to_path_buf()),
            ..allow_all()
        },
    );
    let out = h.call("broken", "{}").await;
    assert_eq!(
        out.model_text,
        "The broken tool failed: could not reach the server (exited with status 2)\n\nOutput before it stopped:\npartial\n"
    );

    let abort = CancellationToken::new();
    let trigger = abort.clone();
    // Aborted once the tool has started its child (the event, not a guess at how long that
    // takes).
    let started = pidfile.clone();
    tokio::spawn(async move {
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while !started.exists() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        trigger.cancel();
    });
    let out = h.call_with("hang", RawArgs::Text("{}".into()), abort).await;
    assert_eq!(out.status, CallStatus::Aborted, "{}", out.model_text);
    // The tool ran (its pid file is there); the pid in it is from the sandbox's own PID
    // namespace, so the child is found by its arguments.
    assert!(pidfile.exists());
    let mut gone = false;
    // Bounded far above how long a busy machine takes to reap a killed process.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
        gone = !std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == b"sleep\x003031\x00")
        });
        if gone {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        gone,
        "the tool's background child must be killed with its group"
    );

    let out = h.call("stuck", "{}").await;
    assert_eq!(out.status, CallStatus::TimedOut);
    assert!(
        out.model_text
            .starts_with("The stuck tool timed out: it did not finish within its limit of 1 second (set by the stuck tool's own `timeout` setting)"),
        "{}",
        out.model_text
    );
}

#[tokio::test]
async fn describe_runs_in_the_sandbox_a_write_outside_the_workspace_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let global = tmp.path().join("global");
    let workspace = tmp.path().join("ws");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let manifest = r#"{"description":"d"}"#;
    script(
        &global,
        "inside",
        &format!(
            "#!/bin/sh\nif [ \"$1\" = describe ]; then echo ok > {}/described || exit 3; echo '{manifest}'; fi\n",
            workspace.display()
        ),
    );
    script(
        &global,
        "escape",
        &format!(
            "#!/bin/sh\nif [ \"$1\" = describe ]; then echo pwned > {}/described || exit 3; echo '{manifest}'; fi\n",
            outside.display()
        ),
    );
    let data = tmp.path().join("data");
    let sandbox = podcode_tools::testing::default_sandbox(&data, &data.join("spill"));
    let mut o = opts(
        &global,
        &tmp.path().join("none"),
        false,
        &tmp.path().join("cache.json"),
    );
    o.sandbox = Some(podcode_plugins::DescribeSandbox {
        sandbox: std::sync::Arc::new(sandbox),
        writable: vec![workspace.clone()],
    });
    let found = discover(&o).await;
    let loaded: Vec<String> = found.sources.iter().map(|(s, _)| s.name.clone()).collect();
    assert_eq!(loaded, vec![global.join("inside").display().to_string()]);
    assert_eq!(
        std::fs::read_to_string(workspace.join("described")).unwrap(),
        "ok\n"
    );
    assert!(!outside.join("described").exists());
    let problem = &found.problems[0];
    assert_eq!(problem.source, global.join("escape").display().to_string());
    assert!(
        problem.message.contains("exited with exit status: 3")
            && problem.message.contains("Permission denied")
            && problem.message.contains("[sandbox]"),
        "{}",
        problem.message
    );

    // Unconfined, the same step writes where it likes (the test can fail).
    o.sandbox = None;
    o.cache_file = tmp.path().join("cache2.json");
    let found = discover(&o).await;
    assert_eq!(found.problems.len(), 0, "{:?}", found.problems[0].message);
    assert!(outside.join("described").exists());
}
