//! The agent side of the connection: reads the client's lines, answers `initialize`,
//! `session/new`, `session/load`, `session/list`, `session/prompt`, `session/set_mode`,
//! `session/set_config_option` and `session/cancel`, and routes the client's answers to
//! our own requests back to `rpc::Connection`. Each request runs on its own task, so a
//! long prompt never blocks a cancel.
//!
//! Sessions are the engine's `SessionRegistry`'s: `session/new` creates one in the
//! directory the client names (that directory's engine: its config layers, rules and
//! tools), `session/load` opens a stored one in the directory it was started in, whatever
//! `cwd` the client sends, and every other request looks its session up there. A new
//! session is held back (the engine's shared drafts) until its first prompt — from the
//! editor or any other front end of the process — stores and titles it, as in the TUI: an editor opening threads it never writes in leaves nothing in the history. This agent
//! keeps no sessions, busy flags or resume rules of its own, so a session another front end
//! of this process drives answers a second prompt with the same busy text.

use std::path::Path;
use std::sync::Arc;

use agent_client_protocol_schema::v1::{
    AgentCapabilities, AvailableCommandsUpdate, ClientNotification, ClientRequest, Implementation,
    InitializeResponse, LoadSessionResponse, McpCapabilities, McpServer, NewSessionResponse,
    PromptCapabilities, SessionCapabilities, SessionConfigOptionValue, SessionListCapabilities,
    SessionUpdate, SetSessionConfigOptionResponse, SetSessionModeResponse,
};
use agent_client_protocol_schema::{MethodDispatchError, ProtocolVersion};
use podcode_core::{
    ClientMcpServer, LiveSession, Resume, SessionOptions, SessionPick, SessionRegistry,
};
use serde::Serialize;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};

use crate::error::AcpError;
use crate::list::check_cwd;
use crate::rpc::{Connection, Frame, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError};
use crate::session::{AcpSession, MODE_OPTION, MODEL_OPTION, engine_error};
use crate::turn::send_update;

/// How long the end of input waits for requests still being answered.
const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// How `podcode acp` was started.
pub struct AcpOptions {
    /// The process's sessions, each run by the engine of its own directory (one engine per
    /// directory and set of client MCP servers).
    pub sessions: Arc<SessionRegistry>,
    /// The agent profile new sessions start with.
    pub agent: String,
    /// The model new sessions start with (`provider/model-id`), instead of the config's.
    pub model: Option<String>,
}

struct Agent {
    conn: Connection,
    opts: AcpOptions,
}

/// Serves one client on `input`/`output` until its input ends; then every session of the
/// registry is closed (running turns aborted) and every engine shut down.
pub async fn serve<R, W>(input: R, output: W, opts: AcpOptions) -> Result<(), AcpError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let conn = Connection::new(output);
    let agent = Arc::new(Agent {
        conn: conn.clone(),
        opts,
    });
    let mut input = BufReader::new(input);
    let mut frame = Vec::new();
    // Requests still being answered: on end of input they finish (a running prompt
    // answers `cancelled` once its session is closed) before the process exits.
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        // Frames are read as bytes and decoded one by one, so a frame that is not UTF-8
        // is one malformed message (answered -32700) rather than the end of the input.
        frame.clear();
        if input.read_until(b'\n', &mut frame).await? == 0 {
            break;
        }
        if frame.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let message: Value = match serde_json::from_slice(&frame) {
            Ok(v) => v,
            Err(e) => {
                conn.respond(
                    Value::Null,
                    Err(RpcError {
                        code: PARSE_ERROR,
                        message: format!("not JSON: {e}"),
                    }),
                );
                continue;
            }
        };
        match Frame::classify(message) {
            Frame::Request { id, method, params } => {
                let agent = agent.clone();
                while tasks.try_join_next().is_some() {}
                tasks.spawn(async move {
                    let loaded = params["sessionId"].as_str().map(str::to_string);
                    let result = agent.request(&method, params).await;
                    // A session the client now knows hears which commands it has.
                    let opened = match (&result, method.as_str()) {
                        (Ok(v), "session/new") => v["sessionId"].as_str().map(str::to_string),
                        (Ok(_), "session/load") => loaded,
                        _ => None,
                    };
                    agent.conn.respond(id, result);
                    if let Some(session_id) = opened {
                        agent.announce_commands(&session_id).await;
                    }
                });
            }
            Frame::Notification { method, params } => agent.notification(&method, &params),
            Frame::Response(message) => conn.deliver(&message),
            Frame::Invalid { id, why } => conn.respond(
                id,
                Err(RpcError {
                    code: INVALID_REQUEST,
                    message: why.to_string(),
                }),
            ),
        }
    }
    conn.close_pending();
    agent.opts.sessions.close_all().await;
    // Bounded, so a request stuck on something external cannot keep the process alive.
    let drain = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(SHUTDOWN_WAIT, drain).await.is_err() {
        eprintln!("podcode acp: requests still running at exit were dropped");
    }
    conn.flush_and_stop().await;
    agent.opts.sessions.shutdown().await;
    Ok(())
}

fn to_value(v: impl Serialize) -> Result<Value, RpcError> {
    serde_json::to_value(v).map_err(|e| RpcError::internal(e.to_string()))
}

impl Agent {
    async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let request =
            ClientRequest::from_method_and_params(method, &params).map_err(|e| match e {
                MethodDispatchError::UnknownMethod { .. } => RpcError {
                    code: METHOD_NOT_FOUND,
                    message: format!("podcode acp does not handle {method}"),
                },
                other => RpcError::invalid_params(other.to_string()),
            })?;
        match request {
            ClientRequest::InitializeRequest(req) => to_value(initialize(req.protocol_version)),
            ClientRequest::AuthenticateRequest(_) => Ok(serde_json::json!({})),
            ClientRequest::NewSessionRequest(req) => {
                let session = self.create(&req.cwd, &req.mcp_servers).await?;
                to_value(
                    NewSessionResponse::new(session.id().to_string())
                        .modes(session.modes().await)
                        .config_options(session.config_options().await),
                )
            }
            ClientRequest::ListSessionsRequest(req) => {
                to_value(crate::list::list(self.opts.sessions.home(), &req)?)
            }
            ClientRequest::LoadSessionRequest(req) => {
                // The session runs where it was started, so only the form is checked.
                check_cwd(&req.cwd, false)?;
                let id = req.session_id.0.to_string();
                // Opened in the directory it was started in (not the client's `cwd`);
                // unknown ids and gone directories fail before anything is replayed.
                let live = self
                    .opts
                    .sessions
                    .open_with(&id, Resume::default(), &client_servers(&req.mcp_servers))
                    .await
                    .map_err(engine_error)?;
                crate::replay::replay(&live.engine, &self.conn, &id, live.session.directory())?;
                let session = self.view(live);
                // The editor shows a loaded thread's title and context meter as a live one's.
                session.announce_title(None);
                session.announce_usage().await;
                to_value(
                    LoadSessionResponse::new()
                        .modes(session.modes().await)
                        .config_options(session.config_options().await),
                )
            }
            ClientRequest::PromptRequest(req) => {
                let session = self.session(&req.session_id.0).await?;
                to_value(session.prompt(req.prompt).await?)
            }
            ClientRequest::SetSessionModeRequest(req) => {
                let session = self.session(&req.session_id.0).await?;
                session.set_mode(&req.mode_id.0).await?;
                to_value(SetSessionModeResponse::new())
            }
            ClientRequest::SetSessionConfigOptionRequest(req) => {
                let session = self.session(&req.session_id.0).await?;
                let SessionConfigOptionValue::ValueId { value } = req.value else {
                    return Err(RpcError::invalid_params(format!(
                        "{} takes one of its listed values",
                        req.config_id.0
                    )));
                };
                match &*req.config_id.0 {
                    MODE_OPTION => session.set_mode(&value.0).await?,
                    MODEL_OPTION => session.set_model(&value.0).await?,
                    other => {
                        return Err(RpcError::invalid_params(format!(
                            "no config option {other}; this agent has {MODE_OPTION} and {MODEL_OPTION}"
                        )));
                    }
                }
                to_value(SetSessionConfigOptionResponse::new(
                    session.config_options().await,
                ))
            }
            _ => Err(RpcError {
                code: METHOD_NOT_FOUND,
                message: format!("podcode acp does not handle {method}"),
            }),
        }
    }

    fn notification(&self, method: &str, params: &Value) {
        match ClientNotification::from_method_and_params(method, params) {
            Ok(ClientNotification::CancelNotification(n)) => {
                let sessions = self.opts.sessions.clone();
                let id = n.session_id.0.to_string();
                tokio::spawn(async move {
                    if let Some(live) = sessions.live(&id).await {
                        live.port()
                            .send(podcode_protocol::Op::Abort { session_id: id });
                    }
                });
            }
            Ok(_) => {}
            Err(e) => eprintln!("podcode acp: ignored notification {method}: {e}"),
        }
    }

    /// `available_commands_update`: the custom commands of the session's workspace (the
    /// client shows them as slash commands and sends `/name args` as a prompt).
    async fn announce_commands(&self, session_id: &str) {
        let Ok(session) = self.session(session_id).await else {
            return;
        };
        let commands = crate::translate::available_commands(session.engine().command_infos());
        send_update(
            &self.conn,
            session_id,
            SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands)),
        );
    }

    fn view(&self, live: Arc<LiveSession>) -> AcpSession {
        AcpSession::new(live, self.conn.clone())
    }

    /// The registry's open session `id`.
    async fn session(&self, id: &str) -> Result<AcpSession, RpcError> {
        match self.opts.sessions.live(id).await {
            Some(live) => Ok(self.view(live)),
            None => Err(RpcError::invalid_params(format!(
                "no open session {id}: create one with session/new or open it with session/load"
            ))),
        }
    }

    /// A new session in `cwd`, run by that directory's engine with the client's MCP servers.
    async fn create(&self, cwd: &Path, servers: &[McpServer]) -> Result<AcpSession, RpcError> {
        check_cwd(cwd, true)?;
        let opts = SessionOptions {
            pick: SessionPick::New {
                title: String::new(),
            },
            agent: self.opts.agent.clone(),
            model: self.opts.model.clone(),
            max_steps: None,
            worktree: false,
        };
        let live = self
            .opts
            .sessions
            .create(Some(cwd), &client_servers(servers), opts)
            .await
            .map_err(engine_error)?;
        live.engine
            .hold_until_prompted(live.engine.shared_drafts(), live.session.id())
            .map_err(engine_error)?;
        Ok(self.view(live))
    }
}

fn client_servers(servers: &[McpServer]) -> Vec<ClientMcpServer> {
    servers.iter().filter_map(client_server).collect()
}

/// What `initialize` answers: protocol version 1, sessions can be loaded and listed,
/// prompts may embed text files (`embeddedContext`), MCP servers over stdio and HTTP are
/// taken.
fn initialize(_client_version: ProtocolVersion) -> InitializeResponse {
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .session_capabilities(
                    SessionCapabilities::new().list(SessionListCapabilities::new()),
                )
                .prompt_capabilities(PromptCapabilities::new().embedded_context(true))
                .mcp_capabilities(McpCapabilities::new().http(true)),
        )
        .agent_info(
            Implementation::new("podcode", env!("CARGO_PKG_VERSION")).title("Podcode".to_string()),
        )
}

/// A client's MCP server as Podcode runs it (stdio and streamable HTTP; SSE servers are
/// not supported and are left out with a note on stderr).
fn client_server(server: &McpServer) -> Option<ClientMcpServer> {
    match server {
        McpServer::Stdio(s) => Some(ClientMcpServer {
            name: s.name.clone(),
            command: Some(s.command.display().to_string()),
            args: s.args.clone(),
            env: s
                .env
                .iter()
                .map(|e| (e.name.clone(), e.value.clone()))
                .collect(),
            url: None,
            headers: Default::default(),
        }),
        McpServer::Http(h) => Some(ClientMcpServer {
            name: h.name.clone(),
            command: None,
            args: Vec::new(),
            env: Default::default(),
            url: Some(h.url.clone()),
            headers: h
                .headers
                .iter()
                .map(|e| (e.name.clone(), e.value.clone()))
                .collect(),
        }),
        other => {
            eprintln!(
                "podcode acp: MCP server left out (only stdio and HTTP servers are supported): {other:?}"
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn initialize_says_what_is_supported() {
        let v = serde_json::to_value(initialize(ProtocolVersion::V1)).unwrap();
        assert_eq!(v["protocolVersion"], json!(1));
        assert_eq!(v["agentCapabilities"]["loadSession"], json!(true));
        assert_eq!(
            v["agentCapabilities"]["sessionCapabilities"],
            json!({"list": {}})
        );
        assert_eq!(
            v["agentCapabilities"]["promptCapabilities"],
            json!({"image": false, "audio": false, "embeddedContext": true})
        );
        assert_eq!(
            v["agentCapabilities"]["mcpCapabilities"],
            json!({"http": true, "sse": false})
        );
        assert_eq!(v["agentInfo"]["name"], json!("podcode"));
    }

    #[test]
    fn client_mcp_servers_become_podcode_servers() {
        let servers: Vec<McpServer> = serde_json::from_value(json!([
            {"name": "fs", "command": "/bin/srv", "args": ["-v"], "env": [{"name": "K", "value": "V"}]},
            {"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": []},
            {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []},
        ]))
        .unwrap();
        let got: Vec<ClientMcpServer> = servers.iter().filter_map(client_server).collect();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].command.as_deref(), Some("/bin/srv"));
        assert_eq!(got[0].env.get("K").map(String::as_str), Some("V"));
        assert_eq!(got[1].url.as_deref(), Some("http://127.0.0.1:9/mcp"));
    }
}
