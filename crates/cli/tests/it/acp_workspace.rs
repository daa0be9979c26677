//! `podcode acp` and `podcode run --session` with sessions of another project: a session
//! runs in the workspace of its own directory (its files, its `.podcode/config.toml` rules),
//! whatever directory the process started in; a session whose directory is gone says so;
//! and a session has one busy state, so a second prompt while a turn runs gets the busy
//! text every front end gives, and exactly one turn runs. Driven through the real binary
//! over JSON-RPC lines, against the scripted model server.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{Env, bash_call, tool_messages};
use podcode_providers::testing::{Gate, Reply};
use serde_json::{Value, json};

/// Generous: the answer comes from a local server, however busy the machine is.
const WAIT: Duration = Duration::from_secs(180);

/// Project B beside the test's project A: its own git marker and a config that names the
/// scripted model and denies every edit.
fn project_b(env: &Env, name: &str) -> PathBuf {
    let b = env.repo().parent().unwrap().join(name);
    std::fs::create_dir_all(b.join(".git")).unwrap();
    std::fs::create_dir_all(b.join(".podcode")).unwrap();
    std::fs::write(
        b.join(".podcode/config.toml"),
        "model = \"scripted/test\"\n[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"deny\"\n",
    )
    .unwrap();
    b.canonicalize().unwrap()
}

/// `podcode acp` started in `dir`, spoken to one JSON line at a time.
struct Acp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    next_id: u64,
    /// Every notification and request from the agent, in order.
    seen: Vec<Value>,
}

impl Acp {
    fn start(env: &Env, dir: &Path) -> Self {
        let mut child = env
            .cmd(&["acp"])
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value =
                    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let mut acp = Self {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 0,
            seen: Vec::new(),
        };
        let init = acp.call("initialize", json!({"protocolVersion": 1}));
        assert_eq!(init["result"]["protocolVersion"], json!(1), "{init}");
        acp
    }

    fn write(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request; its answer is read by `answer`.
    fn send(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.write(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The next message from the agent; permission requests are allowed once.
    fn next(&mut self) -> Value {
        let v = self
            .lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|e| panic!("no message from podcode acp: {e}; saw {:#?}", self.seen));
        if v["method"] == "session/request_permission" {
            let answer = json!({"jsonrpc": "2.0", "id": v["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}});
            self.write(answer);
        }
        v
    }

    /// The response to request `id` (its `result` or `error`), keeping what came before.
    fn answer(&mut self, id: u64) -> Value {
        loop {
            let v = self.next();
            if v.get("method").is_none() && v["id"] == json!(id) {
                return v;
            }
            self.seen.push(v);
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.answer(id)
    }

    /// Waits for the first notification matching `f` (it is kept in `seen`).
    fn wait_for(&mut self, f: impl Fn(&Value) -> bool) {
        loop {
            let v = self.next();
            let hit = f(&v);
            self.seen.push(v);
            if hit {
                return;
            }
        }
    }

    fn new_session(&mut self, cwd: &Path) -> String {
        let r = self.call(
            "session/new",
            json!({"cwd": cwd.display().to_string(), "mcpServers": []}),
        );
        r["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"))
            .to_string()
    }

    fn prompt(&mut self, session: &str, text: &str) -> u64 {
        self.send(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
    }

    /// Ends the input and waits for the process to exit.
    fn finish(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "podcode acp exited with {status}");
    }
}

/// The model's turn in B: bash prints its directory and writes a file there, then the
/// `write` tool tries another file (B denies every edit), then it answers.
fn turn_in_b() -> Vec<Reply> {
    vec![
        bash_call("b1", "pwd && echo from-bash > note.txt", "Where am I"),
        Reply::new().tool_call(
            "w1",
            "write",
            json!({"filePath": "denied.txt", "content": "x\n"}).to_string(),
        ),
        Reply::new().text("finished"),
    ]
}

/// What the three requests of `turn_in_b`, from `first` on, show: bash ran in `b` and wrote
/// there, B's deny rule refused the write, nothing landed in `a`.
fn assert_ran_in_b(env: &Env, first: usize, b: &Path, a: &Path) {
    let requests = env.requests();
    assert_eq!(requests.len(), first + 3, "{requests:#?}");
    let bash = tool_messages(&requests[first + 1]);
    assert!(
        bash.iter()
            .any(|(id, out)| id == "b1" && out.lines().any(|l| l.trim() == b.display().to_string())),
        "bash did not run in {}: {bash:?}",
        b.display()
    );
    assert_eq!(
        std::fs::read_to_string(b.join("note.txt")).unwrap(),
        "from-bash\n"
    );
    let write = tool_messages(&requests[first + 2]);
    let denied = &write.iter().find(|(id, _)| id == "w1").unwrap().1;
    assert!(denied.contains("denies edit"), "{denied}");
    assert!(!b.join("denied.txt").exists());
    for f in ["note.txt", "denied.txt"] {
        assert!(!a.join(f).exists(), "{f} landed in the process's directory");
    }
    std::fs::remove_file(b.join("note.txt")).unwrap();
}

#[test]
fn an_acp_session_of_another_directory_runs_there_under_its_rules_loads_there_and_not_once_it_is_gone()
 {
    let mut script = turn_in_b();
    script.extend(turn_in_b());
    let env = Env::new(script);
    let a = env.repo().canonicalize().unwrap();
    let b = project_b(&env, "project-b");

    // Started in A, a session whose cwd is B.
    let mut acp = Acp::start(&env, &a);
    let id = acp.new_session(&b);
    let p = acp.prompt(&id, "look around");
    let done = acp.answer(p);
    assert_eq!(done["result"]["stopReason"], json!("end_turn"), "{done}");
    assert_ran_in_b(&env, 0, &b, &a);
    acp.finish();

    // An editor open on A loads it (cwd A): it still runs in B, under B's rules.
    let mut acp = Acp::start(&env, &a);
    let loaded = acp.call(
        "session/load",
        json!({"sessionId": id, "cwd": a.display().to_string(), "mcpServers": []}),
    );
    assert!(loaded.get("result").is_some(), "{loaded}");
    let p = acp.prompt(&id, "again");
    let done = acp.answer(p);
    assert_eq!(done["result"]["stopReason"], json!("end_turn"), "{done}");
    assert_ran_in_b(&env, 3, &b, &a);
    acp.finish();

    // Once B is gone, loading the session says so; nothing is replayed or run.
    std::fs::remove_dir_all(&b).unwrap();
    let mut acp = Acp::start(&env, &a);
    let loaded = acp.call(
        "session/load",
        json!({"sessionId": id, "cwd": a.display().to_string(), "mcpServers": []}),
    );
    assert_eq!(
        loaded["error"]["message"],
        json!(format!(
            "session {id} works in {}, which no longer exists: it cannot run",
            b.display()
        )),
        "{loaded}"
    );
    assert!(acp.seen.is_empty(), "{:#?}", acp.seen);
    let p = acp.prompt(&id, "hello");
    let refused = acp.answer(p);
    assert_eq!(
        refused["error"]["message"],
        json!(format!(
            "no open session {id}: create one with session/new or open it with session/load"
        ))
    );
    acp.finish();
    assert_eq!(env.requests().len(), 6);
}

#[test]
fn a_second_prompt_while_a_turn_runs_gets_the_busy_answer_and_one_turn_runs() {
    let gate = Gate::new();
    let env = Env::new(vec![
        Reply::new()
            .text("the one ")
            .text("answer")
            .hold_after(2, &gate),
        Reply::new().text("a second turn should never have run"),
    ]);
    let a = env.repo();
    let mut acp = Acp::start(&env, &a);
    let id = acp.new_session(&a);
    let first = acp.prompt(&id, "first");
    // The first turn is mid-answer (held by the model server) when the second arrives.
    acp.wait_for(|v| v["params"]["update"]["sessionUpdate"] == "agent_message_chunk");
    let second = acp.prompt(&id, "second");
    let busy = acp.answer(second);
    assert_eq!(
        busy["error"]["message"],
        json!(podcode_core::BUSY_TEXT),
        "{busy}"
    );
    // The HTTP server answers a busy session with the same text.
    assert_eq!(podcode_core::BUSY_TEXT, podcode_server::BUSY_TEXT);
    assert_eq!(
        podcode_core::BUSY_TEXT,
        "this session is still answering the previous prompt: abort it or wait for it to finish"
    );
    gate.open();
    let done = acp.answer(first);
    assert_eq!(done["result"]["stopReason"], json!("end_turn"), "{done}");
    acp.finish();

    // One turn ran: one model request, one user and one assistant message stored.
    assert_eq!(env.requests().len(), 1);
    let export: Value =
        serde_json::from_slice(&env.run(&["sessions", "export", &id]).stdout).unwrap();
    let roles: Vec<&str> = export["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant"], "{export:#}");
}

#[test]
fn run_with_the_session_of_another_project_runs_it_in_its_own_directory_under_its_rules() {
    let mut script = vec![Reply::new().text("hello from b")];
    script.extend(turn_in_b());
    let env = Env::new(script);
    let a = env.repo().canonicalize().unwrap();
    let b = project_b(&env, "project-b");
    let out = env.cmd(&["run", "hi"]).current_dir(&b).output().unwrap();
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let id = env.last_session();

    // From A: the session goes on in B.
    let out = env
        .cmd(&["run", "--yes", "--session", &id, "look around"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    assert_ran_in_b(&env, 1, &b, &a);
}
