//! Asking, on a terminal, whether to trust a workspace whose repository brings its own
//! tools or plugins (`.podcode/`, `.opencode/`). Project code never runs without that
//! consent: without a terminal the files stay skipped and `podcode trust` is the way in.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use podcode_config::TrustList;

use crate::app::App;

/// Project folders whose files would run repository code.
fn project_tool_files(root: &Path) -> usize {
    let dirs = [
        ".podcode/tools",
        ".podcode/tool",
        ".podcode/plugins",
        ".podcode/plugin",
        ".opencode/tools",
        ".opencode/tool",
        ".opencode/plugins",
        ".opencode/plugin",
    ];
    dirs.iter()
        .filter_map(|d| std::fs::read_dir(root.join(d)).ok())
        .map(|entries| entries.flatten().filter(|e| e.path().is_file()).count())
        .sum()
}

/// Prompts once when the workspace is untrusted, has project tool files, and a person is at
/// the terminal; "yes" records the trust like `podcode trust`. Returns whether it is trusted.
pub fn ask_to_trust(app: &mut App) -> bool {
    if app.trusted || !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return app.trusted;
    }
    let count = project_tool_files(&app.project);
    if count == 0 {
        return false;
    }
    let mut err = std::io::stderr().lock();
    let _ = write!(
        err,
        "{} has {count} tool/plugin file(s) of its own (.podcode/, .opencode/). They run code from the repository.\n\
         Trust this workspace and load them? [y/N] ",
        app.project.display()
    );
    let _ = err.flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err()
        || !matches!(answer.trim(), "y" | "Y" | "yes")
    {
        eprintln!("Not trusted: they stay skipped (run `podcode trust` later to load them).");
        return false;
    }
    match TrustList::load(&app.dirs.data_dir).and_then(|mut list| list.set(&app.project, true)) {
        Ok(()) => {
            app.trusted = true;
            // The project's config was read as untrusted (narrowed); now it applies whole.
            if let Ok(loaded) = podcode_config::load(
                &app.dirs.global_config_file(),
                Some(&podcode_config::project_config_file(&app.project)),
            ) {
                app.config = loaded.config;
            }
            true
        }
        Err(e) => {
            eprintln!("warning: could not save the trust decision: {e}");
            false
        }
    }
}
