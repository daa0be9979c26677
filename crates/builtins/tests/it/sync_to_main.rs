//! `sync_to_main` through the real pipeline, real git and the real store: a worktree made
//! with `git worktree add`, recorded for the call's session, and a main checkout the user
//! keeps editing. Merged edits, a refused conflict (nothing changed, hunks listed), binary
//! files, deletions, renames and executable bits, a second sync carrying only newer work,
//! `podcode revert` of a sync, and the refusal outside a worktree session.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use podcode_protocol::PermissionReply;
use podcode_store::WorktreeRow;
use podcode_tools::testing::{Harness, Setup, harness};
use podcode_tools::{CallStatus, RevertOptions, RevertTarget, ToolRegistry, revert};
use serde_json::json;

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

fn put(dir: &Path, rel: &str, bytes: impl AsRef<[u8]>) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, bytes).unwrap();
}

fn text(dir: &Path, rel: &str) -> Option<String> {
    fs::read_to_string(dir.join(rel)).ok()
}

fn lines(n: usize, tag: &str) -> String {
    (1..=n).map(|i| format!("line {i}{tag}\n")).collect()
}

fn with_line(body: &str, n: usize, new: &str) -> String {
    body.lines()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == n {
                format!("{new}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}

struct Repos {
    _tmp: tempfile::TempDir,
    main: PathBuf,
    wt: PathBuf,
    h: Harness,
}

/// A main checkout with `files` committed, a worktree of it, and a harness whose session
/// is recorded as working in that worktree (unless `record` is false).
fn repos(files: &[(&str, &[u8])], replies: Vec<PermissionReply>, record: bool) -> Repos {
    let tmp = tempfile::tempdir().unwrap();
    let main = tmp.path().join("main");
    fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    for (rel, bytes) in files {
        put(&main, rel, bytes);
    }
    git(&main, &["add", "-A"]);
    git(&main, &["commit", "-q", "-m", "start"]);
    let fork = git(&main, &["rev-parse", "HEAD"]);
    let wt = tmp.path().join("wt");
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "podcode/t",
            wt.to_str().unwrap(),
            &fork,
        ],
    );
    let (main, wt) = (main.canonicalize().unwrap(), wt.canonicalize().unwrap());
    let h = harness(
        common::registry(),
        Setup {
            rules: podcode_builtins::default_rules(),
            replies,
            workspace: Some(wt.clone()),
            ..Default::default()
        },
    );
    if record {
        h.store
            .record_worktree(&WorktreeRow {
                session_id: h.session.clone(),
                path: wt.to_string_lossy().into(),
                branch: "podcode/t".into(),
                fork_commit: fork.clone(),
                sync_base: fork,
                main_root: main.to_string_lossy().into(),
                created_at: 0,
            })
            .unwrap();
    }
    Repos {
        _tmp: tmp,
        main,
        wt,
        h,
    }
}

async fn sync(r: &Repos, args: serde_json::Value) -> podcode_tools::CallOutcome {
    r.h.call_json("sync_to_main", args).await
}

#[test]
fn description_and_schema_are_pinned() {
    let mut reg = ToolRegistry::new();
    podcode_builtins::register_all(&mut reg);
    let tool = &reg.get("sync_to_main").unwrap().tool;
    assert!(tool.gates_itself());
    let spec = tool.spec();
    assert_eq!(
        spec.description,
        "Copies your changes from this session's worktree into the user's main workspace (their own checkout), merged with whatever the user changed there meanwhile.

This session works in its own git worktree, a separate copy of the repository: nothing you change reaches the user's files until you call sync_to_main. Call it when the work is done and checked (tests pass), or when the user asks for it.

- Every change since the last sync is applied, committed or not: edits, new files, deletions, renames, executable-bit changes and binary files.
- Each file is merged three-way (the version you started from, the user's current file, yours). If any file conflicts, nothing is changed and the conflicting hunks are returned.
- The user approves the diff first; a sync can be undone with `podcode revert`.
- `paths` limits the sync to these files or folders (relative to the repository root); `message` says in one line what the change does."
    );
    let props = &spec.parameters["properties"];
    assert_eq!(
        props["paths"]["description"],
        "Only sync these files or folders, relative to the repository root (default: every change)."
    );
    assert_eq!(
        props["message"]["description"],
        "One line saying what the synced change does; shown to the user and recorded with the sync."
    );
}

#[tokio::test]
async fn outside_a_worktree_session_the_model_is_told_why() {
    let r = repos(&[("a.txt", b"a\n")], vec![], false);
    let out = sync(&r, json!({})).await;
    assert_eq!(out.status, CallStatus::Failed);
    assert!(
        out.model_text.contains("sync_to_main only works in a worktree session (started with `podcode run --worktree` or `podcode tui --worktree`). This session works directly in the user's workspace, so your edits are already in their files and there is nothing to sync."),
        "{}",
        out.model_text
    );
}

#[tokio::test]
async fn a_non_conflicting_main_edit_is_merged_and_later_syncs_carry_only_newer_work() {
    let base = lines(12, "");
    let r = repos(
        &[("lib.txt", base.as_bytes())],
        vec![PermissionReply::Once, PermissionReply::Once],
        true,
    );
    // The user edits the top of the file in their checkout (uncommitted); the agent the end.
    put(
        &r.main,
        "lib.txt",
        with_line(&base, 2, "line 2 by the user"),
    );
    put(
        &r.wt,
        "lib.txt",
        with_line(&base, 11, "line 11 by the agent"),
    );
    put(&r.wt, "docs/new.md", "# new\n");

    let out = sync(&r, json!({"message": "tune line 11"})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    let merged = with_line(
        &with_line(&base, 2, "line 2 by the user"),
        11,
        "line 11 by the agent",
    );
    assert_eq!(text(&r.main, "lib.txt").unwrap(), merged);
    assert_eq!(text(&r.main, "docs/new.md").unwrap(), "# new\n");
    let asks = r.h.user.asks();
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].request.permission, "sync_to_main");
    assert_eq!(
        asks[0].request.metadata["stat"],
        " docs/new.md (new, +1 -0)\n lib.txt (merged, +1 -1)\n"
    );
    let diff = asks[0].request.metadata["diff"].as_str().unwrap();
    assert!(diff.contains("-line 11\n+line 11 by the agent\n"), "{diff}");
    assert_eq!(
        asks[0].request.metadata["description"],
        format!(
            "tune line 11\ninto {}:\n docs/new.md (new, +1 -0)\n lib.txt (merged, +1 -1)\n",
            r.main.display()
        )
    );
    assert!(
        out.model_text
            .starts_with("Synced 2 files into the main workspace ("),
        "{}",
        out.model_text
    );

    // The agent works on; the next sync carries only that (no conflict on line 11).
    put(
        &r.wt,
        "lib.txt",
        with_line(
            &with_line(&base, 11, "line 11 by the agent"),
            12,
            "line 12 too",
        ),
    );
    let second = sync(&r, json!({})).await;
    assert_eq!(
        second.status,
        CallStatus::Completed,
        "{}",
        second.model_text
    );
    assert_eq!(
        text(&r.main, "lib.txt").unwrap(),
        with_line(&merged, 12, "line 12 too")
    );
    let nothing = sync(&r, json!({})).await;
    assert_eq!(
        nothing.model_text,
        "Nothing to sync: the worktree has no changes since the last sync."
    );

    // `podcode revert` of the second sync puts line 12 back, the first sync stays.
    let opts = RevertOptions {
        force: false,
        session_id: r.h.session.clone(),
    };
    revert(
        &r.h.store,
        &RevertTarget::Call(second.call_id.clone()),
        &opts,
    )
    .unwrap();
    assert_eq!(text(&r.main, "lib.txt").unwrap(), merged);
    // Reverting the first removes the new file and the agent's line, keeping the user's.
    revert(&r.h.store, &RevertTarget::Call(out.call_id.clone()), &opts).unwrap();
    assert_eq!(
        text(&r.main, "lib.txt").unwrap(),
        with_line(&base, 2, "line 2 by the user")
    );
    assert!(!r.main.join("docs/new.md").exists());
}

#[tokio::test]
async fn a_conflict_changes_nothing_and_lists_the_hunks() {
    let base = lines(8, "");
    let r = repos(
        &[("lib.txt", base.as_bytes()), ("ok.txt", b"ok\n")],
        vec![PermissionReply::Once],
        true,
    );
    let mine = with_line(&base, 5, "line 5 by the user");
    put(&r.main, "lib.txt", &mine);
    put(&r.wt, "lib.txt", with_line(&base, 5, "line 5 by the agent"));
    put(&r.wt, "ok.txt", "changed\n");
    put(&r.wt, "added.txt", "new\n");
    let head_before = git(&r.main, &["status", "--porcelain"]);

    let out = sync(&r, json!({})).await;
    assert_eq!(out.status, CallStatus::Failed);
    let shown = out.model_text.replace(r.main.to_str().unwrap(), "<main>");
    assert!(
        shown.contains(
            "sync_to_main changed nothing: 1 file conflicts with the user's main workspace (<main>).

lib.txt: the worktree and the user's main workspace changed the same lines.
@@ main workspace line 5 @@
line 3
line 4
<<<<<<< main workspace
line 5 by the user
||||||| fork point
line 5
=======
line 5 by the agent
>>>>>>> worktree
line 6
line 7

In each hunk, the lines between <<<<<<< and ||||||| are the user's current version, between ||||||| and ======= the version you started from, and between ======= and >>>>>>> yours. Tell the user which files conflict and why; to sync everything else now, call sync_to_main again with `paths` listing only the files that do not conflict."
        ),
        "{shown}"
    );
    // Nothing changed, nothing asked.
    assert_eq!(text(&r.main, "lib.txt").unwrap(), mine);
    assert_eq!(text(&r.main, "ok.txt").unwrap(), "ok\n");
    assert!(!r.main.join("added.txt").exists());
    assert_eq!(git(&r.main, &["status", "--porcelain"]), head_before);
    assert!(r.h.user.asks().is_empty());

    // The files that do not conflict can go on their own.
    let out = sync(&r, json!({"paths": ["ok.txt", "added.txt"]})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(text(&r.main, "ok.txt").unwrap(), "changed\n");
    assert_eq!(text(&r.main, "added.txt").unwrap(), "new\n");
    assert_eq!(text(&r.main, "lib.txt").unwrap(), mine);
}

#[tokio::test]
async fn binary_files_deletions_renames_and_modes_are_synced() {
    let old = lines(10, " of old");
    let png: &[u8] = &[0x89, b'P', b'N', b'G', 0, 1, 2, 3, 255];
    let r = repos(
        &[
            ("img.png", png),
            ("old.txt", old.as_bytes()),
            ("gone.txt", b"bye\n"),
            ("run.sh", b"#!/bin/sh\necho hi\n"),
            ("tool.bin", &[0x7f, b'E', b'L', b'F', 0, 0xfe]),
        ],
        vec![PermissionReply::Once],
        true,
    );
    let mode_of = |rel: &str| {
        fs::symlink_metadata(r.main.join(rel))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    fs::set_permissions(r.main.join("tool.bin"), fs::Permissions::from_mode(0o750)).unwrap();
    let (png_mode, run_mode) = (mode_of("img.png"), mode_of("run.sh"));
    // Committed in the worktree: the rename with an edit at the end.
    git(&r.wt, &["mv", "old.txt", "new.txt"]);
    put(&r.wt, "new.txt", with_line(&old, 10, "line 10 renamed"));
    git(&r.wt, &["commit", "-qam", "rename"]);
    // Uncommitted: a binary change, a deletion, an executable bit.
    put(&r.wt, "img.png", [0u8, 9, 9, 9, 0xff]);
    fs::remove_file(r.wt.join("gone.txt")).unwrap();
    fs::set_permissions(r.wt.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    // A new binary file, and a binary the worktree deleted.
    put(&r.wt, "data/new.bin", [0u8, 0xc3, 0x28, 7]);
    fs::remove_file(r.wt.join("tool.bin")).unwrap();
    // The user edited the renamed file's top in their checkout.
    put(&r.main, "old.txt", with_line(&old, 1, "line 1 by the user"));

    let out = sync(&r, json!({})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(
        fs::read(r.main.join("img.png")).unwrap(),
        [0u8, 9, 9, 9, 0xff]
    );
    assert!(!r.main.join("gone.txt").exists());
    assert!(!r.main.join("old.txt").exists());
    assert_eq!(
        text(&r.main, "new.txt").unwrap(),
        with_line(
            &with_line(&old, 1, "line 1 by the user"),
            10,
            "line 10 renamed"
        )
    );
    let mode = fs::metadata(r.main.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "run.sh is executable now");
    let preview = r.h.user.asks()[0].request.metadata["stat"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        preview.contains(" img.png (changed, binary, 9 → 5 bytes)"),
        "{preview}"
    );
    assert!(preview.contains(" gone.txt (deleted, +0 -1)"), "{preview}");
    assert!(
        preview.contains(" run.sh (changed, +0 -0) [now executable]"),
        "{preview}"
    );

    assert_eq!(
        fs::read(r.main.join("data/new.bin")).unwrap(),
        [0u8, 0xc3, 0x28, 7]
    );
    assert!(!r.main.join("tool.bin").exists());

    // Reverting the sync restores every file: text (the rename and the deletion), binary
    // bytes (changed, new, deleted) and modes, exactly.
    let opts = RevertOptions {
        force: false,
        session_id: r.h.session.clone(),
    };
    let undone = revert(&r.h.store, &RevertTarget::Call(out.call_id.clone()), &opts).unwrap();
    assert_eq!(undone.reverted.len(), 7, "{:?}", undone.reverted);
    let restored = |r: &Repos| {
        assert_eq!(
            text(&r.main, "old.txt").unwrap(),
            with_line(&old, 1, "line 1 by the user")
        );
        assert!(!r.main.join("new.txt").exists());
        assert_eq!(text(&r.main, "gone.txt").unwrap(), "bye\n");
        assert_eq!(fs::read(r.main.join("img.png")).unwrap(), png);
        assert_eq!(mode_of("img.png"), png_mode);
        assert_eq!(
            mode_of("run.sh"),
            run_mode,
            "run.sh is not executable again"
        );
        assert!(!r.main.join("data/new.bin").exists());
        assert_eq!(
            fs::read(r.main.join("tool.bin")).unwrap(),
            [0x7f, b'E', b'L', b'F', 0, 0xfe]
        );
        assert_eq!(mode_of("tool.bin"), 0o750);
    };
    restored(&r);

    // Redo (a revert of the revert) puts the synced bytes and modes back; undoing that
    // restores the user's files again.
    let mut redo_ids = Vec::new();
    for rec in &undone.reverted {
        let redo = revert(&r.h.store, &RevertTarget::Change(rec.id.clone()), &opts).unwrap();
        redo_ids.extend(redo.reverted.into_iter().map(|c| c.id));
    }
    assert_eq!(
        fs::read(r.main.join("img.png")).unwrap(),
        [0u8, 9, 9, 9, 0xff]
    );
    assert_eq!(mode_of("run.sh") & 0o111, 0o111);
    assert_eq!(
        fs::read(r.main.join("data/new.bin")).unwrap(),
        [0u8, 0xc3, 0x28, 7]
    );
    assert!(!r.main.join("tool.bin").exists());
    for id in redo_ids.iter().rev() {
        revert(&r.h.store, &RevertTarget::Change(id.clone()), &opts).unwrap();
    }
    restored(&r);
}

#[tokio::test]
async fn a_binary_changed_since_the_sync_is_a_revert_conflict() {
    let r = repos(
        &[("img.bin", &[1u8, 0, 2])],
        vec![PermissionReply::Once],
        true,
    );
    put(&r.wt, "img.bin", [3u8, 0, 4]);
    let out = sync(&r, json!({})).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert!(
        out.model_text.starts_with("Synced 1 file"),
        "{}",
        out.model_text
    );
    put(&r.main, "img.bin", [5u8, 0, 6, 7]);
    let opts = RevertOptions {
        force: false,
        session_id: r.h.session.clone(),
    };
    let err = revert(&r.h.store, &RevertTarget::Call(out.call_id.clone()), &opts).unwrap_err();
    let shown = err.to_string().replace(r.main.to_str().unwrap(), "<main>");
    assert!(
        shown.starts_with("revert refused: <main>/img.bin changed since Podcode wrote it (use --force to overwrite)"),
        "{shown}"
    );
    let mode = fs::metadata(r.main.join("img.bin"))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777;
    assert!(
        shown.contains(&format!(
            "-(binary file, 3 bytes, mode {mode:o})\n+(binary file, 4 bytes, mode {mode:o})"
        )),
        "{shown}"
    );
    assert_eq!(fs::read(r.main.join("img.bin")).unwrap(), [5u8, 0, 6, 7]);
}
