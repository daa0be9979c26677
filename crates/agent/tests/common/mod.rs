//! Shared setup for the loop tests: a scripted model server over real HTTP, a real store in
//! a temp dir, a real tool runtime (test tools or the built-ins), and a scripted user.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use podcode_agent::{Agent, AgentOptions, AgentProfile};
use podcode_protocol::{PermissionReply, PermissionRule};
use podcode_providers::testing::{Reply, ScriptedModel};
use podcode_providers::{
    AnthropicClient, Endpoint, Message, ModelClient, ModelRef, OpenAiClient, Part, Role,
};
use podcode_store::Store;
use podcode_tools::testing::{Harness, ScriptedUser, Setup, harness};
use podcode_tools::{SourceKind, Tool, ToolOrigin, ToolRegistry, ToolRuntime};
use serde_json::Value;

pub struct World {
    pub dir: tempfile::TempDir,
    pub work: PathBuf,
    pub store: Arc<Store>,
    pub runtime: Arc<ToolRuntime>,
    pub user: Arc<ScriptedUser>,
    pub session: String,
    pub server: ScriptedModel,
    pub model: Arc<dyn ModelClient>,
}

#[derive(Default)]
pub struct Opts {
    pub tools: Vec<Arc<dyn Tool>>,
    pub builtins: bool,
    pub rules: Vec<PermissionRule>,
    pub replies: Vec<PermissionReply>,
    pub anthropic: bool,
}

pub fn world(script: Vec<Reply>, opts: Opts) -> World {
    world_on(ScriptedModel::start_blocking(script), opts)
}

/// A world whose model server is already started (e.g. `ScriptedModel::responding`).
pub fn world_on(server: ScriptedModel, opts: Opts) -> World {
    let mut registry = ToolRegistry::new();
    if opts.builtins {
        podcode_builtins::register_all(&mut registry);
    }
    registry.merge(ToolOrigin::new(SourceKind::Test, "test"), opts.tools);
    let mut rules = if opts.builtins {
        podcode_builtins::default_rules()
    } else {
        vec![]
    };
    rules.extend(opts.rules);
    let Harness {
        dir,
        workspace,
        store,
        runtime,
        user,
        session,
    } = harness(
        registry,
        Setup {
            rules,
            replies: opts.replies,
            ..Default::default()
        },
    );
    let endpoint = Endpoint::new(server.base_url()).with_key("test-key", None);
    let model: Arc<dyn ModelClient> = if opts.anthropic {
        let r = ModelRef::parse("anthropic/claude-test").unwrap();
        Arc::new(AnthropicClient::new(r, endpoint).unwrap())
    } else {
        let r = ModelRef::parse("scripted/test").unwrap();
        Arc::new(OpenAiClient::new(r, endpoint).unwrap())
    };
    World {
        dir,
        work: workspace,
        store,
        runtime: Arc::new(runtime),
        user,
        session,
        server,
        model,
    }
}

impl World {
    pub fn agent(&self, profile: AgentProfile, tweak: impl FnOnce(&mut AgentOptions)) -> Agent {
        let mut opts = AgentOptions::new(self.work.clone(), self.work.clone());
        opts.stream_retry_delay = std::time::Duration::ZERO;
        opts.config_dir = Some(self.dir.path().join("config"));
        tweak(&mut opts);
        Agent::new(
            self.runtime.clone(),
            self.model.clone(),
            self.store.clone(),
            profile,
            opts,
        )
    }

    pub fn requests(&self) -> Vec<Value> {
        self.server.requests()
    }
}

/// Every tool call is answered in the very next message, every result answers a call, and
/// roles alternate: the shape both providers require.
pub fn assert_valid(history: &[Message]) {
    for pair in history.windows(2) {
        assert_ne!(
            pair[0].role, pair[1].role,
            "roles must alternate: {history:#?}"
        );
    }
    for (i, m) in history.iter().enumerate() {
        let calls: Vec<&str> = m
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolCall { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .collect();
        if m.role == Role::Assistant && !calls.is_empty() {
            let next = history
                .get(i + 1)
                .expect("tool calls need a following message");
            let results: Vec<&str> = next
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::ToolResult { call_id, .. } => Some(call_id.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(results, calls, "results in call order: {history:#?}");
        }
        if m.role == Role::User && i > 0 {
            let prev = &history[i - 1];
            for p in &m.parts {
                if let Part::ToolResult { call_id, .. } = p {
                    assert!(
                        prev.parts
                            .iter()
                            .any(|q| matches!(q, Part::ToolCall { id, .. } if id == call_id)),
                        "result {call_id} answers no call"
                    );
                }
            }
        }
    }
}

/// The OpenAI-protocol request's messages, checked the same way on the wire.
pub fn assert_valid_openai_request(body: &Value) {
    let msgs = body["messages"].as_array().expect("messages");
    let mut open: Vec<String> = Vec::new();
    for m in msgs {
        match m["role"].as_str() {
            Some("tool") => {
                let id = m["tool_call_id"].as_str().unwrap().to_string();
                assert_eq!(
                    open.first(),
                    Some(&id),
                    "tool result out of order: {body:#}"
                );
                open.remove(0);
            }
            Some(_) => {
                assert!(open.is_empty(), "calls without results {open:?}: {body:#}");
                if let Some(calls) = m["tool_calls"].as_array() {
                    open = calls
                        .iter()
                        .map(|c| c["id"].as_str().unwrap().to_string())
                        .collect();
                }
            }
            None => panic!("message without a role"),
        }
    }
    assert!(open.is_empty(), "calls without results {open:?}");
}

/// The `tool` messages of an OpenAI request, in order: (tool_call_id, content).
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
