//! Permission prompts for the command line, as an answerer of the session's
//! `Event::PermissionAsked`: with `--yes` every ask is allowed once; on a terminal the user
//! is asked (stderr for the prompt, stdin for the answer); without one nobody can answer,
//! so the ask is rejected and both the user and the model are told why. The answer goes
//! back as `Op::PermissionReply`.

use std::io::{BufRead, IsTerminal, Write};

use podcode_core::Port;
use podcode_protocol::{
    Event, Op, PermissionReply, PermissionRequest, prompt_text, sanitize_for_terminal,
};
use tokio::sync::broadcast;

/// How this command answers asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answerer {
    /// `--yes`: allow once (deny rules still hold, they never ask).
    Yes,
    /// Ask on the terminal.
    Terminal,
    /// Nobody can answer: reject.
    NoTerminal,
}

impl Answerer {
    pub fn pick(yes: bool) -> Self {
        if yes {
            Self::Yes
        } else if std::io::stdin().is_terminal() {
            Self::Terminal
        } else {
            Self::NoTerminal
        }
    }
}

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
/// (else the call's arguments) — `podcode_protocol::prompt_text`, shared with the TUI.
pub fn describe_request(tool: &str, req: &PermissionRequest) -> String {
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

/// The answers, with what "always" remembers (one rule per line).
fn answers(tool: &str, req: &PermissionRequest) -> String {
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

fn ask_terminal(tool: &str, req: &PermissionRequest) -> PermissionReply {
    eprint!("{}", describe_request(tool, req));
    let question = answers(tool, req);
    loop {
        let Some(answer) = prompt_line(&question) else {
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
}

/// Answers every ask of `port` the way `answerer` says, until the session's stream ends.
pub fn answer_asks(port: Port, answerer: Answerer) {
    let mut events = port.subscribe();
    tokio::spawn(async move {
        // Asks opened before we subscribed are answered first; an ask can arrive both
        // ways, and is answered once.
        let mut backlog = port.open_asks();
        let mut answered = std::collections::HashSet::new();
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
            let reply = match answerer {
                Answerer::Yes => PermissionReply::Once,
                Answerer::Terminal => {
                    tokio::task::spawn_blocking(move || ask_terminal(&tool, &request))
                        .await
                        .unwrap_or(PermissionReply::Reject { feedback: None })
                }
                Answerer::NoTerminal => {
                    eprint!("{}", describe_request(&tool, &request));
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
            };
            port.send(Op::PermissionReply { request_id, reply });
        }
    });
}
