//! One language server process and the conversation with it. `LspClient::start` spawns the
//! server (through the sandbox when one is given), reads its frames on a task — answers to
//! our requests go to their waiters, `textDocument/publishDiagnostics` into a per-file store
//! with a generation count, the server's own requests (`workspace/configuration`,
//! `client/registerCapability`, …) answered at once — and runs `initialize`/`initialized`.
//! Documents are kept in sync with full text (`didOpen`, then `didChange` + `didSave` with a
//! new version per edit); `diagnostics` asks for a file's diagnostics after its last sync:
//! pulled (`textDocument/diagnostic`) where the server offers it, else the publishes that
//! follow the sync, until none came for `SETTLE` (150 ms, as opencode: servers publish
//! syntax first, types a moment later); a file published before that gets no new publish
//! (servers skip an unchanged empty set) keeps its last set after `UNCHANGED_AFTER`. All
//! bounded by the caller's wait.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lsp_types::Diagnostic;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{Notify, oneshot};

use crate::framing::{encode, file_uri, read_message};

const STDERR_LINES: usize = 20;
/// Quiet time after a publish before its set counts as complete.
const SETTLE: Duration = Duration::from_millis(150);
/// How long a file published before waits for a new publish before its last set stands.
const UNCHANGED_AFTER: Duration = Duration::from_millis(1000);

/// How a server is started.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// The folder the server works in (its workspace root).
    pub root: PathBuf,
    /// `initializationOptions`.
    pub initialization: Value,
    /// Runs the server under this sandbox (the root writable), when given.
    pub sandbox: Option<Arc<podcode_sandbox::Sandbox>>,
}

type Pending = Mutex<HashMap<i64, oneshot::Sender<Result<Value, String>>>>;

/// Diagnostics a server published for one file, and how many times it did.
#[derive(Default)]
struct Published {
    generation: u64,
    version: Option<i32>,
    items: Vec<Diagnostic>,
}

struct Inner {
    name: String,
    stdin: tokio::sync::Mutex<ChildStdin>,
    pending: Pending,
    next_id: AtomicI64,
    alive: AtomicBool,
    child: Mutex<Option<Child>>,
    stderr_tail: Mutex<VecDeque<String>>,
    published: Mutex<HashMap<String, Published>>,
    publish_seen: Notify,
    /// Open documents: URI → version last sent.
    open: tokio::sync::Mutex<HashMap<String, i32>>,
    capabilities: Mutex<Value>,
    root: PathBuf,
}

/// A running language server.
#[derive(Clone)]
pub struct LspClient {
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl LspClient {
    /// Starts the server named `name` and initializes it (bounded by `wait`).
    pub async fn start(name: &str, launch: &Launch, wait: Duration) -> Result<Self, String> {
        let (program, args) = launch
            .command
            .split_first()
            .ok_or_else(|| format!("{name}: its command is empty"))?;
        let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        // In the sandbox the server writes its root and a temp dir of its own (`TMPDIR`).
        let temp = match &launch.sandbox {
            Some(sb) => sb.session_temp(&format!("lsp-{name}")).ok().flatten(),
            None => None,
        };
        let (launch_program, argv) = match &launch.sandbox {
            Some(sb) => {
                let mut roots = vec![launch.root.as_path()];
                roots.extend(temp.as_deref());
                let policy = sb.policy(roots);
                sb.wrap(&policy, std::ffi::OsStr::new(program), &args)
            }
            None => (program.into(), args),
        };
        let mut cmd = Command::new(launch_program);
        if let Some(temp) = &temp {
            cmd.env("TMPDIR", temp);
        }
        cmd.args(argv)
            .current_dir(&launch.root)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(sb) = &launch.sandbox {
            for var in sb.hidden_env() {
                cmd.env_remove(var);
            }
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("{name} could not start ({program}): {e}"))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(format!("{name}: no pipes to the server"));
        };
        let inner = Arc::new(Inner {
            name: name.to_string(),
            stdin: tokio::sync::Mutex::new(stdin),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            alive: AtomicBool::new(true),
            child: Mutex::new(Some(child)),
            stderr_tail: Mutex::new(VecDeque::new()),
            published: Mutex::new(HashMap::new()),
            publish_seen: Notify::new(),
            open: tokio::sync::Mutex::new(HashMap::new()),
            capabilities: Mutex::new(Value::Null),
            root: launch.root.clone(),
        });
        let tail = inner.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut t = lock(&tail.stderr_tail);
                t.push_back(line);
                if t.len() > STDERR_LINES {
                    t.pop_front();
                }
            }
        });
        let reader = inner.clone();
        tokio::spawn(async move {
            let mut stdout = BufReader::new(stdout);
            while let Ok(Some(message)) = read_message(&mut stdout).await {
                route(&reader, message).await;
            }
            died(&reader);
        });
        let client = LspClient { inner };
        let root_uri = file_uri(&launch.root);
        let folder_name = launch
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "workspace".into());
        let params = json!({
            // No parent pid: in the sandbox's PID namespace ours names no process (or another
            // one), and servers that watch it (typescript-language-server) would exit within
            // seconds. A server ends when its stdin closes instead.
            "processId": null,
            "rootUri": root_uri,
            "rootPath": launch.root,
            "workspaceFolders": [{"uri": root_uri, "name": folder_name}],
            "initializationOptions": launch.initialization,
            "capabilities": {
                "textDocument": {
                    "synchronization": {"didSave": true, "dynamicRegistration": false},
                    "publishDiagnostics": {"versionSupport": true, "relatedInformation": false},
                    "diagnostic": {"dynamicRegistration": false},
                    "hover": {"contentFormat": ["markdown", "plaintext"]},
                    "definition": {"linkSupport": false},
                    "references": {},
                    "implementation": {"linkSupport": false},
                    "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
                },
                "workspace": {"configuration": true, "workspaceFolders": true, "symbol": {}},
                "window": {"workDoneProgress": true},
            },
        });
        let reply = client
            .request("initialize", params, wait)
            .await
            .map_err(|e| format!("{name} did not initialize: {e}"))?;
        *lock(&client.inner.capabilities) = reply.get("capabilities").cloned().unwrap_or_default();
        client.notify("initialized", json!({})).await;
        Ok(client)
    }

    /// Whether the process is still running.
    pub fn is_alive(&self) -> bool {
        self.inner.alive.load(Ordering::SeqCst)
    }

    /// The last lines the server wrote on stderr.
    pub fn stderr_tail(&self) -> String {
        lock(&self.inner.stderr_tail)
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The server's root folder.
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    /// Sends a request and waits up to `wait` for its answer.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        wait: Duration,
    ) -> Result<Value, String> {
        if !self.is_alive() {
            return Err(self.exit_text());
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        lock(&self.inner.pending).insert(id, tx);
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if let Err(e) = self.send(&frame).await {
            lock(&self.inner.pending).remove(&id);
            return Err(format!("could not write to {}: {e}", self.inner.name));
        }
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(self.exit_text()),
            Err(_) => {
                lock(&self.inner.pending).remove(&id);
                let _ = self.notify("$/cancelRequest", json!({"id": id})).await;
                Err(format!(
                    "no answer to {method} within {} ms",
                    wait.as_millis()
                ))
            }
        }
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) {
        let _ = self
            .send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    async fn send(&self, frame: &Value) -> std::io::Result<()> {
        let mut stdin = self.inner.stdin.lock().await;
        stdin.write_all(&encode(frame)).await?;
        stdin.flush().await
    }

    fn exit_text(&self) -> String {
        let tail = self.stderr_tail();
        if tail.trim().is_empty() {
            format!("{} stopped", self.inner.name)
        } else {
            format!(
                "{} stopped. Its last output:\n{}",
                self.inner.name,
                tail.trim()
            )
        }
    }

    /// Sends `text` as the document's content (opening it the first time); returns the
    /// publish generation before the change, for `diagnostics`.
    pub async fn sync(&self, path: &Path, language: &str, text: &str) -> u64 {
        let uri = file_uri(path);
        let generation = lock(&self.inner.published)
            .get(&uri)
            .map_or(0, |p| p.generation);
        let mut open = self.inner.open.lock().await;
        match open.get_mut(&uri) {
            None => {
                open.insert(uri.clone(), 1);
                self.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
                )
                .await;
            }
            Some(version) => {
                *version += 1;
                self.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": *version}, "contentChanges": [{"text": text}]}),
                )
                .await;
            }
        }
        drop(open);
        self.notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": uri}, "text": text}),
        )
        .await;
        generation
    }

    /// Whether the server answers `textDocument/diagnostic` (pull diagnostics).
    fn pulls(&self) -> bool {
        !lock(&self.inner.capabilities)["diagnosticProvider"].is_null()
    }

    /// The file's diagnostics after the sync that returned `since`: pulled where the server
    /// offers it, else the next publish; `None` when none came within `wait`.
    pub async fn diagnostics(
        &self,
        path: &Path,
        since: u64,
        wait: Duration,
    ) -> Option<Vec<Diagnostic>> {
        let uri = file_uri(path);
        if self.pulls() {
            let reply = self
                .request(
                    "textDocument/diagnostic",
                    json!({"textDocument": {"uri": uri}}),
                    wait,
                )
                .await
                .ok()?;
            return serde_json::from_value(reply.get("items").cloned().unwrap_or_default()).ok();
        }
        let start = tokio::time::Instant::now();
        let deadline = start + wait;
        // A file published before whose diagnostics did not change may get no publish at
        // all (servers skip an unchanged empty set): after a while its last set stands.
        let unchanged_by = (since > 0).then(|| (start + UNCHANGED_AFTER).min(deadline));
        loop {
            let seen = self.inner.publish_seen.notified();
            let (generation, items) = self.latest(&uri);
            if generation > since {
                return Some(self.settled(&uri, generation, items, deadline).await);
            }
            if !self.is_alive() {
                return None;
            }
            let until = unchanged_by.unwrap_or(deadline);
            if tokio::time::timeout_at(until, seen).await.is_err() {
                return unchanged_by.map(|_| items);
            }
        }
    }

    fn latest(&self, uri: &str) -> (u64, Vec<Diagnostic>) {
        lock(&self.inner.published)
            .get(uri)
            .map_or((0, Vec::new()), |p| (p.generation, p.items.clone()))
    }

    /// Servers publish a file's diagnostics in parts (syntax first, types a moment later):
    /// waits until none came for `SETTLE` (or the deadline), then answers the last set.
    async fn settled(
        &self,
        uri: &str,
        mut generation: u64,
        mut items: Vec<Diagnostic>,
        deadline: tokio::time::Instant,
    ) -> Vec<Diagnostic> {
        loop {
            let seen = self.inner.publish_seen.notified();
            let (now_generation, now_items) = self.latest(uri);
            if now_generation > generation {
                (generation, items) = (now_generation, now_items);
            }
            let until = (tokio::time::Instant::now() + SETTLE).min(deadline);
            if tokio::time::timeout_at(until, seen).await.is_err() {
                let (last_generation, last_items) = self.latest(uri);
                return if last_generation > generation {
                    last_items
                } else {
                    items
                };
            }
        }
    }

    /// The diagnostics last published for `path` (with the document version they are for).
    pub fn published(&self, path: &Path) -> Option<(Option<i32>, Vec<Diagnostic>)> {
        lock(&self.inner.published)
            .get(&file_uri(path))
            .map(|p| (p.version, p.items.clone()))
    }

    /// Asks the server to shut down, then ends it.
    pub async fn shutdown(&self) {
        if self.is_alive() {
            let _ = self
                .request("shutdown", Value::Null, Duration::from_millis(500))
                .await;
            self.notify("exit", Value::Null).await;
        }
        if let Some(mut child) = lock(&self.inner.child).take() {
            let _ = child.start_kill();
        }
    }
}

fn died(inner: &Arc<Inner>) {
    inner.alive.store(false, Ordering::SeqCst);
    for (_, tx) in lock(&inner.pending).drain() {
        let _ = tx.send(Err(format!("{} stopped", inner.name)));
    }
    inner.publish_seen.notify_waiters();
}

async fn route(inner: &Arc<Inner>, message: Value) {
    let method = message.get("method").and_then(Value::as_str);
    let id = message.get("id").cloned();
    match (method, id) {
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else { return };
            if let Some(tx) = lock(&inner.pending).remove(&id) {
                let answer = match message.get("error") {
                    Some(e) => Err(e
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("request failed")
                        .to_string()),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = tx.send(answer);
            }
        }
        (Some("textDocument/publishDiagnostics"), None) => {
            let params = message.get("params").cloned().unwrap_or_default();
            let Some(uri) = params.get("uri").and_then(Value::as_str) else {
                return;
            };
            let items: Vec<Diagnostic> =
                serde_json::from_value(params.get("diagnostics").cloned().unwrap_or_default())
                    .unwrap_or_default();
            let version = params
                .get("version")
                .and_then(Value::as_i64)
                .and_then(|v| i32::try_from(v).ok());
            let mut published = lock(&inner.published);
            let entry = published.entry(uri.to_string()).or_default();
            entry.generation += 1;
            entry.version = version;
            entry.items = items;
            drop(published);
            inner.publish_seen.notify_waiters();
        }
        (Some(method), Some(id)) => {
            // The server's own requests: answered so it never waits on us.
            let params = message.get("params").cloned().unwrap_or_default();
            let result = match method {
                "workspace/configuration" => {
                    let n = params["items"].as_array().map_or(0, Vec::len);
                    Ok(Value::Array(vec![Value::Null; n]))
                }
                "workspace/workspaceFolders" => {
                    let uri = file_uri(&inner.root);
                    Ok(json!([{"uri": uri, "name": "workspace"}]))
                }
                "client/registerCapability"
                | "client/unregisterCapability"
                | "window/workDoneProgress/create"
                | "window/showMessageRequest"
                | "workspace/diagnostic/refresh"
                | "workspace/semanticTokens/refresh"
                | "workspace/inlayHint/refresh"
                | "workspace/codeLens/refresh" => Ok(Value::Null),
                _ => Err(format!("{method} is not supported by Podcode")),
            };
            let frame = match result {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err(message) => {
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": message}})
                }
            };
            let client = LspClient {
                inner: inner.clone(),
            };
            let _ = client.send(&frame).await;
        }
        _ => {}
    }
}
