//! The TUI's `Asker`: forwards each permission ask to the event loop, which shows the
//! modal, and waits for the user's answer. When the UI is gone the ask is rejected.

use async_trait::async_trait;
use podcode_protocol::PermissionReply;
use podcode_tools::{AskRequest, Asker};
use tokio::sync::{mpsc, oneshot};

/// An ask waiting in the UI, with the channel its answer goes back on.
pub struct PendingAsk {
    pub request: AskRequest,
    pub reply: oneshot::Sender<PermissionReply>,
}

pub struct UiAsker {
    tx: mpsc::UnboundedSender<PendingAsk>,
}

impl UiAsker {
    /// The asker, and the receiving end the event loop reads.
    pub fn channel() -> (Self, mpsc::UnboundedReceiver<PendingAsk>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self { tx }, rx)
    }
}

#[async_trait]
impl Asker for UiAsker {
    async fn ask(&self, request: &AskRequest) -> PermissionReply {
        let (reply, answer) = oneshot::channel();
        let closed = PermissionReply::Reject {
            feedback: Some("the terminal UI closed before the user answered".into()),
        };
        if self
            .tx
            .send(PendingAsk {
                request: request.clone(),
                reply,
            })
            .is_err()
        {
            return closed;
        }
        answer.await.unwrap_or(closed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use podcode_protocol::PermissionRequest;

    fn request() -> AskRequest {
        AskRequest {
            request_id: "per_1".into(),
            session_id: "ses_1".into(),
            call_id: "call_1".into(),
            tool: "bash".into(),
            request: PermissionRequest {
                permission: "bash".into(),
                patterns: vec!["ls".into()],
                always: vec![],
                metadata: serde_json::Value::Null,
            },
        }
    }

    #[tokio::test]
    async fn the_answer_comes_back_from_the_ui() {
        let (asker, mut rx) = UiAsker::channel();
        let ui = tokio::spawn(async move {
            let pending = rx.recv().await.expect("an ask");
            assert_eq!(pending.request.tool, "bash");
            let _ = pending.reply.send(PermissionReply::Always);
        });
        assert_eq!(asker.ask(&request()).await, PermissionReply::Always);
        ui.await.expect("ui task");
    }

    #[tokio::test]
    async fn a_closed_ui_rejects() {
        let (asker, rx) = UiAsker::channel();
        drop(rx);
        assert!(matches!(
            asker.ask(&request()).await,
            PermissionReply::Reject { feedback: Some(_) }
        ));
    }
}
