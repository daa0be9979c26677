//! Permission prompts for the command line, as an answerer of the session's
//! `Event::PermissionAsked`: with `--yes` every ask is allowed once; on a terminal the user
//! is asked (stderr for the prompt, stdin for the answer); without one nobody can answer,
//! so the ask is rejected and both the user and the model are told why. The answer goes
//! back as `Op::PermissionReply`.

use std::io::{BufRead, IsTerminal, Write};

use podcode_core::Port;
use podcode_protocol::{Event, Op, PermissionReply, PermissionRequest, sanitize_for_terminal};
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

/// What the prompt shows: who asks for what, and whatever the tool attached to explain it.
pub fn describe_request(tool: &str, req: &PermissionRequest) -> String {
    let mut text = format!(
        "\n? {} asks for permission: {} {}\n",
        tool,
        req.permission,
        req.patterns.join(" ")
    );
    let meta = &req.metadata;
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
    sanitize_for_terminal(&text).into_owned()
}

fn ask_terminal(tool: &str, req: &PermissionRequest) -> PermissionReply {
    eprint!("{}", describe_request(tool, req));
    let always = sanitize_for_terminal(&req.always.join(" ")).into_owned();
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
}

/// Answers every ask of `port` the way `answerer` says, until the session's stream ends.
pub fn answer_asks(port: Port, answerer: Answerer) {
    let mut events = port.subscribe();
    tokio::spawn(async move {
        // Asks opened before we subscribed are answered first.
        let mut backlog = port.open_asks();
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
