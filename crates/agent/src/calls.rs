//! Running the tool calls of one response. Each call is resolved and parsed once
//! (`ToolRuntime::prepare`); what that says (idempotent? the same as the last two calls?)
//! plans the run, and the pipeline runs the prepared call without doing either again.
//! Consecutive calls to idempotent tools (and `task` calls) run in parallel; every other
//! call runs alone, in order. Results come back in call order, one per call, always: a call
//! the user's abort stopped before it started, or a third identical call in a row whose
//! `doom_loop` ask was rejected, is settled here with its own text and recorded by the tool runtime.

use std::sync::Arc;

use futures_util::future::join_all;
use podcode_protocol::{Attachment, PermissionRequest};
use podcode_providers::Part;
use podcode_tools::{
    AskRequest, CallIdentity, CallStatus, PermissionEngine, PreparedCall, RawArgs,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::history::ToolData;
use crate::record::Recorder;
use crate::texts::{doom_loop_description, not_run_text};

/// How one call ended, as the loop needs it.
#[derive(Debug, Clone)]
pub(crate) struct CallDone {
    pub result: Part,
    pub changes: Vec<String>,
    /// Files a sub-agent changed (the `task` tool's `metadata.files`): the turn's
    /// summary counts them with the session's own.
    pub child_files: Vec<String>,
}

/// The last calls of the turn, to notice the model repeating itself.
#[derive(Debug, Default)]
pub(crate) struct DoomTracker {
    recent: Vec<(String, Value)>,
}

impl DoomTracker {
    /// Notes a call; true when it is the third identical one in a row.
    fn repeats(&mut self, name: &str, args: &Value) -> bool {
        let looping = self.recent.len() >= 2
            && self
                .recent
                .iter()
                .rev()
                .take(2)
                .all(|(n, a)| n == name && a == args);
        self.recent.push((name.to_string(), args.clone()));
        if self.recent.len() > 2 {
            self.recent.remove(0);
        }
        looping
    }
}

fn settled(call: &ToolData, text: String) -> CallDone {
    CallDone {
        result: Part::ToolResult {
            call_id: call.provider_id.clone(),
            output: text,
            is_error: true,
            attachments: Vec::new(),
        },
        changes: Vec::new(),
        child_files: Vec::new(),
    }
}

pub(crate) struct Calls<'a> {
    pub rec: &'a Recorder,
    pub identity: &'a CallIdentity,
    pub message_id: &'a str,
    pub abort: &'a CancellationToken,
}

impl Calls<'_> {
    /// Runs `calls` and returns one result per call, in call order.
    pub async fn run(&self, calls: &[ToolData], doom: &mut DoomTracker) -> Vec<CallDone> {
        // Each call is resolved and parsed once, here; the pipeline runs what was prepared.
        let runtime = &self.rec.runtime;
        let mut prepared: Vec<Option<PreparedCall>> = calls
            .iter()
            .map(|c| Some(runtime.prepare(&c.name, RawArgs::Text(c.arguments.clone()))))
            .collect();
        // Idempotent calls may overlap; so may `task` calls: each drives its own sub-agent
        // session, and several in one response are meant to work at the same time.
        let idempotent = |p: &Option<PreparedCall>| {
            p.as_ref()
                .is_some_and(|p| p.is_idempotent() || p.tool_id() == "task")
        };
        let mut done: Vec<Option<CallDone>> = vec![None; calls.len()];
        let mut i = 0;
        while i < calls.len() {
            let mut end = i + 1;
            if idempotent(&prepared[i]) {
                while end < calls.len() && idempotent(&prepared[end]) {
                    end += 1;
                }
            }
            let mut batch = Vec::new();
            for (k, call) in calls.iter().enumerate().take(end).skip(i) {
                let Some(p) = prepared[k].take() else {
                    continue;
                };
                if self.abort.is_cancelled() {
                    done[k] = Some(self.not_run(call, p.args()));
                    continue;
                }
                if doom.repeats(&call.name, p.args()) {
                    match self.ask_doom_loop(call, p.args()).await {
                        Ok(()) => {}
                        Err(Some(text)) => {
                            self.rec.settled_call(
                                self.message_id,
                                &call.call_id,
                                &call.name,
                                p.args(),
                                CallStatus::Denied,
                                &text,
                            );
                            done[k] = Some(settled(call, text));
                            continue;
                        }
                        Err(None) => {
                            done[k] = Some(self.not_run(call, p.args()));
                            continue;
                        }
                    }
                }
                batch.push((k, p));
            }
            let ks: Vec<usize> = batch.iter().map(|(k, _)| *k).collect();
            let runs = batch.into_iter().map(|(k, p)| self.call(&calls[k], p));
            for (k, out) in ks.into_iter().zip(join_all(runs).await) {
                done[k] = Some(out);
            }
            i = end;
        }
        done.into_iter()
            .zip(calls)
            .map(|(d, c)| d.unwrap_or_else(|| settled(c, not_run_text(&c.name))))
            .collect()
    }

    async fn call(&self, call: &ToolData, prepared: PreparedCall) -> CallDone {
        let mut identity = self.identity.clone();
        identity.message_id = self.message_id.to_string();
        identity.call_id = call.call_id.clone();
        let out = self
            .rec
            .runtime
            .call_prepared(identity, prepared, self.abort.clone())
            .await;
        let attachments: Vec<Attachment> = out.result.attachments.clone();
        let child_files = match out.tool.as_str() {
            "task" => out.result.metadata["files"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|f| f.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        CallDone {
            result: Part::ToolResult {
                call_id: call.provider_id.clone(),
                output: out.model_text,
                is_error: out.status != CallStatus::Completed,
                attachments,
            },
            changes: out.changes,
            child_files,
        }
    }

    fn not_run(&self, call: &ToolData, args: &Value) -> CallDone {
        let text = not_run_text(&call.name);
        self.rec.settled_call(
            self.message_id,
            &call.call_id,
            &call.name,
            args,
            CallStatus::Aborted,
            &text,
        );
        settled(call, text)
    }

    /// `Err(Some(text))`: rejected or denied (the model reads `text`); `Err(None)`: aborted.
    async fn ask_doom_loop(&self, call: &ToolData, args: &Value) -> Result<(), Option<String>> {
        let ask = AskRequest {
            request_id: PermissionEngine::new_request_id(),
            session_id: self.rec.session.clone(),
            call_id: call.call_id.clone(),
            tool: call.name.clone(),
            request: PermissionRequest {
                permission: "doom_loop".into(),
                patterns: vec![call.name.clone()],
                always: vec![call.name.clone()],
                metadata: json!({
                    "description": doom_loop_description(&call.name),
                    "args": args,
                }),
            },
        };
        let runtime = Arc::clone(&self.rec.runtime);
        tokio::select! {
            r = runtime.ask_permission(ask) => r.map_err(|e| Some(e.to_string())),
            _ = self.abort.cancelled() => Err(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_third_identical_call_in_a_row_is_a_loop() {
        let mut d = DoomTracker::default();
        let a = json!({"filePath": "a"});
        assert!(!d.repeats("read", &a));
        assert!(!d.repeats("read", &a));
        assert!(d.repeats("read", &a));
        assert!(d.repeats("read", &a));
        assert!(!d.repeats("read", &json!({"filePath": "b"})));
        assert!(!d.repeats("read", &a));
        assert!(!d.repeats("grep", &a));
        // Key order does not make two calls different.
        let parse = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        let mut e = DoomTracker::default();
        e.repeats("x", &parse(r#"{"a":1,"b":2}"#));
        e.repeats("x", &parse(r#"{"b":2,"a":1}"#));
        assert!(e.repeats("x", &parse(r#"{"a":1,"b":2}"#)));
    }
}
