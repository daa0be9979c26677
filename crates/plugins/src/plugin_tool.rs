//! Plugin tools and plugin hooks as the tool runtime sees them. `PluginTool` validates with
//! the plugin's own Zod schema and executes in the sidecar, bridging `ctx` both ways; an
//! abort is forwarded, and a plugin that ignores it for 2 s gets its sidecar restarted so
//! the next call finds a healthy host. `PluginHooks` runs the plugins' `tool.execute.*`,
//! `permission.ask`, `shell.env` and conversation hooks in opencode's shapes
//! (`tool.execute.after` gets the call's `args` and `{title, metadata, output}` with a bash
//! call titled by its command); `CALLED_HOOKS` names every hook Podcode calls.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use podcode_protocol::{Attachment, PermissionAction, PermissionRequest, ToolResult, ToolSpec};
use podcode_tools::{ArgIssue, BeforeDecision, HookCall, Tool, ToolContext, ToolError, ToolHook};
use serde_json::{Value, json};

use crate::host::PluginHost;
use crate::plugin_files::PluginFile;

const ABORT_GRACE: Duration = Duration::from_secs(2);

/// One tool of a plugin file: a call runs in the sidecar, with the plugin's own argument
/// validation.
pub struct PluginTool {
    spec: ToolSpec,
    file: PluginFile,
    host: Arc<PluginHost>,
}

impl PluginTool {
    /// The tool described by `spec`, defined in `file`, run by `host`.
    pub fn new(spec: ToolSpec, file: PluginFile, host: Arc<PluginHost>) -> Self {
        Self { spec, file, host }
    }
}

#[async_trait]
impl Tool for PluginTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn validate(&self, args: &Value) -> Option<Result<Value, Vec<ArgIssue>>> {
        // A file that no longer loads fails in `execute`, with the load error as its text.
        let (sc, _) = self.host.load(&self.file).await.ok()?;
        let params = json!({"path": self.file.path, "tool": self.spec.id, "args": args});
        let reply = sc.request("validate", params).await.ok()?;
        if reply.get("ok").and_then(Value::as_bool) == Some(true) {
            return Some(Ok(reply.get("args").cloned().unwrap_or(Value::Null)));
        }
        let issues = reply
            .get("issues")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|i| {
                        ArgIssue::new(
                            i.get("path").and_then(Value::as_str).unwrap_or("(root)"),
                            i.get("message")
                                .and_then(Value::as_str)
                                .unwrap_or("invalid"),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(Err(issues))
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let (sc, _) = self
            .host
            .load(&self.file)
            .await
            .map_err(|e| ToolError::failed(e.message))?;
        let id = ctx.identity().clone();
        let call_id = id.call_id.clone();
        sc.register_call(&call_id, ctx.clone());
        let params = json!({
            "path": self.file.path,
            "tool": self.spec.id,
            "callId": call_id,
            "args": args,
            "ctx": {
                "sessionID": id.session_id, "messageID": id.message_id, "callID": id.call_id,
                "parentID": id.parent_id, "rootID": id.root_id, "agent": id.agent,
                "mainCwd": id.main_cwd, "directory": id.directory, "worktree": id.worktree,
            },
        });
        let mark = self.host.denial_mark();
        let request = sc.request("execute", params);
        tokio::pin!(request);
        let reply = tokio::select! {
            r = &mut request => Some(r),
            _ = ctx.abort().cancelled() => None,
        };
        let reply = match reply {
            Some(r) => r,
            None => {
                sc.notify("abort", json!({"callId": call_id})).await;
                match tokio::time::timeout(ABORT_GRACE, &mut request).await {
                    Ok(r) => r,
                    Err(_) => {
                        sc.unregister_call(&call_id);
                        self.host.restart().await;
                        return Err(ToolError::Aborted);
                    }
                }
            }
        };
        sc.unregister_call(&call_id);
        let rejection = sc.take_rejection(&call_id);
        let value = reply.map_err(|e| match rejection {
            Some(text) if e.message.contains(&text) => ToolError::Permission(text),
            _ => match self.host.sandbox_note(&e.message, mark) {
                Some(note) => ToolError::failed(format!("{}\n{note}", e.message)),
                None => ToolError::failed(e.message),
            },
        })?;
        result_from_json(value)
    }
}

fn result_from_json(v: Value) -> Result<ToolResult, ToolError> {
    let attachments: Vec<Attachment> = match v.get("attachments") {
        None | Some(Value::Null) => Vec::new(),
        Some(a) => serde_json::from_value(a.clone()).map_err(|e| {
            ToolError::failed(format!(
                "the tool returned an invalid result: attachments: {e}"
            ))
        })?,
    };
    Ok(ToolResult {
        title: v
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        output: v
            .get("output")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        // opencode hands every hook an object here; a tool that set none gets `{}`.
        metadata: v
            .get("metadata")
            .filter(|m| m.is_object())
            .cloned()
            .unwrap_or_else(|| json!({})),
        attachments,
    })
}

/// The hooks Podcode calls; a plugin's other hooks never run, and `podcode plugins` says so.
pub const CALLED_HOOKS: &[&str] = &[
    "auth",
    "tool.execute.before",
    "tool.execute.after",
    "permission.ask",
    "shell.env",
    "event",
    "config",
    "chat.message",
    "chat.params",
    "chat.headers",
    "tool.definition",
    "experimental.chat.system.transform",
    "experimental.chat.messages.transform",
    "experimental.session.compacting",
    "command.execute.before",
    "experimental.text.complete",
];

/// One plugin file's hooks.
#[derive(Clone)]
pub struct HookedFile {
    /// The plugin file.
    pub file: PluginFile,
    /// The hooks it registers.
    pub hooks: Vec<String>,
    /// Its `auth` hooks (the provider each signs in for, its login methods).
    pub auth: Vec<crate::AuthHook>,
    /// opencode-format plugins block a call when `tool.execute.before` throws.
    pub opencode: bool,
}

/// The hooks of every loaded plugin file, run by the pipeline around each call.
pub struct PluginHooks {
    /// The host whose sidecar runs them.
    pub host: Arc<PluginHost>,
    /// The files with hooks, in load order.
    pub files: Vec<HookedFile>,
}

impl PluginHooks {
    /// Whether any plugin registered hook `name`.
    pub fn handles(&self, name: &str) -> bool {
        self.files.iter().any(|f| f.hooks.iter().any(|h| h == name))
    }

    /// Runs hook `name` of every plugin that has it; returns the errors (for the user).
    pub async fn broadcast(&self, name: &str, input: Value, output: Value) -> Vec<String> {
        let mut errors = Vec::new();
        for f in &self.files {
            if let Some(Err(e)) = self.run(f, name, input.clone(), output.clone()).await {
                errors.push(format!("{name} hook failed: {e}"));
            }
        }
        errors
    }

    /// Runs every plugin's `config` hook in turn on opencode's config object, each seeing
    /// what the ones before it changed (as opencode hands them one live object); returns the
    /// object as they left it, and the errors (for the user).
    pub async fn config(&self, mut config: Value) -> (Value, Vec<String>) {
        let mut errors = Vec::new();
        for f in &self.files {
            match self.run(f, "config", config.clone(), Value::Null).await {
                Some(Ok(out)) if out.is_object() => config = out,
                Some(Err(e)) => errors.push(format!("config hook failed: {e}")),
                _ => {}
            }
        }
        (config, errors)
    }

    /// Feeds every runtime event to the plugins' `event` hooks, in order, until the runtime
    /// goes away, the feed is aborted (the plugins were reloaded) or drained (the engine shuts
    /// down: what was already sent is delivered first, so a one-shot `podcode run` does not
    /// exit before its plugins heard the session go idle). A failing hook is reported through
    /// `warn` once per plugin file, never as an error of a call — and never again, so a
    /// warning that is itself an event cannot feed a loop. `diffs` gives `session.diff`
    /// events their files.
    pub fn forward_events(
        self: &Arc<Self>,
        mut events: tokio::sync::broadcast::Receiver<podcode_protocol::Event>,
        warn: Arc<dyn Fn(String) + Send + Sync>,
        diffs: Option<crate::DiffLookup>,
    ) -> Option<EventFeed> {
        if !self.handles("event") {
            return None;
        }
        let hooks = self.clone();
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<Stop>();
        let task = tokio::spawn(async move {
            let mut reported = std::collections::HashSet::new();
            // Plugins are written against opencode's bus: they get its event types and
            // shapes (`opencode_events.rs`), not the engine's own.
            let mut opencode = crate::opencode_events::OpencodeEvents::with_diffs(diffs);
            let mut deliver = async |event: podcode_protocol::Event| {
                for event in opencode.translate(&event) {
                    let input = json!({ "event": event });
                    for f in &hooks.files {
                        if let Some(Err(e)) = hooks.run(f, "event", input.clone(), json!({})).await
                            && reported.insert(f.file.path.clone())
                        {
                            warn(format!(
                                "event hook failed: {e} (further failures of this file's event hook are not reported)"
                            ));
                        }
                    }
                }
            };
            loop {
                tokio::select! {
                    biased;
                    received = events.recv() => match received {
                        Ok(event) => deliver(event).await,
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(_) => return None,
                    },
                    how = &mut stopped => {
                        if let Ok(Stop::HandOver) = how {
                            return Some(events);
                        }
                        while let Ok(event) = events.try_recv() {
                            deliver(event).await;
                        }
                        return None;
                    }
                }
            }
        });
        Some(EventFeed { task, stop })
    }

    async fn run(
        &self,
        f: &HookedFile,
        name: &str,
        input: Value,
        output: Value,
    ) -> Option<Result<Value, String>> {
        if !f.hooks.iter().any(|h| h == name) {
            return None;
        }
        let sc = match self.host.load(&f.file).await {
            Ok((sc, _)) => sc,
            Err(e) => return Some(Err(e.message)),
        };
        let params = json!({"path": f.file.path, "name": name, "input": input, "output": output});
        Some(
            sc.request("hook", params)
                .await
                .map(|r| r.get("output").cloned().unwrap_or(Value::Null))
                .map_err(|e| format!("{} ({})", e.message, f.file.path.display())),
        )
    }
}

#[async_trait]
impl ToolHook for PluginHooks {
    fn name(&self) -> &str {
        "plugins"
    }

    async fn before(&self, call: &HookCall, args: &mut Value) -> Result<BeforeDecision, String> {
        let input =
            json!({"tool": call.tool, "sessionID": call.session_id, "callID": call.call_id});
        let mut errors = Vec::new();
        for f in &self.files {
            match self
                .run(
                    f,
                    "tool.execute.before",
                    input.clone(),
                    json!({"args": args}),
                )
                .await
            {
                None => {}
                Some(Ok(out)) => {
                    if let Some(new) = out.get("args") {
                        *args = new.clone();
                    }
                }
                Some(Err(message)) if f.opencode => return Ok(BeforeDecision::Block(message)),
                Some(Err(message)) => errors.push(message),
            }
        }
        if errors.is_empty() {
            Ok(BeforeDecision::Continue)
        } else {
            Err(errors.join("; "))
        }
    }

    fn sees_results(&self) -> bool {
        self.handles("tool.execute.after")
    }

    async fn after(
        &self,
        call: &HookCall,
        args: &Value,
        result: &mut ToolResult,
    ) -> Result<(), String> {
        let input = json!({
            "tool": call.tool, "sessionID": call.session_id, "callID": call.call_id, "args": args,
        });
        // opencode titles a bash call with its command; Podcode's own title (the
        // description) stays unless a hook changes the title.
        let sent_title = match (call.tool.as_str(), args.get("command")) {
            ("bash", Some(Value::String(command))) => command.clone(),
            _ => result.title.clone(),
        };
        let mut title = sent_title.clone();
        let mut errors = Vec::new();
        for f in &self.files {
            // In the order opencode's bash result has them.
            let output =
                json!({"title": title, "metadata": result.metadata, "output": result.output});
            match self
                .run(f, "tool.execute.after", input.clone(), output)
                .await
            {
                None => {}
                Some(Ok(out)) => {
                    if let Some(t) = out.get("title").and_then(Value::as_str) {
                        title = t.to_string();
                    }
                    if let Some(o) = out.get("output").and_then(Value::as_str) {
                        result.output = o.to_string();
                    }
                    if let Some(m) = out.get("metadata").filter(|m| m.is_object()) {
                        result.metadata = m.clone();
                    }
                }
                Some(Err(message)) => errors.push(message),
            }
        }
        if title != sent_title {
            result.title = title;
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }

    fn handles_chat(&self, name: &str) -> bool {
        self.handles(name)
    }

    async fn chat(&self, name: &str, input: &Value, mut output: Value) -> Result<Value, String> {
        let mut errors = Vec::new();
        for f in &self.files {
            match self.run(f, name, input.clone(), output.clone()).await {
                None => {}
                Some(Ok(out)) if !out.is_null() => output = out,
                Some(Ok(_)) => {}
                Some(Err(e)) => errors.push(e),
            }
        }
        if errors.is_empty() {
            Ok(output)
        } else {
            Err(errors.join("; "))
        }
    }

    async fn permission(
        &self,
        call: &HookCall,
        request: &PermissionRequest,
    ) -> Result<Option<PermissionAction>, String> {
        let input = json!({
            "tool": call.tool, "sessionID": call.session_id, "callID": call.call_id,
            "permission": request.permission, "patterns": request.patterns, "metadata": request.metadata,
        });
        let mut verdict = None;
        for f in &self.files {
            if let Some(res) = self
                .run(f, "permission.ask", input.clone(), json!({"status": "ask"}))
                .await
            {
                let out = res?;
                verdict = match out.get("status").and_then(Value::as_str) {
                    Some("allow") => Some(PermissionAction::Allow),
                    Some("deny") => Some(PermissionAction::Deny),
                    _ => verdict,
                };
            }
        }
        Ok(verdict)
    }

    async fn shell_env(
        &self,
        call: &HookCall,
        env: &mut BTreeMap<String, String>,
    ) -> Result<(), String> {
        let input =
            json!({"tool": call.tool, "sessionID": call.session_id, "callID": call.call_id});
        for f in &self.files {
            if let Some(res) = self
                .run(f, "shell.env", input.clone(), json!({"env": {}}))
                .await
                && let Some(obj) = res?.get("env").and_then(Value::as_object)
            {
                for (k, v) in obj {
                    if let Some(s) = v.as_str() {
                        env.insert(k.clone(), s.to_string());
                    }
                }
            }
        }
        Ok(())
    }
}

type EventReceiver = tokio::sync::broadcast::Receiver<podcode_protocol::Event>;

enum Stop {
    /// Deliver what was sent, then end.
    Drain,
    /// End after the event in hand and give the receiver back (for the next feed).
    HandOver,
}

/// A running feed of events to plugins' `event` hooks (`PluginHooks::forward_events`).
pub struct EventFeed {
    task: tokio::task::JoinHandle<Option<EventReceiver>>,
    stop: tokio::sync::oneshot::Sender<Stop>,
}

impl EventFeed {
    /// Stops after the event in hand and returns the receiver, so the next feed (the
    /// plugins were reloaded) goes on from the next event: none lost, none twice.
    pub async fn hand_over(self) -> Option<EventReceiver> {
        let _ = self.stop.send(Stop::HandOver);
        self.task.await.ok().flatten()
    }

    /// Delivers what was already sent, then stops; gives up after `limit` (a hung hook).
    pub async fn drain(self, limit: std::time::Duration) {
        let _ = self.stop.send(Stop::Drain);
        let mut task = self.task;
        if tokio::time::timeout(limit, &mut task).await.is_err() {
            task.abort();
        }
    }
}
