//! Answering a session's permission asks by a policy, for front ends without a UI of their
//! own (`podcode run`, `podcode tool call`, `podcode mcp serve`): every
//! `Event::PermissionAsked` of a port — those already open when the answerer starts, then
//! each new one — is answered once with `Op::PermissionReply`, until the stream ends. A
//! policy that may block (a terminal prompt) runs off the async threads; one that decides at
//! once (`--yes`, no terminal) answers in place, without a hop to another thread and back
//! on every ask (a repeated call's `doom_loop` ask comes at every step). The texts of the
//! command line's prompt are here too. Also the policy of
//! `podcode mcp serve`: `--allow` rules, and the text a client's model reads for an ask no
//! rule opened.

use std::collections::HashSet;
use std::sync::Arc;

use podcode_protocol::{
    Event, Op, PermissionAction, PermissionReply, PermissionRequest, PermissionRule, prompt_text,
    sanitize_for_terminal,
};
use tokio::sync::broadcast;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::session::Port;
use crate::tool_session::ToolSession;

/// Decides an ask from the tool that asks and what it asks.
pub type Decide = Arc<dyn Fn(&str, &PermissionRequest) -> PermissionReply + Send + Sync>;

/// How a port's asks are decided.
#[derive(Clone)]
pub enum AskPolicy {
    /// Decides at once, never waiting on anything: run where the ask is read.
    Immediate(Decide),
    /// May wait (for a person at a terminal): run on a blocking thread.
    Blocking(Decide),
}

impl AskPolicy {
    /// `--yes`: every ask is allowed once (deny rules still hold: they never ask).
    pub fn allow_once() -> Self {
        Self::Immediate(Arc::new(|_: &str, _: &PermissionRequest| {
            PermissionReply::Once
        }))
    }

    /// Nobody can answer (no terminal): the ask is shown on stderr with why it is
    /// rejected, and the model is told how the user can allow it.
    pub fn no_terminal() -> Self {
        Self::Immediate(Arc::new(|tool: &str, request: &PermissionRequest| {
            eprintln!("{}{NO_TERMINAL_NOTE}", ask_text(tool, request));
            PermissionReply::Reject {
                feedback: Some(NO_TERMINAL_FEEDBACK.into()),
            }
        }))
    }
}

impl Port {
    /// Answers every ask of this port with `policy`, in a task of its own, until the
    /// session's stream ends. Call inside a Tokio runtime.
    pub fn answer_asks(&self, policy: AskPolicy) {
        let port = self.clone();
        let mut events = port.subscribe();
        tokio::spawn(async move {
            // Asks opened before we subscribed are answered first; an ask can arrive both
            // ways, and is answered once.
            let mut backlog = port.open_asks();
            let mut answered = HashSet::new();
            loop {
                let event = if backlog.is_empty() {
                    match events.recv().await {
                        Ok(e) => e,
                        Err(broadcast::error::RecvError::Lagged(_)) => {
                            backlog = port.open_asks();
                            continue;
                        }
                        Err(broadcast::error::RecvError::Closed) => break,
                    }
                } else {
                    backlog.remove(0)
                };
                let Event::PermissionAsked {
                    request_id,
                    tool,
                    request,
                    ..
                } = event
                else {
                    continue;
                };
                if !answered.insert(request_id.clone()) {
                    continue;
                }
                let reply = match &policy {
                    AskPolicy::Immediate(decide) => decide(&tool, &request),
                    AskPolicy::Blocking(decide) => {
                        let decide = decide.clone();
                        tokio::task::spawn_blocking(move || decide(&tool, &request))
                            .await
                            .unwrap_or(PermissionReply::Reject { feedback: None })
                    }
                };
                port.send(Op::PermissionReply { request_id, reply });
            }
        });
    }
}

/// What a terminal prompt shows: who asks for what, and whatever the tool attached to explain it
/// (else the call's arguments) — `podcode_protocol::prompt_text`, shared with the TUI.
pub fn ask_text(tool: &str, req: &PermissionRequest) -> String {
    let p = prompt_text(tool, req);
    let mut text = format!("\n? {}\n", p.title);
    if let Some(warning) = &p.warning {
        text.push_str(&format!("  ! {warning}\n"));
    }
    for section in &p.sections {
        text.push_str(&format!("  {}:\n", section.label));
        for line in &section.lines {
            text.push_str(&format!("    {line}\n"));
        }
    }
    sanitize_for_terminal(&text).into_owned()
}

/// The terminal prompt's answers, with what "always" remembers (one rule per line).
pub fn answer_choices(tool: &str, req: &PermissionRequest) -> String {
    let p = prompt_text(tool, req);
    let mut always = p.always.iter();
    let mut text = format!(
        "  [o] allow once\n  [a] {}\n",
        always.next().map(String::as_str).unwrap_or_default()
    );
    for rule in always {
        text.push_str(&format!("      {rule}\n"));
    }
    text.push_str("  [r] reject   [f] reject with feedback\n  > ");
    sanitize_for_terminal(&text).into_owned()
}

/// What `podcode run` and `tool call` print under an ask when nobody can answer it.
pub const NO_TERMINAL_NOTE: &str = "  rejected: no terminal to answer this prompt (pass --yes to allow asks; deny rules still hold)";

/// What the model reads for an ask nobody could answer (a run without a terminal or --yes).
pub const NO_TERMINAL_FEEDBACK: &str =
    "nobody could answer the permission prompt (non-interactive run without --yes)";

/// What a client's model reads when a call needed an ask no `--allow` rule opened.
pub const SERVE_REJECT_FEEDBACK: &str = "podcode mcp serve rejects permission asks that no --allow rule opened; ask the user to restart the server with --allow for this permission";

/// What the client's model reads for an ask `podcode mcp serve` rejected: the reason, what
/// was asked (the same text as the CLI prompt, arguments included) and how the user can
/// open it.
pub fn serve_rejection(tool: &str, request: &PermissionRequest) -> String {
    let p = prompt_text(tool, request);
    let mut text = format!("{SERVE_REJECT_FEEDBACK}. Asked: {}", p.title);
    if let Some(warning) = &p.warning {
        text.push_str(&format!("\n{warning}"));
    }
    for section in &p.sections {
        text.push_str(&format!("\n{}:", section.label));
        for line in &section.lines {
            text.push_str(&format!("\n  {line}"));
        }
    }
    text
}

impl Engine {
    /// The tool session `podcode mcp serve` serves: the `--allow` values as rules, and
    /// every ask no rule opened rejected with [`serve_rejection`].
    pub async fn open_mcp_serve_session(
        self: &Arc<Self>,
        allow: &[String],
    ) -> Result<ToolSession, EngineError> {
        let tools = self
            .open_tool_session("mcp", "MCP client connection", &allow_rules(allow))
            .await?;
        tools.port().answer_asks(AskPolicy::Immediate(Arc::new(
            |tool: &str, request: &PermissionRequest| PermissionReply::Reject {
                feedback: Some(serve_rejection(tool, request)),
            },
        )));
        Ok(tools)
    }
}

/// `--allow` values as rules: `PERMISSION` or `PERMISSION:PATTERN`.
pub fn allow_rules(allow: &[String]) -> Vec<PermissionRule> {
    allow
        .iter()
        .map(|a| {
            let (permission, pattern) = a.split_once(':').unwrap_or((a.as_str(), "*"));
            PermissionRule::new(permission, pattern, PermissionAction::Allow)
        })
        .collect()
}
