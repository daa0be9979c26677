//! The `bash` built-in end to end: every call goes through the real pipeline (registry from
//! `register_all`, permission engine, hooks, truncating sink, store) via the test harness,
//! and runs real shell commands in the harness's temporary workspace. The model-facing
//! description and notes are pinned here.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use podcode_builtins::{default_rules, register_all};
use podcode_protocol::{Event, PermissionAction, PermissionReply, PermissionRule};
use podcode_tools::testing::{Harness, Setup, harness};
use podcode_tools::{
    CallOutcome, CallStatus, HookCall, RawArgs, ToolHook, ToolRegistry, aborted_text, failed_text,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn registry() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    register_all(&mut r);
    r
}

fn allow_bash() -> Vec<PermissionRule> {
    let mut rules = default_rules();
    rules.push(PermissionRule::new("bash", "*", PermissionAction::Allow));
    rules
}

fn allowed() -> Harness {
    harness(
        registry(),
        Setup {
            rules: allow_bash(),
            ..Default::default()
        },
    )
}

async fn bash(h: &Harness, args: serde_json::Value) -> CallOutcome {
    h.call_json("bash", args).await
}

/// Waits until no process has exactly `args` as its arguments. The sandbox runs commands
/// in their own PID namespace, so a pid they print (`$!`) means nothing here: the test
/// looks for the process by its unique arguments instead.
async fn wait_gone_args(args: &[&str]) -> bool {
    let want: Vec<u8> = args
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    // Bounded far above how long a busy machine takes to reap a killed process.
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        let alive = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == want));
        if !alive {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn description_is_pinned() {
    let r = registry();
    let spec = r
        .get("bash")
        .expect("bash is registered")
        .tool
        .spec()
        .clone();
    assert_eq!(
        spec.description,
        r#"Runs a shell command and returns its combined stdout and stderr, followed by "(exit code N)" when the command fails.
Use it for builds, tests, git, package managers and running programs, not for file work a dedicated tool does: read (not cat/head/tail), glob (not find/ls -R), grep (not grep/rg), edit, write or apply_patch (not sed/awk/echo >).
- Runs with `$SHELL -c` (non-interactive; /bin/bash or /bin/sh if $SHELL is not POSIX-style) in the session directory; set `workdir` rather than `cd dir && ...`. Quote paths with spaces.
- stdin is closed: pass flags such as --yes or -y.
- On timeout the command and every process it started are killed; you get the output so far.
- Long output is cut from the start: you see the last lines and the path of a file with all of it.
- Background jobs (`cmd &`) are not waited for and their later output is lost: redirect it, `cmd > log.txt 2>&1 &`.
- Commands usually run in a sandbox: writing outside the workspace and $TMPDIR (this session's temp dir, for scratch files), and network access, may fail with "Permission denied". The user is then asked whether to run the command outside the sandbox; do not work around a refusal another way.
- Give a short `description` (5-10 words) of what the command does; the user sees it.
Example: {"command": "cargo test -p core", "description": "Run the core crate's tests"}"#
    );
    // The whole schema, as sent with every request: no `"default": null`, no number
    // `format`, no doc comment of the arguments struct.
    assert_eq!(
        spec.parameters,
        json!({
            "type": "object",
            "required": ["command"],
            "properties": {
                "command": {"description": "The shell command to run.", "type": "string"},
                "timeout": {
                    "description": "Milliseconds; default 120000 (2 minutes), at most 600000 (10 minutes).",
                    "type": ["integer", "null"],
                    "minimum": 0
                },
                "workdir": {
                    "description": "Where to run it, absolute or relative to the session directory (the default).",
                    "type": ["string", "null"]
                },
                "description": {
                    "description": "What the command does in 5-10 words, shown to the user, e.g. \"Run the unit tests\".",
                    "type": ["string", "null"]
                }
            }
        })
    );
}

#[tokio::test]
async fn stdout_and_stderr_arrive_interleaved_in_order() {
    let h = allowed();
    let out = bash(
        &h,
        json!({"command": "echo out1; echo err1 >&2; echo out2; echo err2 1>&2"}),
    )
    .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(out.model_text, "out1\nerr1\nout2\nerr2\n");
    assert_eq!(out.result.metadata["exit_code"], 0);
    assert_eq!(
        out.result.title,
        "echo out1; echo err1 >&2; echo out2; echo err2 1>&2"
    );
}

#[tokio::test]
async fn a_failing_command_is_not_a_tool_failure_and_reports_its_exit_code() {
    let h = allowed();
    let out = bash(
        &h,
        json!({"command": "echo oops; exit 2", "description": "Fail on purpose"}),
    )
    .await;
    assert_eq!(out.status, CallStatus::Completed);
    assert_eq!(out.model_text, "oops\n\n(exit code 2)");
    assert_eq!(
        out.result.metadata,
        json!({"exit_code": 2, "description": "Fail on purpose", "exit": 2, "output": "oops"})
    );
    assert_eq!(out.result.title, "Fail on purpose");

    for (cmd, text) in [
        ("exit 3", "(exit code 3)"),
        ("true", "(no output)"),
        ("kill -9 $$", "(terminated by signal 9)"),
    ] {
        assert_eq!(bash(&h, json!({ "command": cmd })).await.model_text, text);
    }
}

#[tokio::test]
async fn empty_command_and_missing_workdir_fail_clearly() {
    let h = allowed();
    let out = bash(&h, json!({"command": "  \n "})).await;
    assert_eq!(out.status, CallStatus::Failed);
    assert_eq!(
        out.model_text,
        failed_text(
            "bash",
            r#"The command is empty. Pass the shell command to run in `command`, e.g. {"command": "ls -la"}."#
        )
    );
    let out = bash(&h, json!({"command": "pwd", "workdir": "nope"})).await;
    assert_eq!(out.status, CallStatus::Failed);
    let missing = h.work().canonicalize().unwrap().join("nope");
    assert_eq!(
        out.model_text,
        failed_text(
            "bash",
            &format!(
                "workdir {} does not exist or is not a directory. Use an existing directory, or leave workdir out to run in the session directory.",
                missing.display()
            )
        )
    );
}

#[tokio::test]
async fn workdir_is_resolved_against_the_session_directory() {
    let h = allowed();
    std::fs::create_dir_all(h.work().join("sub/dir")).unwrap();
    let out = bash(&h, json!({"command": "pwd", "workdir": "sub/dir"})).await;
    let expected = h.work().canonicalize().unwrap().join("sub/dir");
    assert_eq!(out.model_text.trim_end(), expected.to_string_lossy());
    let out = bash(&h, json!({"command": "pwd"})).await;
    let cwd = std::path::Path::new(out.model_text.trim_end()).canonicalize();
    assert_eq!(cwd.unwrap(), h.work().canonicalize().unwrap());
}

#[tokio::test]
async fn a_workdir_outside_the_workspace_asks_external_directory() {
    let h = allowed();
    let outside = tempfile::tempdir().unwrap();
    let out = bash(&h, json!({"command": "pwd", "workdir": outside.path()})).await;
    assert_eq!(out.status, CallStatus::Denied, "{}", out.model_text);
    let asks = h.user.asks();
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].request.permission, "external_directory");
}

#[tokio::test]
async fn stdin_is_closed() {
    let h = allowed();
    // A stdin left open would block `cat` until the timeout, and its text would follow.
    let out = bash(
        &h,
        json!({"command": "cat; read x; echo \"got:[$x]\"", "timeout": 120000}),
    )
    .await;
    assert_eq!(out.model_text, "got:[]\n");
}

#[tokio::test]
async fn non_utf8_output_passes_through_lossily() {
    let h = allowed();
    let out = bash(&h, json!({"command": "printf 'a\\377b\\n'"})).await;
    assert_eq!(out.model_text, "a\u{FFFD}b\n");
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group_and_keeps_the_output() {
    let h = allowed();
    let start = Instant::now();
    // The limit leaves a busy machine ample time to start the command and print; the sleep
    // outlasts any wait for the limit by far.
    let out = bash(
        &h,
        json!({"command": "sleep 600.1 & echo $! > bg.pid; echo started; sleep 600", "timeout": 10000, "description": "Sleep"}),
    )
    .await;
    assert!(
        start.elapsed() < Duration::from_secs(120),
        "took {:?}",
        start.elapsed()
    );
    assert_eq!(out.status, CallStatus::Completed);
    assert_eq!(
        out.model_text,
        "started\n\nCommand timed out after 10000 ms and was terminated. If it needs more time, run it again with a larger timeout (at most 600000 ms)."
    );
    assert_eq!(
        out.result.metadata,
        json!({"exit_code": null, "description": "Sleep", "exit": null, "output": "started"})
    );
    assert!(
        h.work().join("bg.pid").exists(),
        "the background job never started"
    );
    let pid = "600.1";
    assert!(
        wait_gone_args(&["sleep", pid]).await,
        "background sleep {pid} survived the timeout"
    );
}

#[tokio::test]
async fn a_command_that_ignores_sigterm_is_killed() {
    let h = allowed();
    let start = Instant::now();
    let out = bash(
        &h,
        json!({"command": "trap '' TERM; sleep 600.2 & echo $! > bg.pid; sleep 600", "timeout": 10000}),
    )
    .await;
    assert!(
        start.elapsed() < Duration::from_secs(120),
        "took {:?}",
        start.elapsed()
    );
    assert!(
        out.model_text
            .starts_with("Command timed out after 10000 ms"),
        "{}",
        out.model_text
    );
    assert!(
        h.work().join("bg.pid").exists(),
        "the background job never started"
    );
    let pid = "600.2";
    assert!(
        wait_gone_args(&["sleep", pid]).await,
        "background sleep {pid} survived SIGKILL"
    );
}

#[tokio::test]
async fn abort_returns_the_partial_output_quickly() {
    // The pipeline waits long for the wind-down here, so what is proved is bash's own: it
    // returns what it printed and does not wait for the command (a ten-minute sleep).
    let h = harness(
        registry(),
        Setup {
            rules: allow_bash(),
            opts: Box::new(|o| o.abort_grace = Duration::from_secs(300)),
            ..Default::default()
        },
    );
    let token = CancellationToken::new();
    let cancel = token.clone();
    let args =
        json!({"command": "echo started; trap '' TERM; sleep 600.3 & echo $! > bg.pid; sleep 600"});
    let call = h.call_with("bash", RawArgs::Json(args), token);
    let pid_file = h.work().join("bg.pid");
    let aborter = async {
        // Abort once the command has printed and started its job (the event, not a guess
        // at how long that takes).
        let deadline = Instant::now() + Duration::from_secs(120);
        while !pid_file.exists() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        cancel.cancel();
        Instant::now()
    };
    let (out, cancelled_at) = tokio::join!(call, aborter);
    let wind_down = cancelled_at.elapsed();
    assert!(
        wind_down < Duration::from_secs(120),
        "took {wind_down:?} after the abort"
    );
    assert_eq!(out.status, CallStatus::Aborted);
    assert_eq!(
        out.model_text,
        format!(
            "{}\n\nOutput before it stopped:\nstarted\n\nCommand was aborted by the user and terminated.",
            aborted_text("bash")
        )
    );
    assert!(
        h.work().join("bg.pid").exists(),
        "the background job never started"
    );
    let pid = "600.3";
    assert!(
        wait_gone_args(&["sleep", pid]).await,
        "background sleep {pid} survived the abort"
    );
}

#[tokio::test]
async fn huge_output_keeps_the_tail_and_spills_the_rest() {
    let h = harness(
        registry(),
        Setup {
            rules: allow_bash(),
            opts: Box::new(|o| {
                o.max_lines = 50;
                o.max_bytes = 64 * 1024;
            }),
            ..Default::default()
        },
    );
    let out = bash(&h, json!({"command": "seq 1 200000; exit 1"})).await;
    assert_eq!(out.status, CallStatus::Completed);
    let t = out.truncated.clone().expect("truncated");
    assert!(
        out.model_text.starts_with("[output truncated: the first "),
        "{}",
        &out.model_text[..200]
    );
    assert!(
        out.model_text.ends_with("199999\n200000\n\n(exit code 1)"),
        "{}",
        out.model_text
    );
    assert_eq!(
        out.model_text
            .lines()
            .filter(|l| l.parse::<u32>().is_ok())
            .count(),
        48
    );
    let spilled = std::fs::read_to_string(&t.spill_path).unwrap();
    assert!(spilled.starts_with("1\n2\n3\n"));
    assert!(spilled.ends_with("200000\n\n(exit code 1)"));
    assert_eq!(t.total_lines, 200_000 + 2);
}

#[tokio::test]
async fn live_metadata_streams_the_last_lines_while_running() {
    let h = allowed();
    let mut events = h.runtime.subscribe();
    let out = bash(
        &h,
        json!({"command": "for i in 1 2 3 4 5; do echo line $i; sleep 0.15; done", "description": "Count to five"}),
    )
    .await;
    assert_eq!(out.model_text, "line 1\nline 2\nline 3\nline 4\nline 5\n");
    let mut updates = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let Event::ToolMetadata {
            call_id,
            title,
            metadata,
        } = event
            && call_id == out.call_id
        {
            assert_eq!(title.as_deref(), Some("Count to five"));
            let metadata = metadata.expect("metadata");
            assert_eq!(metadata["description"], "Count to five");
            updates.push(metadata["output"].as_str().unwrap_or_default().to_string());
        }
    }
    assert!(updates.len() >= 4, "{updates:?}");
    assert_eq!(updates.first().map(String::as_str), Some(""));
    assert!(
        updates
            .iter()
            .any(|u| u.starts_with("line 1") && !u.contains("line 5")),
        "{updates:?}"
    );
    assert_eq!(
        updates.last().map(String::as_str),
        Some("line 1\nline 2\nline 3\nline 4\nline 5")
    );
}

#[tokio::test]
async fn always_approves_a_family_of_commands_but_not_a_smuggled_one() {
    let h = harness(
        registry(),
        Setup {
            rules: default_rules(),
            replies: vec![PermissionReply::Always],
            ..Default::default()
        },
    );
    let out = bash(&h, json!({"command": "echo one", "description": "Say one"})).await;
    assert_eq!(out.model_text, "one\n");
    let asks = h.user.asks();
    assert_eq!(asks.len(), 1);
    let request = &asks[0].request;
    assert_eq!(request.permission, "bash");
    assert_eq!(request.patterns, ["echo one"]);
    assert_eq!(request.always, ["echo *"]);
    assert_eq!(request.metadata["command"], "echo one");
    assert_eq!(request.metadata["description"], "Say one");

    // Same family: not asked again.
    assert_eq!(
        bash(&h, json!({"command": "echo two"})).await.model_text,
        "two\n"
    );
    assert_eq!(h.user.asks().len(), 1);

    // A second command behind the approved family is asked for on its own (and rejected).
    let out = bash(&h, json!({"command": "echo three && touch smuggled"})).await;
    assert_eq!(out.status, CallStatus::Denied);
    let asks = h.user.asks();
    assert_eq!(asks.len(), 2);
    assert_eq!(asks[1].request.patterns, ["touch smuggled"]);
    assert_eq!(asks[1].request.always, ["echo *", "touch *"]);
    assert!(!h.work().join("smuggled").exists());
}

#[tokio::test]
async fn always_on_a_compound_command_remembers_each_parts_family_and_still_checks_every_part() {
    let h = harness(
        registry(),
        Setup {
            rules: default_rules(),
            replies: vec![PermissionReply::Always],
            ..Default::default()
        },
    );
    let out = bash(&h, json!({"command": "ls -a && echo done"})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    let asks = h.user.asks();
    assert_eq!(
        asks[0].request.patterns,
        ["ls -a && echo done", "ls -a", "echo done"]
    );
    assert_eq!(asks[0].request.always, ["ls *", "echo *"]);
    let remembered: Vec<String> = h
        .store
        .approvals(Some(&h.workspace.to_string_lossy()))
        .unwrap()
        .into_iter()
        .map(|a| a.pattern)
        .collect();
    assert_eq!(remembered, ["ls *", "echo *"]);

    // Other commands of both families, alone or joined, run without asking.
    for cmd in ["ls", "echo again", "ls -la . ; echo ok", "ls | echo piped"] {
        let out = bash(&h, json!({ "command": cmd })).await;
        assert_eq!(
            out.status,
            CallStatus::Completed,
            "{cmd}: {}",
            out.model_text
        );
    }
    assert_eq!(h.user.asks().len(), 1);

    // A part outside the families is still asked for on its own (and rejected here).
    std::fs::write(h.work().join("keep.txt"), "x").unwrap();
    let out = bash(&h, json!({"command": "ls && rm -f keep.txt"})).await;
    assert_eq!(out.status, CallStatus::Denied, "{}", out.model_text);
    let asks = h.user.asks();
    assert_eq!(asks.len(), 2);
    assert_eq!(asks[1].request.patterns, ["rm -f keep.txt"]);
    assert!(h.work().join("keep.txt").exists());

    // Feeding an approved family into an interpreter is not covered either.
    let out = bash(&h, json!({"command": "echo 'touch fed' | sh"})).await;
    assert_eq!(out.status, CallStatus::Denied, "{}", out.model_text);
    assert_eq!(h.user.asks()[2].request.patterns, ["sh"]);
    assert_eq!(
        h.user.asks()[2].request.always,
        ["echo 'touch fed' | sh", "echo 'touch fed'", "sh"]
    );
    assert!(!h.work().join("fed").exists());
}

#[tokio::test]
async fn two_word_families_are_remembered() {
    let h = harness(
        registry(),
        Setup {
            rules: default_rules(),
            replies: vec![PermissionReply::Always],
            ..Default::default()
        },
    );
    bash(&h, json!({"command": "git status --short"})).await;
    assert_eq!(h.user.asks()[0].request.always, ["git status *"]);
    bash(&h, json!({"command": "git status --porcelain"})).await;
    assert_eq!(h.user.asks().len(), 1);
    let out = bash(&h, json!({"command": "git log"})).await;
    assert_eq!(out.status, CallStatus::Denied);
    assert_eq!(h.user.asks().len(), 2);
}

#[tokio::test]
async fn a_deny_rule_blocks_the_command_even_inside_a_compound_one() {
    let mut rules = allow_bash();
    rules.push(PermissionRule::new("bash", "rm *", PermissionAction::Deny));
    let h = harness(
        registry(),
        Setup {
            rules,
            ..Default::default()
        },
    );
    std::fs::write(h.work().join("keep.txt"), "x").unwrap();
    for cmd in ["rm keep.txt", "cd . && rm keep.txt", "echo $(rm keep.txt)"] {
        let out = bash(&h, json!({"command": cmd})).await;
        assert_eq!(out.status, CallStatus::Denied, "{cmd}: {}", out.model_text);
        assert!(
            out.model_text
                .starts_with("Permission denied: a rule in the user's configuration denies bash")
        );
    }
    assert!(h.work().join("keep.txt").exists());
    assert!(h.user.asks().is_empty());
}

struct EnvHook;

#[async_trait]
impl ToolHook for EnvHook {
    fn name(&self) -> &str {
        "env-test"
    }
    async fn shell_env(
        &self,
        call: &HookCall,
        env: &mut std::collections::BTreeMap<String, String>,
    ) -> Result<(), String> {
        assert_eq!(call.tool, "bash");
        env.insert("PODCODE_TEST_GREETING".into(), "hello from the hook".into());
        env.remove("HOME");
        Ok(())
    }
}

#[tokio::test]
async fn shell_env_hooks_adjust_the_environment() {
    let h = harness(
        registry(),
        Setup {
            rules: allow_bash(),
            hooks: vec![Arc::new(EnvHook)],
            ..Default::default()
        },
    );
    let out = bash(&h, json!({"command": "echo \"$PODCODE_TEST_GREETING\"; echo \"home=${HOME-unset}\"; command -v ls >/dev/null && echo path-ok"})).await;
    assert_eq!(out.model_text, "hello from the hook\nhome=unset\npath-ok\n");
}
