//! The shell snippets of a custom command (``!`git log -1` ``): each runs as a `bash` call
//! through the tool pipeline — the rules for `bash` decide (it asks by default, and an
//! untrusted project's config cannot widen that), it runs in the sandbox, it is recorded
//! under the command's user message like an attached file's `read` — and the snippet is
//! replaced by what the call returned (its output, or why it did not run).

use podcode_protocol::new_id;
use podcode_skills::shell_snippets;
use podcode_tools::{CallIdentity, CallRequest, RawArgs};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::record::Recorder;
use crate::texts::command_shell_description;

/// `text` with every snippet replaced by its call's result, in order.
pub(super) async fn run_shell_snippets(
    rec: &Recorder,
    identity: &CallIdentity,
    message_id: &str,
    command: &str,
    text: &str,
    abort: &CancellationToken,
) -> String {
    let snippets = shell_snippets(text);
    if snippets.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (range, cmd) in snippets {
        out.push_str(&text[at..range.start]);
        at = range.end;
        let mut identity = identity.clone();
        identity.message_id = message_id.to_string();
        identity.call_id = new_id("call");
        let args = json!({
            "command": cmd,
            "description": command_shell_description(command),
        });
        let done = rec
            .runtime
            .call(CallRequest {
                identity,
                tool: "bash".into(),
                args: RawArgs::Json(args),
                abort: abort.clone(),
            })
            .await;
        out.push_str(done.model_text.trim_end());
    }
    out.push_str(&text[at..]);
    out
}
