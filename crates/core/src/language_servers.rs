//! The engine's language servers and formatters (`podcode-lsp`): one `LspManager` per
//! engine, made on first use from `[lsp]` (built-ins under `[lsp.NAME]`, opencode.json's
//! `lsp`), running servers in the commands' sandbox, and the project's `Formatters` (from
//! `[formatter]`; only in a trusted workspace: a formatter runs the project's config). The
//! tool runtime tells `EditFollowUp` the files each call changed: each is formatted first
//! (journaled under the call), then diagnosed; both notes join the result. The built-ins
//! offer the `lsp` tool when a server is installed.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use podcode_lsp::{Formatters, LspManager, LspSettings, formatters_with, servers_with};
use podcode_tools::{AfterEdit, ToolContext};

use crate::Engine;

/// What follows an edit: the project's formatter, then the language servers' diagnostics.
pub(crate) struct EditFollowUp {
    formatters: Option<Formatters>,
    lsp: Option<Arc<LspManager>>,
}

#[async_trait]
impl AfterEdit for EditFollowUp {
    async fn edited(&self, files: &[std::path::PathBuf], ctx: &ToolContext) -> Option<String> {
        let mut notes = Vec::new();
        if let Some(f) = &self.formatters {
            for file in files {
                notes.extend(f.format(file, ctx).await);
            }
        }
        if let Some(lsp) = &self.lsp {
            notes.extend(lsp.diagnose(files).await);
        }
        let text: Vec<&str> = notes.iter().map(|n| n.trim_start_matches('\n')).collect();
        (!text.is_empty()).then(|| format!("\n{}", text.join("\n")))
    }
}

impl Engine {
    /// What runs after each edit (formatters, diagnostics); `None` when both are off.
    pub(crate) fn edit_follow_up(&self) -> Option<Arc<dyn AfterEdit>> {
        let cfg = &self.config().formatter;
        let formatters = (!cfg.disabled && self.is_trusted()).then(|| Formatters {
            project: self.project().to_path_buf(),
            specs: formatters_with(&cfg.formatters).0,
            project_programs: true,
            timeout: Duration::from_secs(30),
        });
        let lsp = self.lsp();
        if formatters.is_none() && lsp.is_none() {
            return None;
        }
        Some(Arc::new(EditFollowUp { formatters, lsp }))
    }

    /// The workspace's language servers; `None` when `[lsp] disabled`.
    pub(crate) fn lsp(&self) -> Option<Arc<LspManager>> {
        self.lsp
            .get_or_init(|| {
                let cfg = &self.config().lsp;
                if cfg.disabled {
                    return None;
                }
                let (servers, _) = servers_with(&cfg.servers);
                Some(LspManager::new(LspSettings {
                    project: self.project().to_path_buf(),
                    servers,
                    wait: Duration::from_millis(cfg.wait_ms.max(1)),
                    warnings: cfg.warnings,
                    per_file: cfg.per_file.max(1),
                    sandbox: self.command_sandbox("build"),
                    project_programs: self.is_trusted(),
                    idle: Duration::from_secs(cfg.idle_secs.max(1)),
                }))
            })
            .clone()
    }
}

impl Engine {
    /// `podcode lsp`: each server, the files it checks, and whether it is installed (its
    /// command) or how to install it; then the formatters and when each runs.
    pub fn lsp_lines(&self) -> Vec<String> {
        let mut out = match self.lsp() {
            Some(m) => server_lines(&m),
            None => vec!["Language servers are switched off ([lsp] disabled = true).".into()],
        };
        out.push(String::new());
        let cfg = &self.config().formatter;
        if cfg.disabled {
            out.push("Formatters are switched off ([formatter] disabled = true).".into());
            return out;
        }
        out.push(if self.is_trusted() {
            "Formatters (run on each file an edit changed):".into()
        } else {
            "Formatters (they run only once the workspace is trusted: `podcode trust`):".into()
        });
        let specs = formatters_with(&cfg.formatters).0;
        let width = specs.iter().map(|f| f.name.len()).max().unwrap_or(0);
        for f in &specs {
            let status = if f.disabled {
                "switched off by config".to_string()
            } else {
                match f.program(self.project(), self.is_trusted()) {
                    Some(p) => format!("{}; installed: {}", f.when(), p.display()),
                    None => format!("{}; not installed", f.when()),
                }
            };
            out.push(format!("{:<width$}  {status}", f.name));
        }
        out
    }
}

/// `podcode lsp`'s server table and what edits get.
fn server_lines(m: &LspManager) -> Vec<String> {
    let settings = m.settings();
    let project = &settings.project;
    let mut out = Vec::new();
    let files = |s: &podcode_lsp::ServerSpec| {
        let names: Vec<String> = s.extensions.iter().map(|e| format!(".{e}")).collect();
        names.join(" ")
    };
    let name_width = settings
        .servers
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(0);
    let files_width = settings
        .servers
        .iter()
        .map(|s| files(s).len())
        .max()
        .unwrap_or(0);
    for s in &settings.servers {
        let status = if s.disabled {
            "switched off by config".to_string()
        } else {
            match s.command_for(project, project, settings.project_programs) {
                Some(cmd) => format!("installed: {}", cmd.join(" ")),
                None => format!("not installed; to install: {}", s.install),
            }
        };
        out.push(format!(
            "{:<name_width$}  {:<files_width$}  {status}",
            s.name,
            files(s)
        ));
    }
    out.push(String::new());
    out.push(format!(
            "After each edit the changed files' {} (at most {} per file) join the tool's result; an edit waits up to {} ms for them.",
            if settings.warnings { "errors and warnings" } else { "errors" },
            settings.per_file,
            settings.wait.as_millis()
        ));
    if !settings.project_programs {
        out.push(
                "This workspace is not trusted: servers in its node_modules/.bin are not used (`podcode trust`).".into(),
            );
    }
    out
}
