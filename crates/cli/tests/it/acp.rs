//! `podcode acp` driven by the official ACP client library (`@agentclientprotocol/sdk`,
//! from the npm registry, in crates/acp/tests/client; `.ci/run` installs it) against the
//! scripted model server: streamed text and tool calls in order, permission requests the
//! client answers (allowed → the file is written; rejected → the call fails and the model
//! reads why), a cancel in the middle of a running command (stop reason `cancelled`, the
//! command's process gone), loading an earlier session, and switching mode and model.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Env, tool_messages};
use podcode_providers::testing::Reply;
use serde_json::{Value, json};

fn client_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../acp/tests/client")
}

/// Runs the client script (`client.mjs SCENARIO ARGS…`) and returns what it printed.
pub(crate) fn client(env: &Env, args: &[&str], permission: &str) -> Value {
    client_with(env, args, permission, None)
}

fn client_with(env: &Env, args: &[&str], permission: &str, mcp: Option<&Path>) -> Value {
    assert!(
        client_dir()
            .join("node_modules/@agentclientprotocol/sdk")
            .exists(),
        "run `npm ci` in crates/acp/tests/client first (.ci/run does)"
    );
    let mut cmd = Command::new("node");
    if let Some(server) = mcp {
        cmd.env("ACP_MCP_COMMAND", server);
    }
    let out = cmd
        .arg(client_dir().join("client.mjs"))
        .args(args)
        .current_dir(client_dir())
        .env("PODCODE_BIN", env!("CARGO_BIN_EXE_podcode"))
        .env("ACP_CWD", env.repo())
        .env("ACP_PERMISSION", permission)
        .env("HOME", env.root.path().join("home"))
        .env("PODCODE_CONFIG_DIR", env.root.path().join("config"))
        .env("PODCODE_DATA_DIR", env.root.path().join("data"))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(v["exitCode"], json!(0), "podcode acp exit: {v:#}");
    v
}

/// The `session/update`s the client saw, in order.
pub(crate) fn updates(v: &Value) -> Vec<Value> {
    v["seen"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s.get("update").cloned())
        .collect()
}

/// The index of the first update matching `f`, after `from`.
pub(crate) fn find(updates: &[Value], from: usize, f: impl Fn(&Value) -> bool) -> usize {
    updates
        .iter()
        .skip(from)
        .position(f)
        .map(|i| i + from)
        .unwrap_or_else(|| panic!("not found after {from}: {updates:#?}"))
}

pub(crate) fn write_call(id: &str, path: &str, content: &str) -> Reply {
    Reply::new().text("I will write it.").tool_call(
        id,
        "write",
        json!({"filePath": path, "content": content}).to_string(),
    )
}

#[test]
fn a_prompt_streams_text_and_tool_calls_and_an_allowed_write_lands_then_loads_again() {
    let env = Env::new(vec![
        write_call("c1", "notes.txt", "hello\n"),
        Reply::new().text("Done."),
    ]);
    let v = client(&env, &["prompt", "write notes"], "allow_once");
    let init = &v["init"];
    assert_eq!(init["protocolVersion"], json!(1));
    assert_eq!(init["agentCapabilities"]["loadSession"], json!(true));
    let session = &v["session"];
    assert_eq!(session["modes"]["currentModeId"], json!("build"));
    let modes: Vec<&str> = session["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert!(
        modes.contains(&"build") && modes.contains(&"plan"),
        "{modes:?}"
    );
    assert_eq!(
        session["configOptions"][1]["currentValue"],
        json!("scripted/test")
    );
    assert_eq!(v["stop"]["stopReason"], json!("end_turn"));

    let u = updates(&v);
    let first_text = find(&u, 0, |x| {
        x["sessionUpdate"] == "agent_message_chunk" && x["content"]["text"] == "I will write it."
    });
    let call = find(&u, first_text, |x| x["sessionUpdate"] == "tool_call");
    let id = u[call]["toolCallId"].clone();
    assert_eq!(u[call]["kind"], json!("edit"));
    let started = find(&u, call, |x| {
        x["sessionUpdate"] == "tool_call_update" && x["status"] == "in_progress"
    });
    assert_eq!(u[started]["toolCallId"], id);
    assert_eq!(u[started]["title"], json!("Write notes.txt"));
    let file = env.repo().join("notes.txt");
    assert_eq!(
        u[started]["locations"],
        json!([{"path": file.display().to_string()}])
    );
    let done = find(&u, started, |x| {
        x["sessionUpdate"] == "tool_call_update" && x["status"] == "completed"
    });
    assert_eq!(u[done]["toolCallId"], id);
    let diff = u[done]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "diff")
        .unwrap_or_else(|| panic!("no diff: {:#}", u[done]));
    assert_eq!(diff["path"], json!(file.display().to_string()));
    assert_eq!(diff["newText"], json!("hello\n"));
    assert!(diff["oldText"].is_null(), "{diff}");
    find(&u, done, |x| {
        x["sessionUpdate"] == "agent_message_chunk" && x["content"]["text"] == "Done."
    });

    // The permission request came with the four options and the terminal prompt's text.
    let asks: Vec<&Value> = v["seen"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s.get("permission"))
        .collect();
    assert_eq!(asks.len(), 1, "{asks:#?}");
    assert_eq!(asks[0]["toolCall"]["toolCallId"], id);
    let kinds: Vec<&str> = asks[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    let ask_text = asks[0]["toolCall"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(ask_text.starts_with("write asks for edit: "), "{ask_text}");
    assert_eq!(env.read("notes.txt"), "hello\n");

    // The journal has it, as for every front end.
    let changes = env.run(&["changes", "--json"]);
    assert!(common::text(&changes.stdout).contains("notes.txt"));

    // A second client loads the session: the conversation is replayed, then answered.
    let session_id = session["sessionId"].as_str().unwrap().to_string();
    let loaded = client(&env, &["load", &session_id], "allow_once");
    assert_eq!(loaded["load"]["modes"]["currentModeId"], json!("build"));
    let r = updates(&loaded);
    let prompt = find(&r, 0, |x| {
        x["sessionUpdate"] == "user_message_chunk" && x["content"]["text"] == "write notes"
    });
    let call = find(&r, prompt, |x| {
        x["sessionUpdate"] == "tool_call" && x["toolCallId"] == id
    });
    assert_eq!(r[call]["status"], json!("completed"));
    assert_eq!(r[call]["kind"], json!("edit"));
    assert!(
        r[call]["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "diff" && c["newText"] == "hello\n"),
        "{:#}",
        r[call]
    );
    find(&r, call, |x| {
        x["sessionUpdate"] == "agent_message_chunk" && x["content"]["text"] == "Done."
    });
}

#[test]
fn a_rejected_ask_fails_the_call_and_the_model_reads_why() {
    let env = Env::new(vec![
        write_call("c1", "notes.txt", "hello\n"),
        Reply::new().text("Understood."),
    ]);
    let v = client(&env, &["prompt", "write notes"], "reject_once");
    assert_eq!(v["stop"]["stopReason"], json!("end_turn"));
    assert!(!env.repo().join("notes.txt").exists());
    let u = updates(&v);
    let call = find(&u, 0, |x| x["sessionUpdate"] == "tool_call");
    let failed = find(&u, call, |x| {
        x["sessionUpdate"] == "tool_call_update" && x["status"] == "failed"
    });
    assert_eq!(u[failed]["toolCallId"], u[call]["toolCallId"]);
    let said = u[failed]["content"][0]["content"]["text"].as_str().unwrap();
    assert!(
        said.contains("The user rejected the edit permission"),
        "{said}"
    );
    let requests = env.requests();
    let answers = tool_messages(&requests[1]);
    assert_eq!(answers[0].0, "c1");
    assert!(
        answers[0]
            .1
            .contains("The user rejected the edit permission"),
        "{answers:?}"
    );
}

/// Bidi controls and zero-width characters in a call reach the editor as visible
/// `<U+XXXX>` markers, in the call's title and in the ask, which says what they are.
#[test]
fn hidden_characters_in_an_ask_are_shown_and_flagged_to_the_editor() {
    let command = "echo safe # \u{202E} ; rm -rf ~ \u{202C}";
    let env = Env::new(vec![
        common::bash_call("c1", command, "print\u{200B} safe"),
        Reply::new().text("Understood."),
    ]);
    let v = client(&env, &["prompt", "print something"], "reject_once");
    let seen = v["seen"].as_array().unwrap();
    let ask = seen
        .iter()
        .find_map(|s| s.get("permission"))
        .unwrap_or_else(|| panic!("no permission request: {v:#}"));
    let text = ask["toolCall"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("\nwarning: this request contains invisible or direction-changing characters, shown as <U+XXXX>; what it does may differ from how it reads\n"),
        "{text}"
    );
    assert!(
        text.contains("echo safe # <U+202E> ; rm -rf ~ <U+202C>"),
        "{text}"
    );
    let u = updates(&v);
    let titled = find(&u, 0, |x| {
        x["title"].as_str().is_some_and(|t| t.contains("echo safe"))
    });
    assert_eq!(ask["toolCall"]["title"], u[titled]["title"]);
    assert_eq!(
        u[titled]["title"],
        json!("Run `echo safe # <U+202E> ; rm -rf ~ <U+202C>`")
    );
    // What the editor shows as text: every title and text content.
    let mut shown: Vec<String> = vec![text.to_string()];
    for x in &u {
        shown.extend(x["title"].as_str().map(str::to_string));
        for c in x["content"].as_array().into_iter().flatten() {
            shown.extend(c["content"]["text"].as_str().map(str::to_string));
        }
    }
    for line in &shown {
        assert!(
            !line.contains(['\u{202E}', '\u{202C}', '\u{200B}']),
            "shown raw: {line:?}"
        );
    }
}

/// Processes whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) && !cmd.contains("client.mjs") {
                found.push(cmd);
            }
        }
    }
    found
}

#[test]
fn a_cancel_mid_command_stops_the_turn_and_its_process() {
    let env = Env::new(vec![common::bash_call(
        "c1",
        "touch started && sleep 37.25",
        "Wait a while",
    )]);
    let marker = env.repo().join("started");
    let v = client(
        &env,
        &["cancel", "wait", &marker.display().to_string()],
        "allow_once",
    );
    assert_eq!(v["stop"]["stopReason"], json!("cancelled"));
    let u = updates(&v);
    let call = find(&u, 0, |x| x["sessionUpdate"] == "tool_call");
    assert_eq!(u[call]["kind"], json!("execute"));
    let end = find(&u, call, |x| {
        x["sessionUpdate"] == "tool_call_update" && x["status"] == "failed"
    });
    assert_eq!(u[end]["toolCallId"], u[call]["toolCallId"]);
    // No update claims the call still runs after its end.
    assert!(
        u[end + 1..]
            .iter()
            .all(|x| x["status"] != "in_progress" && x["status"] != "pending"),
        "{u:#?}"
    );
    assert!(processes_with("sleep 37.25").is_empty());
    // The model was asked once: the cancel ended the turn.
    assert_eq!(env.requests().len(), 1);
}

#[test]
fn modes_and_models_switch_and_a_wrong_mode_is_refused() {
    let env = Env::new(vec![Reply::new().text("Planned.")]);
    let v = client(&env, &["modes", "make a plan"], "allow_once");
    assert_eq!(v["stop"]["stopReason"], json!("end_turn"));
    let u = updates(&v);
    find(&u, 0, |x| {
        x["sessionUpdate"] == "current_mode_update" && x["currentModeId"] == "plan"
    });
    let options = &v["setModel"]["configOptions"];
    assert_eq!(options[0]["currentValue"], json!("plan"));
    assert_eq!(options[1]["currentValue"], json!("scripted/other"));
    let bad = v["badMode"].as_str().unwrap();
    assert!(
        bad.contains("no agent profile named nope; the modes of this session are: build, plan"),
        "{bad}"
    );
    let bad = v["badOption"].as_str().unwrap();
    assert!(
        bad.contains("no config option speed; this agent has mode and model"),
        "{bad}"
    );
    let requests = env.requests();
    assert_eq!(requests[0]["model"], json!("other"));
}

#[test]
fn an_mcp_server_the_editor_passes_joins_the_session() {
    let everything = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp/tests/servers/node_modules/.bin/mcp-server-everything");
    assert!(
        everything.exists(),
        "run `npm ci` in crates/mcp/tests/servers (bash .ci/run does)"
    );
    // The server starts in the background: the first step waits for it with a command, long
    // enough for a busy machine to start node and the server (5 s was a guess it could miss).
    let env = Env::new(vec![
        common::bash_call("c1", "sleep 30", "Wait for the server"),
        Reply::new().tool_call("c2", "everything_echo", r#"{"message": "hi from acp"}"#),
        Reply::new().text("Echoed."),
    ]);
    let v = client_with(&env, &["prompt", "echo"], "allow_once", Some(&everything));
    assert_eq!(v["stop"]["stopReason"], json!("end_turn"));
    let u = updates(&v);
    let call = find(&u, 0, |x| {
        x["sessionUpdate"] == "tool_call" && x["title"] == "everything_echo"
    });
    // `other`, the protocol's default kind, is left out of the message.
    assert!(u[call]["kind"].is_null(), "{:#}", u[call]);
    let done = find(&u, call, |x| {
        x["sessionUpdate"] == "tool_call_update"
            && x["toolCallId"] == u[call]["toolCallId"]
            && x["status"] == "completed"
    });
    let output = u[done]["content"][0]["content"]["text"].as_str().unwrap();
    assert!(output.contains("hi from acp"), "{output}");
}

#[test]
fn a_sub_agent_shows_on_its_task_card_and_its_ask_reaches_the_editor() {
    let env = Env::new(vec![
        Reply::new().tool_call(
            "t1",
            "task",
            json!({"description": "Write the note", "prompt": "write notes.txt", "subagent_type": "general"})
                .to_string(),
        ),
        write_call("c1", "notes.txt", "from the sub-agent\n"),
        Reply::new().text("Written."),
        Reply::new().text("The sub-agent wrote it."),
    ]);
    let v = client(&env, &["prompt", "delegate"], "allow_once");
    assert_eq!(v["stop"]["stopReason"], json!("end_turn"));
    assert_eq!(env.read("notes.txt"), "from the sub-agent\n");
    let u = updates(&v);
    let task = find(&u, 0, |x| {
        x["sessionUpdate"] == "tool_call" && x["kind"] == "think"
    });
    let task_id = u[task]["toolCallId"].clone();
    // The sub-agent's progress line and its diff appear on the task card while it runs.
    let progress = find(&u, task, |x| {
        x["toolCallId"] == task_id
            && x["content"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["content"]["text"] == "general: Write notes.txt")
            })
    });
    find(&u, progress, |x| {
        x["toolCallId"] == task_id
            && x["content"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "diff" && c["newText"] == "from the sub-agent\n")
            })
    });
    find(&u, progress, |x| {
        x["toolCallId"] == task_id && x["status"] == "completed"
    });
    // The ask names the sub-agent; its own card is closed when its call finishes.
    let ask = v["seen"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|s| s.get("permission"))
        .unwrap();
    let text = ask["toolCall"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.starts_with("sub-agent general · Write the note: write asks for edit: notes.txt"),
        "{text}"
    );
    let child = ask["toolCall"]["toolCallId"].clone();
    assert_ne!(child, task_id);
    find(&u, 0, |x| {
        x["toolCallId"] == child && x["status"] == "completed"
    });
}

/// Talks to `podcode acp` line by line, without a client library: every stdout line is a
/// JSON-RPC message, and wrong requests get errors that say what to do.
#[test]
fn wrong_requests_are_answered_with_errors_and_stdout_holds_only_protocol_lines() {
    use std::io::Write;
    let env = Env::new(vec![]);
    // No model is configured in this directory's parent: `session/new` says how to set one.
    env.write_global("");
    let mut child = env
        .cmd(&["acp"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let repo = env.repo().display().to_string();
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}).to_string(),
        "this is not json".to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "ses_nope", "prompt": []}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/fly", "params": {}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/new", "params": {"cwd": "relative/dir", "mcpServers": []}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 5, "method": "session/load", "params": {"sessionId": "ses_nope", "cwd": repo, "mcpServers": []}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 6, "method": "session/new", "params": {"cwd": repo, "mcpServers": []}}).to_string(),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for line in &lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let mut answers = std::collections::BTreeMap::new();
    for line in common::text(&out.stdout).lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(v["jsonrpc"], json!("2.0"), "{line}");
        answers.insert(v["id"].to_string(), v);
    }
    assert_eq!(answers["1"]["result"]["protocolVersion"], json!(1));
    assert_eq!(answers["null"]["error"]["code"], json!(-32700));
    assert_eq!(
        answers["2"]["error"]["message"],
        json!("no open session ses_nope: create one with session/new or open it with session/load")
    );
    assert_eq!(answers["3"]["error"]["code"], json!(-32601));
    assert_eq!(
        answers["3"]["error"]["message"],
        json!("podcode acp does not handle session/fly")
    );
    assert_eq!(
        answers["4"]["error"]["message"],
        json!("cwd must be an absolute path, got relative/dir")
    );
    assert_eq!(
        answers["5"]["error"]["message"],
        json!("no session with id ses_nope (see `podcode sessions`)")
    );
    let no_model = answers["6"]["error"]["message"].as_str().unwrap();
    assert!(no_model.contains("scripted"), "{no_model}");
}

/// Frames that are not JSON-RPC requests: a frame with an invalid UTF-8 byte is answered
/// -32700 and the connection keeps serving; a request whose method is not a string, a
/// batch, a scalar (`42`, `"x"`, `null`) and other non-messages are answered -32600 (id
/// null unless the frame has a usable one) instead of being left unanswered.
#[test]
fn a_frame_that_is_not_utf8_or_not_a_request_is_answered_and_serving_goes_on() {
    use std::io::Write;
    let env = Env::new(vec![]);
    env.write_global("");
    let mut child = env
        .cmd(&["acp"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut input: Vec<u8> = Vec::new();
    // A prompt whose text holds a byte that is never valid UTF-8 (0xff), then an
    // overlong encoding and a cut-off sequence: three malformed frames.
    input.extend_from_slice(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"x\":\"\xff\"}}\n",
    );
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"x\":\"\xc0\xaf\"}}\n");
    input.extend_from_slice(b"\xe2\x82\n");
    for line in [
        json!({"jsonrpc": "2.0", "id": 3, "method": 42, "params": {}}),
        json!({"jsonrpc": "2.0", "id": "four", "method": ["initialize"]}),
        json!([{"jsonrpc": "2.0", "id": 5, "method": "initialize"}]),
        json!(42),
        json!("x"),
        Value::Null,
        json!({"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": {"protocolVersion": 1}}),
    ] {
        input.extend_from_slice(line.to_string().as_bytes());
        input.push(b'\n');
    }
    stdin.write_all(&input).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let answers: Vec<Value> = common::text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let codes: Vec<(Value, Value)> = answers
        .iter()
        .map(|a| (a["id"].clone(), a["error"]["code"].clone()))
        .collect();
    assert_eq!(
        codes,
        vec![
            (Value::Null, json!(-32700)),
            (Value::Null, json!(-32700)),
            (Value::Null, json!(-32700)),
            (json!(3), json!(-32600)),
            (json!("four"), json!(-32600)),
            (Value::Null, json!(-32600)),
            (Value::Null, json!(-32600)),
            (Value::Null, json!(-32600)),
            (Value::Null, json!(-32600)),
            (json!(6), Value::Null),
        ],
        "{answers:#?}"
    );
    assert_eq!(
        answers[3]["error"]["message"],
        json!("the method must be a string")
    );
    // A batch is answered once, as the official SDK answers one; none of its entries run.
    assert_eq!(
        answers[5]["error"]["message"],
        json!("JSON-RPC batches are not supported: send one message per line")
    );
    for scalar in &answers[6..9] {
        assert_eq!(
            scalar["error"]["message"],
            json!("a JSON-RPC message must be a JSON object"),
            "{scalar}"
        );
    }
    assert_eq!(answers[9]["result"]["protocolVersion"], json!(1));
}

#[test]
fn help_shows_how_to_set_up_an_editor() {
    let env = Env::new(vec![]);
    let top = common::text(&env.run(&["--help"]).stdout);
    assert!(top.contains("podcode acp"), "{top}");
    let help = common::text(&env.run(&["acp", "--help"]).stdout);
    for needle in [
        "Serve the Agent Client Protocol on stdio, for editors (Zed, JetBrains, Neovim)",
        "\"agent_servers\": {",
        "\"Podcode\": { \"command\": \"podcode\", \"args\": [\"acp\"] }",
        "--agent <AGENT>",
        "podcode trust",
    ] {
        assert!(help.contains(needle), "{needle} missing from:\n{help}");
    }
}

#[test]
fn a_cancel_while_an_ask_waits_ends_the_turn_and_nothing_is_written() {
    let env = Env::new(vec![
        write_call("c1", "notes.txt", "hello\n"),
        Reply::new().text("never sent"),
    ]);
    let v = client(&env, &["cancel", "write notes"], "cancel");
    assert_eq!(v["stop"]["stopReason"], json!("cancelled"));
    let seen = v["seen"].as_array().unwrap();
    let asked = seen.iter().position(|s| s.get("permission").is_some());
    let cancelled = seen.iter().position(|s| s.get("cancel").is_some());
    assert!(asked.is_some() && asked < cancelled, "{seen:#?}");
    assert!(!env.repo().join("notes.txt").exists());
    let u = updates(&v);
    let call = find(&u, 0, |x| x["sessionUpdate"] == "tool_call");
    find(&u, call, |x| {
        x["toolCallId"] == u[call]["toolCallId"] && x["status"] == "failed"
    });
    assert_eq!(env.requests().len(), 1);
}

/// The todo list reaches the editor as the session's plan (ACP `plan` update), the whole
/// list each time; cancelled items leave the plan.
#[test]
fn a_todo_list_becomes_the_editors_plan() {
    let todos = json!({"todos": [
        {"content": "Read the parser", "status": "completed", "priority": "high"},
        {"content": "Fix the bug", "status": "in_progress", "priority": "medium"},
        {"content": "Old idea", "status": "cancelled", "priority": "low"},
    ]});
    let env = Env::new(vec![
        Reply::new().tool_call("c1", "todowrite", todos.to_string()),
        Reply::new().text("On it."),
    ]);
    let v = client(&env, &["prompt", "fix the bug"], "allow_once");
    let u = updates(&v);
    let plan = find(&u, 0, |x| x["sessionUpdate"] == "plan");
    assert_eq!(
        u[plan]["entries"],
        json!([
            {"content": "Read the parser", "priority": "high", "status": "completed"},
            {"content": "Fix the bug", "priority": "medium", "status": "in_progress"},
        ])
    );
}

/// The workspace's custom commands reach the editor (`available_commands_update`, the
/// argument hint as the input hint) and `/name args` typed there runs the command.
#[test]
fn custom_commands_are_offered_to_the_editor_and_a_slash_prompt_runs_one() {
    let env = Env::new(vec![Reply::new().text("Reviewed.")]);
    env.write(
        ".podcode/commands/review.md",
        "---\ndescription: Review a file\nargument-hint: <path>\n---\nReview $ARGUMENTS carefully.\n",
    );
    let v = client(&env, &["prompt", "/review src/a.rs"], "allow_once");
    let u = updates(&v);
    let offered = find(&u, 0, |x| x["sessionUpdate"] == "available_commands_update");
    assert_eq!(
        u[offered]["availableCommands"],
        json!([{"name": "review", "description": "Review a file (from the repository)", "input": {"hint": "<path>"}}])
    );
    let sent = env.requests()[0]["messages"].to_string();
    assert!(sent.contains("Review src/a.rs carefully."), "{sent}");
}
