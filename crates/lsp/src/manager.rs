//! The language servers of one workspace: one process per (server, root folder), started
//! lazily on the first edit or query of a file it handles, restarted once when it stopped
//! (then reported, never retried in a loop), shut down when idle for `LspSettings::idle`
//! (started again when needed) or with the engine.
//!
//! After a call changed files (`AfterEdit::edited`), each file a server handles is sent to
//! it and its diagnostics awaited — all files at once, the whole wait bounded by
//! `LspSettings::wait` (a server still starting keeps starting in the background, so the
//! next edit finds it ready); the errors (and warnings, by config) are what the model reads
//! after the tool's own output. A server that does not answer in time adds a one-line note.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lsp_types::{Diagnostic, DiagnosticSeverity};
use tokio::sync::OnceCell;

use crate::client::{Launch, LspClient};
use crate::servers::{ServerSpec, language_id};

/// How a workspace's servers run.
#[derive(Clone)]
pub struct LspSettings {
    /// The project root: servers' roots lie inside it; paths are shown relative to it.
    pub project: PathBuf,
    /// The servers (built-ins under config).
    pub servers: Vec<ServerSpec>,
    /// The most an edit waits for diagnostics (default 3 s).
    pub wait: Duration,
    /// Warnings too, not only errors.
    pub warnings: bool,
    /// The most diagnostics shown per file (the rest are counted).
    pub per_file: usize,
    /// The sandbox servers run in.
    pub sandbox: Option<Arc<podcode_sandbox::Sandbox>>,
    /// Programs in the project's `node_modules/.bin` may run (the workspace is trusted).
    pub project_programs: bool,
    /// A server no file went to for this long is shut down (started again when needed).
    pub idle: Duration,
}

type Started = Arc<OnceCell<Result<LspClient, String>>>;

struct Slot {
    started: Started,
    restarted: bool,
    /// Who uses it now and when it was last used (for the idle timeout).
    usage: Arc<Usage>,
}

/// How a server is being used: calls in progress, and when the last one ended.
struct Usage {
    busy: std::sync::atomic::AtomicUsize,
    last: Mutex<tokio::time::Instant>,
}

impl Usage {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            busy: std::sync::atomic::AtomicUsize::new(0),
            last: Mutex::new(tokio::time::Instant::now()),
        })
    }

    fn idle_for(&self, now: tokio::time::Instant) -> Option<Duration> {
        if self.busy.load(std::sync::atomic::Ordering::SeqCst) > 0 {
            return None;
        }
        let last = *self.last.lock().ok()?;
        Some(now.duration_since(last))
    }
}

/// Marks a server in use while it lives (the idle timeout leaves it alone).
pub struct InUse(Arc<Usage>);

impl InUse {
    fn new(usage: Arc<Usage>) -> Self {
        usage.busy.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Self(usage)
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        if let Ok(mut last) = self.0.last.lock() {
            *last = tokio::time::Instant::now();
        }
        self.0
            .busy
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The running servers of a workspace.
pub struct LspManager {
    settings: LspSettings,
    slots: Mutex<HashMap<(String, PathBuf), Slot>>,
    /// The task that shuts idle servers down, started with the first server.
    reaper: std::sync::OnceLock<()>,
    me: std::sync::Weak<LspManager>,
}

/// What the model reads when a server is still starting when the wait ends.
pub fn starting_text(server: &str) -> String {
    format!(
        "({server} is still starting: diagnostics come with a later edit, or ask the lsp tool in a moment)"
    )
}

/// What the model reads when a server does not answer in time.
pub fn no_answer_text(server: &str, file: &str, wait: Duration) -> String {
    format!(
        "({server} reported no diagnostics for {file} within {} ms; they are not checked)",
        wait.as_millis()
    )
}

impl LspManager {
    /// The manager for `settings`; nothing starts until a file needs a server.
    pub fn new(settings: LspSettings) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            settings,
            slots: Mutex::new(HashMap::new()),
            reaper: std::sync::OnceLock::new(),
            me: me.clone(),
        })
    }

    /// The servers running now: (name, root).
    pub fn running(&self) -> Vec<(String, PathBuf)> {
        let slots = match self.slots.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        slots
            .iter()
            .filter(|(_, s)| matches!(s.started.get(), Some(Ok(c)) if c.is_alive()))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Starts the task that shuts down servers idle for `settings.idle` (it ends with the
    /// manager).
    fn watch_idle(&self) {
        self.reaper.get_or_init(|| {
            let me = self.me.clone();
            let idle = self.settings.idle;
            let tick = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(60));
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(tick).await;
                    let Some(manager) = me.upgrade() else { return };
                    let now = tokio::time::Instant::now();
                    let idle_ones: Vec<Started> = match manager.slots.lock() {
                        Ok(mut slots) => {
                            let keys: Vec<_> = slots
                                .iter()
                                .filter(|(_, s)| {
                                    // A server still starting is not idle.
                                    s.started.get().is_some()
                                        && s.usage.idle_for(now).is_some_and(|d| d >= idle)
                                })
                                .map(|(k, _)| k.clone())
                                .collect();
                            keys.iter()
                                .filter_map(|k| slots.remove(k))
                                .map(|s| s.started)
                                .collect()
                        }
                        Err(_) => Vec::new(),
                    };
                    for cell in idle_ones {
                        if let Some(Ok(client)) = cell.get() {
                            client.shutdown().await;
                        }
                    }
                }
            });
        });
    }

    /// Whether any server is installed for this workspace (the `lsp` tool is offered then).
    pub fn any_installed(&self) -> bool {
        let project = &self.settings.project;
        self.settings.servers.iter().any(|s| {
            !s.disabled
                && s.command_for(project, project, self.settings.project_programs)
                    .is_some()
        })
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &LspSettings {
        &self.settings
    }

    /// The server for `file` with its root and command, when one handles it and is installed.
    pub fn server_for(&self, file: &Path) -> Option<(&ServerSpec, PathBuf, Vec<String>)> {
        let project = &self.settings.project;
        self.settings
            .servers
            .iter()
            .filter(|s| !s.disabled && s.handles(file))
            .find_map(|s| {
                let root = s.root_for(file, project);
                let command = s.command_for(&root, project, self.settings.project_programs)?;
                Some((s, root, command))
            })
    }

    /// The running (or starting) client of `spec` in `root`; a stopped one is started once
    /// more, after that its end is the answer.
    fn started(&self, spec: &ServerSpec, root: &Path, command: Vec<String>) -> (Started, InUse) {
        let key = (spec.name.clone(), root.to_path_buf());
        let mut slots = match self.slots.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let stopped = slots.get(&key).and_then(|s| match s.started.get() {
            Some(Ok(c)) if !c.is_alive() => Some((s.restarted, c.stderr_tail())),
            _ => None,
        });
        match (slots.get(&key), stopped) {
            (Some(slot), None) => return (slot.started.clone(), InUse::new(slot.usage.clone())),
            (Some(_), Some((true, tail))) => {
                // Stopped after its restart: say so instead of starting it again.
                let cell: Started = Arc::new(OnceCell::new_with(Some(Err(format!(
                    "{} stopped again after a restart and is not started any more{}",
                    spec.name,
                    if tail.trim().is_empty() {
                        String::new()
                    } else {
                        format!(". Its last output:\n{}", tail.trim())
                    }
                )))));
                slots.insert(
                    key,
                    Slot {
                        started: cell.clone(),
                        restarted: true,
                        usage: Usage::new(),
                    },
                );
                return (cell, InUse::new(Usage::new()));
            }
            _ => {}
        }
        let restarted = slots.contains_key(&key);
        let cell: Started = Arc::new(OnceCell::new());
        let usage = Usage::new();
        let in_use = InUse::new(usage.clone());
        slots.insert(
            key,
            Slot {
                started: cell.clone(),
                restarted,
                usage: usage.clone(),
            },
        );
        drop(slots);
        self.watch_idle();
        let launch = Launch {
            command,
            env: spec.env.clone().into_iter().collect(),
            root: root.to_path_buf(),
            initialization: spec.initialization.clone(),
            sandbox: self.settings.sandbox.clone(),
        };
        let name = spec.name.clone();
        let starting = cell.clone();
        // Started on its own task: a start slower than an edit's wait goes on.
        tokio::spawn(async move {
            starting
                .get_or_init(|| LspClient::start(&name, &launch, Duration::from_secs(60)))
                .await;
        });
        (cell, in_use)
    }

    /// The client for `file` (started when needed), waiting until `deadline`; it counts as
    /// in use while the returned `InUse` lives.
    pub async fn client_for(
        &self,
        file: &Path,
        deadline: tokio::time::Instant,
    ) -> Option<Result<(String, LspClient, InUse), String>> {
        let (spec, root, command) = self.server_for(file)?;
        let name = spec.name.clone();
        let (cell, in_use) = self.started(spec, &root, command);
        Some(
            match tokio::time::timeout_at(deadline, wait_started(&cell)).await {
                Ok(Ok(client)) => Ok((name, client, in_use)),
                Ok(Err(e)) => Err(e),
                Err(_) => Err(starting_text(&name)),
            },
        )
    }

    /// Sends `file`'s current content to its server and returns its diagnostics, or a note
    /// saying why there are none; `None` when no server handles the file.
    pub async fn check(
        &self,
        file: &Path,
        deadline: tokio::time::Instant,
    ) -> Option<Result<Vec<Diagnostic>, String>> {
        let (name, client, _in_use) = match self.client_for(file, deadline).await? {
            Ok(c) => c,
            Err(note) => return Some(Err(note)),
        };
        let text = match tokio::fs::read_to_string(file).await {
            Ok(t) => t,
            Err(_) => return None,
        };
        let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
        let since = client.sync(file, language_id(ext), &text).await;
        let wait = deadline.saturating_duration_since(tokio::time::Instant::now());
        Some(
            client
                .diagnostics(file, since, wait)
                .await
                .ok_or_else(|| no_answer_text(&name, &self.shown(file), self.settings.wait)),
        )
    }

    /// `file` as the model sees it: relative to the project when inside it.
    pub fn shown(&self, file: &Path) -> String {
        file.strip_prefix(&self.settings.project)
            .unwrap_or(file)
            .display()
            .to_string()
    }

    /// The lines shown for `file`'s diagnostics: errors (and warnings by config), at most
    /// `per_file`, then a count of the rest.
    pub fn lines(&self, file: &Path, diagnostics: &[Diagnostic]) -> Vec<String> {
        let shown = self.shown(file);
        let wanted: Vec<&Diagnostic> = diagnostics
            .iter()
            .filter(|d| match d.severity {
                Some(DiagnosticSeverity::ERROR) | None => true,
                Some(DiagnosticSeverity::WARNING) => self.settings.warnings,
                _ => false,
            })
            .collect();
        let mut out: Vec<String> = wanted
            .iter()
            .take(self.settings.per_file)
            .map(|d| diagnostic_line(&shown, d))
            .collect();
        if wanted.len() > self.settings.per_file {
            let rest = wanted.len() - self.settings.per_file;
            out.push(format!(
                "{shown}: … and {rest} more {}",
                if rest == 1 {
                    "diagnostic"
                } else {
                    "diagnostics"
                }
            ));
        }
        out
    }

    /// Shuts every server down.
    pub async fn shutdown(&self) {
        let cells: Vec<Started> = match self.slots.lock() {
            Ok(mut s) => s.drain().map(|(_, slot)| slot.started).collect(),
            Err(_) => Vec::new(),
        };
        for cell in cells {
            if let Some(Ok(client)) = cell.get() {
                client.shutdown().await;
            }
        }
    }
}

async fn wait_started(cell: &Started) -> Result<LspClient, String> {
    loop {
        if let Some(started) = cell.get() {
            return started.clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// `path:line:col severity message (source code)`, 1-based.
pub fn diagnostic_line(path: &str, d: &Diagnostic) -> String {
    let severity = match d.severity {
        Some(DiagnosticSeverity::WARNING) => "warning",
        Some(DiagnosticSeverity::INFORMATION) => "info",
        Some(DiagnosticSeverity::HINT) => "hint",
        _ => "error",
    };
    let code = match &d.code {
        Some(lsp_types::NumberOrString::Number(n)) => format!(" {n}"),
        Some(lsp_types::NumberOrString::String(s)) => format!(" {s}"),
        None => String::new(),
    };
    let source = match (&d.source, code.is_empty()) {
        (Some(s), _) => format!(" ({s}{code})"),
        (None, false) => format!(" ({})", code.trim()),
        (None, true) => String::new(),
    };
    let message = d.message.lines().collect::<Vec<_>>().join(" ");
    format!(
        "{path}:{}:{} {severity} {message}{source}",
        d.range.start.line + 1,
        d.range.start.character + 1
    )
}

/// The header of what an edit's result gets.
pub const DIAGNOSTICS_HEADER: &str = "Language server diagnostics for the changed files:";

impl LspManager {
    /// The diagnostics of `files` after an edit (what joins the tool's result): errors (and
    /// warnings by config) under `DIAGNOSTICS_HEADER`, and a note per server that did not
    /// answer in time; `None` when there is nothing to say.
    pub async fn diagnose(&self, files: &[PathBuf]) -> Option<String> {
        let deadline = tokio::time::Instant::now() + self.settings.wait;
        let checks = files.iter().map(|f| async move {
            let outcome = self.check(f, deadline).await?;
            Some(match outcome {
                Ok(diags) => Ok(self.lines(f, &diags)),
                Err(note) => Err(note),
            })
        });
        let mut lines = Vec::new();
        let mut notes = Vec::new();
        for outcome in futures_util::future::join_all(checks)
            .await
            .into_iter()
            .flatten()
        {
            match outcome {
                Ok(l) => lines.extend(l),
                Err(note) => notes.push(note),
            }
        }
        if lines.is_empty() && notes.is_empty() {
            return None;
        }
        let mut text = String::new();
        if !lines.is_empty() {
            text.push_str(DIAGNOSTICS_HEADER);
            for l in lines {
                text.push('\n');
                text.push_str(&l);
            }
        }
        for note in notes {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&note);
        }
        Some(format!("\n{text}"))
    }
}
