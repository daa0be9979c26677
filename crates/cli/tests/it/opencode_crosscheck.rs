//! opencode itself against Podcode on the same project: both run one prompt against the
//! scripted model (real HTTP + SSE), and the tools each sends for the project's opencode tool
//! file — names, descriptions and JSON Schemas — must be byte for byte the same (and the
//! `todowrite` and `skill` built-ins' schemas, for a repository with a `.claude/skills/`
//! skill); and a plugin
//! recording what its hooks see observes the same PluginInput, `chat.params` and
//! `tool.execute.after` shapes under both, and changes their requests the same way; its
//! `event` hook sees the same event types in the same order, with the same property keys,
//! for a turn with an edit; and an `auth` plugin's loader and `fetch` sign the model
//! requests of both the same way. opencode
//! (`opencode-ai`, with the `@opencode-ai/plugin` it installs into a config dir) comes from
//! `crates/cli/tests/opencode-crosscheck/` (`npm install --no-save` there; `.ci/run` does it). Nothing needs
//! the network: the plugin package is copied into the project's `.opencode/node_modules` as
//! opencode would have installed it, and every registry lookup points at a closed port.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Env;
use podcode_providers::testing::Reply;
use serde_json::Value;

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../plugins/tests/fixtures/opencode-projects/crosscheck"
);
const OPENCODE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/opencode-crosscheck");

/// The opencode binary the cross-check runs (a test prerequisite, never a reason to skip).
fn opencode_bin() -> PathBuf {
    let opencode = PathBuf::from(OPENCODE_DIR).join("node_modules/.bin/opencode");
    assert!(
        opencode.is_file(),
        "opencode is not installed for this test: run `npm install --no-save` in {OPENCODE_DIR} (.ci/run does)"
    );
    opencode
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_dir(&src, &dst);
        } else if src.is_file() {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// `name → (description, parameters as sent)` for every tool of the request that offered
/// tools, keeping the tools whose name starts with `prefix`.
fn sent_tools(requests: &[Value], prefix: &str) -> BTreeMap<String, (String, String)> {
    let body = requests
        .iter()
        .find(|r| r["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .unwrap_or_else(|| panic!("no request offered tools: {requests:#?}"));
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["function"])
        .filter(|f| f["name"].as_str().unwrap().starts_with(prefix))
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_string(),
                (
                    f["description"].as_str().unwrap_or_default().to_string(),
                    serde_json::to_string(&f["parameters"]).unwrap(),
                ),
            )
        })
        .collect()
}

fn dead_registry() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}/")
}

/// Runs `cmd`, killing it after `limit`; returns its stderr.
fn run_with_limit(mut cmd: Command, limit: Duration) -> String {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn opencode_and_podcode_send_the_same_tools_for_an_opencode_tool_file() {
    let opencode = opencode_bin();
    let replies = (0..6).map(|_| Reply::new().text("ok")).collect();
    let env = Env::new(replies);
    copy_dir(Path::new(CORPUS), &env.repo());
    // A real repository: opencode reads a project's opencode.json only inside one.
    env.git_init();
    env.write(
        ".claude/skills/git-release/SKILL.md",
        "---\nname: git-release\ndescription: Create consistent releases\n---\nSteps.\n",
    );

    // Podcode first (opencode adds files to `.opencode/` as it starts).
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "hello"]);
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let podcode = sent_tools(&env.requests(), "shapes_");
    let podcode_todo = sent_tools(&env.requests(), "todowrite");
    let podcode_skill = sent_tools(&env.requests(), "skill");
    let before = env.requests().len();

    // opencode, pointed at the same scripted model, with its own home folders.
    let stderr = run_opencode(&env, &opencode, "hello", None);
    let requests = env.requests();
    let opencode_tools = sent_tools(&requests[before..], "shapes_");
    // The todo list's tool takes the same arguments (its description is Podcode's own).
    let opencode_todo = sent_tools(&requests[before..], "todowrite");
    assert_eq!(
        podcode_todo["todowrite"].1, opencode_todo["todowrite"].1,
        "todowrite: JSON Schema bytes"
    );
    // So does the skill tool (its description, listing the skills, is Podcode's own).
    let opencode_skill = sent_tools(&requests[before..], "skill");
    assert_eq!(
        podcode_skill.get("skill").map(|t| &t.1),
        opencode_skill.get("skill").map(|t| &t.1),
        "skill: JSON Schema bytes"
    );
    assert!(
        podcode_skill["skill"]
            .0
            .contains("- git-release: Create consistent releases")
    );
    assert!(
        !opencode_tools.is_empty(),
        "opencode sent no shapes_ tools; its stderr: {stderr}"
    );

    assert_eq!(
        podcode.keys().collect::<Vec<_>>(),
        opencode_tools.keys().collect::<Vec<_>>()
    );
    for (name, (description, schema)) in &opencode_tools {
        let (ours, our_schema) = &podcode[name];
        assert_eq!(ours, description, "{name}: description");
        assert_eq!(our_schema, schema, "{name}: JSON Schema bytes");
    }
}

/// A plugin written as real ones are that records, per runner, the shapes its hooks see:
/// the PluginInput, `chat.params` (input and output; it sets the sampling and provider
/// options) and `tool.execute.after` for a bash call, whose secret it masks.
const PROBE: &str = r#"import type { Plugin } from "@opencode-ai/plugin"
import { appendFileSync } from "node:fs"

export const Probe: Plugin = async (input) => {
  const out = `${input.directory}/probe-${process.env.PROBE_RUNNER}.jsonl`
  const rec = (k: string, v: unknown) => appendFileSync(out, JSON.stringify({ k, v }) + "\n")
  const keys = (o: any) => Object.keys(o ?? {})
  rec("input", keys(input))
  rec("project", keys(input.project))
  rec("vcs", input.project.vcs)
  rec("serverUrl", input.serverUrl instanceof URL ? input.serverUrl.href : typeof input.serverUrl)
  rec("cwd", process.cwd() === input.directory)
  rec("pwd", (await input.$`pwd`.text()).trim() === input.directory)
  let params = false
  const events = `${input.directory}/events-${process.env.PROBE_RUNNER}.jsonl`
  return {
    event: async ({ event }: any) => {
      const p = event.properties ?? {}
      const extra: any = {}
      if (event.type === "message.part.updated") extra.part = p.part?.type + (p.part?.state?.status ? ":" + p.part.state.status : "")
      if (event.type === "message.updated") extra.role = p.info?.role
      if (event.type === "session.status") extra.status = p.status?.type
      if (event.type === "session.diff") extra.diff = (p.diff ?? []).map((d: any) => `${d.file} ${d.status} +${d.additions} -${d.deletions}`)
      appendFileSync(events, JSON.stringify({ type: event.type, keys: Object.keys(p).sort(), ...extra }) + "\n")
    },
    "chat.params": async (i: any, o: any) => {
      if (i.agent !== "build") return
      o.temperature = 0.42
      o.topP = 0.9
      o.options = { ...o.options, foo: 1, reasoningEffort: "low" }
      if (params) return
      params = true
      rec("params.input", keys(i))
      rec("params.model", keys(i.model).sort())
      rec("params.provider", keys(i.provider).sort())
      rec("params.message", keys(i.message).sort())
      rec("params.output", keys(o))
    },
    "tool.execute.after": async (i: any, o: any) => {
      rec("after.input", keys(i))
      rec("after.command", i.args.command)
      rec("after.output", keys(o).filter((k) => o[k] !== undefined))
      rec("after.title", o.title)
      rec("after.text", o.output)
      rec("after.metadata", keys(o.metadata))
      o.output = o.output.replace(/sk-live-[a-z0-9]+/g, "[REDACTED]")
    },
  }
}
"#;

/// What one runner's probe recorded: the first value of each key.
fn probe_records(repo: &Path, runner: &str) -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(repo.join(format!("probe-{runner}.jsonl")))
        .unwrap_or_else(|e| panic!("{runner} recorded nothing: {e}"));
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        out.entry(v["k"].as_str().unwrap().to_string())
            .or_insert(v["v"].clone());
    }
    out
}

/// The bash result each runner sent back to the model.
fn bash_result(requests: &[Value]) -> Option<String> {
    requests.iter().find_map(|r| {
        r["messages"].as_array()?.iter().find_map(|m| {
            (m["role"] == "tool").then(|| m["content"].as_str().unwrap_or_default().to_string())
        })
    })
}

/// The sampling and provider options of the first request that offered tools.
fn sampling(requests: &[Value]) -> Value {
    let body = requests
        .iter()
        .find(|r| r["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .cloned()
        .unwrap_or_default();
    serde_json::json!([
        body["temperature"],
        body["top_p"],
        body["foo"],
        body["reasoning_effort"]
    ])
}

/// Runs `opencode run PROMPT` in `env`'s repository against the same scripted model, with
/// its own home folders, the plugin package installed as opencode would have, and
/// `permission` (if any) allowed; returns its stderr.
fn run_opencode(env: &Env, opencode: &Path, prompt: &str, permission: Option<&str>) -> String {
    let home = env.root.path().join("oc-home");
    let modules = env.repo().join(".opencode/node_modules");
    for entry in std::fs::read_dir(PathBuf::from(OPENCODE_DIR).join("node_modules"))
        .unwrap()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("opencode") && !name.starts_with('.') {
            copy_dir(&entry.path(), &modules.join(&name));
        }
    }
    std::fs::write(
        env.repo().join("opencode.json"),
        serde_json::json!({
            "$schema": "https://opencode.ai/config.json",
            "provider": {"scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": {"baseURL": env.server.base_url(), "apiKey": "test"},
                "models": {"test": {"name": "test"}}
            }},
            "model": "scripted/test",
            "permission": permission.map_or_else(|| serde_json::json!({}), |p| serde_json::json!({p: "allow"})),
        })
        .to_string(),
    )
    .unwrap();
    let mut cmd = Command::new(opencode);
    cmd.args(["run", prompt])
        .current_dir(env.repo())
        // opencode takes its working directory from PWD when it is set.
        .env("PWD", env.repo())
        .env("PROBE_RUNNER", "opencode")
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("npm_config_registry", dead_registry())
        .env("npm_config_fetch_retries", "0")
        .env_remove("OPENCODE_CONFIG")
        .env_remove("OPENCODE_CONFIG_DIR");
    run_with_limit(cmd, Duration::from_secs(180))
}

#[test]
fn opencode_and_podcode_plugins_see_the_same_input_chat_params_and_tool_execute_after() {
    let opencode = opencode_bin();
    // A title request (no tools) gets a title; a request without a tool result asks for
    // bash; the one after it gets the answer.
    let model = podcode_providers::testing::ScriptedModel::responding(
        vec![],
        std::sync::Arc::new(|body: &Value| {
            let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
            let answered = body["messages"]
                .as_array()
                .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
            match (has_tools, answered) {
                (false, _) => Reply::new().text("Title"),
                (true, false) => Reply::new().tool_call(
                    "call_1",
                    "bash",
                    r#"{"command": "cat token.txt", "description": "Print the token"}"#,
                ),
                (true, true) => Reply::new().text("done"),
            }
        }),
    );
    let env = Env::with_server(model);
    env.git_init();
    env.write(".opencode/plugins/probe.ts", PROBE);
    env.write("token.txt", "TOKEN=sk-live-abc123\n");

    assert!(env.run(&["trust"]).status.success());
    let out = env
        .cmd(&["run", "print the token", "--yes"])
        .env("PROBE_RUNNER", "podcode")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let podcode_sent = bash_result(&env.requests());
    let podcode_params = sampling(&env.requests());
    let before = env.requests().len();

    let stderr = run_opencode(&env, &opencode, "print the token", Some("bash"));
    let opencode_sent = bash_result(&env.requests()[before..]);
    let opencode_params = sampling(&env.requests()[before..]);

    let ours = probe_records(&env.repo(), "podcode");
    let theirs = probe_records(&env.repo(), "opencode");
    assert!(
        theirs.contains_key("after.text"),
        "opencode ran no bash call: {theirs:#?}\n{stderr}"
    );
    for runner in ["podcode", "opencode"] {
        eprintln!("== {runner}");
        eprintln!(
            "{}",
            std::fs::read_to_string(env.repo().join(format!("events-{runner}.jsonl")))
                .unwrap_or_default()
        );
    }
    // The same keys and values…
    for key in [
        "input",
        "project",
        "vcs",
        "serverUrl",
        "cwd",
        "pwd",
        "params.input",
        "params.model",
        "params.provider",
        "params.message",
        "params.output",
        "after.input",
        "after.command",
        "after.output",
        "after.title",
        "after.text",
    ] {
        assert_eq!(ours.get(key), theirs.get(key), "{key}");
    }
    // …bash's metadata has at least opencode's keys…
    let ours_meta = ours["after.metadata"].as_array().unwrap();
    for key in theirs["after.metadata"].as_array().unwrap() {
        assert!(
            ours_meta.contains(key),
            "metadata lacks {key}: {ours_meta:?}"
        );
    }
    // …both requests carry what chat.params set, 0.42 as written…
    assert_eq!(
        podcode_params,
        serde_json::json!([0.42, 0.9, 1, "low"]),
        "temperature, top_p, foo, reasoning_effort"
    );
    assert_eq!(opencode_params, podcode_params);
    // …and the redaction is what both models read.
    assert_eq!(podcode_sent.as_deref(), Some("TOKEN=[REDACTED]\n"));
    assert_eq!(opencode_sent, podcode_sent);
}

/// Event types opencode sends for its own bookkeeping, with no counterpart a plugin could
/// miss in Podcode (plugin registry, model catalogue, integrations).
const OPENCODE_ONLY: &[&str] = &[
    "plugin.added",
    "catalog.updated",
    "reference.updated",
    "integration.updated",
];
/// Event types opencode sends that Podcode does not send yet.
const NOT_SENT_YET: &[&str] = &[];

/// One runner's events as `type` or `type part-kind[:status]`, the bookkeeping left out;
/// `message.updated`, `session.updated` and `session.status` are kept out of the order
/// (opencode repeats them as records change) and only checked to be sent, with their keys, and
/// so is `session.diff` (opencode computes it in the background after a step: the last one
/// may come after `session.idle` or, in a one-shot run, never);
/// repeats in a row count once. Also each type's property keys.
fn event_outline(repo: &Path, runner: &str) -> (Vec<String>, BTreeMap<String, Value>) {
    let text = std::fs::read_to_string(repo.join(format!("events-{runner}.jsonl")))
        .unwrap_or_else(|e| panic!("{runner} delivered no event: {e}"));
    let mut outline: Vec<String> = Vec::new();
    let mut keys = BTreeMap::new();
    for line in text.lines() {
        let e: Value = serde_json::from_str(line).unwrap();
        let kind = e["type"].as_str().unwrap().to_string();
        assert!(
            !NOT_SENT_YET.contains(&kind.as_str()) || runner == "opencode",
            "{kind} is sent now: move it out of NOT_SENT_YET"
        );
        if OPENCODE_ONLY.contains(&kind.as_str()) || NOT_SENT_YET.contains(&kind.as_str()) {
            continue;
        }
        keys.entry(kind.clone()).or_insert(e["keys"].clone());
        let entry = match (kind.as_str(), e["part"].as_str()) {
            ("message.updated" | "session.updated" | "session.status" | "session.diff", _) => {
                continue;
            }
            // opencode's snapshot patches: Podcode journals changes instead.
            (_, Some("patch")) => continue,
            (_, Some(part)) => format!("{kind} {part}"),
            _ => kind,
        };
        if outline.last() != Some(&entry) {
            outline.push(entry);
        }
    }
    (outline, keys)
}

#[test]
fn opencode_and_podcode_plugins_see_the_same_events_for_a_turn_with_an_edit() {
    let opencode = opencode_bin();
    let env_holder: std::sync::Arc<std::sync::OnceLock<PathBuf>> = Default::default();
    let target = env_holder.clone();
    let model = podcode_providers::testing::ScriptedModel::responding(
        vec![],
        std::sync::Arc::new(move |body: &Value| {
            let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
            let answered = body["messages"]
                .as_array()
                .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
            let file = target.get().cloned().unwrap_or_default();
            let args = serde_json::json!({"filePath": file, "content": "hello\n"}).to_string();
            match (has_tools, answered) {
                (false, _) => Reply::new().text("Title"),
                (true, false) => Reply::new().tool_call("call_1", "write", &args),
                (true, true) => Reply::new().text("Wrote it."),
            }
        }),
    );
    let env = Env::with_server(model);
    let _ = env_holder.set(env.repo().join("notes.txt"));
    env.git_init();
    env.write(".opencode/plugins/probe.ts", PROBE);

    assert!(env.run(&["trust"]).status.success());
    let out = env
        .cmd(&["run", "write the notes", "--yes"])
        .env("PROBE_RUNNER", "podcode")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    assert_eq!(env.read("notes.txt"), "hello\n");
    std::fs::remove_file(env.repo().join("notes.txt")).unwrap();
    let stderr = run_opencode(&env, &opencode, "write the notes", Some("edit"));
    assert_eq!(
        env.read("notes.txt"),
        "hello\n",
        "opencode wrote nothing: {stderr}"
    );

    let (ours, our_keys) = event_outline(&env.repo(), "podcode");
    let (theirs, their_keys) = event_outline(&env.repo(), "opencode");
    assert_eq!(ours, theirs, "event outline (podcode left, opencode right)");
    assert_eq!(ours[0], "session.created");
    for (kind, keys) in &their_keys {
        assert_eq!(our_keys.get(kind), Some(keys), "{kind}: property keys");
    }
    // `session.diff` where opencode sends it: before the first step starts and after each
    // step. opencode 1.18.33's lists are empty (its summary fills the message instead);
    // Podcode's name the turn's files from the journal.
    let diffs: Vec<String> = std::fs::read_to_string(env.repo().join("events-podcode.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|e| match (e["type"].as_str(), e["part"].as_str()) {
            (Some("session.diff"), _) => Some(format!("diff {}", e["diff"])),
            (_, Some(p @ ("step-start" | "step-finish"))) => Some(p.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(
        diffs,
        [
            "diff []",
            "step-start",
            "step-finish",
            r#"diff ["notes.txt added +1 -0"]"#,
            "step-start",
            "step-finish",
            r#"diff ["notes.txt added +1 -0"]"#,
        ]
    );
}

/// `auth` hook: with the same OAuth credentials stored (opencode's `auth.json`, Podcode's),
/// the same plugin's loader gets the same arguments under both, every model request goes
/// through its `fetch` (the server sees its refreshed bearer token and header), and the token
/// it saves with `client.auth.set` is what each stores afterwards.
#[test]
fn opencode_and_podcode_send_model_requests_through_an_auth_plugins_fetch() {
    let opencode = opencode_bin();
    let model = podcode_providers::testing::ScriptedModel::responding(
        vec![],
        std::sync::Arc::new(|_: &Value| Reply::new().text("Signed answer.")),
    );
    let env = Env::with_server(model);
    env.git_init();
    env.write(
        ".opencode/plugins/scripted-auth.ts",
        crate::run_plugin_auth::SIGNER,
    );
    let tokens = serde_json::json!({"scripted": {"type": "oauth", "refresh": "refresh-1", "access": "access-1", "expires": 0}});
    let stores = [
        env.root.path().join("data/auth.json"),
        env.root
            .path()
            .join("oc-home/.local/share/opencode/auth.json"),
    ];
    for store in &stores {
        std::fs::create_dir_all(store.parent().unwrap()).unwrap();
        std::fs::write(store, tokens.to_string()).unwrap();
    }

    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "hello"]);
    assert!(out.status.success(), "{}", common::text(&out.stderr));
    let ours = env.server.recorded();
    let stderr = run_opencode(&env, &opencode, "hello", None);
    let theirs = env.server.recorded()[ours.len()..].to_vec();
    assert!(!theirs.is_empty(), "opencode sent no request: {stderr}");

    for (runner, sent) in [("podcode", &ours), ("opencode", &theirs)] {
        for request in sent {
            let signed = (
                request.headers.get("authorization").map(String::as_str),
                request.headers.get("x-signed-by").map(String::as_str),
            );
            assert_eq!(
                signed,
                (Some("Bearer access-2"), Some("scripted-auth")),
                "{runner}: {stderr}"
            );
        }
    }
    let loader = env.jsonl("loader.jsonl");
    assert_eq!(loader.len(), 2, "{loader:?}\n{stderr}");
    assert_eq!(loader[0], loader[1], "loader arguments (podcode, opencode)");
    for store in &stores {
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(store).unwrap()).unwrap();
        assert_eq!(
            saved["scripted"]["access"],
            "access-2",
            "{}",
            store.display()
        );
    }
}
