//! Worktree sessions through the engine, with real git and the scripted model: the agent
//! works in a worktree that starts with the user's uncommitted and untracked changes, the
//! user's checkout (files, index, stash) is untouched until `sync_to_main`, the sync is
//! revertable, `podcode sessions` facts (unsynced count, a vanished directory) and prune.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use podcode_core::{Dirs, Engine, EngineError, Session, SessionOptions, SessionPick};
use podcode_protocol::{Event, Op, PermissionReply, RevertTarget, TurnEnd};
use podcode_providers::testing::{Reply, ScriptedModel};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=T", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

struct Workspace {
    root: tempfile::TempDir,
}

impl Workspace {
    /// A config naming the scripted model, and `repo/` (a git repository when `git`).
    fn new(server: &ScriptedModel, git_repo: bool) -> Self {
        let root = tempfile::tempdir().unwrap();
        for dir in ["repo", "config", "data", "home"] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        std::fs::write(
            root.path().join("config/config.toml"),
            format!(
                "model = \"scripted/test\"\n[provider.scripted]\nbase_url = \"{}\"\n",
                server.base_url()
            ),
        )
        .unwrap();
        let ws = Self { root };
        if git_repo {
            git(&ws.repo(), &["init", "-q", "-b", "main"]);
        }
        ws
    }
    fn repo(&self) -> PathBuf {
        self.root.path().join("repo").canonicalize().unwrap()
    }
    fn put(&self, rel: &str, text: &str) {
        std::fs::write(self.repo().join(rel), text).unwrap();
    }
    fn engine(&self) -> Arc<Engine> {
        let dirs = Dirs::under(self.root.path());
        Arc::new(Engine::load_in(Some(self.repo()), dirs).unwrap())
    }
}

async fn open(engine: &Arc<Engine>, worktree: bool) -> Result<Session, EngineError> {
    engine
        .open_session(SessionOptions {
            pick: SessionPick::New {
                title: String::new(),
            },
            agent: "build".into(),
            model: None,
            max_steps: None,
            worktree,
        })
        .await
}

/// Runs one prompt, answering every ask "once", until the turn ends.
async fn turn(session: &Session, text: &str) {
    let port = session.port();
    let mut events = session.subscribe();
    port.send(Op::Prompt {
        session_id: session.id().to_string(),
        text: text.into(),
        files: Vec::new(),
    });
    loop {
        let e = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("an event within 60 s")
            .expect("the stream stays open");
        match e {
            Event::PermissionAsked { request_id, .. } => {
                port.send(Op::PermissionReply {
                    request_id,
                    reply: PermissionReply::Once,
                });
            }
            Event::TurnFinished { summary, .. } => {
                assert_eq!(summary.end, TurnEnd::Answered, "{:?}", summary.error);
                return;
            }
            _ => {}
        }
    }
}

fn call(id: &str, tool: &str, args: serde_json::Value) -> Reply {
    Reply::new().tool_call(id, tool, args.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_works_on_the_users_changes_in_a_worktree_and_syncs_them_back() {
    let server = ScriptedModel::start(vec![]).await;
    let ws = Workspace::new(&server, true);
    ws.put(".gitignore", "secret.log\n");
    ws.put("app.txt", "one\ntwo\nthree\n");
    git(&ws.repo(), &["add", "-A"]);
    git(&ws.repo(), &["commit", "-qm", "start"]);
    // The user's state: a staged edit, an unstaged edit, an untracked and an ignored file.
    ws.put("app.txt", "one\ntwo (staged)\nthree\n");
    git(&ws.repo(), &["add", "app.txt"]);
    ws.put("app.txt", "one\ntwo (staged)\nthree (unstaged)\n");
    ws.put("draft.txt", "an untracked draft\n");
    ws.put("secret.log", "ignored\n");
    let staged_before = git(&ws.repo(), &["ls-files", "-s"]);
    let status_before = git(&ws.repo(), &["status", "--porcelain"]);

    server.push(call(
        "c1",
        "read",
        serde_json::json!({"filePath": "draft.txt"}),
    ));
    server.push(call(
        "c2",
        "write",
        serde_json::json!({"filePath": "feature.txt", "content": "made in the worktree\n"}),
    ));
    server.push(Reply::new().text("Written."));
    let engine = ws.engine();
    let session = open(&engine, true).await.unwrap();
    let wt = session.worktree().unwrap().to_path_buf();
    assert!(
        wt.starts_with(
            ws.root
                .path()
                .canonicalize()
                .unwrap()
                .join("data/worktrees")
        ),
        "{wt:?}"
    );
    assert_eq!(session.directory(), wt);
    assert_eq!(
        git(&wt, &["branch", "--show-current"]),
        format!("podcode/{}", session.id())
    );
    // The worktree holds exactly what the user sees, minus what git ignores.
    assert_eq!(
        std::fs::read_to_string(wt.join("app.txt")).unwrap(),
        "one\ntwo (staged)\nthree (unstaged)\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("draft.txt")).unwrap(),
        "an untracked draft\n"
    );
    assert!(!wt.join("secret.log").exists());
    let row = engine.session(session.id()).unwrap();
    assert_eq!(
        (Path::new(&row.cwd), Path::new(&row.main_cwd)),
        (wt.as_path(), ws.repo().as_path())
    );

    turn(&session, "read the draft, then add a feature").await;
    // The agent read the untracked draft (relative to the worktree) and wrote there.
    let requests = server.requests();
    assert!(
        requests[1].to_string().contains("an untracked draft"),
        "{}",
        requests[1]
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("feature.txt")).unwrap(),
        "made in the worktree\n"
    );
    // The user's checkout, index and stash are as they were.
    assert!(!ws.repo().join("feature.txt").exists());
    assert_eq!(git(&ws.repo(), &["ls-files", "-s"]), staged_before);
    assert_eq!(git(&ws.repo(), &["status", "--porcelain"]), status_before);
    assert_eq!(git(&ws.repo(), &["stash", "list"]), "");
    let listed = engine.worktrees().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].unsynced, Some(1));

    // Meanwhile the user edits their checkout; the sync merges around it.
    ws.put("app.txt", "ONE\ntwo (staged)\nthree (unstaged)\n");
    server.push(call("c3", "edit", serde_json::json!({"filePath": "app.txt", "oldString": "three (unstaged)", "newString": "three (agent)"})));
    server.push(call(
        "c4",
        "sync_to_main",
        serde_json::json!({"message": "add the feature"}),
    ));
    server.push(Reply::new().text("Synced."));
    turn(&session, "edit app.txt and sync").await;
    let sync_result = server.requests()[5].to_string();
    assert!(
        sync_result.contains("Synced 2 files into the main workspace"),
        "{sync_result}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.repo().join("feature.txt")).unwrap(),
        "made in the worktree\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.repo().join("app.txt")).unwrap(),
        "ONE\ntwo (staged)\nthree (agent)\n"
    );
    assert_eq!(
        git(&ws.repo(), &["ls-files", "-s"]),
        staged_before,
        "the index is untouched"
    );
    assert_eq!(engine.worktrees().unwrap()[0].unsynced, Some(0));

    // `podcode revert` of the session undoes the sync in the checkout (and the agent's edits).
    let report = engine.revert(
        session.id(),
        &RevertTarget::Session(session.id().into()),
        false,
    );
    assert!(report.error.is_none(), "{:?}", report.error);
    assert!(!ws.repo().join("feature.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.repo().join("app.txt")).unwrap(),
        "ONE\ntwo (staged)\nthree (unstaged)\n"
    );
    session.close().await;

    // Prune removes the worktree and its branch (--force: the revert left the worktree's
    // files differing from what was last synced).
    let notes = engine.prune_worktrees(&[], true).unwrap();
    assert!(notes[0].removed, "{notes:?}");
    assert!(!wt.exists());
    assert_eq!(git(&ws.repo(), &["branch", "--list", "podcode/*"]), "");
    assert!(engine.worktrees().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prune_keeps_unsynced_work_and_a_vanished_worktree_is_reported() {
    let server = ScriptedModel::start(vec![]).await;
    let ws = Workspace::new(&server, true);
    ws.put("a.txt", "a\n");
    git(&ws.repo(), &["add", "-A"]);
    git(&ws.repo(), &["commit", "-qm", "start"]);
    let engine = ws.engine();
    let session = open(&engine, true).await.unwrap();
    let id = session.id().to_string();
    let wt = session.worktree().unwrap().to_path_buf();
    session.close().await;
    std::fs::write(wt.join("b.txt"), "unsynced\n").unwrap();

    let notes = engine.prune_worktrees(&[], false).unwrap();
    assert!(!notes[0].removed);
    assert_eq!(
        notes[0].note,
        format!(
            "kept {}: 1 unsynced change (sync them with the session's sync_to_main, or pass --force to discard)",
            wt.display()
        )
    );
    assert!(wt.exists());

    // Someone deletes the directory by hand: reported, and prune forgets it.
    std::fs::remove_dir_all(&wt).unwrap();
    let listed = engine.worktrees().unwrap();
    assert_eq!(listed[0].unsynced, None);
    assert_eq!(
        listed[0].problem.as_deref(),
        Some("the worktree directory is gone")
    );
    let reopened = engine
        .open_session(SessionOptions {
            pick: SessionPick::Id(id.clone()),
            agent: "build".into(),
            model: None,
            max_steps: None,
            worktree: false,
        })
        .await;
    let Err(e) = reopened else {
        panic!("a session whose worktree is gone does not open")
    };
    assert_eq!(
        e.to_string(),
        format!(
            "session {id} worked in the worktree {}, which is gone; `podcode sessions prune {id}` forgets it",
            wt.display()
        )
    );
    let notes = engine
        .prune_worktrees(std::slice::from_ref(&id), false)
        .unwrap();
    assert!(notes[0].removed);
    assert_eq!(
        notes[0].note,
        format!(
            "{} was already gone; removed branch podcode/{id}",
            wt.display()
        )
    );
    assert_eq!(git(&ws.repo(), &["branch", "--list", "podcode/*"]), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worktree_needs_a_repository_with_a_commit() {
    let server = ScriptedModel::start(vec![]).await;
    let plain = Workspace::new(&server, false);
    let engine = plain.engine();
    let Err(e) = open(&engine, true).await else {
        panic!("no worktree outside git")
    };
    assert_eq!(
        e.to_string(),
        format!(
            "--worktree needs a git repository, and {} is not inside one (run `git init` and commit first, or leave out --worktree)",
            plain.repo().display()
        )
    );
    assert!(
        engine.sessions(true).unwrap().is_empty(),
        "no session row is left behind"
    );

    let empty = Workspace::new(&server, true);
    let engine = empty.engine();
    let Err(e) = open(&engine, true).await else {
        panic!("no worktree without a commit")
    };
    assert_eq!(
        e.to_string(),
        format!(
            "--worktree needs a commit to start from, and the repository at {} has none yet (make a first commit, or leave out --worktree)",
            empty.repo().display()
        )
    );
}
