//! One JS sidecar process and the JSON-RPC 2.0 conversation with it (newline-delimited
//! frames on stdin/stdout, see docs/plugin-host-protocol.md). Requests wait on a oneshot
//! keyed by id; a reader task routes responses, and serves the sidecar's own requests
//! (`ctx.ask`, `ctx.messages`) and notifications (`ctx.metadata`, `ctx.recordChange`,
//! `output` chunks of a long result, written straight into the call's truncating sink so a
//! 200 MB result is never held whole) against the `ToolContext` of the call they name. When the process dies every request in
//! flight fails with a message that includes the end of its stderr; the owner
//! (`PluginHost`) starts a fresh one on next use. A frame that is not valid JSON (a plugin
//! string with half a UTF-16 surrogate pair) fails the request it answers at once, and the
//! sidecar goes on. The sidecar runs in its own process group: `stop` asks it to exit,
//! waits for it, then ends whatever it spawned; `kill` and dropping the last handle end
//! the whole group.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use podcode_protocol::{ChangeRecord, PermissionRequest};
use podcode_tools::{ToolContext, ToolError};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;

use crate::client_backend::ClientBackend;
use crate::frames::{MAX_FRAME, frame_id, skip_line};

const STDERR_LINES: usize = 20;

/// A failed request: the sidecar's error message (model/user-facing) and its data.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct RpcError {
    /// What failed, for the model or user.
    pub message: String,
    /// Structured detail (line, column, dependencies), or null.
    pub data: Value,
    /// The sidecar died (crash, `process.exit`) rather than answering.
    pub crashed: bool,
}

type Pending = Mutex<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>;

struct Inner {
    runtime: String,
    stdin: tokio::sync::Mutex<ChildStdin>,
    pending: Pending,
    next_id: AtomicU64,
    calls: Mutex<HashMap<String, ToolContext>>,
    /// The permission text of a call's rejected `ctx.ask`, so a plugin that lets the
    /// rejection propagate (as the seed says to) ends as a denied call, like a built-in.
    rejections: Mutex<HashMap<String, String>>,
    alive: AtomicBool,
    stderr_tail: Mutex<VecDeque<String>>,
    child: Mutex<Option<Child>>,
    /// The process group the sidecar leads (its pid), so its children end with it.
    pgid: Option<u32>,
    /// Cleared once the group was sent SIGKILL: never signal it again (its id may be reused).
    group_alive: AtomicBool,
    /// Serves the plugin `client`'s toasts and session reads (`client.*` frames).
    client: Mutex<Option<Arc<dyn ClientBackend>>>,
    /// Where `client.app.log` calls made after a load are appended (see `client.mjs`).
    log_file: Mutex<Option<PathBuf>>,
    /// Bodies of model requests running through an auth plugin's `fetch`, by fetch id.
    fetches: Mutex<HashMap<String, FetchSender>>,
}

type FetchSender = tokio::sync::mpsc::UnboundedSender<Result<Vec<u8>, String>>;

impl Drop for Inner {
    fn drop(&mut self) {
        end_group(self);
    }
}

/// SIGKILL to every process of the sidecar's group (what it spawned included), once.
fn end_group(inner: &Inner) {
    if !inner.group_alive.swap(false, Ordering::SeqCst) {
        return;
    }
    if let Some(pid) = inner.pgid.and_then(|p| libc::pid_t::try_from(p).ok()) {
        // SAFETY: killpg only sends a signal; a group that is gone fails with ESRCH.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}

/// A running plugin-host process, spoken to in JSON-RPC lines over stdin/stdout.
#[derive(Clone)]
pub struct Sidecar {
    inner: Arc<Inner>,
}

impl Sidecar {
    /// Serves the plugin `client`'s toasts and session reads from `backend`.
    pub fn set_client(&self, backend: Option<Arc<dyn ClientBackend>>) {
        if let Ok(mut c) = self.inner.client.lock() {
            *c = backend;
        }
    }

    /// Appends what plugins log through the `client` after loading to `file` (Podcode
    /// writes it: the host may run in a sandbox that cannot).
    pub fn set_log_file(&self, file: PathBuf) {
        if let Ok(mut f) = self.inner.log_file.lock() {
            *f = Some(file);
        }
    }

    /// Starts `<program> <script>` in `dir` (through the sandbox helper when `sandbox` is
    /// given: `sandbox.0` runs it under policy `sandbox.1`) and begins reading its frames.
    pub fn spawn(
        runtime: &str,
        program: &Path,
        script: &Path,
        dir: &Path,
        sandbox: Option<(&podcode_sandbox::Sandbox, &podcode_sandbox::Policy)>,
    ) -> std::io::Result<Sidecar> {
        let script_arg = [script.as_os_str().to_os_string()];
        let (launch, argv) = match sandbox {
            Some((sb, policy)) => sb.wrap(policy, program.as_os_str(), &script_arg),
            None => (program.as_os_str().to_os_string(), script_arg.to_vec()),
        };
        let mut cmd = Command::new(launch);
        if let Some((sb, _)) = sandbox {
            for name in sb.hidden_env() {
                cmd.env_remove(name);
            }
        }
        let mut child = cmd
            .args(argv)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()?;
        let pgid = child.id();
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(std::io::Error::other("could not open the sidecar's pipes"));
        };
        let inner = Arc::new(Inner {
            runtime: runtime.to_string(),
            stdin: tokio::sync::Mutex::new(stdin),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            calls: Mutex::new(HashMap::new()),
            rejections: Mutex::new(HashMap::new()),
            alive: AtomicBool::new(true),
            stderr_tail: Mutex::new(VecDeque::new()),
            child: Mutex::new(Some(child)),
            pgid,
            group_alive: AtomicBool::new(true),
            client: Mutex::new(None),
            log_file: Mutex::new(None),
            fetches: Mutex::new(HashMap::new()),
        });
        let for_err = inner.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(mut tail) = for_err.stderr_tail.lock() {
                    tail.push_back(line);
                    if tail.len() > STDERR_LINES {
                        tail.pop_front();
                    }
                }
            }
        });
        let for_out = inner.clone();
        tokio::spawn(async move {
            // Bytes, not `lines()`: one line that is not UTF-8 must not end the reader.
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            loop {
                line.clear();
                match (&mut reader)
                    .take(MAX_FRAME)
                    .read_until(b'\n', &mut line)
                    .await
                {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if line.len() as u64 >= MAX_FRAME && line.last() != Some(&b'\n') {
                    // Skip the rest of an oversized frame, then fail the call it answers.
                    let id = frame_id(&line);
                    skip_line(&mut reader).await;
                    bad_frame(&for_out, id, "the reply is larger than 64 MiB");
                    continue;
                }
                // A string cut mid-emoji by a plugin arrives as a lone surrogate escape,
                // which serde_json refuses: read again with `\ufffd` in its place.
                let parsed = serde_json::from_slice::<Value>(&line).or_else(|e| {
                    match podcode_protocol::repair_lone_surrogates(&line) {
                        std::borrow::Cow::Owned(fixed) => serde_json::from_slice(&fixed),
                        std::borrow::Cow::Borrowed(_) => Err(e),
                    }
                });
                match parsed {
                    Ok(frame) => route(&for_out, frame).await,
                    Err(e) => bad_frame(&for_out, frame_id(&line), &e.to_string()),
                }
            }
            // Give the stderr reader a moment to collect the crash message.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            died(&for_out);
        });
        Ok(Sidecar { inner })
    }

    /// The JS runtime's name (`bun` or `node`).
    pub fn runtime(&self) -> &str {
        &self.inner.runtime
    }

    /// False once the process exited.
    pub fn is_alive(&self) -> bool {
        self.inner.alive.load(Ordering::SeqCst)
    }

    /// The last lines the process wrote to stderr, for crash reports.
    pub fn stderr_tail(&self) -> String {
        self.inner
            .stderr_tail
            .lock()
            .map(|t| t.iter().cloned().collect::<Vec<_>>().join("\n"))
            .unwrap_or_default()
    }

    /// Sends a request and waits for its answer; a dead or dying sidecar is an error.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        if !self.is_alive() {
            return Err(crash_error(&self.inner));
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.inner.pending.lock() {
            p.insert(id, tx);
        }
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if let Err(e) = self.send(&frame).await {
            if let Ok(mut p) = self.inner.pending.lock() {
                p.remove(&id);
            }
            died(&self.inner);
            return Err(RpcError {
                message: format!("could not write to the plugin host: {e}"),
                data: Value::Null,
                crashed: true,
            });
        }
        rx.await.unwrap_or_else(|_| Err(crash_error(&self.inner)))
    }

    /// Sends a notification (no answer expected); a write failure is ignored (the next request
    /// reports it).
    pub async fn notify(&self, method: &str, params: Value) {
        let _ = self
            .send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    async fn send(&self, frame: &Value) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(frame).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let mut stdin = self.inner.stdin.lock().await;
        stdin.write_all(&line).await?;
        stdin.flush().await
    }

    /// Routes the `auth.body` notifications of fetch `id` into the returned channel.
    pub(crate) fn open_fetch(
        &self,
        id: &str,
    ) -> tokio::sync::mpsc::UnboundedReceiver<Result<Vec<u8>, String>> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        if let Ok(mut f) = self.inner.fetches.lock() {
            f.insert(id.to_string(), tx);
        }
        rx
    }

    /// Stops routing fetch `id`; true when its body had not ended yet.
    pub(crate) fn close_fetch(&self, id: &str) -> bool {
        self.inner
            .fetches
            .lock()
            .ok()
            .and_then(|mut f| f.remove(id))
            .is_some()
    }

    /// Lets the sidecar's `ctx.*` calls for `call_id` reach this context.
    pub fn register_call(&self, call_id: &str, ctx: ToolContext) {
        if let Ok(mut c) = self.inner.calls.lock() {
            c.insert(call_id.to_string(), ctx);
        }
    }

    /// Stops routing `ctx.*` calls for `call_id` (the call ended).
    pub fn unregister_call(&self, call_id: &str) {
        if let Ok(mut c) = self.inner.calls.lock() {
            c.remove(call_id);
        }
    }

    /// The rejection text of this call's `ctx.ask`, if one was rejected.
    pub fn take_rejection(&self, call_id: &str) -> Option<String> {
        self.inner
            .rejections
            .lock()
            .ok()
            .and_then(|mut r| r.remove(call_id))
    }

    /// Kills the process and everything it spawned (a plugin stuck in a loop ignores its
    /// abort signal).
    pub fn kill(&self) {
        if let Ok(mut child) = self.inner.child.lock()
            && let Some(c) = child.as_mut()
        {
            let _ = c.start_kill();
        }
        end_group(&self.inner);
        died(&self.inner);
    }

    /// Asks the sidecar to exit and waits (up to `grace`) until it has, then ends whatever
    /// it left running in its process group (a plugin's child processes).
    pub async fn stop(&self, grace: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + grace;
        let _ = tokio::time::timeout_at(deadline, self.request("shutdown", json!({}))).await;
        let child = self.inner.child.lock().ok().and_then(|mut c| c.take());
        if let Some(mut child) = child {
            if tokio::time::timeout_at(deadline, child.wait())
                .await
                .is_err()
            {
                let _ = child.start_kill();
            }
            end_group(&self.inner);
            let _ = child.wait().await;
        } else {
            end_group(&self.inner);
        }
        died(&self.inner);
    }
}

/// Fails the request an unreadable frame answered (when its id can be told).
fn bad_frame(inner: &Arc<Inner>, id: Option<u64>, why: &str) {
    let tx = id.and_then(|id| inner.pending.lock().ok().and_then(|mut p| p.remove(&id)));
    match tx {
        Some(tx) => {
            let _ = tx.send(Err(RpcError {
                message: format!(
                    "the plugin's reply could not be read ({why}); it must be one line of JSON-RPC in UTF-8"
                ),
                data: Value::Null,
                crashed: false,
            }));
        }
        None => {
            if let Ok(mut tail) = inner.stderr_tail.lock() {
                tail.push_back(format!(
                    "podcode: ignored an unreadable frame from the plugin host ({why})"
                ));
                if tail.len() > STDERR_LINES {
                    tail.pop_front();
                }
            }
        }
    }
}

fn crash_error(inner: &Inner) -> RpcError {
    let tail = inner
        .stderr_tail
        .lock()
        .map(|t| t.iter().cloned().collect::<Vec<_>>().join("\n"))
        .unwrap_or_default();
    let mut message = format!(
        "the plugin host ({}) stopped unexpectedly; it restarts on the next call",
        inner.runtime
    );
    if !tail.trim().is_empty() {
        message.push_str(&format!(". Its last output:\n{}", tail.trim()));
    }
    RpcError {
        message,
        data: Value::Null,
        crashed: true,
    }
}

fn died(inner: &Arc<Inner>) {
    inner.alive.store(false, Ordering::SeqCst);
    let pending: Vec<_> = inner
        .pending
        .lock()
        .map(|mut p| p.drain().collect())
        .unwrap_or_default();
    for (_, tx) in pending {
        let _ = tx.send(Err(crash_error(inner)));
    }
    let fetches: Vec<_> = inner
        .fetches
        .lock()
        .map(|mut f| f.drain().collect())
        .unwrap_or_default();
    for (_, tx) in fetches {
        let _ = tx.send(Err(crash_error(inner).message));
    }
}

async fn route(inner: &Arc<Inner>, frame: Value) {
    let method = frame
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    match (method, frame.get("id").cloned()) {
        (None, Some(id)) => {
            let Some(id) = id.as_u64() else { return };
            let tx = inner.pending.lock().ok().and_then(|mut p| p.remove(&id));
            if let Some(tx) = tx {
                let result = match frame.get("error") {
                    Some(err) => Err(RpcError {
                        message: err
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("unknown error")
                            .to_string(),
                        data: err.get("data").cloned().unwrap_or(Value::Null),
                        crashed: false,
                    }),
                    None => Ok(frame.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = tx.send(result);
            }
        }
        (Some(method), None) if method == "auth.body" => {
            let params = frame.get("params").cloned().unwrap_or(Value::Null);
            fetch_body(inner, &params);
        }
        (Some(method), id) if method.starts_with("client.") => {
            let params = frame.get("params").cloned().unwrap_or(Value::Null);
            client_frame(inner, &method, params, id);
        }
        (Some(method), id) => {
            let params = frame.get("params").cloned().unwrap_or(Value::Null);
            let call_id = params
                .get("callId")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let ctx = inner
                .calls
                .lock()
                .ok()
                .and_then(|c| c.get(&call_id).cloned());
            match id {
                // Notifications are handled in frame order, so a change recorded before a
                // result arrives is journaled before the call completes.
                None => notification(&method, &params, ctx),
                Some(id) => {
                    let inner = inner.clone();
                    tokio::spawn(async move {
                        let reply = match ctx {
                            None => Err(format!("no running call {call_id}")),
                            Some(ctx) => reverse_request(&method, params, ctx).await,
                        };
                        if method == "ctx.ask"
                            && let Err(text) = &reply
                            && let Ok(mut r) = inner.rejections.lock()
                        {
                            r.insert(call_id.clone(), text.clone());
                        }
                        let frame = match reply {
                            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                            Err(message) => {
                                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": message}})
                            }
                        };
                        let _ = Sidecar { inner }.send(&frame).await;
                    });
                }
            }
        }
        _ => {}
    }
}

/// A piece of a plugin `fetch`'s body, its end or its failure, into the fetch's channel (in
/// frame order, so the body arrives whole and in order).
fn fetch_body(inner: &Arc<Inner>, params: &Value) {
    let Some(id) = params.get("fetchId").and_then(Value::as_str) else {
        return;
    };
    let Ok(mut fetches) = inner.fetches.lock() else {
        return;
    };
    if let Some(data) = params.get("data").and_then(Value::as_str) {
        if let Some(tx) = fetches.get(id) {
            let _ = tx.send(Ok(data.as_bytes().to_vec()));
        }
    } else if let Some(tx) = fetches.remove(id)
        && let Some(error) = params.get("error").and_then(Value::as_str)
    {
        let _ = tx.send(Err(error.to_string()));
    }
}

/// A `client.*` frame: a toast (notification) or a session read (request), served by the
/// engine's backend.
fn client_frame(inner: &Arc<Inner>, method: &str, params: Value, id: Option<Value>) {
    let backend = inner.client.lock().ok().and_then(|c| c.clone());
    match id {
        None if method == "client.log" => {
            if let Some(file) = inner.log_file.lock().ok().and_then(|f| f.clone()) {
                crate::client_backend::append_log(&file, &params);
            }
        }
        None => crate::client_backend::notified(backend, method, params),
        Some(id) => {
            let inner = inner.clone();
            let method = method.to_string();
            tokio::spawn(async move {
                let result = crate::client_backend::answer(backend, &method, &params).await;
                let frame = json!({"jsonrpc": "2.0", "id": id, "result": result});
                let _ = Sidecar { inner }.send(&frame).await;
            });
        }
    }
}

fn notification(method: &str, params: &Value, ctx: Option<ToolContext>) {
    let Some(ctx) = ctx else { return };
    match method {
        // A chunk of a long result, streamed into the call's truncating sink.
        "output" => {
            if let Some(data) = params.get("data").and_then(Value::as_str) {
                ctx.write_output(data.as_bytes());
            }
        }
        "ctx.metadata" => {
            let title = params.get("title").and_then(Value::as_str).map(str::to_string);
            let metadata = params.get("metadata").cloned().filter(|m| !m.is_null());
            ctx.metadata(title, metadata);
        }
        "ctx.recordChange" => match serde_json::from_value::<ChangeRecord>(params.clone()) {
            Ok(change) => {
                if let Err(e) = ctx.record_change(change) {
                    ctx.warn(format!("recordChange from {} failed: {e}", ctx.tool_id()));
                }
            }
            Err(e) => ctx.warn(format!(
                "recordChange from {} was ignored: {e} (expected {{file, op: create|modify|delete, oldContent, newContent}})",
                ctx.tool_id()
            )),
        },
        _ => {}
    }
}

async fn reverse_request(method: &str, params: Value, ctx: ToolContext) -> Result<Value, String> {
    match method {
        "ctx.ask" => {
            let request = PermissionRequest {
                permission: params
                    .get("permission")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                patterns: string_list(params.get("patterns")),
                always: string_list(params.get("always")),
                metadata: params.get("metadata").cloned().unwrap_or(Value::Null),
            };
            if request.permission.is_empty() {
                return Err("ctx.ask needs a `permission` string".into());
            }
            match ctx.ask(request).await {
                Ok(()) => Ok(json!({})),
                Err(ToolError::Permission(text)) => Err(text),
                Err(e) => Err(e.to_string()),
            }
        }
        "ctx.messages" => {
            let messages = ctx.messages().await.map_err(|e| e.to_string())?;
            Ok(json!({ "messages": *messages }))
        }
        other => Err(format!("unknown method {other}")),
    }
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
