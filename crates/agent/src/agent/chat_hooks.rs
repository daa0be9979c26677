//! The conversation hooks plugins see around model requests, in opencode's shapes:
//! `chat.message` (may rewrite the user's text) and `chat.params` (may change the sampling
//! of the next request). `chat.params` gets opencode's input — `sessionID`, `agent`,
//! `model` (opencode's `Model`: id, providerID, api, capabilities, cost, limit, …),
//! `provider` (`{id, name, source, env, options, models}`, options never carrying keys) and
//! `message` (the turn's user message: `{id, sessionID, role, time, agent, model}`) — and
//! its output `{temperature, topP, topK, maxOutputTokens, options}`, all of which go into
//! the request (`ChatParams`). `chat.headers` gets the same input and output `{headers}`:
//! the HTTP headers it sets go with the request. `tool.definition` (input `{toolID}`, output
//! `{description, parameters}`) may rewrite what the model reads about each tool; it is asked
//! once per tool set, not per request.

use std::collections::HashMap;

use podcode_providers::{ModelInfo, ToolList};
use serde_json::{Map, Value, json};

use super::Agent;

/// By tool id: its own description and parameters, and what `tool.definition` made of them.
pub(crate) type Definitions = HashMap<String, ((String, Value), (String, Value))>;

/// What `chat.params` left for the next request.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct ChatParams {
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub top_k: Option<u64>,
    pub max_tokens: Option<u32>,
    pub options: Map<String, Value>,
}

/// The text parts of a hook's `{parts}` output, joined; `before` when it left none.
fn parts_text(out: &Value, before: &str) -> String {
    let texts: Vec<&str> = out["parts"]
        .as_array()
        .map(|parts| parts.iter().filter_map(|p| p["text"].as_str()).collect())
        .unwrap_or_default();
    if texts.is_empty() {
        before.to_string()
    } else {
        texts.join("\n")
    }
}

impl Agent {
    /// The input every conversation hook shares.
    fn hook_input(&self, session_id: &str) -> Value {
        let model = self.model.model();
        json!({
            "sessionID": session_id,
            "agent": self.profile.name,
            "model": {"providerID": model.provider, "modelID": model.model},
        })
    }

    /// The `chat.message` hook may rewrite the user's text (its text parts, joined).
    pub(super) async fn chat_message_hook(&self, session_id: &str, text: &str) -> String {
        let output =
            json!({"message": {"role": "user"}, "parts": [{"type": "text", "text": text}]});
        let out = self
            .runtime
            .chat_hook("chat.message", self.hook_input(session_id), output)
            .await;
        parts_text(&out, text)
    }

    /// The `command.execute.before` hook (opencode's input `{command, sessionID,
    /// arguments}`, output `{parts}` holding the filled-in prompt as a text part) may rewrite
    /// a custom command's prompt before it is sent; its text parts, joined, are the prompt.
    pub(super) async fn command_hook(
        &self,
        session_id: &str,
        command: &str,
        arguments: &str,
        text: &str,
    ) -> String {
        if !self.runtime.has_chat_hook("command.execute.before") {
            return text.to_string();
        }
        let input = json!({"command": command, "sessionID": session_id, "arguments": arguments});
        let output = json!({"parts": [{"type": "text", "text": text}]});
        let out = self
            .runtime
            .chat_hook("command.execute.before", input, output)
            .await;
        parts_text(&out, text)
    }

    /// The `chat.params` hook may set the sampling, the reply limit and provider options
    /// of the next request; what it leaves unset keeps the configured value.
    pub(super) async fn chat_params_hook(&self, session_id: &str) -> ChatParams {
        const HOOK: &str = "chat.params";
        if !self.runtime.has_chat_hook(HOOK) {
            return ChatParams {
                temperature: self.opts.temperature,
                top_p: None,
                top_k: None,
                max_tokens: self.opts.max_tokens,
                options: Default::default(),
            };
        }
        // A number, as opencode gives (plugins compute with it): the configured limit, else
        // the model's; only a changed value is sent.
        let max_shown = self
            .opts
            .max_tokens
            .map_or(self.opts.model_info.output, u64::from);
        let output = json!({
            "temperature": self.opts.temperature,
            "topP": null,
            "topK": null,
            "maxOutputTokens": max_shown,
            "options": {},
        });
        let out = self
            .runtime
            .chat_hook(HOOK, self.params_input(session_id), output)
            .await;
        ChatParams {
            temperature: out["temperature"].as_f64().or(self.opts.temperature),
            top_p: out["topP"].as_f64(),
            top_k: out["topK"]
                .as_f64()
                .filter(|k| *k >= 1.0)
                .map(|k| k.round() as u64),
            max_tokens: out["maxOutputTokens"]
                .as_u64()
                .filter(|m| *m > 0 && *m != max_shown)
                .and_then(|m| u32::try_from(m).ok())
                .or(self.opts.max_tokens),
            options: out["options"].as_object().cloned().unwrap_or_default(),
        }
    }

    /// The `chat.headers` hook may set HTTP headers of the next request (string values;
    /// others are left out). Without such a hook there are none.
    pub(super) async fn chat_headers_hook(&self, session_id: &str) -> Vec<(String, String)> {
        if !self.runtime.has_chat_hook("chat.headers") {
            return Vec::new();
        }
        let out = self
            .runtime
            .chat_hook(
                "chat.headers",
                self.params_input(session_id),
                json!({"headers": {}}),
            )
            .await;
        out["headers"]
            .as_object()
            .map(|h| {
                h.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `specs` as plugins' `tool.definition` hooks define them (the model sees these; calls
    /// are still checked against each tool's own schema). A definition is asked about once.
    pub(super) async fn tool_definition_hook(&self, offered: ToolList) -> ToolList {
        const HOOK: &str = "tool.definition";
        if offered.is_empty() || !self.runtime.has_chat_hook(HOOK) {
            return offered;
        }
        let mut specs = offered.to_vec();
        let mut known = match self.tool_definitions.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        };
        for spec in &mut specs {
            let own = (spec.description.clone(), spec.parameters.clone());
            let defined = match known.get(&spec.id) {
                Some((was, defined)) if *was == own => defined.clone(),
                _ => {
                    let output = json!({"description": own.0, "parameters": own.1});
                    let out = self
                        .runtime
                        .chat_hook(HOOK, json!({"toolID": spec.id}), output)
                        .await;
                    let description = out["description"].as_str().unwrap_or(&own.0).to_string();
                    let parameters = match &out["parameters"] {
                        p if p.is_object() => p.clone(),
                        _ => own.1.clone(),
                    };
                    known.insert(
                        spec.id.clone(),
                        (own, (description.clone(), parameters.clone())),
                    );
                    (description, parameters)
                }
            };
            (spec.description, spec.parameters) = defined;
        }
        if let Ok(mut g) = self.tool_definitions.lock() {
            *g = known;
        }
        ToolList::from(specs)
    }

    /// `experimental.chat.system.transform` may add to (or rewrite) the system prompt of the
    /// next request, as opencode's context-injecting plugins do: input `{sessionID, model}`
    /// (opencode's `Model`), output `{system: [prompt]}`; the parts it leaves are joined by
    /// newlines. Without such a hook the prompt is untouched.
    pub(super) async fn system_transform_hook(&self, session_id: &str, system: &str) -> String {
        const HOOK: &str = "experimental.chat.system.transform";
        if !self.runtime.has_chat_hook(HOOK) {
            return system.to_string();
        }
        let model = self.model.model();
        let input = json!({
            "sessionID": session_id,
            "model": model_json(&model.provider, &model.model, &self.opts.model_info),
        });
        let out = self
            .runtime
            .chat_hook(HOOK, input, json!({"system": [system]}))
            .await;
        match out["system"].as_array() {
            Some(parts) => parts
                .iter()
                .filter_map(Value::as_str)
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join("\n"),
            None => system.to_string(),
        }
    }

    /// `experimental.chat.messages.transform` may rewrite the conversation of one request
    /// (see `messages_hook`); `None` when no plugin has the hook or what it left cannot be
    /// sent (then `warn` says why).
    pub(super) async fn messages_transform_hook(
        &self,
        session_id: &str,
        messages: &[podcode_providers::Message],
        warn: impl FnOnce(String),
    ) -> Option<Vec<podcode_providers::Message>> {
        use super::messages_hook::{HOOK, from_opencode, to_opencode};
        if !self.runtime.has_chat_hook(HOOK) {
            return None;
        }
        let output = json!({"messages": to_opencode(messages, session_id)});
        let out = self.runtime.chat_hook(HOOK, json!({}), output).await;
        match from_opencode(&out["messages"], messages) {
            Ok(m) => Some(m),
            Err(e) => {
                warn(e);
                None
            }
        }
    }

    fn params_input(&self, session_id: &str) -> Value {
        let model = self.model.model();
        let info = model_json(&model.provider, &model.model, &self.opts.model_info);
        let (message_id, created) = self.turn_message().unwrap_or_default();
        json!({
            "sessionID": session_id,
            "agent": self.profile.name,
            "model": info.clone(),
            "provider": {
                "id": model.provider,
                "name": model.provider,
                "source": "config",
                "env": [],
                "options": {},
                "models": { model.model.clone(): info },
            },
            "message": {
                "id": message_id,
                "sessionID": session_id,
                "role": "user",
                "time": {"created": created},
                "agent": self.profile.name,
                "model": {"providerID": model.provider, "modelID": model.model},
            },
        })
    }

    pub(super) fn set_turn_message(&self, id: &str) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        if let Ok(mut m) = self.turn_message.lock() {
            *m = Some((id.to_string(), now));
        }
    }

    fn turn_message(&self) -> Option<(String, i64)> {
        self.turn_message.lock().ok().and_then(|m| m.clone())
    }
}

/// opencode's `Model` for what Podcode knows of one.
fn model_json(provider: &str, model: &str, info: &ModelInfo) -> Value {
    let cost = info.cost.as_ref();
    json!({
        "id": model,
        "providerID": provider,
        "api": {"id": model, "npm": "", "url": ""},
        "name": model,
        "family": "",
        "status": "active",
        "capabilities": {
            "temperature": true,
            "reasoning": info.reasoning,
            "attachment": info.images,
            "toolcall": info.tools,
            "input": {"text": true, "audio": false, "image": info.images, "video": false, "pdf": false},
            "output": {"text": true, "audio": false, "image": false, "video": false, "pdf": false},
            "interleaved": false,
        },
        "cost": {
            "input": cost.map_or(0.0, |c| c.input),
            "output": cost.map_or(0.0, |c| c.output),
            "cache": {
                "read": cost.and_then(|c| c.cache_read).unwrap_or(0.0),
                "write": cost.and_then(|c| c.cache_write).unwrap_or(0.0),
            },
        },
        "options": {},
        "limit": {"context": info.context, "output": info.output},
        "headers": {},
        "release_date": "",
        "variants": {},
    })
}
