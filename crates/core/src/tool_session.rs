//! Sessions without a model: `podcode tool call` and `podcode mcp serve` run tools by hand
//! through the same pipeline, journaled under a session of their own. Their permission
//! asks are events on the session's port like any other; the front end (a terminal prompt,
//! `--yes`, an `--allow` policy) answers them.

use std::sync::Arc;

use podcode_protocol::{Event, Op, PermissionRule};
use podcode_tools::{CallIdentity, CallOutcome, CallRequest, RawArgs, ToolRuntime};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::engine::{Engine, NewSessionSpec};
use crate::error::EngineError;
use crate::session::{Port, SESSION_EVENTS, runtime_sink};

/// A session for running single tool calls outside the agent loop (`podcode tool call`, `mcp
/// serve`): the same pipeline and events, no model.
pub struct ToolSession {
    id: String,
    port: Port,
    runtime: Arc<ToolRuntime>,
    identity: CallIdentity,
}

impl Engine {
    /// A new session named `title` whose calls run as agent `agent` (`cli`, `mcp`), with
    /// `extra_rules` after the config's (e.g. `--allow` policies).
    pub async fn open_tool_session(
        self: &Arc<Self>,
        agent: &str,
        title: &str,
        extra_rules: &[PermissionRule],
    ) -> Result<ToolSession, EngineError> {
        let set = self.tool_sets().await.latest();
        let id = self.create_session(&NewSessionSpec {
            agent,
            title,
            model: None,
        })?;
        let (events, _) = broadcast::channel(SESSION_EVENTS);
        let port = Port::new(&id, events, None, self.active.clone());
        let runtime = Arc::new(self.runtime(
            podcode_agent::filter_registry(&set.registry, &podcode_agent::AgentProfile::build()),
            set.hooks.clone(),
            port.asker(),
            extra_rules,
            agent,
            runtime_sink(port.sink(), self.bus()),
        )?);
        let identity = CallIdentity {
            session_id: id.clone(),
            message_id: String::new(),
            call_id: String::new(),
            parent_id: None,
            root_id: None,
            agent: agent.into(),
            main_cwd: self.cwd().to_path_buf(),
            directory: self.cwd().to_path_buf(),
            worktree: self.project().to_path_buf(),
            model_images: None,
        };
        Ok(ToolSession {
            id,
            port,
            runtime,
            identity,
        })
    }
}

impl ToolSession {
    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }
    /// The session's event stream and op sender.
    pub fn port(&self) -> Port {
        self.port.clone()
    }
    /// A receiver of the session's events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.port.subscribe()
    }
    /// Sends an op (a permission reply, an abort).
    pub fn send(&self, op: Op) {
        self.port.send(op);
    }

    /// One call through the whole pipeline, as a model would make it.
    pub async fn call(&self, tool: &str, args: String, abort: CancellationToken) -> CallOutcome {
        self.runtime
            .call(CallRequest {
                identity: self.identity.clone(),
                tool: tool.to_string(),
                args: RawArgs::Text(args),
                abort,
            })
            .await
    }

    /// Serves the tool set over MCP on stdin/stdout until the client disconnects.
    pub async fn serve_mcp_stdio(&self) -> Result<(), EngineError> {
        podcode_mcp::ToolServer::new(self.runtime.clone(), self.identity.clone())
            .serve_stdio()
            .await
            .map_err(|e| EngineError::Io(e.to_string()))
    }
}
