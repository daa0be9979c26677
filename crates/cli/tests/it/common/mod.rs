//! Shared by the `podcode run` test files: a repository whose project config picks the
//! model `scripted/test`, which the user's config points at a fresh scripted model server
//! (real HTTP + SSE on 127.0.0.1; a project may not redirect a provider until trusted), with
//! its own HOME, config and data folders, and helpers to read what the model was sent.
#![allow(dead_code)]

pub mod pty;
pub mod web;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use podcode_providers::testing::{Reply, ScriptedModel};
use serde_json::Value;

pub struct Env {
    pub root: tempfile::TempDir,
    pub server: ScriptedModel,
}

impl Env {
    /// A repository whose project config picks `scripted/test`; the user's config points it
    /// at a fresh scripted server.
    pub fn new(script: Vec<Reply>) -> Self {
        Self::with_server(ScriptedModel::start_blocking(script))
    }
    /// [`Env::new`] with a server made by the caller (one that computes its replies).
    pub fn with_server(server: ScriptedModel) -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("repo/.git")).unwrap();
        let env = Self { root, server };
        env.write(".podcode/config.toml", "model = \"scripted/test\"\n");
        env.write_global(&format!(
            "[provider.scripted]\nbase_url = \"{}\"\n[provider.scripted.models.\"test\"]\ncontext = 128000\n",
            env.server.base_url()
        ));
        env
    }
    /// Replaces the user's (global) config file.
    pub fn write_global(&self, text: &str) {
        let p = self.root.path().join("config/config.toml");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    pub fn repo(&self) -> PathBuf {
        self.root.path().join("repo")
    }
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_podcode"));
        c.args(args)
            .current_dir(self.repo())
            .env("HOME", self.root.path().join("home"))
            .env("PODCODE_CONFIG_DIR", self.root.path().join("config"))
            .env("PODCODE_DATA_DIR", self.root.path().join("data"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .stdin(Stdio::null());
        c
    }
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.repo().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.repo().join(rel)).unwrap()
    }
    /// The JSON lines a plugin appended to `rel` in the workspace.
    pub fn jsonl(&self, rel: &str) -> Vec<Value> {
        self.read(rel)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
    pub fn requests(&self) -> Vec<Value> {
        self.server.requests()
    }
    /// Runs `git ARGS` in the repository (with an author, so commits work anywhere).
    pub fn git(&self, args: &[&str]) {
        let out = Command::new("git")
            .args(args)
            .current_dir(self.repo())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    }
    /// Makes the repository a real git repository (it starts with an empty `.git/`).
    pub fn git_init(&self) {
        std::fs::remove_dir_all(self.repo().join(".git")).unwrap();
        self.git(&["init", "-q"]);
    }
    /// The id of the newest session (`podcode sessions --json`).
    pub fn last_session(&self) -> String {
        let out = self.run(&["sessions", "--json"]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v[0]["id"].as_str().unwrap().to_string()
    }
}

// Not every test file reads requests.
#[allow(unused_imports)]
pub use podcode_providers::testing::user_texts;

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A multi-line tool result as `podcode run` prints it under the call: each line indented
/// two spaces, blank lines left blank.
pub fn as_printed(result: &str) -> String {
    result
        .lines()
        .map(|l| {
            if l.is_empty() {
                "\n".to_string()
            } else {
                format!("  {l}\n")
            }
        })
        .collect()
}

/// The `tool` messages of an OpenAI-protocol request, in order: (tool_call_id, content).
pub fn tool_messages(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            let content = match &m["content"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (m["tool_call_id"].as_str().unwrap().to_string(), content)
        })
        .collect()
}

/// Every assistant tool call is answered by `tool` messages right after it, in order.
pub fn assert_every_call_answered(body: &Value) {
    let mut open: Vec<String> = Vec::new();
    for m in body["messages"].as_array().unwrap() {
        if m["role"] == "tool" {
            let id = m["tool_call_id"].as_str().unwrap().to_string();
            assert_eq!(open.first(), Some(&id), "{body:#}");
            open.remove(0);
        } else {
            assert!(open.is_empty(), "calls without results {open:?}: {body:#}");
            if let Some(calls) = m["tool_calls"].as_array() {
                open = calls
                    .iter()
                    .map(|c| c["id"].as_str().unwrap().to_string())
                    .collect();
            }
        }
    }
    assert!(open.is_empty(), "calls without results {open:?}");
}

/// A model script that installs an executable `hello` tool into the user's tool folder with
/// `bash` mid-session, calls it, and answers "It said hello."; `hello.sh` is written too.
pub fn hello_tool_script(env: &Env) -> Vec<Reply> {
    env.write(
        "hello.sh",
        "#!/bin/sh\nif [ \"$1\" = describe ]; then\n  echo '{\"description\": \"Says hello.\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}'\nelse\n  echo hello from disk\nfi\n",
    );
    let tools = std::path::Path::new("..").join("config/tools");
    let install = format!(
        "mkdir -p {dir} && cp hello.sh {dir}/hello && chmod +x {dir}/hello",
        dir = tools.display()
    );
    vec![
        bash_call("c1", &install, "Install a tool"),
        Reply::new().tool_call("c2", "hello", "{}"),
        Reply::new().text("It said hello."),
    ]
}

/// The model asks for `bash` with `command`.
pub fn bash_call(id: &str, command: &str, description: &str) -> Reply {
    Reply::new().tool_call(
        id,
        "bash",
        serde_json::json!({"command": command, "description": description}).to_string(),
    )
}

/// The model asks `write` to put `content` in `file`.
pub fn write_call(id: &str, file: &std::path::Path, content: &str) -> Reply {
    Reply::new().tool_call(
        id,
        "write",
        serde_json::json!({"filePath": file, "content": content}).to_string(),
    )
}
