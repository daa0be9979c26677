//! `podcode run` and `podcode sessions` as a user drives them: the real binary against a
//! scripted model server (real HTTP + SSE on 127.0.0.1), with the real built-ins and store.
//! Every test gets its own HOME, config and data folders and its own server.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use podcode_providers::testing::Reply;
use serde_json::Value;

use crate::common;
use common::pty::run_in_pty;
use common::*;

#[test]
fn a_multi_step_edit_session_streams_reports_and_can_be_reverted() {
    let env = Env::new(vec![
        Reply::new()
            .text("Let me read it.")
            .tool_call("c1", "read", r#"{"filePath": "notes.txt"}"#)
            .split_args(4)
            .usage(1000, 20),
        Reply::new()
            .tool_call(
                "c2",
                "edit",
                r#"{"filePath": "notes.txt", "oldString": "world", "newString": "podcode"}"#,
            )
            .usage(1200, 30),
        Reply::new()
            .text("I changed world to podcode.")
            .usage(1300, 10)
            .cost(0.0123),
    ]);
    env.write("notes.txt", "hello world\n");
    env.write("AGENTS.md", "Always be brief.\n");
    let out = env.run(&["run", "change world to podcode in notes.txt", "--yes"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout, "Let me read it.\nI changed world to podcode.\n");
    assert_eq!(env.read("notes.txt"), "hello podcode\n");
    let cards: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with('✓') || l.starts_with('✗'))
        .collect();
    assert_eq!(cards.len(), 2, "{stderr}");
    assert!(
        cards[0].starts_with("✓ read — ") && cards[0].contains(" · completed · "),
        "{stderr}"
    );
    assert!(
        cards[1].starts_with("✓ edit — ") && cards[1].contains(" · completed · "),
        "{stderr}"
    );
    assert!(
        stderr.contains("── done: 3 steps · 2 tool calls · 3500 in / 60 out tokens · $0.0123"),
        "{stderr}"
    );
    let session = env.last_session();
    assert!(stderr.contains("changed 1 file: notes.txt\n"), "{stderr}");
    assert!(
        stderr.contains(&format!("podcode changes --session {session}")),
        "{stderr}"
    );

    let reqs = env.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0]["model"], "test");
    let system = reqs[0]["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("Always be brief."), "{system}");
    assert!(
        system.contains(&format!("Working directory: {}", env.repo().display())),
        "{system}"
    );
    let read_result = &tool_messages(&reqs[1])[0];
    assert_eq!(read_result.0, "c1");
    assert!(read_result.1.contains("hello world"), "{}", read_result.1);
    assert_every_call_answered(&reqs[2]);

    let revert = env.run(&["revert", "--session", &session]);
    assert!(revert.status.success(), "{}", text(&revert.stderr));
    assert_eq!(env.read("notes.txt"), "hello world\n");
}

#[test]
fn a_validation_error_goes_back_to_the_model_which_corrects_the_call() {
    let env = Env::new(vec![
        Reply::new().tool_call("c1", "read", r#"{"path": "notes.txt"}"#),
        Reply::new().tool_call("c2", "read", r#"{"filePath": "notes.txt"}"#),
        Reply::new().text("It says hi."),
    ]);
    env.write("notes.txt", "hi\n");
    let out = env.run(&["run", "what does notes.txt say?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reqs = env.requests();
    assert_eq!(reqs.len(), 3);
    let (id, first) = &tool_messages(&reqs[1])[0];
    assert_eq!(id, "c1");
    assert_eq!(
        first,
        "The read tool was called with invalid arguments: `(root)`: \"filePath\" is a required property. Please rewrite the input so it satisfies the expected schema."
    );
    let second = &tool_messages(&reqs[2])[1].1;
    assert!(second.contains("hi"), "{second}");
    let stderr = text(&out.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("✗ read") && l.contains(" · failed · ")),
        "{stderr}"
    );
}

#[test]
fn a_timed_out_call_reads_timed_out_not_interrupted() {
    let env = Env::new(vec![
        Reply::new().tool_call("c1", "slow", "{}"),
        Reply::new().text("It was too slow."),
    ]);
    // A user tool whose own limit is 1 second, that sleeps longer.
    let tools = env.root.path().join("config/tools");
    std::fs::create_dir_all(&tools).unwrap();
    let tool = tools.join("slow");
    std::fs::write(
        &tool,
        "#!/bin/sh\nif [ \"$1\" = describe ]; then\n  echo '{\"description\": \"Slow.\", \"timeout\": 1}'\nelse\n  sleep 30\nfi\n",
    )
    .unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = env.run(&["run", "--yes", "be slow"]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("✗ slow") && l.contains(" · timed out · ")),
        "{stderr}"
    );
    let (_, told) = &tool_messages(&env.requests()[1])[0];
    assert!(
        told.starts_with("The slow tool timed out: it did not finish within its limit of 1 second (set by the slow tool's own `timeout` setting)"),
        "{told}"
    );
}

#[test]
fn a_permission_rejected_with_feedback_on_a_terminal_reaches_the_model() {
    let env = Env::new(vec![
        Reply::new().tool_call(
            "c1",
            "bash",
            r#"{"command": "rm -rf build", "description": "Remove the build folder"}"#,
        ),
        Reply::new().text("Understood, I will not delete it."),
    ]);
    std::fs::create_dir_all(env.repo().join("build")).unwrap();
    let screen = run_in_pty(
        &env,
        &["run", "clean up"],
        &["f", "keep the build folder, just list it"],
    );
    assert!(
        screen.contains("? bash asks for bash: rm -rf build"),
        "{screen}"
    );
    assert!(
        screen.contains("Understood, I will not delete it."),
        "{screen}"
    );
    assert!(env.repo().join("build").exists());
    let (_, result) = &tool_messages(&env.requests()[1])[0];
    assert!(
        result.starts_with("The user rejected the bash permission for ")
            && result.ends_with(" and said: keep the build folder, just list it"),
        "{result}"
    );
}

#[test]
fn without_a_terminal_asks_are_rejected_and_deny_rules_hold_with_yes() {
    let env = Env::new(vec![
        Reply::new().tool_call(
            "c1",
            "bash",
            r#"{"command": "touch made.txt", "description": "Make a file"}"#,
        ),
        Reply::new().text("ok"),
        Reply::new().tool_call(
            "c2",
            "bash",
            r#"{"command": "touch made.txt", "description": "Make a file"}"#,
        ),
        Reply::new().text("ok"),
    ]);
    let out = env.run(&["run", "make a file"]);
    assert!(out.status.success());
    assert!(
        text(&out.stderr).contains("pass --yes"),
        "{}",
        text(&out.stderr)
    );
    let (_, result) = &tool_messages(&env.requests()[1])[0];
    assert!(
        result.ends_with("and said: nobody could answer the permission prompt (non-interactive run without --yes)"),
        "{result}"
    );
    let mut config = env.read(".podcode/config.toml");
    config.push_str(
        "[[permission]]\npermission = \"bash\"\npattern = \"touch *\"\naction = \"deny\"\n",
    );
    env.write(".podcode/config.toml", &config);
    let out = env.run(&["run", "make a file", "--yes"]);
    assert!(out.status.success());
    let (_, result) = &tool_messages(&env.requests()[3])[0];
    assert!(
        result.starts_with("Permission denied: a rule in the user's configuration denies bash"),
        "{result}"
    );
    assert!(!env.repo().join("made.txt").exists());
    let stderr = text(&out.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("✗ bash") && l.contains(" · denied · ")),
        "{stderr}"
    );
}

#[test]
fn ctrl_c_during_a_long_bash_call_aborts_and_the_continued_session_is_valid() {
    let env = Env::new(vec![
        Reply::new().tool_call(
            "c1",
            "bash",
            r#"{"command": "echo started; sleep 600", "description": "Wait a long time"}"#,
        ),
        Reply::new().text("Picking up where we left off."),
    ]);
    let mut child = env
        .cmd(&["run", "wait for it", "--yes", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the bash call to start (the JSON event stream says so), then press Ctrl-C.
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut events: Vec<Value> = Vec::new();
    for line in lines.by_ref() {
        let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let started = event["type"] == "tool_started" && event["tool"] == "bash";
        events.push(event);
        if started {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    let interrupted = Instant::now();
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    events.extend(lines.map(|l| serde_json::from_str::<Value>(&l.unwrap()).unwrap()));
    let status = child.wait().unwrap();
    // The command sleeps ten minutes: the bound only says Ctrl-C did not wait for it.
    assert!(
        interrupted.elapsed() < Duration::from_secs(120),
        "the abort took {:?}",
        interrupted.elapsed()
    );
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("aborting"), "{stderr}");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "turn_finished");
    assert_eq!(last["summary"]["end"], "aborted");
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "tool_failed" && e["tool"] == "bash")
    );

    let out = env.run(&["run", "--continue", "go on"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Picking up where we left off.\n");
    let reqs = env.requests();
    assert_eq!(reqs.len(), 2);
    assert_every_call_answered(&reqs[1]);
    let (id, result) = &tool_messages(&reqs[1])[0];
    assert_eq!(id, "c1");
    assert!(
        result.starts_with("The bash tool call was aborted by the user"),
        "{result}"
    );
    let last = reqs[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"], "go on");
}

#[test]
fn json_format_prints_one_event_per_line_and_anthropic_works_too() {
    let env = Env::new(vec![
        Reply::new()
            .reasoning("Thinking.", Some("sig"))
            .tool_call("toolu_1", "list", "{}")
            .usage(100, 7)
            .cache(0, 80),
        Reply::new()
            .text("Two ")
            .text("files.")
            .usage(120, 5)
            .cache(80, 0),
    ]);
    env.write(
        ".podcode/config.toml",
        "model = \"anthropic/claude-test\"\n",
    );
    env.write_global(&format!(
        "[provider.anthropic]\nbase_url = \"{}\"\n",
        env.server.base_url()
    ));
    env.write("a.txt", "a");
    let out = env
        .cmd(&["run", "list files", "--format", "json"])
        .env("ANTHROPIC_API_KEY", "x")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds[..2], ["user_message", "turn_started"], "{kinds:?}");
    assert_eq!(events[0]["text"], "list files");
    assert_eq!(kinds.last(), Some(&"turn_finished"));
    for k in [
        "step_started",
        "reasoning_delta",
        "tool_requested",
        "tool_started",
        "tool_finished",
        "text_delta",
        "step_finished",
        "usage",
    ] {
        assert!(kinds.contains(&k), "{k} missing from {kinds:?}");
    }
    let text_out: String = events
        .iter()
        .filter(|e| e["type"] == "text_delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(text_out, "Two files.");
    // The session's running totals, cache reads and writes included.
    let usage = events.iter().rfind(|e| e["type"] == "usage").unwrap();
    assert_eq!(usage["total"]["input_tokens"], 220);
    assert_eq!(usage["total"]["output_tokens"], 12);
    assert_eq!(usage["total"]["cache_read_tokens"], 80);
    assert_eq!(usage["total"]["cache_write_tokens"], 80);
    assert_eq!(usage["context_tokens"], 120);
    assert_eq!(events.last().unwrap()["summary"]["end"], "answered");
    let recorded = env.server.recorded();
    assert!(
        recorded[1].path.ends_with("/messages"),
        "{}",
        recorded[1].path
    );
    let msgs = recorded[1].body["messages"].as_array().unwrap();
    assert_eq!(msgs[1]["content"][0]["type"], "thinking");
    assert_eq!(msgs[2]["content"][0]["tool_use_id"], "toolu_1");
}

#[test]
fn without_a_model_run_explains_the_three_ways_and_exits_2() {
    let env = Env::new(vec![]);
    env.write(".podcode/config.toml", "");
    let out = env
        .cmd(&["run", "hi"])
        .env_remove("OLLAMA_HOST")
        .env_remove("OPENROUTER_API_KEY")
        .env_remove("GROQ_API_KEY")
        .env_remove("DEEPSEEK_API_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("No model is configured."), "{stderr}");
    assert!(
        stderr.contains("ANTHROPIC_API_KEY")
            && stderr.contains("OLLAMA_HOST")
            && stderr.contains("[provider."),
        "{stderr}"
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Backtrace") && !stderr.contains("error:"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn sessions_are_listed_shown_and_exported() {
    let env = Env::new(vec![
        Reply::new()
            .text("Reading.")
            .tool_call("c1", "read", r#"{"filePath": "a.txt"}"#)
            .usage(50, 5),
        Reply::new().text("It holds alpha.").usage(60, 4),
        Reply::http_error(400, None).error_message("model refused"),
    ]);
    env.write("a.txt", "alpha\n");
    assert!(env.run(&["run", "what is in a.txt?"]).status.success());
    let failed = env.run(&["run", "--continue", "and now?"]);
    assert_eq!(failed.status.code(), Some(1));
    assert!(
        text(&failed.stderr).contains("model refused"),
        "{}",
        text(&failed.stderr)
    );

    let list = text(&env.run(&["sessions"]).stdout);
    let id = env.last_session();
    assert_eq!(list.lines().count(), 1, "{list}");
    assert!(
        list.starts_with(&id)
            && list.contains("build")
            && list.contains("scripted/test")
            && list.contains("what is in a.txt?"),
        "{list}"
    );

    // Token totals: 50 + 60 in, 5 + 4 out (the failed request reported none).
    assert!(list.contains("110↑ 9↓"), "{list}");
    let listed: Value = serde_json::from_slice(&env.run(&["sessions", "--json"]).stdout).unwrap();
    assert_eq!(listed[0]["usage"]["input_tokens"], 110);
    assert_eq!(listed[0]["usage"]["output_tokens"], 9);

    let show = text(&env.run(&["sessions", "show", &id]).stdout);
    for needle in [
        "tokens: 110 in · 9 out\n",
        "── user",
        "what is in a.txt?",
        "── assistant",
        "Reading.",
        "▸ read {\"filePath\": \"a.txt\"} [completed]",
        "│ ",
        "It holds alpha.",
        "and now?",
        "step 1 completed · 50 in / 5 out tokens",
        "error",
    ] {
        assert!(show.contains(needle), "{needle:?} missing:\n{show}");
    }

    let export: Value =
        serde_json::from_slice(&env.run(&["sessions", "export", &id]).stdout).unwrap();
    assert_eq!(export["session"]["id"], id.as_str());
    assert_eq!(export["usage"]["input_tokens"], 110);
    assert_eq!(export["tool_calls"][0]["tool"], "read");
    assert_eq!(export["tool_calls"][0]["state"], "completed");
    let kinds: Vec<&str> = export["messages"][1]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["text", "tool", "step"]);
    let missing = env.run(&["sessions", "show", "ses_nope"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).contains("no session with id ses_nope"));
}

#[test]
fn a_tool_file_created_during_a_run_is_offered_from_the_next_step() {
    let env = Env::new(vec![]);
    for reply in common::hello_tool_script(&env) {
        env.server.push(reply);
    }
    let out = env.run(&["run", "install and use the hello tool", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reqs = env.requests();
    let names = |r: &Value| -> Vec<String> {
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!names(&reqs[0]).contains(&"hello".to_string()));
    assert!(
        names(&reqs[1]).contains(&"hello".to_string()),
        "{:?}",
        names(&reqs[1])
    );
    let (_, result) = &tool_messages(&reqs[2])[1];
    assert_eq!(result.trim(), "hello from disk");
}

#[test]
fn revert_since_a_message_undoes_that_turn_and_later_ones_only() {
    let env = Env::new(vec![]);
    let file = env.write("a.txt", "zero\n");
    for (content, answer) in [("one\n", "First."), ("two\n", "Second.")] {
        let args = serde_json::json!({"filePath": file, "content": content}).to_string();
        env.server
            .push(Reply::new().tool_call("c1", "write", &args));
        env.server.push(Reply::new().text(answer));
    }
    assert!(env.run(&["run", "first", "--yes"]).status.success());
    assert!(
        env.run(&["run", "--continue", "second", "--yes"])
            .status
            .success()
    );
    assert_eq!(env.read("a.txt"), "two\n");
    let show = text(&env.run(&["sessions", "show", &env.last_session()]).stdout);
    let second_prompt = show
        .lines()
        .filter(|l| l.starts_with("── user · "))
        .nth(1)
        .and_then(|l| l.rsplit(" · ").next())
        .unwrap_or_else(|| panic!("{show}"))
        .to_string();
    assert!(second_prompt.starts_with("msg_"), "{show}");
    let out = env.run(&["revert", "--since", &second_prompt]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(env.read("a.txt"), "one\n", "the first turn's change stays");
    let unknown = env.run(&["revert", "--since", "msg_nope"]);
    assert!(!unknown.status.success());
    assert!(text(&unknown.stderr).contains("no change, call, message or session with that id"));
}

#[test]
fn an_overflow_compacts_the_conversation_and_the_turn_goes_on() {
    let overflow = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#;
    let env = Env::new(vec![
        Reply::new().tool_call("c1", "read", r#"{"filePath": "a.txt"}"#),
        Reply::new().text("It holds alpha."),
        Reply::raw(400, "application/json", overflow),
        Reply::new().text("SUMMARY: the user asked what a.txt holds: alpha."),
        Reply::new().text("Still alpha."),
    ]);
    env.write("a.txt", "alpha\n");
    assert!(env.run(&["run", "what is in a.txt?"]).status.success());
    let out = env.run(&["run", "--continue", "and now?"]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(text(&out.stdout).trim(), "Still alpha.");
    assert!(
        stderr.contains("≡ compacted (the model refused the conversation as too long): "),
        "{stderr}"
    );
    let id = env.last_session();
    let show = text(&env.run(&["sessions", "show", &id]).stdout);
    for needle in [
        "── compacted (overflow)",
        "≡ SUMMARY: the user asked what a.txt holds: alpha.",
        // Nothing is lost: the original exchange is still shown.
        "what is in a.txt?",
        "It holds alpha.",
    ] {
        assert!(show.contains(needle), "{needle:?} missing:\n{show}");
    }
    let last = env.server.requests().last().unwrap().clone();
    assert!(
        last.to_string().contains("SUMMARY: the user asked"),
        "{last}"
    );
}

#[test]
fn a_tool_the_rules_deny_outright_is_not_offered_and_podcode_tools_says_so() {
    let env = Env::new(vec![
        // A model that calls it anyway is refused, naming the rule.
        Reply::new().tool_call("c1", "webfetch", r#"{"url": "https://example.com/"}"#),
        Reply::new().text("ok"),
    ]);
    env.write(
        ".podcode/config.toml",
        "model = \"scripted/test\"\n\
         [[permission]]\npermission = \"webfetch\"\npattern = \"*\"\naction = \"deny\"\n\
         [[permission]]\npermission = \"bash\"\npattern = \"rm *\"\naction = \"deny\"\n",
    );
    let out = env.run(&["tools", "--json"]);
    let listing: Value = serde_json::from_slice(&out.stdout).unwrap();
    let note = |id: &str| {
        listing["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .map(|t| t["note"].clone())
            .unwrap()
    };
    assert_eq!(
        note("webfetch"),
        "not offered: the permission rules deny it outright (a model that calls it is refused)"
    );
    assert_eq!(note("bash"), Value::Null, "denied for one pattern only");
    let text_out = text(&env.run(&["tools"]).stdout);
    assert!(text_out.contains("note: not offered: the permission rules deny it outright"));

    let out = env.run(&["run", "fetch it"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = env.requests();
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(
        !offered.contains(&"webfetch") && offered.contains(&"bash"),
        "{offered:?}"
    );
    let answers = tool_messages(&requests[1]);
    assert_eq!(
        answers[0].1,
        "Permission denied: a rule in the user's configuration denies webfetch for \"*\". Do not retry this call; find another way or ask the user to change the rule."
    );
}

#[test]
fn a_call_of_a_tool_the_config_switched_off_is_told_so() {
    let env = Env::new(vec![
        Reply::new().tool_call("c1", "write", r#"{"filePath": "a.txt", "content": "x"}"#),
        Reply::new().text("Could not write."),
    ]);
    env.write("opencode.json", r#"{"tools": {"write": false}}"#);
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "write a.txt", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reqs = env.requests();
    let offered: Vec<&str> = reqs[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(!offered.contains(&"write"), "{offered:?}");
    assert_eq!(
        tool_messages(&reqs[1])[0].1,
        "The write tool is switched off by the user's config (tools entry \"write\"): it cannot be called in this session. Do the task with the tools you were given."
    );
    assert!(!env.repo().join("a.txt").exists());
}

#[test]
fn on_a_terminal_run_tells_each_call_as_it_starts_then_its_card() {
    let env = Env::new(vec![
        bash_call("c1", "sleep 1; echo done", "Wait a second"),
        Reply::new().text("Waited."),
    ]);
    let screen = run_in_pty(&env, &["run", "wait", "--yes"], &[]);
    let flat: String = screen.split_whitespace().collect();
    // The call's title as ACP shows it: what it runs.
    let started = flat.find("…`sleep1;echodone`·running");
    let finished = flat.find("✓bash—");
    assert!(
        started.is_some() && finished.is_some() && started < finished,
        "{screen}"
    );
    // Without a terminal (logs, pipes) only the finished card.
    let env = Env::new(vec![
        bash_call("c1", "echo done", "Say done"),
        Reply::new().text("Said."),
    ]);
    let out = env.run(&["run", "say it", "--yes"]);
    let err = text(&out.stderr);
    assert!(!err.contains("· running"), "{err}");
    assert!(err.contains("✓ bash — "), "{err}");
}

/// The sandbox's start-up warnings are worked out beside the session's opening (the
/// namespace probe starts a process) and still printed, once, before the answer.
#[test]
fn run_prints_the_sandbox_warnings_it_worked_out_beside_the_opening() {
    let env = Env::new(vec![Reply::new().text("one"), Reply::new().text("two")]);
    assert!(env.run(&["run", "hi"]).status.success());
    let cache = env.root.path().join("data/cache/sandbox-probe");
    let probed = std::fs::read_to_string(&cache).expect("the probe's answer is kept");
    let (key, _) = probed.rsplit_once('\n').unwrap();
    // As if this kernel could not mount /proc in a namespace.
    std::fs::write(&cache, format!("{key}\nno-proc")).unwrap();
    let out = env.run(&["run", "hi again"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout, "two\n");
    let warning = "warning: sandbox: namespaces are available, but /proc cannot be mounted in them, so sandboxed commands can see your other processes";
    assert_eq!(stderr.matches(warning).count(), 1, "{stderr}");
    assert!(stderr.starts_with(warning), "{stderr}");
}
