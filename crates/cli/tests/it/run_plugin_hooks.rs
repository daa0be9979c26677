//! opencode plugins written the way real ones are (`export const X: Plugin = async (input) =>
//! ({...})`, recording what they saw into a file) driven through the installed binary
//! against the scripted model: `tool.execute.after` gets the call's `args` and bash's output
//! as the model will read it (a redaction there keeps a secret from the model), with
//! metadata always an object; `chat.params` gets opencode's `provider` and `message` and
//! its `temperature` (exactly as set), `topP` and provider `options` reach the request;
//! the PluginInput has opencode's keys and `$`/`process.cwd()` work in the workspace;
//! `chat.headers` sets HTTP headers of the model request; `tool.definition` rewrites what the
//! model reads about a tool (asked once per tool); `experimental.text.complete`
//! rewrites a finished text block everywhere it is kept; and
//! `podcode plugins` warns about hooks Podcode never calls.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::*;

use std::process::Command;

use podcode_providers::testing::Reply;
use serde_json::{Value, json};

const REDACT: &str = r#"import type { Plugin } from "@opencode-ai/plugin"
import { tool } from "@opencode-ai/plugin"
import { appendFileSync } from "node:fs"

export const Redact: Plugin = async ({ directory }) => {
  return {
    "tool.execute.after": async (input, output) => {
      const seen = { input, output: { ...output }, metadataKeys: Object.keys(output.metadata) }
      appendFileSync(`${directory}/after.jsonl`, JSON.stringify(seen) + "\n")
      output.output = output.output.replace(/sk-live-[a-z0-9]+/g, "[REDACTED]")
    },
    tool: {
      shout: tool({
        description: "Upper-cases a text",
        args: { text: tool.schema.string() },
        async execute({ text }) {
          return text.toUpperCase()
        },
      }),
    },
  }
}
"#;

#[test]
fn tool_execute_after_sees_args_and_bash_output_and_its_redaction_is_what_the_model_reads() {
    let env = Env::new(vec![
        bash_call("c1", "cat token.txt", "Print the token"),
        Reply::new().tool_call("c2", "shout", r#"{"text": "hi"}"#),
        Reply::new().text("Done."),
    ]);
    env.write(".opencode/plugins/redact.ts", REDACT);
    env.write("token.txt", "TOKEN=sk-live-abc123\n");
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "print the token", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let reqs = env.requests();
    assert_eq!(reqs.len(), 3);
    let (id, bash) = &tool_messages(&reqs[1])[0];
    assert_eq!(id, "c1");
    assert_eq!(bash, "TOKEN=[REDACTED]\n");
    for req in &reqs[1..] {
        let body = req.to_string();
        assert!(!body.contains("sk-live"), "the secret reached the model");
    }
    assert_eq!(tool_messages(&reqs[2])[1].1, "HI");

    let seen = env.jsonl("after.jsonl");
    assert_eq!(seen.len(), 2, "{seen:#?}");
    let session = env.last_session();
    let input = &seen[0]["input"];
    assert_eq!(
        (&input["tool"], &input["sessionID"]),
        (&json!("bash"), &json!(session))
    );
    assert!(input["callID"].as_str().is_some_and(|id| !id.is_empty()));
    // The arguments the call ran with (Podcode's defaults filled in).
    assert_eq!(input["args"]["command"], "cat token.txt");
    assert_eq!(input["args"]["description"], "Print the token");
    // As opencode: the title is the command, the output the command's whole output.
    let bash_out = &seen[0]["output"];
    assert_eq!(bash_out["title"], "cat token.txt");
    assert_eq!(bash_out["output"], "TOKEN=sk-live-abc123\n");
    assert_eq!(bash_out["metadata"]["exit"], 0);
    assert_eq!(bash_out["metadata"]["truncated"], false);
    assert_eq!(bash_out["metadata"]["output"], "TOKEN=sk-live-abc123");
    // A plugin tool's metadata is an object too.
    assert_eq!(
        seen[1]["input"]["args"],
        json!({"text": "hi"}),
        "{:#}",
        seen[1]
    );
    assert_eq!(seen[1]["output"]["output"], "HI");
    assert_eq!(seen[1]["output"]["metadata"], json!({"truncated": false}));
    assert_eq!(seen[1]["metadataKeys"], json!(["truncated"]));
}

const PARAMS: &str = r#"import type { Plugin } from "@opencode-ai/plugin"
import { appendFileSync } from "node:fs"

export const Sampling: Plugin = async ({ directory }) => ({
  "chat.params": async (input, output) => {
    appendFileSync(`${directory}/params.jsonl`, JSON.stringify({ input, output: { ...output } }) + "\n")
    output.temperature = 0.42
    output.topP = 0.9
    output.options = { ...output.options, foo: 1, reasoningEffort: "low" }
    output.maxOutputTokens = Math.min(output.maxOutputTokens, 1234)
  },
})
"#;

#[test]
fn chat_params_gets_opencodes_input_and_its_sampling_and_options_reach_the_request() {
    let env = Env::new(vec![Reply::new().text("ok")]);
    env.write(".opencode/plugins/sampling.ts", PARAMS);
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "hello"]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let req = &env.requests()[0];
    // 0.42 as written (a float32 round trip would send 0.41999998688697815).
    assert_eq!(req["temperature"].as_f64(), Some(0.42));
    assert_eq!(req["top_p"].as_f64(), Some(0.9));
    assert_eq!(req["foo"], 1);
    assert_eq!(req["reasoning_effort"], "low");
    assert_eq!(req["max_tokens"], 1234);

    let seen = env.jsonl("params.jsonl");
    let session = env.last_session();
    let input = &seen[0]["input"];
    let keys: Vec<&str> = input
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["sessionID", "agent", "model", "provider", "message"]);
    assert_eq!(input["sessionID"], session);
    assert_eq!(input["agent"], "build");
    assert_eq!(input["model"]["id"], "test");
    assert_eq!(input["model"]["providerID"], "scripted");
    assert_eq!(input["model"]["limit"]["context"], 128000);
    assert_eq!(input["provider"]["id"], "scripted");
    assert_eq!(input["provider"]["models"]["test"]["id"], "test");
    let message = &input["message"];
    assert_eq!(message["role"], "user");
    assert_eq!(message["sessionID"], session);
    assert_eq!(message["agent"], "build");
    assert_eq!(
        message["model"],
        json!({"providerID": "scripted", "modelID": "test"})
    );
    assert!(message["id"].as_str().is_some_and(|id| !id.is_empty()));
    assert!(message["time"]["created"].as_i64().is_some_and(|t| t > 0));
    let output_keys: Vec<&str> = seen[0]["output"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        output_keys,
        ["temperature", "topP", "topK", "maxOutputTokens", "options"]
    );
    // A number to compute with: the model's reply limit when none is configured.
    assert!(
        seen[0]["output"]["maxOutputTokens"]
            .as_u64()
            .is_some_and(|m| m > 1234)
    );
}

const INPUT_PROBE: &str = r#"import type { Plugin } from "@opencode-ai/plugin"
import { writeFileSync } from "node:fs"

export const Probe: Plugin = async (input) => {
  const { project, directory, worktree, serverUrl, experimental_workspace, $ } = input
  const seen = {
    keys: Object.keys(input),
    project,
    projectKeys: Object.keys(project),
    directory,
    worktree,
    serverUrl: serverUrl instanceof URL ? serverUrl.href : null,
    register: typeof experimental_workspace.register,
    cwd: process.cwd(),
    pwd: (await $`pwd`.text()).trim(),
    status: (await $`git status --short`.text()).trim(),
  }
  writeFileSync(`${directory}/input.json`, JSON.stringify(seen))
  return {}
}
"#;

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
}

#[test]
fn a_plugin_gets_opencodes_plugin_input_and_its_shell_runs_in_the_workspace() {
    if Command::new("bun").arg("--version").output().is_err() {
        eprintln!("skipped: `$` is Bun's shell and bun is not on PATH");
        return;
    }
    let env = Env::new(vec![Reply::new().text("ok")]);
    let repo = env.repo();
    std::fs::remove_dir_all(repo.join(".git")).unwrap();
    git(&repo, &["init", "-q"]);
    env.write(".opencode/plugins/probe.ts", INPUT_PROBE);
    env.write("untracked.txt", "x");
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "init"]);
    git(
        &repo,
        &[
            "remote",
            "add",
            "origin",
            "git@github.com:Example/Widget.git",
        ],
    );
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "hello"]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let seen: Value = serde_json::from_str(&env.read("input.json")).unwrap();
    let repo = repo.canonicalize().unwrap();
    let repo = repo.to_string_lossy();
    assert_eq!(
        seen["keys"],
        json!([
            "client",
            "project",
            "worktree",
            "directory",
            "experimental_workspace",
            "serverUrl",
            "$"
        ])
    );
    assert_eq!(
        seen["projectKeys"],
        json!(["id", "worktree", "vcs", "sandboxes", "time"])
    );
    // opencode's id for a repository with an origin remote: sha1 of its host and path.
    let sha = Command::new("sh")
        .args([
            "-c",
            "printf %s 'git-remote:github.com/Example/Widget' | sha1sum",
        ])
        .output()
        .unwrap();
    let sha = text(&sha.stdout);
    let project = &seen["project"];
    assert_eq!(project["id"], sha.split_whitespace().next().unwrap());
    assert_eq!(project["vcs"], "git");
    assert_eq!(project["worktree"], *repo);
    assert_eq!(project["sandboxes"], json!([]));
    assert!(project["time"]["created"].as_u64().is_some());
    assert_eq!(seen["directory"], *repo);
    assert_eq!(seen["worktree"], *repo);
    assert_eq!(seen["serverUrl"], "http://localhost:4096/");
    assert_eq!(seen["register"], "function");
    assert_eq!(seen["cwd"], *repo);
    assert_eq!(seen["pwd"], *repo);
    assert!(
        seen["status"].as_str().unwrap().contains("untracked.txt"),
        "{seen:#}"
    );
}

const UNCALLED: &str = r#"import type { Plugin } from "@opencode-ai/plugin"

export const Mixed: Plugin = async () => ({
  "tool.execute.before": async () => {},
  "experimental.compaction.autocontinue": async () => {},
  auth: { provider: "example", methods: [] },
  provider: { id: "example", models: async () => ({}) },
})
"#;

#[test]
fn podcode_plugins_warns_about_each_hook_podcode_does_not_call() {
    let env = Env::new(vec![]);
    env.write(".opencode/plugins/mixed.ts", UNCALLED);
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["plugins"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    let lines: Vec<&str> = report.lines().map(str::trim).collect();
    assert!(
        lines.contains(&"hooks: tool.execute.before, auth"),
        "{report}"
    );
    for hook in ["experimental.compaction.autocontinue", "provider"] {
        let warning = format!(
            "warning: hook {hook} is not called by Podcode: what the plugin does there never happens"
        );
        assert!(lines.contains(&warning.as_str()), "{report}");
    }
    let out = env.run(&["plugins", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["files"][0]["uncalled_hooks"],
        json!(["experimental.compaction.autocontinue", "provider"])
    );
    assert!(
        !report.to_string().contains("hook auth is not called"),
        "{report}"
    );
}

const SIGN: &str = r#"import type { Plugin } from "@opencode-ai/plugin"
import { appendFileSync } from "node:fs"

export const Sign: Plugin = async ({ directory }) => ({
  "experimental.text.complete": async (input, output) => {
    appendFileSync(`${directory}/complete.jsonl`, JSON.stringify({ input, output: { ...output } }) + "\n")
    output.text = output.text.replace("internal-host-7", "[host]") + " -- signed"
  },
})
"#;

#[test]
fn text_complete_rewrites_each_finished_text_block_for_the_user_the_store_and_the_model() {
    let env = Env::new(vec![
        Reply::new()
            .text("Checking internal-host-7 first.")
            .tool_call(
                "c1",
                "bash",
                r#"{"command": "echo ok", "description": "Check"}"#,
            ),
        Reply::new().text("All good on internal-host-7."),
        Reply::new().text("Fine on internal-host-7."),
    ]);
    env.write(".opencode/plugins/sign.ts", SIGN);
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "check the host", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    // The user reads each block as the hook left it, once.
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "Checking [host] first. -- signed",
            "All good on [host]. -- signed"
        ],
        "{stdout}"
    );
    // The hook saw opencode's input and the whole block.
    let seen = env.jsonl("complete.jsonl");
    assert_eq!(seen.len(), 2, "{seen:#?}");
    let input = &seen[0]["input"];
    assert_eq!(input["sessionID"], json!(env.last_session()));
    assert!(input["messageID"].as_str().is_some_and(|m| !m.is_empty()));
    assert!(input["partID"].as_str().is_some_and(|p| !p.is_empty()));
    assert_eq!(seen[0]["output"]["text"], "Checking internal-host-7 first.");
    // The model's next request carries the rewritten text as its own earlier answer.
    let reqs = env.requests();
    let body = reqs[1].to_string();
    assert!(body.contains("Checking [host] first. -- signed"), "{body}");
    assert!(!body.contains("internal-host-7"), "{body}");
    // The stored session shows it too.
    let shown = env.run(&["sessions", "show", &env.last_session()]);
    let shown = text(&shown.stdout);
    assert!(shown.contains("All good on [host]. -- signed"), "{shown}");
    assert!(!shown.contains("internal-host-7"), "{shown}");
    // The JSON stream streams the model's text, then announces the rewrite.
    let json_run = env.run(&["run", "again", "--yes", "--format", "json"]);
    assert!(json_run.status.success(), "{}", text(&json_run.stderr));
    let events: Vec<Value> = text(&json_run.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "text_delta" || e["type"] == "text_replaced")
        .collect();
    let streamed: String = events
        .iter()
        .filter(|e| e["type"] == "text_delta")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert_eq!(streamed, "Fine on internal-host-7.");
    let last = events.last().unwrap();
    assert_eq!(
        (&last["type"], &last["text"]),
        (&json!("text_replaced"), &json!("Fine on [host]. -- signed"))
    );
}

const HEADERS: &str = r#"import type { Plugin } from "@opencode-ai/plugin"
import { appendFileSync } from "node:fs"

export const Headers: Plugin = async ({ directory }) => ({
  "chat.headers": async (input, output) => {
    appendFileSync(`${directory}/headers.jsonl`, JSON.stringify({ keys: Object.keys(input).sort(), output }) + "\n")
    output.headers["X-Session-Id"] = input.sessionID
    output.headers["x-trace"] = `${input.agent}/${input.model.id}`
  },
})
"#;

#[test]
fn chat_headers_sets_http_headers_of_each_model_request() {
    let env = Env::new(vec![Reply::new().text("Hi.")]);
    env.write(".opencode/plugins/headers.ts", HEADERS);
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "hello", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let seen = env.jsonl("headers.jsonl");
    assert_eq!(
        seen[0],
        json!({"keys": ["agent", "message", "model", "provider", "sessionID"], "output": {"headers": {}}})
    );
    let sent = env.server.recorded();
    let last = sent.last().unwrap();
    assert_eq!(last.headers.get("x-session-id"), Some(&env.last_session()));
    assert_eq!(
        last.headers.get("x-trace").map(String::as_str),
        Some("build/test")
    );
}

const DEFINITION: &str = r#"import type { Plugin } from "@opencode-ai/plugin"
import { appendFileSync } from "node:fs"

export const Define: Plugin = async ({ directory }) => ({
  "tool.definition": async (input, output) => {
    appendFileSync(`${directory}/definitions.jsonl`, JSON.stringify(input) + "\n")
    if (input.toolID !== "bash") return
    output.description = output.description + " Never print secrets."
    output.parameters = { ...output.parameters, description: "bash, as the team wants it" }
  },
})
"#;

#[test]
fn tool_definition_rewrites_what_the_model_reads_about_a_tool_once_per_tool() {
    let env = Env::new(vec![
        bash_call("c1", "echo hi", "Say hi"),
        Reply::new().text("Done."),
    ]);
    env.write(".opencode/plugins/define.ts", DEFINITION);
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "say hi", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reqs = env.requests();
    assert_eq!(reqs.len(), 2);
    for req in &reqs {
        let bash = req["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == "bash")
            .unwrap();
        let description = bash["function"]["description"].as_str().unwrap();
        assert!(
            description.ends_with(" Never print secrets."),
            "{description}"
        );
        assert_eq!(
            bash["function"]["parameters"]["description"],
            "bash, as the team wants it"
        );
    }
    // Asked once per tool, not per request; other tools keep their definitions.
    let asked = env.jsonl("definitions.jsonl");
    let bash_asks = asked.iter().filter(|a| a["toolID"] == "bash").count();
    assert_eq!(bash_asks, 1, "{asked:?}");
    assert!(asked.iter().any(|a| a["toolID"] == "read"), "{asked:?}");
    // The call still ran under bash's own schema.
    assert_eq!(tool_messages(&reqs[1])[0].1, "hi\n");
}
