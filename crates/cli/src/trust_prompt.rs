//! Before loading a workspace's own tools and plugins on a terminal: ask once whether to
//! trust it (they run code from the repository). Without a terminal nothing is asked and
//! they stay skipped until `podcode trust`.

use std::io::{BufRead, IsTerminal, Write};

use podcode_core::Engine;

/// Asks on the terminal when the workspace is untrusted and ships tool or plugin files;
/// `true` when it is trusted afterwards.
pub fn ask_to_trust(engine: &mut Engine) -> bool {
    if engine.is_trusted() || !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return engine.is_trusted();
    }
    let count = engine.project_tool_files();
    if count == 0 {
        return false;
    }
    let mut err = std::io::stderr().lock();
    let _ = write!(
        err,
        "{} has {count} tool/plugin file(s) of its own (.podcode/, .opencode/). They run code from the repository.\n\
         Trust this workspace and load them? [y/N] ",
        engine.project().display()
    );
    let _ = err.flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err()
        || !matches!(answer.trim(), "y" | "Y" | "yes")
    {
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
