//! One configured MCP server and its connection. A server starts on demand (or in the
//! background at startup), lists its tools, and keeps one rmcp client session. When it
//! fails to start, dies, or its connection closes, the reason is kept for `podcode tools`
//! and `podcode mcp list`, the client is dropped, and the next use starts it again; after
//! consecutive start failures the next attempt waits (1 s, 2 s, 4 s … up to 60 s).

use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use podcode_config::McpServerConfig;
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde::Serialize;
use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::sync::Mutex;

use crate::error::McpError;

const STDERR_TAIL: usize = 2048;
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// The rmcp client handler: forwards progress notifications to per-call subscribers.
#[derive(Clone, Default)]
pub struct Handler {
    pub(crate) progress: ProgressDispatcher,
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.handle_notification(params).await;
    }
}

pub type Client = RunningService<RoleClient, Handler>;

/// Where a server is in its life, as `podcode mcp list` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    /// `enabled = false`: never started.
    Disabled,
    /// Being started or listing its tools.
    Starting,
    /// Connected, tools listed.
    Ready,
    /// Could not start or stopped; `last_error` says why (a later use retries after a pause).
    Failed,
}

impl ServerState {
    /// The lowercase name shown in listings.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Disabled => "disabled",
            Self::Starting => "starting",
            Self::Ready => "ready",
            Self::Failed => "failed",
        }
    }
}

/// A server's tool as it listed it: name, description, input schema.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct RemoteTool {
    /// The tool's name on the server (Podcode's id adds the server's name).
    pub name: String,
    /// The server's description of the tool, given to the model.
    pub description: String,
    /// JSON Schema of the tool's arguments.
    pub input_schema: Value,
}

struct Conn {
    state: ServerState,
    client: Option<Arc<Client>>,
    pid: Option<u32>,
    last_error: Option<String>,
    failures: u32,
    retry_at: Option<Instant>,
}

/// One configured MCP server: starts it on first use (stdio or HTTP), keeps the connection,
/// restarts it after a failure, and caches what it lists.
pub struct McpServer {
    /// The server's name in config (`[mcp.<name>]`).
    pub name: String,
    /// Its configuration.
    pub config: McpServerConfig,
    conn: Mutex<Conn>,
    /// A snapshot of the state readable without waiting for a start in progress.
    status: StdMutex<(ServerState, Option<String>, usize)>,
    tools: StdMutex<Vec<RemoteTool>>,
    /// Whether the running (or last) server declared the `resources` capability.
    resources: std::sync::atomic::AtomicBool,
    stderr: Arc<StdMutex<String>>,
    /// The size of the last over-limit message whose id could not be found (0: none).
    unmatched_oversize: Arc<std::sync::atomic::AtomicU64>,
    /// Large result texts streamed to disk, waiting for their call.
    spills: Arc<crate::streamed::Spills>,
    /// The sandbox a stdio server starts in (`None`: as it is).
    sandbox: Option<crate::StdioSandbox>,
    /// The denial log of the running (or last) process, which its sandbox fills.
    denials: StdMutex<Option<std::path::PathBuf>>,
}

impl Drop for McpServer {
    fn drop(&mut self) {
        self.set_denial_log(None);
    }
}

impl McpServer {
    /// A server started as configured, without a sandbox.
    pub fn new(name: String, config: McpServerConfig) -> Arc<Self> {
        Self::sandboxed(name, config, None)
    }

    /// A server whose stdio process starts in `sandbox` (unless its config opts out).
    pub fn sandboxed(
        name: String,
        config: McpServerConfig,
        sandbox: Option<crate::StdioSandbox>,
    ) -> Arc<Self> {
        let state = if config.enabled {
            ServerState::Starting
        } else {
            ServerState::Disabled
        };
        Arc::new(Self {
            name,
            config,
            conn: Mutex::new(Conn {
                state,
                client: None,
                pid: None,
                last_error: None,
                failures: 0,
                retry_at: None,
            }),
            status: StdMutex::new((state, None, 0)),
            tools: StdMutex::new(Vec::new()),
            resources: std::sync::atomic::AtomicBool::new(false),
            stderr: Arc::new(StdMutex::new(String::new())),
            unmatched_oversize: Arc::default(),
            spills: Arc::default(),
            sandbox,
            denials: StdMutex::new(None),
        })
    }

    /// State, last error and tool count, without waiting.
    pub fn status(&self) -> (ServerState, Option<String>, usize) {
        self.status
            .lock()
            .map(|s| s.clone())
            .unwrap_or((ServerState::Failed, None, 0))
    }

    /// The tools from the last successful listing.
    pub fn tools(&self) -> Vec<RemoteTool> {
        self.tools.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// Whether the server offers resources (as of its last start), for the resource tools.
    pub fn offers_resources(&self) -> bool {
        self.resources.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The server process id while it runs (stdio servers only).
    pub async fn pid(&self) -> Option<u32> {
        self.conn.lock().await.pid
    }

    /// Takes the size of an over-limit message dropped since the last call to this, when
    /// its id could not be found (so no call was failed at once).
    pub(crate) fn take_unmatched_oversize(&self) -> Option<u64> {
        let bytes = self
            .unmatched_oversize
            .swap(0, std::sync::atomic::Ordering::Relaxed);
        (bytes > 0).then_some(bytes)
    }

    pub(crate) fn spills(&self) -> &crate::streamed::Spills {
        &self.spills
    }

    pub(crate) fn max_message_bytes(&self) -> u64 {
        self.config.max_message_bytes
    }

    /// How long one tool call may take (the config's `timeout`, at least one second).
    pub fn call_timeout(&self) -> Duration {
        Duration::from_secs(self.config.timeout.max(1))
    }

    fn publish(&self, conn: &Conn) {
        let count = self.tools.lock().map(|t| t.len()).unwrap_or(0);
        if let Ok(mut s) = self.status.lock() {
            *s = (conn.state, conn.last_error.clone(), count);
        }
    }

    /// A live client, starting the server when it is not running (honouring backoff).
    pub async fn client(&self) -> Result<Arc<Client>, McpError> {
        let mut conn = self.conn.lock().await;
        if conn.state == ServerState::Disabled {
            return Err(McpError::Disabled(self.name.clone()));
        }
        if let Some(c) = &conn.client {
            if !c.is_closed() {
                return Ok(c.clone());
            }
            let why = self.exit_reason("the connection closed");
            conn.client = None;
            conn.pid = None;
            conn.state = ServerState::Failed;
            conn.last_error = Some(why);
        }
        if let Some(at) = conn.retry_at
            && Instant::now() < at
        {
            let wait = at.saturating_duration_since(Instant::now()).as_secs() + 1;
            return Err(McpError::Unavailable {
                server: self.name.clone(),
                reason: format!(
                    "{} (next restart attempt in {wait} s)",
                    conn.last_error.clone().unwrap_or_default()
                ),
            });
        }
        conn.state = ServerState::Starting;
        self.publish(&conn);
        let startup = Duration::from_secs(self.config.startup_timeout.max(1));
        let started = tokio::time::timeout(startup, self.connect()).await;
        let result = match started {
            Ok(Ok((client, pid, tools))) => {
                if let Ok(mut t) = self.tools.lock() {
                    *t = tools;
                }
                let resources = client
                    .peer_info()
                    .is_some_and(|info| info.capabilities.resources.is_some());
                self.resources
                    .store(resources, std::sync::atomic::Ordering::Relaxed);
                let client = Arc::new(client);
                conn.client = Some(client.clone());
                conn.pid = pid;
                conn.state = ServerState::Ready;
                conn.last_error = None;
                conn.failures = 0;
                conn.retry_at = None;
                Ok(client)
            }
            Ok(Err(reason)) => Err(reason),
            Err(_) => Err(format!(
                "did not start within {} s (startup_timeout)",
                startup.as_secs()
            )),
        };
        let out = result.map_err(|reason| {
            conn.failures += 1;
            let backoff = Duration::from_secs(1 << (conn.failures - 1).min(6)).min(MAX_BACKOFF);
            conn.retry_at = Some(Instant::now() + backoff);
            conn.state = ServerState::Failed;
            conn.last_error = Some(reason.clone());
            McpError::Unavailable {
                server: self.name.clone(),
                reason,
            }
        });
        self.publish(&conn);
        out
    }

    /// Marks the server failed after it died or hung mid-call; the next use restarts it.
    /// Only the session `client` is dropped: a newer one started meanwhile stays.
    pub async fn mark_failed(&self, client: &Arc<Client>, reason: String) {
        let mut conn = self.conn.lock().await;
        match &conn.client {
            Some(c) if Arc::ptr_eq(c, client) => {
                // Dropping our handle lets the session close and the child be killed.
                conn.client = None;
            }
            _ => return,
        }
        conn.pid = None;
        conn.state = ServerState::Failed;
        conn.last_error = Some(reason);
        self.publish(&conn);
    }

    /// Replaces the running process's denial log, removing the previous one.
    fn set_denial_log(&self, log: Option<std::path::PathBuf>) {
        if let Ok(mut cur) = self.denials.lock() {
            if let Some(old) = cur.take() {
                let _ = std::fs::remove_file(old);
            }
            *cur = log;
        }
    }

    /// The tail of the server's stderr, for error messages.
    pub fn exit_reason(&self, what: &str) -> String {
        let tail = self
            .stderr
            .lock()
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        if tail.is_empty() {
            return what.to_string();
        }
        let log = self.denials.lock().ok().and_then(|l| l.clone());
        match crate::confine::denied_note(
            self.sandbox.as_ref(),
            &self.name,
            &self.config,
            &tail,
            log.as_deref(),
        ) {
            Some(note) => format!("{what}; its stderr ends with: {tail} ({note})"),
            None => format!("{what}; its stderr ends with: {tail}"),
        }
    }

    async fn connect(&self) -> Result<(Client, Option<u32>, Vec<RemoteTool>), String> {
        let handler = Handler::default();
        let (client, pid) = if let Some(url) = &self.config.url {
            (self.connect_http(url, handler).await?, None)
        } else if let Some(command) = &self.config.command {
            let (mut cmd, log) =
                crate::confine::command(self.sandbox.as_ref(), &self.name, &self.config, command)
                    .map_err(|e| match e.kind() {
                    std::io::ErrorKind::NotFound => format!("could not start `{command}`: {e}"),
                    _ => format!("could not prepare the sandbox for `{command}`: {e}"),
                })?;
            self.set_denial_log(log);
            if let Some(cwd) = &self.config.cwd {
                cmd.current_dir(cwd);
            }
            let (transport, stderr) = crate::capped::ChildTransport::spawn(
                cmd,
                &self.name,
                self.config.max_message_bytes,
                self.unmatched_oversize.clone(),
                self.spills.clone(),
            )
            .map_err(|e| format!("could not start `{command}`: {e}"))?;
            let pid = transport.id();
            if let Ok(mut s) = self.stderr.lock() {
                s.clear();
            }
            let mut stderr_task = None;
            if let Some(mut err) = stderr {
                let tail = self.stderr.clone();
                stderr_task = Some(tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = err.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        if let Ok(mut t) = tail.lock() {
                            t.push_str(&String::from_utf8_lossy(&buf[..n]));
                            let excess = t.len().saturating_sub(STDERR_TAIL);
                            if excess > 0 {
                                let cut = t.ceil_char_boundary(excess);
                                t.drain(..cut);
                            }
                        }
                    }
                }));
            }
            let client = match handler.serve(transport).await {
                Ok(client) => client,
                Err(e) => {
                    // A server that exited has closed its stderr too: let the reader take
                    // the rest, so the error says why (briefly: a live server may hold it).
                    if let Some(task) = stderr_task {
                        let _ = tokio::time::timeout(Duration::from_millis(500), task).await;
                    }
                    return Err(self.exit_reason(&format!("the MCP handshake failed: {e}")));
                }
            };
            (client, pid)
        } else {
            return Err("neither `command` nor `url` is set".to_string());
        };
        let listed = client
            .list_all_tools()
            .await
            .map_err(|e| format!("listing its tools failed: {e}"))?;
        let tools = listed
            .into_iter()
            .map(|t| RemoteTool {
                name: t.name.to_string(),
                description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                input_schema: Value::Object((*t.input_schema).clone()),
            })
            .collect();
        Ok((client, pid, tools))
    }

    async fn connect_http(&self, url: &str, handler: Handler) -> Result<Client, String> {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| format!("could not build an HTTP client: {e}"))?;
        let mut headers = HashMap::new();
        for (k, v) in &self.config.headers {
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                .map_err(|e| format!("header `{k}`: {e}"))?;
            let value = reqwest::header::HeaderValue::from_str(v)
                .map_err(|e| format!("header `{k}`: {e}"))?;
            headers.insert(name, value);
        }
        let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
        let transport = StreamableHttpClientTransport::with_client(http, config);
        handler
            .serve(transport)
            .await
            .map_err(|e| format!("could not connect to {url}: {e}"))
    }
}
