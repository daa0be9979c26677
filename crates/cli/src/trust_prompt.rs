//! Before loading a workspace's own tools and plugins on a terminal: ask once whether to
//! trust it (they run code from the repository), then, in a trusted workspace whose opencode
//! config wants secrets (files outside the project, secret-named variables), whether to let
//! it read them. Without a terminal nothing is asked: they stay skipped, and the config
//! warning names `podcode trust` / `podcode trust --allow-secrets`.

use std::io::{BufRead, IsTerminal, Write};

use podcode_core::Engine;

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
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{question}");
    let _ = err.flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).is_ok()
        && matches!(answer.trim(), "y" | "Y" | "yes")
}

/// Asks whether the trusted workspace's opencode config may read the secrets it names.
fn ask_secrets(engine: &mut Engine) {
    let refused = engine.refused_references();
    if refused.is_empty() || !on_terminal() {
        return;
    }
    let question = format!(
        "{}'s opencode config reads files outside the project or secret environment variables: {}.\n\
         What it reads can reach the model and its servers. Let this workspace's config read them? [y/N] ",
        engine.project().display(),
        refused.join(", ")
    );
    if !yes(&question) {
        eprintln!(
            "Not allowed: they stay empty (run `podcode trust --allow-secrets` later to allow them)."
        );
        return;
    }
    if let Err(e) = engine.allow_secrets_now() {
        eprintln!("warning: could not save the decision: {e}");
    }
}

fn ask_trust(engine: &mut Engine) -> bool {
    if engine.is_trusted() || !on_terminal() {
        return engine.is_trusted();
    }
    let count = engine.project_tool_files();
    if count == 0 {
        return false;
    }
    let question = format!(
        "{} has {count} tool/plugin file(s) of its own (.podcode/, .opencode/). They run code from the repository.\n\
         Trust this workspace and load them? [y/N] ",
        engine.project().display()
    );
    if !yes(&question) {
        eprintln!("Not trusted: they stay skipped (run `podcode trust` later to load them).");
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
