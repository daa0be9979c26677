//! Before loading a workspace's own tools and plugins on a terminal: ask once whether to
//! trust it (they run code from the repository), then, in a trusted workspace whose opencode
//! config wants secrets (files outside the project, secret-named variables), whether to let
//! it read them. Without a terminal, or when the question was answered no before (the answer
//! is remembered), nothing is asked: they stay skipped and a note on stderr says so, naming
//! `podcode trust`.

use std::io::IsTerminal;

use podcode_core::Engine;
use podcode_core::trust_text::{NOT_TRUSTED_TEXT, SECRETS_REFUSED_TEXT};

/// Asks on the terminal when the workspace is untrusted and ships tool or plugin files;
/// `true` when it is trusted afterwards.
pub fn ask_to_trust(engine: &mut Engine) -> bool {
    let trusted = ask_trust(engine);
    if trusted {
        ask_secrets(engine);
    }
    trusted
}

fn on_terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

fn yes(question: &str) -> bool {
    crate::asker::prompt_line(question).is_some_and(|a| matches!(a.as_str(), "y" | "Y" | "yes"))
}

/// Asks whether the trusted workspace's opencode config may read the secrets it names.
fn ask_secrets(engine: &mut Engine) {
    let Some(question) = engine.secrets_question().filter(|_| on_terminal()) else {
        return;
    };
    if !yes(&question) {
        eprintln!("{SECRETS_REFUSED_TEXT}");
        return;
    }
    if let Err(e) = engine.allow_secrets_now() {
        eprintln!("warning: could not save the decision: {e}");
    }
}

fn ask_trust(engine: &mut Engine) -> bool {
    let Some(question) = engine.trust_question().filter(|_| on_terminal()) else {
        if let Some(note) = engine.untrusted_note() {
            eprintln!("{note}");
        }
        return engine.is_trusted();
    };
    if !yes(&question) {
        eprintln!("{NOT_TRUSTED_TEXT}");
        if let Err(e) = engine.decline_trust() {
            eprintln!("warning: could not save the answer: {e}");
        }
        return false;
    }
    match engine.trust_now() {
        Ok(()) => true,
        Err(e) => {
            eprintln!("warning: could not save the trust decision: {e}");
            false
        }
    }
}
