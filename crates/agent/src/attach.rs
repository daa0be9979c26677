//! Files the user attached to a prompt (`@path` in the TUI, `Op::Prompt.files`). Each is
//! read through the tool pipeline's `read` tool, so the same permission rules, path checks
//! and truncation apply as when the model reads it; what the read returned (or why it
//! failed) joins the user's message as a `file` part, which `load_history` turns back into
//! the text the model saw. An image the read attached (for a model that takes images) goes
//! with it as an image, now and when the history is rebuilt.

use podcode_protocol::{Attachment, new_id};
use podcode_providers::Part;
use podcode_store::StoreError;
use podcode_tools::{CallIdentity, CallRequest, CallStatus, RawArgs};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::history::PartKind;
use crate::record::Recorder;
use crate::texts::{attached_file_failed_text, attached_file_text};

/// The stored `file` part of a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileData {
    /// The path as the user gave it, made absolute.
    pub path: String,
    /// The `read` call that fetched it.
    pub call_id: String,
    /// Exactly what the model reads for this attachment.
    pub text: String,
    /// The read failed (denied, missing, not a text file); `text` says why.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failed: bool,
}

/// Reads each attached file through the pipeline and records it under `message_id`;
/// returns the parts to add to the user's message in the history.
pub(crate) async fn attach_files(
    rec: &Recorder,
    identity: &CallIdentity,
    message_id: &str,
    files: &[String],
    abort: &CancellationToken,
) -> Result<Vec<Part>, StoreError> {
    let mut parts = Vec::new();
    for path in files {
        let mut identity = identity.clone();
        identity.message_id = message_id.to_string();
        identity.call_id = new_id("call");
        let args = json!({ "filePath": path });
        let out = rec
            .runtime
            .call(CallRequest {
                identity: identity.clone(),
                tool: "read".into(),
                args: RawArgs::Json(args.clone()),
                abort: abort.clone(),
            })
            .await;
        let failed = out.status != CallStatus::Completed;
        let text = if failed {
            attached_file_failed_text(path, &out.model_text)
        } else {
            attached_file_text(path, &args.to_string(), &out.model_text)
        };
        let data = FileData {
            path: path.clone(),
            call_id: out.call_id,
            text: text.clone(),
            failed,
        };
        rec.part(message_id, PartKind::File, &data)?;
        parts.push(Part::Text { text });
        if !failed {
            parts.extend(image_parts(&out.result.attachments));
        }
    }
    Ok(parts)
}

/// The images among a read's attachments, as the parts of a user message.
pub(crate) fn image_parts(attachments: &[Attachment]) -> impl Iterator<Item = Part> + '_ {
    attachments
        .iter()
        .filter(|a| a.mime.starts_with("image/"))
        .map(|a| Part::Image {
            mime: a.mime.clone(),
            url: a.url.clone(),
        })
}
