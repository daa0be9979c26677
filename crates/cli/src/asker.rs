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

/// What the prompt shows: who asks for what, and whatever the tool attached to explain it
/// (else the call's arguments) — `podcode_tools::prompt_text`, shared with the TUI.
pub fn describe_request(req: &AskRequest) -> String {
    let p = podcode_tools::prompt_text(&req.tool, &req.request);
    let mut text = format!("\n? {}\n", p.title);
    for section in &p.sections {
        text.push_str(&format!("  {}:\n", section.label));
        for line in &section.lines {
            text.push_str(&format!("    {line}\n"));
        }
    }
    text
}

/// The answers, with what "always" remembers (one rule per line).
fn answers(req: &AskRequest) -> String {
    let p = podcode_tools::prompt_text(&req.tool, &req.request);
    let mut always = p.always.iter();
    let mut text = format!(
        "  [o] allow once\n  [a] {}\n",
        always.next().map(String::as_str).unwrap_or_default()
    );
    for rule in always {
        text.push_str(&format!("      {rule}\n"));
    }
    text.push_str("  [r] reject   [f] reject with feedback\n  > ");
    text
}

#[async_trait]
impl Asker for TerminalAsker {
    async fn ask(&self, req: &AskRequest) -> PermissionReply {
        let req = req.clone();
        let asked = tokio::task::spawn_blocking(move || {
            eprint!("{}", describe_request(&req));
            let question = answers(&req);
            loop {
                let Some(answer) = prompt_line(&question) else {
                    return PermissionReply::Reject { feedback: None };
                };
                match answer.to_ascii_lowercase().as_str() {
                    "o" | "y" | "once" | "yes" => return PermissionReply::Once,
                    "a" | "always" => return PermissionReply::Always,
                    "r" | "n" | "reject" | "no" => {
                        return PermissionReply::Reject { feedback: None };
                    }
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
