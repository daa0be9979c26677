//! Permission prompts for the command line, as an answerer of the session's
//! `Event::PermissionAsked`: with `--yes` every ask is allowed once; on a terminal the user
//! is asked (stderr for the prompt, stdin for the answer); without one nobody can answer,
//! so the ask is rejected and both the user and the model are told why. The answer goes
//! back as `Op::PermissionReply`.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use podcode_core::Port;
use podcode_core::answer::{AskPolicy, answer_choices, ask_text};
use podcode_protocol::{PermissionReply, PermissionRequest};

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

/// Writes `question` on stderr and reads one line (trimmed); `None` at end of input.
pub fn prompt_line(question: &str) -> Option<String> {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{question}");
    let _ = err.flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_string()),
    }
}

fn ask_terminal(tool: &str, req: &PermissionRequest) -> PermissionReply {
    eprint!("{}", ask_text(tool, req));
    let question = answer_choices(tool, req);
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
    port.answer_asks(match answerer {
        Answerer::Yes => AskPolicy::allow_once(),
        Answerer::Terminal => AskPolicy::Blocking(Arc::new(ask_terminal)),
        Answerer::NoTerminal => AskPolicy::no_terminal(),
    });
}
