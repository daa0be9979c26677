//! `ToolContext`: what a running call can see and do. It carries the call's identity and
//! directories, the abort signal, and handles back into the runtime: live `metadata()`
//! updates become events, `ask()` goes through hooks and the permission engine,
//! `record_change()` writes the change journal, `apply_changes()` writes files through it
//! (journal first, then an atomic rename), `messages()` reads the conversation from the
//! records only the first time it is touched, and `write_output()` streams output into the
//! call's truncating sink.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use podcode_protocol::{ChangeRecord, Event, PermissionAction, PermissionRequest, RecordedChange};
use podcode_records::{MessageRow, WorktreeRecords};
use serde_json::Value;
use tokio::sync::{OnceCell, broadcast};
use tokio_util::sync::CancellationToken;

use crate::hooks::{HookCall, ToolHook};
use crate::journal::{FileWrite, WriteError, apply_journaled};
use crate::permission::{AskRequest, PermissionEngine};
use crate::records::Records;
use crate::tool::ToolError;
use crate::truncate::OutputSink;

/// Who is calling and where: the identity half of the context.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallIdentity {
    /// The session the call belongs to.
    pub session_id: String,
    /// The assistant message that asked for it (empty outside the agent loop).
    pub message_id: String,
    /// The call's id.
    pub call_id: String,
    /// Set inside a sub-agent session: its parent and the root of the tree.
    pub parent_id: Option<String>,
    /// The top-level session of a sub-agent's tree.
    pub root_id: Option<String>,
    /// The agent profile running the session.
    pub agent: String,
    /// The user's primary workspace.
    pub main_cwd: PathBuf,
    /// The session's working directory (differs from `main_cwd` inside a worktree).
    pub directory: PathBuf,
    /// The git root.
    pub worktree: PathBuf,
    /// Whether the session's model takes images (the model catalog's `images`); `None`
    /// when unknown (a call by hand, an unknown model): tools then attach images anyway.
    pub model_images: Option<bool>,
}

/// Runtime services every context shares.
pub(crate) struct Shared {
    pub records: Records,
    pub events: broadcast::Sender<Event>,
    /// Takes every event instead of `events` when set (a session's writer).
    pub sink: Option<crate::pipeline::EventSink>,
    pub permissions: PermissionEngine,
    /// Swapped as a whole when plugins reload; a call in flight keeps the set it started with.
    pub hooks: std::sync::RwLock<Arc<Vec<Arc<dyn ToolHook>>>>,
    pub spill_dir: PathBuf,
    pub sandbox: Option<Arc<podcode_sandbox::Sandbox>>,
}

impl Shared {
    /// The hooks in effect now.
    pub fn hooks(&self) -> Arc<Vec<Arc<dyn ToolHook>>> {
        match self.hooks.read() {
            Ok(h) => h.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    pub fn emit(&self, event: Event) {
        match &self.sink {
            Some(sink) => sink(event),
            // No subscribers is fine: events are for front ends that want them.
            None => {
                let _ = self.events.send(event);
            }
        }
    }

    pub fn warn(&self, message: String) {
        self.emit(Event::Warning { message });
    }
}

/// What a running tool gets: who is calling and where, the abort signal, the output sink,
/// permission asks, journaled writes and the sandbox. Cheap to clone (shared).
#[derive(Clone)]
pub struct ToolContext {
    inner: Arc<Inner>,
}

struct Inner {
    id: CallIdentity,
    tool: String,
    abort: CancellationToken,
    shared: Arc<Shared>,
    messages: OnceCell<Arc<Vec<MessageRow>>>,
    sink: Arc<Mutex<Option<OutputSink>>>,
    /// The changes this call recorded: (change id, file).
    changes: Mutex<Vec<(String, String)>>,
    /// Time spent in permission checks (mostly waiting for the user's answer): a call's
    /// duration leaves it out, so a card shows how long the tool ran, not how long the
    /// user took to answer.
    waited: Mutex<std::time::Duration>,
}

impl ToolContext {
    pub(crate) fn new(
        id: CallIdentity,
        tool: String,
        abort: CancellationToken,
        shared: Arc<Shared>,
        sink: Arc<Mutex<Option<OutputSink>>>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                id,
                tool,
                abort,
                shared,
                messages: OnceCell::new(),
                sink,
                changes: Mutex::new(Vec::new()),
                waited: Mutex::new(std::time::Duration::ZERO),
            }),
        }
    }

    /// Who is calling and where.
    pub fn identity(&self) -> &CallIdentity {
        &self.inner.id
    }
    /// The session the call belongs to.
    pub fn session_id(&self) -> &str {
        &self.inner.id.session_id
    }
    /// The assistant message that asked for the call.
    pub fn message_id(&self) -> &str {
        &self.inner.id.message_id
    }
    /// The call's id.
    pub fn call_id(&self) -> &str {
        &self.inner.id.call_id
    }
    /// The agent profile running the session.
    pub fn agent(&self) -> &str {
        &self.inner.id.agent
    }
    /// The user's checkout (differs from `directory` in a worktree session).
    pub fn main_cwd(&self) -> &Path {
        &self.inner.id.main_cwd
    }
    /// The session's working directory; relative paths resolve against it.
    pub fn directory(&self) -> &Path {
        &self.inner.id.directory
    }
    /// The workspace root (git root).
    pub fn worktree(&self) -> &Path {
        &self.inner.id.worktree
    }
    /// False when the session's model cannot take images (see `CallIdentity::model_images`).
    pub fn model_takes_images(&self) -> bool {
        self.inner.id.model_images != Some(false)
    }
    /// The id of the tool being called.
    pub fn tool_id(&self) -> &str {
        &self.inner.tool
    }
    /// Fires when the user aborts or the call times out.
    pub fn abort(&self) -> &CancellationToken {
        &self.inner.abort
    }
    /// Whether the abort signal has fired.
    pub fn is_aborted(&self) -> bool {
        self.inner.abort.is_cancelled()
    }
    /// Where truncated outputs are spilled; `read` may open it without a prompt.
    pub fn spill_dir(&self) -> &Path {
        &self.inner.shared.spill_dir
    }
    /// The sandbox processes this call starts must run in (`None`: run them as they are).
    pub fn sandbox(&self) -> Option<&Arc<podcode_sandbox::Sandbox>> {
        self.inner.shared.sandbox.as_ref()
    }
    /// The worktree records, for tools that sync a worktree session (`sync_to_main`).
    pub fn worktrees(&self) -> &dyn WorktreeRecords {
        self.inner.shared.records.worktrees.as_ref()
    }
    /// The project key approvals are remembered under.
    pub fn project(&self) -> &str {
        self.inner.shared.permissions.project()
    }

    /// What the configured rules alone say about `(permission, pattern)`: no hooks, no
    /// remembered "always" approvals, no prompt. For gates that only an explicit `allow`
    /// rule may open (`webfetch_private` for a `file:` URL), and for gates that weigh
    /// several rules before asking (a private origin's rule, else its bare host's).
    pub fn rule_action(&self, permission: &str, pattern: &str) -> PermissionAction {
        self.inner.shared.permissions.evaluate(permission, pattern)
    }

    /// Something the user should see (not the model), e.g. a plugin's ignored request.
    pub fn warn(&self, message: String) {
        self.inner.shared.warn(message);
    }

    /// Live UI state for the running call.
    pub fn metadata(&self, title: Option<String>, metadata: Option<Value>) {
        self.inner.shared.emit(Event::ToolMetadata {
            call_id: self.inner.id.call_id.clone(),
            title: title.map(|t| podcode_protocol::clip_title(&t)),
            metadata,
        });
    }

    /// Blocks until the request is allowed; a deny or reject becomes the call's error.
    pub async fn ask(&self, request: PermissionRequest) -> Result<(), ToolError> {
        let call = self.hook_call();
        let mut verdict = None;
        for hook in self.inner.shared.hooks().iter() {
            match hook.permission(&call, &request).await {
                Ok(Some(action)) => verdict = Some(action),
                Ok(None) => {}
                Err(e) => self
                    .inner
                    .shared
                    .warn(format!("permission.ask hook {} failed: {e}", hook.name())),
            }
        }
        let ask = AskRequest {
            request_id: PermissionEngine::new_request_id(),
            session_id: self.inner.id.session_id.clone(),
            call_id: self.inner.id.call_id.clone(),
            tool: self.inner.tool.clone(),
            request,
        };
        let asked = std::time::Instant::now();
        let answer = self.inner.shared.permissions.check(ask, verdict).await;
        if let Ok(mut waited) = self.inner.waited.lock() {
            *waited += asked.elapsed();
        }
        answer.map_err(|e| ToolError::Permission(e.to_string()))
    }

    /// Time this call spent in permission checks so far (waiting for the user's answer).
    pub fn waited(&self) -> std::time::Duration {
        self.inner.waited.lock().map(|w| *w).unwrap_or_default()
    }

    /// Lets `shell.env` hooks adjust the environment of a command this call is about to run.
    pub async fn shell_env(&self, env: &mut std::collections::BTreeMap<String, String>) {
        let call = self.hook_call();
        for hook in self.inner.shared.hooks().iter() {
            if let Err(e) = hook.shell_env(&call, env).await {
                self.inner
                    .shared
                    .warn(format!("shell.env hook {} failed: {e}", hook.name()));
            }
        }
    }

    /// Journals a file change under this session and call. Relative paths are resolved
    /// against the session directory.
    pub fn record_change(&self, mut change: ChangeRecord) -> Result<RecordedChange, ToolError> {
        let path = Path::new(&change.file);
        if path.is_relative() {
            change.file = self
                .inner
                .id
                .directory
                .join(path)
                .to_string_lossy()
                .into_owned();
        }
        let recorded = self
            .inner
            .shared
            .records
            .journal
            .record_change(
                &self.inner.id.session_id,
                Some(&self.inner.id.call_id),
                &change,
            )
            .map_err(|e| {
                ToolError::failed(format!(
                    "could not journal the change to {}: {e}",
                    change.file
                ))
            })?;
        if let Ok(mut ids) = self.inner.changes.lock() {
            ids.push((recorded.id.clone(), recorded.file.clone()));
        }
        self.inner.shared.emit(Event::ChangeRecorded {
            change_id: recorded.id.clone(),
            call_id: Some(self.inner.id.call_id.clone()),
            file: recorded.file.clone(),
        });
        Ok(recorded)
    }

    /// Changes files journal-first and atomically (`apply_journaled`), all or nothing, under
    /// this session and call; each change is reported like `record_change`.
    pub fn apply_changes(&self, writes: &[FileWrite]) -> Result<Vec<RecordedChange>, WriteError> {
        let applied = apply_journaled(
            self.inner.shared.records.journal.as_ref(),
            &self.inner.id.session_id,
            Some(&self.inner.id.call_id),
            writes,
        )?;
        if let Some(e) = applied.pending_error {
            self.inner.shared.warn(format!(
                "the files were written but the journal could not mark the change done ({e}); the next start completes it"
            ));
        }
        for recorded in &applied.records {
            if let Ok(mut ids) = self.inner.changes.lock() {
                ids.push((recorded.id.clone(), recorded.file.clone()));
            }
            self.inner.shared.emit(Event::ChangeRecorded {
                change_id: recorded.id.clone(),
                call_id: Some(self.inner.id.call_id.clone()),
                file: recorded.file.clone(),
            });
        }
        Ok(applied.records)
    }

    /// The conversation so far, read from the store the first time it is asked for.
    pub async fn messages(&self) -> Result<Arc<Vec<MessageRow>>, ToolError> {
        self.inner
            .messages
            .get_or_try_init(|| async {
                self.inner
                    .shared
                    .records
                    .conversation
                    .messages_of(&self.inner.id.session_id)
                    .map(Arc::new)
                    .map_err(|e| ToolError::failed(format!("could not read the conversation: {e}")))
            })
            .await
            .cloned()
    }

    /// The arguments of this session's last completed call of `tool` (`None`: never).
    pub fn last_args_of(&self, tool: &str) -> Result<Option<Value>, ToolError> {
        self.inner
            .shared
            .records
            .conversation
            .last_args_of(&self.inner.id.session_id, tool)
            .map_err(|e| ToolError::failed(format!("could not read the session's calls: {e}")))
    }

    /// Streams output into the call's truncating sink (for tools whose output may be huge);
    /// the result's `output` is appended after whatever was streamed.
    pub fn write_output(&self, data: &[u8]) {
        if let Ok(mut sink) = self.inner.sink.lock()
            && let Some(sink) = sink.as_mut()
        {
            sink.write(data);
        }
    }

    pub(crate) fn recorded_changes(&self) -> Vec<String> {
        self.inner
            .changes
            .lock()
            .map(|c| c.iter().map(|(id, _)| id.clone()).collect())
            .unwrap_or_default()
    }

    /// The files this call changed through the journal, each once, in order.
    pub fn changed_files(&self) -> Vec<std::path::PathBuf> {
        let mut files: Vec<std::path::PathBuf> = Vec::new();
        if let Ok(c) = self.inner.changes.lock() {
            for (_, file) in c.iter() {
                let file = std::path::PathBuf::from(file);
                if !files.contains(&file) {
                    files.push(file);
                }
            }
        }
        files
    }

    pub(crate) fn hook_call(&self) -> HookCall {
        HookCall {
            tool: self.inner.tool.clone(),
            session_id: self.inner.id.session_id.clone(),
            call_id: self.inner.id.call_id.clone(),
        }
    }
}
