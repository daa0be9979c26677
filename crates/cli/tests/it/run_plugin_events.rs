//! A plugin's `event` hook, written for opencode (switching on `event.type`, reading
//! `event.properties`), driven through the installed binary against the scripted model: a
//! `podcode run` with an edit sees opencode's bus events — the new session, the prompt, the
//! session busy,
//! the assistant message and its parts, the edited file, and the session idle at the end —
//! each `{id, type, properties}`, all delivered before `run` exits; and an
//! `experimental.chat.system.transform` hook adds context to every request's system prompt.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::*;

use podcode_providers::testing::Reply;
use serde_json::Value;

const WATCH: &str = r#"import type { Plugin } from "@opencode-ai/plugin"
import { appendFileSync } from "node:fs"

export const Watch: Plugin = async ({ directory }) => {
  return {
    event: async ({ event }) => {
      const p = event.properties
      const seen = { id: event.id, type: event.type, keys: Object.keys(p).sort() }
      if (event.type === "message.part.updated") seen.part = { type: p.part.type, status: p.part.state?.status, text: p.part.text }
      if (event.type === "message.updated") seen.role = p.info.role
      if (event.type === "session.status") seen.status = p.status.type
      if (event.type === "file.edited") seen.file = p.file
      appendFileSync(`${directory}/events.jsonl`, JSON.stringify(seen) + "\n")
    },
  }
}
"#;

#[test]
fn an_event_hook_written_for_opencode_sees_opencode_s_events_until_the_session_is_idle() {
    let env = Env::new(vec![
        Reply::new().text("Changing it.").tool_call(
            "c1",
            "edit",
            r#"{"filePath": "notes.txt", "oldString": "world", "newString": "there"}"#,
        ),
        Reply::new().text("Done."),
    ]);
    env.write(".opencode/plugins/watch.ts", WATCH);
    env.write("notes.txt", "hello world\n");
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "say hello there", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(env.read("notes.txt"), "hello there\n");

    let seen: Vec<Value> = env.jsonl("events.jsonl");
    let types: Vec<&str> = seen.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert!(
        seen.iter()
            .all(|e| e["id"].as_str().is_some_and(|i| i.starts_with("evt_"))),
        "{seen:#?}"
    );
    // The new session, the prompt and its text, then the session busy; the last events
    // are the session idle.
    assert_eq!(
        types[..3],
        ["session.created", "session.updated", "message.updated"],
        "{types:?}"
    );
    assert_eq!(seen[2]["role"], "user", "{types:?}");
    assert_eq!(seen[3]["part"]["text"], "say hello there", "{types:?}");
    assert_eq!(seen[4]["status"], "busy", "{types:?}");
    assert_eq!(
        types[types.len() - 2..],
        ["session.status", "session.idle"],
        "{types:?}"
    );
    assert_eq!(seen[types.len() - 2]["status"], "idle");
    assert_eq!(
        seen[types.len() - 1]["keys"],
        serde_json::json!(["sessionID"])
    );
    // The edit: its tool part runs, then completes; the file is reported edited.
    let tool: Vec<&str> = seen
        .iter()
        .filter(|e| e["part"]["type"] == "tool")
        .map(|e| e["part"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(tool[..2], ["pending", "running"], "{seen:#?}");
    assert_eq!(tool.last(), Some(&"completed"), "{seen:#?}");
    let edited = seen.iter().find(|e| e["type"] == "file.edited").unwrap();
    assert!(
        edited["file"].as_str().unwrap().ends_with("notes.txt"),
        "{edited}"
    );
    // Streamed text as opencode streams it, and each finished text part whole.
    assert!(types.contains(&"message.part.delta"), "{types:?}");
    let texts: Vec<&str> = seen
        .iter()
        .filter(|e| e["part"]["type"] == "text")
        .filter_map(|e| e["part"]["text"].as_str())
        .filter(|t| !t.is_empty())
        .collect();
    assert_eq!(
        texts,
        ["say hello there", "Changing it.", "Done."],
        "{seen:#?}"
    );
    for e in &seen {
        assert!(
            !e["type"].as_str().unwrap().contains('_'),
            "an engine event reached the plugin: {e}"
        );
    }
}

const CONTEXT: &str = r#"import type { Plugin } from "@opencode-ai/plugin"
import { appendFileSync } from "node:fs"

export const Context: Plugin = async ({ directory }) => ({
  "experimental.chat.system.transform": async (input, output) => {
    appendFileSync(`${directory}/system.jsonl`, JSON.stringify({ keys: Object.keys(input).sort(), model: input.model.id, parts: output.system.length }) + "\n")
    output.system.push("Project rule: answer in French.")
  },
})
"#;

#[test]
fn a_system_transform_hook_adds_context_to_every_request() {
    let env = Env::new(vec![
        Reply::new().tool_call("c1", "read", r#"{"filePath": "notes.txt"}"#),
        Reply::new().text("Bonjour."),
    ]);
    env.write(".opencode/plugins/context.ts", CONTEXT);
    env.write("notes.txt", "hello\n");
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "read my notes", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reqs = env.requests();
    assert_eq!(reqs.len(), 2);
    for req in &reqs {
        let system = req["messages"][0].to_string();
        assert!(
            system.contains("You are") || system.contains("Podcode"),
            "the base prompt stays: {system}"
        );
        assert!(
            system.contains("Project rule: answer in French."),
            "{system}"
        );
    }
    let seen: Vec<Value> = env.jsonl("system.jsonl");
    assert_eq!(seen.len(), 2, "once per request: {seen:?}");
    assert_eq!(seen[0]["keys"], serde_json::json!(["model", "sessionID"]));
    assert_eq!(seen[0]["model"], "test");
    assert_eq!(seen[0]["parts"], 1);
    // Podcode calls the hook, so `podcode plugins` does not warn about it.
    let plugins = text(&env.run(&["plugins"]).stdout);
    assert!(!plugins.contains("is not called"), "{plugins}");
}

/// Written like context-pruning plugins: it replaces old tool outputs and adds a line to the
/// first user message, for the request only.
const PRUNE: &str = r#"import type { Plugin } from "@opencode-ai/plugin"
import { appendFileSync } from "node:fs"

export const Prune: Plugin = async ({ directory }) => ({
  "experimental.chat.messages.transform": async (input, output) => {
    const tools = output.messages.flatMap((m) => m.parts.filter((p) => p.type === "tool"))
    appendFileSync(`${directory}/transform.jsonl`, JSON.stringify({
      input: Object.keys(input),
      roles: output.messages.map((m) => m.info.role),
      tools: tools.map((p) => [p.tool, p.state.status, p.state.input.filePath]),
    }) + "\n")
    for (const p of tools) if (p.state.status === "completed") p.state.output = "[output pruned]"
    output.messages[0].parts.push({ type: "text", text: "Pruner: old outputs were pruned.", synthetic: true })
  },
})
"#;

#[test]
fn a_messages_transform_hook_rewrites_each_request_and_not_the_conversation() {
    let env = Env::new(vec![
        Reply::new().tool_call("c1", "read", r#"{"filePath": "notes.txt"}"#),
        Reply::new().text("Read it."),
    ]);
    env.write(".opencode/plugins/prune.ts", PRUNE);
    env.write("notes.txt", "secret-ish notes\n");
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "read my notes", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reqs = env.requests();
    assert_eq!(reqs.len(), 2);
    let second = reqs[1]["messages"].to_string();
    assert!(second.contains("[output pruned]"), "{second}");
    assert!(!second.contains("secret-ish notes"), "{second}");
    assert!(
        second.contains("Pruner: old outputs were pruned."),
        "{second}"
    );
    let seen: Vec<Value> = env.jsonl("transform.jsonl");
    assert_eq!(seen.len(), 2, "once per request: {seen:?}");
    assert_eq!(seen[0]["input"], serde_json::json!([]));
    assert_eq!(seen[0]["roles"], serde_json::json!(["user"]));
    assert_eq!(seen[1]["roles"], serde_json::json!(["user", "assistant"]));
    assert_eq!(
        seen[1]["tools"],
        serde_json::json!([["read", "completed", "notes.txt"]])
    );
    // The stored conversation keeps what the tool really returned.
    let list = text(&env.run(&["sessions", "--json"]).stdout);
    let sessions: Value = serde_json::from_str(&list).unwrap();
    let id = sessions[0]["id"].as_str().unwrap().to_string();
    let shown = text(&env.run(&["sessions", "show", &id]).stdout);
    assert!(shown.contains("secret-ish notes"), "{shown}");
    assert!(!shown.contains("Pruner"), "{shown}");
    let plugins = text(&env.run(&["plugins"]).stdout);
    assert!(!plugins.contains("is not called"), "{plugins}");
}
