//! Permission prompts for the command line. `TerminalAsker` asks on the terminal (stderr
//! for the prompt, stdin for the answer); without a terminal nobody can answer, so
//! `NoTerminalAsker` rejects and tells both the user and the model why.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use podcode_protocol::PermissionReply;
use podcode_tools::{AskRequest, Asker};

pub struct TerminalAsker;

fn prompt_line(question: &str) -> Option<String> {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{question}");
    let _ = err.flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_string()),
    }
}

/// What the prompt shows: who asks for what, and whatever the tool attached to explain it.
pub fn describe_request(req: &AskRequest) -> String {
    let mut text = format!(
        "\n? {} asks for permission: {} {}\n",
        req.tool,
        req.request.permission,
        req.request.patterns.join(" ")
    );
    let meta = &req.request.metadata;
    for key in ["command", "description", "diff", "preview", "path"] {
        if let Some(v) = meta.get(key).and_then(|v| v.as_str()) {
            text.push_str(&format!("  {key}:\n"));
            for line in v.lines().take(40) {
                text.push_str(&format!("    {line}\n"));
            }
        }
    }
    if let Some(args) = meta.get("args") {
        text.push_str(&format!("  arguments: {args}\n"));
    }
    podcode_protocol::sanitize_for_terminal(&text).into_owned()
}

#[async_trait]
impl Asker for TerminalAsker {
    async fn ask(&self, req: &AskRequest) -> PermissionReply {
        let req = req.clone();
        let asked = tokio::task::spawn_blocking(move || {
            eprint!("{}", describe_request(&req));
            let always = podcode_protocol::sanitize_for_terminal(&req.request.always.join(" ")).into_owned();
            loop {
                let Some(answer) = prompt_line(&format!(
                    "  [o] allow once   [a] always allow `{always}` in this project   [r] reject   [f] reject with feedback\n  > "
                )) else {
                    return PermissionReply::Reject { feedback: None };
                };
                match answer.to_ascii_lowercase().as_str() {
                    "o" | "y" | "once" | "yes" => return PermissionReply::Once,
                    "a" | "always" => return PermissionReply::Always,
                    "r" | "n" | "reject" | "no" => return PermissionReply::Reject { feedback: None },
                    "f" | "feedback" => {
                        let feedback = prompt_line("  feedback for the model: ");
                        return PermissionReply::Reject { feedback };
                    }
                    _ => eprintln!("  please answer o, a, r or f"),
                }
            }
        })
        .await;
        asked.unwrap_or(PermissionReply::Reject { feedback: None })
    }
}

/// Used when stdin is not a terminal and `--yes` was not given.
#[derive(Default)]
pub struct NoTerminalAsker {
    pub rejected: AtomicBool,
}

#[async_trait]
impl Asker for NoTerminalAsker {
    async fn ask(&self, req: &AskRequest) -> PermissionReply {
        self.rejected.store(true, Ordering::SeqCst);
        eprint!("{}", describe_request(req));
        eprintln!(
            "  rejected: no terminal to answer this prompt (pass --yes to allow asks; deny rules still hold)"
        );
        PermissionReply::Reject {
            feedback: Some(
                "nobody could answer the permission prompt (non-interactive run without --yes)"
                    .into(),
            ),
        }
    }
}

pub fn stdin_is_terminal() -> bool {
    std::io::stdin().is_terminal()
}
