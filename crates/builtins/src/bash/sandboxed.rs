//! The bash tool's side of the sandbox (the confinement itself, shared with executable
//! tools, is `podcode_tools::Confinement`): escalation. When
//! a sandboxed command failed because the sandbox refused a write or a connection, the
//! user is asked (permission `sandbox`, showing the command and what was denied) whether
//! to run it again outside the sandbox. "Always" remembers the same prefix family a
//! `bash` approval would (`npm install *`).

use podcode_protocol::PermissionRequest;
use podcode_sandbox::Denial;
use podcode_tools::{ToolContext, ToolError};
use serde_json::json;

use super::permission::permission_patterns;

/// Asks permission `sandbox` to run `command` again outside the sandbox.
pub async fn ask_escalation(
    ctx: &ToolContext,
    command: &str,
    denial: &Denial,
) -> Result<(), ToolError> {
    let (patterns, always) = permission_patterns(command);
    ctx.ask(PermissionRequest {
        permission: "sandbox".into(),
        patterns,
        always,
        metadata: json!({
            "command": command,
            "denied": escalation_reason(denial),
        }),
    })
    .await
}

/// The `denied` line of the escalation prompt.
pub fn escalation_reason(denial: &Denial) -> String {
    format!(
        "The sandbox stopped {}. Run the command again outside the sandbox, with your full rights?",
        denial.describe()
    )
}

/// Written between the sandboxed output and the re-run's output (the model reads both).
pub fn rerun_banner(denial: &Denial) -> String {
    format!(
        "\n[sandbox: the command failed because the sandbox stopped {}; the user allowed running it again outside the sandbox. Output of the second run:]\n",
        denial.describe()
    )
}

/// Added after a failed command when the user kept it in the sandbox.
pub fn kept_note(denial: &Denial, why: &str) -> String {
    format!(
        "The sandbox stopped {} and running the command outside the sandbox was not allowed ({why}). Work inside the workspace (use the session's temp dir, $TMPDIR, for scratch files), or ask the user to run the command themselves.",
        denial.describe()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn escalation_texts_are_pinned() {
        let d = Denial::Write(PathBuf::from("/etc/x"));
        assert_eq!(
            escalation_reason(&d),
            "The sandbox stopped writing /etc/x. Run the command again outside the sandbox, with your full rights?"
        );
        assert_eq!(
            rerun_banner(&d),
            "\n[sandbox: the command failed because the sandbox stopped writing /etc/x; the user allowed running it again outside the sandbox. Output of the second run:]\n"
        );
        assert_eq!(
            kept_note(&d, "rejected"),
            "The sandbox stopped writing /etc/x and running the command outside the sandbox was not allowed (rejected). Work inside the workspace (use the session's temp dir, $TMPDIR, for scratch files), or ask the user to run the command themselves."
        );
    }
}
