//! The engine's language servers (`podcode-lsp`): one `LspManager` per engine, made on first
//! use from `[lsp]` (built-ins under `[lsp.NAME]`, opencode.json's `lsp`), running servers in
//! the commands' sandbox. The tool runtime tells it the files each call changed (diagnostics
//! join the result) and the built-ins offer the `lsp` tool when a server is installed.

use std::sync::Arc;
use std::time::Duration;

use podcode_lsp::{LspManager, LspSettings, servers_with};

use crate::Engine;

impl Engine {
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
                }))
            })
            .clone()
    }
}

impl Engine {
    /// `podcode lsp`: each server, the files it checks, and whether it is installed (its
    /// command) or how to install it.
    pub fn lsp_lines(&self) -> Vec<String> {
        let Some(m) = self.lsp() else {
            return vec!["Language servers are switched off ([lsp] disabled = true).".into()];
        };
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
}
