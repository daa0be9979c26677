//! Permission asks as the editor sees them: `session/request_permission` naming the action
//! (the call's title and kind, as its card shows them) with the terminal prompt's text as
//! content, the four options, and the selected option turned back into Podcode's reply.
//! The request waits on its own task, so the turn's stream keeps flowing while the user
//! decides.

use agent_client_protocol_schema::v1::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, ToolCallContent, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use podcode_core::Port;
use podcode_protocol::{PermissionReply, PermissionRequest, prompt_text};

use crate::rpc::Connection;

/// The four choices every permission request offers, as Podcode's replies.
pub const PERMISSION_OPTIONS: [(&str, &str, PermissionOptionKind); 4] = [
    ("allow_once", "Allow once", PermissionOptionKind::AllowOnce),
    (
        "allow_always",
        "Always allow (remembered for this project)",
        PermissionOptionKind::AllowAlways,
    ),
    ("reject_once", "Reject", PermissionOptionKind::RejectOnce),
    (
        "reject_always",
        "Reject, and tell the agent not to try again",
        PermissionOptionKind::RejectAlways,
    ),
];

/// The feedback the model reads when the user picked "reject always": Podcode remembers
/// approvals only, so the refusal is said to the model instead.
pub const REJECT_ALWAYS_FEEDBACK: &str =
    "The user rejected this and does not want it asked again: do not retry this action.";

/// The Podcode reply for the option the client selected (`None`: the client cancelled
/// the request, e.g. because the user cancelled the turn).
pub fn reply_for(option_id: Option<&str>) -> PermissionReply {
    match option_id {
        Some("allow_once") => PermissionReply::Once,
        Some("allow_always") => PermissionReply::Always,
        Some("reject_always") => PermissionReply::Reject {
            feedback: Some(REJECT_ALWAYS_FEEDBACK.into()),
        },
        _ => PermissionReply::Reject { feedback: None },
    }
}

/// One ask of a call: what the editor shows and where the answer goes.
pub struct Ask {
    pub session_id: String,
    pub request_id: String,
    pub call_id: String,
    /// What the call does (`Run `ls -la``, `Write src/app.py`), not the raw command.
    pub title: String,
    pub kind: ToolKind,
    /// The terminal prompt's text (`ask_text`).
    pub text: String,
}

/// The request's parameters: the call's card updated with the action and the ask's text.
pub fn params(ask: &Ask) -> RequestPermissionRequest {
    let fields = ToolCallUpdateFields::new()
        .title(ask.title.clone())
        .kind(ask.kind)
        .content(vec![ToolCallContent::from(ask.text.clone())]);
    RequestPermissionRequest::new(
        ask.session_id.clone(),
        ToolCallUpdate::new(ask.call_id.clone(), fields),
        PERMISSION_OPTIONS
            .iter()
            .map(|(id, name, kind)| PermissionOption::new(*id, *name, *kind))
            .collect(),
    )
}

/// Sends the ask to the client; the answer goes back as `Op::PermissionReply`.
pub fn send(conn: Connection, port: Port, ask: Ask) {
    let params = params(&ask);
    tokio::spawn(async move {
        let answer = conn.request("session/request_permission", &params).await;
        let option = match answer {
            Ok(v) => match serde_json::from_value::<RequestPermissionResponse>(v) {
                Ok(r) => match r.outcome {
                    RequestPermissionOutcome::Selected(s) => Some(s.option_id.0.to_string()),
                    _ => None,
                },
                Err(e) => {
                    eprintln!("podcode acp: unreadable permission answer: {e}");
                    None
                }
            },
            Err(e) => {
                eprintln!("podcode acp: permission request failed: {}", e.message);
                None
            }
        };
        // An ask the turn's abort already closed ignores the reply.
        port.reply(&ask.request_id, reply_for(option.as_deref()));
    });
}

/// A permission ask as text: the terminal prompt's lines (`prompt_text`).
pub fn ask_text(tool: &str, request: &PermissionRequest) -> String {
    let p = prompt_text(tool, request);
    let mut text = p.title;
    if let Some(warning) = &p.warning {
        text.push_str(&format!("\n{warning}"));
    }
    for section in &p.sections {
        text.push_str(&format!("\n{}:", section.label));
        for line in &section.lines {
            text.push_str(&format!("\n  {line}"));
        }
    }
    for line in &p.always {
        text.push_str(&format!("\n{line}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn an_ask_names_the_action_and_its_kind() {
        let ask = Ask {
            session_id: "ses_1".into(),
            request_id: "req_1".into(),
            call_id: "c1".into(),
            title: "Run `ls -la`".into(),
            kind: ToolKind::Execute,
            text: "bash asks for bash: ls -la".into(),
        };
        let v = serde_json::to_value(params(&ask)).unwrap();
        assert_eq!(
            v["toolCall"],
            json!({
                "toolCallId": "c1",
                "title": "Run `ls -la`",
                "kind": "execute",
                "content": [{"type": "content", "content": {"type": "text", "text": "bash asks for bash: ls -la"}}],
            })
        );
    }

    #[test]
    fn options_map_onto_podcode_replies() {
        assert_eq!(reply_for(Some("allow_once")), PermissionReply::Once);
        assert_eq!(reply_for(Some("allow_always")), PermissionReply::Always);
        assert_eq!(
            reply_for(Some("reject_once")),
            PermissionReply::Reject { feedback: None }
        );
        assert_eq!(
            reply_for(Some("reject_always")),
            PermissionReply::Reject {
                feedback: Some(REJECT_ALWAYS_FEEDBACK.into())
            }
        );
        assert_eq!(reply_for(None), PermissionReply::Reject { feedback: None });
        assert_eq!(
            reply_for(Some("something else")),
            PermissionReply::Reject { feedback: None }
        );
    }

    #[test]
    fn the_options_are_pinned() {
        let opts: Vec<Value> = PERMISSION_OPTIONS
            .iter()
            .map(|(id, name, kind)| {
                serde_json::to_value(PermissionOption::new(*id, *name, *kind)).unwrap()
            })
            .collect();
        assert_eq!(
            Value::Array(opts),
            json!([
                {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "allow_always", "name": "Always allow (remembered for this project)", "kind": "allow_always"},
                {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
                {"optionId": "reject_always", "name": "Reject, and tell the agent not to try again", "kind": "reject_always"},
            ])
        );
        assert_eq!(
            REJECT_ALWAYS_FEEDBACK,
            "The user rejected this and does not want it asked again: do not retry this action."
        );
    }
}
