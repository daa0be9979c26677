//! The session's todo list through the installed binary against the scripted model:
//! `todowrite` is allowed without an ask, `podcode run` prints the list as a checklist, a
//! plugin's `event` hook gets opencode's `todo.updated`, and `todoread` in a resumed session
//! (`--continue`) returns the same list.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::*;

use podcode_providers::testing::Reply;
use serde_json::{Value, json};

const WATCH: &str = r#"import type { Plugin } from "@opencode-ai/plugin"
import { appendFileSync } from "node:fs"

export const Todos: Plugin = async ({ directory }) => ({
  event: async ({ event }) => {
    if (event.type === "todo.updated") appendFileSync(`${directory}/todos.jsonl`, JSON.stringify(event.properties) + "\n")
  },
})
"#;

/// Three items: one done, one in progress, one pending.
fn todos() -> Value {
    json!({"todos": [
        {"content": "Write the failing test", "status": "completed", "priority": "high"},
        {"content": "Fix the parser", "status": "in_progress", "priority": "high"},
        {"content": "Update the docs", "status": "pending", "priority": "low"},
    ]})
}

#[test]
fn the_todo_list_is_shown_heard_by_plugins_and_kept_with_the_session() {
    let todos = todos();
    let env = Env::new(vec![
        Reply::new().tool_call("c1", "todowrite", todos.to_string()),
        Reply::new().text("Working on it."),
        Reply::new().tool_call("c2", "todoread", "{}"),
        Reply::new().text("Still on the parser."),
    ]);
    env.write(".opencode/plugins/todos.ts", WATCH);
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "fix the parser"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr
            .contains("  [x] Write the failing test\n  [>] Fix the parser\n  [ ] Update the docs"),
        "{stderr}"
    );
    // The model reads the list back, titled by what is left.
    let second = env.requests()[1]["messages"].to_string();
    assert!(second.contains("Fix the parser"), "{second}");
    let heard: Vec<Value> = env.jsonl("todos.jsonl");
    assert_eq!(heard.len(), 1, "{heard:?}");
    assert_eq!(heard[0]["todos"], todos["todos"]);
    assert!(heard[0]["sessionID"].as_str().unwrap().starts_with("ses_"));

    // A resumed session reads the same list.
    let out = env.run(&["run", "--continue", "where are we?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tools = tool_messages(&env.requests()[3]);
    let (_, read) = tools.last().unwrap();
    let read: Value = serde_json::from_str(read).unwrap();
    assert_eq!(read, todos["todos"]);
}

#[test]
fn the_tui_shows_the_todo_list_in_a_panel_that_a_resume_restores() {
    let todos = todos();
    let env = Env::new(vec![
        Reply::new().tool_call("c1", "todowrite", todos.to_string()),
        Reply::new().text("Working on the parser."),
    ]);
    let (screen, matched) = common::pty::drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "/todos\r"),
            ("no todo list yet", "fix the parser\r"),
            ("todo: 2 of 3 left", ""),
            ("[>] Fix the parser", ""),
            ("Working on the parser.", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    // Resumed, the panel comes back from the stored conversation.
    let (screen, matched) = common::pty::drive(
        &env,
        &["tui", "--continue"],
        &[("todo: 2 of 3 left", "\x03\x03")],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert!(
        screen.contains("[]Updatethedocs"),
        "the screen text has no spaces: {screen}"
    );
}

/// The list lives in the session's call log, not in what is sent: a compaction that
/// summarises the turn that wrote it leaves `todoread` the same list.
#[test]
fn the_todo_list_survives_a_compaction() {
    let overflow = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#;
    let todos = todos();
    let env = Env::new(vec![
        Reply::new().tool_call("c1", "todowrite", todos.to_string()),
        Reply::new().text("Listed."),
        Reply::raw(400, "application/json", overflow),
        Reply::new().text("SUMMARY: a todo list was written."),
        Reply::new().tool_call("c2", "todoread", "{}"),
        Reply::new().text("Still on the parser."),
    ]);
    assert!(env.run(&["run", "plan the fix"]).status.success());
    let out = env.run(&["run", "--continue", "what is left?"]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("compacted"), "{stderr}");
    let last = env.requests().last().unwrap().clone();
    let (_, read) = tool_messages(&last).last().unwrap().clone();
    let read: Value = serde_json::from_str(&read).unwrap();
    assert_eq!(read, todos["todos"]);
}
