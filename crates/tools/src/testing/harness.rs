//! Test harness: a real SQLite store in a temp dir, a runtime over a chosen registry, and a
//! scripted `Asker` standing in for the person at the terminal (it records every prompt).
//! Shared by every crate's tests through the `test-support` feature.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::*;
use async_trait::async_trait;
use podcode_protocol::{PermissionReply, PermissionRule};
use podcode_store::{NewSession, Store};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// Something that happens while a prompt is open (an editor saving the file, a symlink
/// being swapped), run by `ScriptedUser` before it answers.
pub type WhileAsked = Box<dyn FnOnce(&AskRequest) + Send>;

/// An `Asker` answering from a script: each ask takes the next queued reply (reject when none is
/// left) and is recorded.
#[derive(Default)]
pub struct ScriptedUser {
    /// Replies still to give, in order.
    pub replies: Mutex<VecDeque<PermissionReply>>,
    /// Every ask so far.
    pub asked: Mutex<Vec<AskRequest>>,
    /// Run one per prompt, in order, before the reply.
    pub meanwhile: Mutex<VecDeque<WhileAsked>>,
}

impl ScriptedUser {
    /// A user who will answer with `replies`, in order.
    pub fn will(replies: &[PermissionReply]) -> Arc<Self> {
        Arc::new(Self {
            replies: Mutex::new(replies.iter().cloned().collect()),
            asked: Mutex::new(vec![]),
            meanwhile: Mutex::new(VecDeque::new()),
        })
    }
    /// Queues `f` to run while the next prompt is open.
    pub fn while_asked(&self, f: impl FnOnce(&AskRequest) + Send + 'static) {
        self.meanwhile
            .lock()
            .expect("test harness")
            .push_back(Box::new(f));
    }
    /// Every ask so far.
    pub fn asks(&self) -> Vec<AskRequest> {
        self.asked.lock().expect("test harness").clone()
    }
}

#[async_trait]
impl Asker for ScriptedUser {
    async fn ask(&self, request: &AskRequest) -> PermissionReply {
        self.asked
            .lock()
            .expect("test harness")
            .push(request.clone());
        let meanwhile = self.meanwhile.lock().expect("test harness").pop_front();
        if let Some(f) = meanwhile {
            f(request);
        }
        self.replies
            .lock()
            .expect("test harness")
            .pop_front()
            .unwrap_or(PermissionReply::Reject { feedback: None })
    }
}

/// A runtime over a real store in a temp dir, with a scripted user and one session.
pub struct Harness {
    /// The temp dir (removed on drop).
    pub dir: tempfile::TempDir,
    /// Where calls run.
    pub workspace: std::path::PathBuf,
    /// The store calls are recorded in.
    pub store: Arc<Store>,
    /// The runtime under test.
    pub runtime: ToolRuntime,
    /// The scripted user answering asks.
    pub user: Arc<ScriptedUser>,
    /// The session calls belong to.
    pub session: String,
}

/// What a `Harness` starts with.
pub struct Setup {
    /// Permission rules of the runtime.
    pub rules: Vec<PermissionRule>,
    /// The scripted user's replies.
    pub replies: Vec<PermissionReply>,
    /// Hooks run around each call.
    pub hooks: Vec<Arc<dyn ToolHook>>,
    /// Changes to the runtime options (limits, timeouts).
    pub opts: Box<dyn FnOnce(&mut RuntimeOptions)>,
    /// The calls' directory, main cwd and worktree; a fresh `work/` folder when `None`.
    pub workspace: Option<std::path::PathBuf>,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            rules: vec![],
            replies: vec![],
            hooks: vec![],
            opts: Box::new(|_| {}),
            workspace: None,
        }
    }
}

/// A harness over `registry` set up as `setup` says.
pub fn harness(registry: ToolRegistry, setup: Setup) -> Harness {
    let dir = tempfile::tempdir().expect("test harness");
    let store = Arc::new(Store::open(&dir.path().join("data/podcode.db")).expect("test harness"));
    let user = ScriptedUser::will(&setup.replies);
    let project = setup
        .workspace
        .clone()
        .unwrap_or_else(|| dir.path().join("work"));
    std::fs::create_dir_all(&project).expect("test harness");
    let engine = PermissionEngine::new(
        setup.rules,
        store.clone(),
        project.to_string_lossy().into(),
        user.clone(),
    );
    let mut opts = RuntimeOptions::new(dir.path().join("data/tool-output"));
    // Calls run in Podcode's default sandbox unless a test's `opts` changes it.
    opts.sandbox = Some(Arc::new(super::default_sandbox(
        &dir.path().join("data"),
        &opts.spill_dir,
    )));
    (setup.opts)(&mut opts);
    let runtime = ToolRuntime::new(
        registry,
        Records::all(store.clone()),
        engine,
        setup.hooks,
        opts,
    );
    let session = store
        .create_session(&NewSession {
            parent_id: None,
            root_id: None,
            agent: "build".into(),
            cwd: project.to_string_lossy().into(),
            main_cwd: project.to_string_lossy().into(),
            model: None,
            title: "test".into(),
        })
        .expect("test harness")
        .id;
    Harness {
        dir,
        workspace: project,
        store,
        runtime,
        user,
        session,
    }
}

/// A registry of `tools` from a `test` source.
pub fn registry(tools: Vec<Arc<dyn Tool>>) -> ToolRegistry {
    let mut r = ToolRegistry::new();
    r.merge(ToolOrigin::new(SourceKind::Test, "test"), tools);
    r
}

impl Harness {
    /// The workspace directory calls run in.
    pub fn work(&self) -> std::path::PathBuf {
        self.workspace.clone()
    }

    /// The identity calls are made with (the harness's session, the workspace).
    pub fn identity(&self) -> CallIdentity {
        CallIdentity {
            session_id: self.session.clone(),
            message_id: "msg_1".into(),
            call_id: String::new(),
            parent_id: None,
            root_id: None,
            agent: "build".into(),
            main_cwd: self.work(),
            directory: self.work(),
            worktree: self.work(),
            model_images: None,
        }
    }

    /// Calls `tool` with `args` as JSON text, never aborted.
    pub async fn call(&self, tool: &str, args: &str) -> CallOutcome {
        self.call_with(tool, RawArgs::Text(args.into()), CancellationToken::new())
            .await
    }

    /// Calls `tool` with `args` as a parsed value, never aborted.
    pub async fn call_json(&self, tool: &str, args: Value) -> CallOutcome {
        self.call_with(tool, RawArgs::Json(args), CancellationToken::new())
            .await
    }

    /// Calls `tool` with `args` and the abort signal `abort`.
    pub async fn call_with(
        &self,
        tool: &str,
        args: RawArgs,
        abort: CancellationToken,
    ) -> CallOutcome {
        self.runtime
            .call(CallRequest {
                identity: self.identity(),
                tool: tool.into(),
                args,
                abort,
            })
            .await
    }
}
