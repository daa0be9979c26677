//! A session tree is one thing: a parent whose `task` sub-agent is priced and edits a file
//! shows the tree's totals (its own beside them) in `run`'s summary, `podcode sessions`
//! (and `--tree`, which names the child's model), the HTTP API and the TUI status line;
//! `changes --session PARENT` lists the child's edit. The real binary against the scripted
//! model, priced in the user's config at $10 / $20 per million input / output tokens.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::Duration;

use common::pty::drive;
use common::*;
use podcode_providers::testing::Reply;
use serde_json::Value;

/// An env whose scripted model is priced and whose edits are allowed without asking, with
/// the parent → sub-agent script: the parent spends 2500 in / 150 out ($0.028), the
/// sub-agent (which writes `notes.txt`) 4000 in / 150 out ($0.043).
fn priced_tree() -> Env {
    let env = Env::new(vec![]);
    env.write_global(&format!(
        "[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"allow\"\n\
         [provider.scripted]\nbase_url = \"{}\"\n[provider.scripted.models.\"test\"]\n\
         context = 128000\ncost = {{ input = 10.0, output = 20.0 }}\n",
        env.server.base_url()
    ));
    let file = env.write("notes.txt", "old\n");
    env.server.push(
        Reply::new()
            .tool_call(
                "t1",
                "task",
                r#"{"description": "Edit notes", "prompt": "Write new to notes.txt.", "subagent_type": "general"}"#,
            )
            .usage(1000, 100),
    );
    env.server
        .push(write_call("w1", &file, "new\n").usage(2000, 100));
    env.server
        .push(Reply::new().text("notes edited").usage(2000, 50));
    env.server.push(
        Reply::new()
            .text("The sub-agent edited the notes.")
            .usage(1500, 50),
    );
    env
}

fn http(addr: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer tree-token-123\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let status = raw[9..12].parse().unwrap();
    let body = raw.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    (status, body.to_string())
}

#[test]
fn run_sessions_changes_and_the_api_count_the_sub_agent() {
    let env = priced_tree();
    let out = env.run(&["run", "delegate the edit", "--yes"]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(env.read("notes.txt"), "new\n");
    assert!(
        stderr.contains(
            "── done: 2 steps · 1 tool call · 6500 in / 300 out tokens · $0.0710 \
             (this session 2500 in / 150 out tokens · $0.0280; sub-agents 4000 in / 150 out tokens · $0.0430)"
        ),
        "{stderr}"
    );

    let sessions: Value = serde_json::from_slice(&env.run(&["sessions", "--json"]).stdout).unwrap();
    let parent = sessions
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["parent_id"].is_null())
        .unwrap();
    let child = sessions
        .as_array()
        .unwrap()
        .iter()
        .find(|s| !s["parent_id"].is_null())
        .unwrap();
    let id = parent["id"].as_str().unwrap();
    let child_id = child["id"].as_str().unwrap();
    assert_eq!(parent["usage"]["input_tokens"], 2500);
    assert_eq!(parent["tree_usage"]["input_tokens"], 6500);
    assert_eq!(parent["tree_usage"]["output_tokens"], 300);
    let cost = parent["tree_usage"]["cost"].as_f64().unwrap();
    assert!((cost - 0.071).abs() < 1e-9, "{cost}");
    assert_eq!(child["model"], "scripted/test");

    let list = text(&env.run(&["sessions"]).stdout);
    let line = list.lines().find(|l| l.starts_with(id)).unwrap();
    assert!(
        line.contains("6.5k↑ 300↓ $0.07 (own 2.5k↑ 150↓ $0.03)"),
        "{list}"
    );
    let tree = text(&env.run(&["sessions", "--tree"]).stdout);
    let child_line = tree.lines().find(|l| l.contains(child_id)).unwrap();
    assert!(child_line.starts_with("└─ "), "{tree}");
    assert!(child_line.contains("scripted/test"), "{tree}");
    assert!(child_line.contains("4.0k↑ 150↓ $0.04"), "{tree}");

    let changes = text(&env.run(&["changes", "--session", id]).stdout);
    let edit = changes
        .lines()
        .find(|l| l.contains("notes.txt"))
        .unwrap_or_else(|| panic!("{changes}"));
    assert!(edit.contains(child_id), "{changes}");

    // The API's session object: its own totals and the tree's.
    let mut server = env
        .cmd(&["serve"])
        .env("PODCODE_SERVER_TOKEN", "tree-token-123")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let addr = first
        .strip_prefix("Podcode server on http://")
        .unwrap_or_else(|| panic!("{first}"))
        .to_string();
    std::thread::spawn(move || for _ in lines {});
    let (status, body) = http(&addr, &format!("/api/sessions/{id}"));
    server.kill().unwrap();
    server.wait().unwrap();
    assert_eq!(status, 200, "{body}");
    let detail: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(detail["usage"]["input_tokens"], 2500, "{detail}");
    assert_eq!(detail["tree_usage"]["input_tokens"], 6500, "{detail}");
    let cost = detail["tree_usage"]["cost"].as_f64().unwrap();
    assert!((cost - 0.071).abs() < 1e-9, "{detail}");
}

#[test]
fn the_tui_status_line_shows_the_tree_total_beside_the_session_s_own() {
    let env = priced_tree();
    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "delegate the edit\r"),
            ("The sub-agent edited the notes.", ""),
            ("6500↑ 300↓ $0.0710 (own $0.0280)", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert_eq!(env.read("notes.txt"), "new\n");
}
