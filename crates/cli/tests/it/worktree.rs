//! `podcode run --worktree`, `podcode sessions` and `podcode sessions prune` as a user
//! drives them: the real binary, real git, the scripted model server.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use podcode_providers::testing::Reply;

use crate::common;
use common::*;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=T", "-c", "user.email=t@t"])
        .args(args)
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

#[test]
fn a_worktree_run_leaves_the_checkout_alone_is_listed_and_pruned() {
    let env = Env::new(vec![
        Reply::new().tool_call(
            "c1",
            "write",
            r#"{"filePath": "new.txt", "content": "from the agent\n"}"#,
        ),
        Reply::new().text("Done."),
    ]);
    // The fake repository (an empty .git folder) is no git repository: a clear refusal.
    let out = env.run(&["run", "--worktree", "--yes", "add new.txt"]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("--worktree needs a git repository, and ")
            && stderr.contains(
                "is not inside one (run `git init` and commit first, or leave out --worktree)"
            ),
        "{stderr}"
    );

    std::fs::remove_dir_all(env.repo().join(".git")).unwrap();
    git(&env.repo(), &["init", "-q"]);
    env.write("a.txt", "a\n");
    git(&env.repo(), &["add", "-A"]);
    git(&env.repo(), &["commit", "-qm", "start"]);
    let out = env.run(&["run", "--worktree", "--yes", "add new.txt"]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let session = env.last_session();
    let wt = env
        .root
        .path()
        .join("data/worktrees")
        .join(&session)
        .canonicalize()
        .unwrap();
    assert!(
        stderr.contains(&format!(
            "working in worktree {} (branch podcode/{session})",
            wt.display()
        )),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("new.txt")).unwrap(),
        "from the agent\n"
    );
    assert!(
        !env.repo().join("new.txt").exists(),
        "the checkout is untouched"
    );

    let list = text(&env.run(&["sessions"]).stdout);
    assert!(
        list.contains(&format!(
            "\n  worktree {} (branch podcode/{session}): 1 unsynced change\n",
            wt.display()
        )),
        "{list}"
    );
    // Keeping unsynced work is what prune is for: not a failure, also for a named session.
    for args in [
        vec!["sessions", "prune"],
        vec!["sessions", "prune", &session],
    ] {
        let kept = env.run(&args);
        assert_eq!(kept.status.code(), Some(0));
        assert!(text(&kept.stdout).contains(
            "1 unsynced change (sync them with the session's sync_to_main, or pass --force to discard)"
        ));
        assert!(wt.exists());
    }
    // An error is one: a session that has no worktree.
    let out = env.run(&["sessions", "prune", "ses_nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    let pruned = env.run(&["sessions", "prune", "--force"]);
    assert!(pruned.status.success(), "{}", text(&pruned.stderr));
    assert_eq!(
        text(&pruned.stdout),
        format!(
            "{session}  removed {} and branch podcode/{session}\n",
            wt.display()
        )
    );
    assert!(!wt.exists());
}

const WHERE: &str = r#"import { tool } from "@opencode-ai/plugin"

export default tool({
  description: "Where the call runs",
  args: {},
  async execute(_args, ctx) {
    return JSON.stringify({ directory: ctx.directory, worktree: ctx.worktree, mainCwd: ctx.mainCwd })
  },
})
"#;

#[test]
fn a_plugin_tool_in_a_worktree_session_sees_the_worktree_and_the_users_checkout() {
    let env = Env::new(vec![
        Reply::new().tool_call("c1", "where", "{}"),
        Reply::new().text("Done."),
    ]);
    std::fs::remove_dir_all(env.repo().join(".git")).unwrap();
    git(&env.repo(), &["init", "-q"]);
    env.write(".opencode/tools/where.ts", WHERE);
    git(&env.repo(), &["add", "-A"]);
    git(&env.repo(), &["commit", "-qm", "start"]);
    assert!(env.run(&["trust"]).status.success());

    let out = env.run(&["run", "--worktree", "--yes", "where are you?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let session = env.last_session();
    let wt = env
        .root
        .path()
        .join("data/worktrees")
        .join(&session)
        .canonicalize()
        .unwrap();
    let main = env.repo().canonicalize().unwrap();
    let (_, result) = &tool_messages(&env.requests()[1])[0];
    let seen: serde_json::Value = serde_json::from_str(result).unwrap();
    assert_eq!(seen["directory"], wt.to_str().unwrap(), "{result}");
    assert_eq!(seen["worktree"], wt.to_str().unwrap(), "{result}");
    assert_eq!(seen["mainCwd"], main.to_str().unwrap(), "{result}");
}

#[test]
fn tui_new_in_a_worktree_session_starts_in_a_fresh_worktree() {
    let env = Env::new(vec![
        Reply::new().text("First."),
        Reply::new().text("Second."),
    ]);
    std::fs::remove_dir_all(env.repo().join(".git")).unwrap();
    git(&env.repo(), &["init", "-q"]);
    env.write("a.txt", "a\n");
    git(&env.repo(), &["add", "-A"]);
    git(&env.repo(), &["commit", "-qm", "start"]);

    let (screen, matched) = common::pty::drive(
        &env,
        &["tui", "--worktree"],
        &[
            ("enter to send", "hello\r"),
            ("First.", "/new\r"),
            ("new session in a fresh worktree", "again\r"),
            ("Second.", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    let out = env.run(&["sessions", "--json"]);
    let sessions: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{sessions}");
    // Each session worked in its own worktree: the second prompt's request names the new one.
    let worktrees = env
        .root
        .path()
        .canonicalize()
        .unwrap()
        .join("data/worktrees");
    for (id, request) in [(ids[1], 0), (ids[0], 1)] {
        let wt = worktrees.join(id);
        let sent = env.requests()[request].to_string();
        assert!(sent.contains(wt.to_str().unwrap()), "{id}: {sent}");
    }
    // The session the UI ended in changed nothing in its worktree: removed at exit.
    assert!(!worktrees.join(ids[0]).exists());
    assert!(worktrees.join(ids[1]).exists());
    let first = env.root.path().join("data/worktrees").join(ids[1]);
    let first = first.canonicalize().unwrap();
    assert!(
        !env.requests()[1]
            .to_string()
            .contains(first.to_str().unwrap())
    );
    assert!(
        screen.contains(&format!("branch podcode/{}", ids[0]).replace(' ', "")),
        "{screen}"
    );
}

/// A worktree session's edits, then a sync: the summary counts each file once, by its path
/// in the project, however many edits and syncs touched it. A sync reverted afterwards in
/// the checkout is no longer synced: prune keeps the worktree, says why, and exits 0.
#[test]
fn a_reverted_sync_keeps_the_worktree_and_the_summary_counts_files_not_edits() {
    let env = Env::new(vec![
        Reply::new().tool_call("c1", "write", r#"{"filePath": "a.txt", "content": "a1\n"}"#),
        Reply::new().tool_call(
            "c2",
            "edit",
            r#"{"filePath": "a.txt", "oldString": "a1", "newString": "a2"}"#,
        ),
        Reply::new().tool_call("c3", "write", r#"{"filePath": "b.txt", "content": "b1\n"}"#),
        Reply::new().tool_call("c4", "sync_to_main", r#"{"message": "a and b"}"#),
        Reply::new().text("Synced."),
    ]);
    env.git_init();
    env.write("a.txt", "a\n");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "start"]);
    let out = env.run(&["run", "--worktree", "--yes", "change a and b"]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(env.read("a.txt"), "a2\n", "{stderr}");
    assert!(
        stderr.contains("\nchanged 2 files: a.txt, b.txt\n"),
        "{stderr}"
    );
    let session = env.last_session();

    // Nothing unsynced: prune would remove it. Undo the sync of a.txt in the checkout.
    let changes: serde_json::Value =
        serde_json::from_slice(&env.run(&["changes", "--json"]).stdout).unwrap();
    let main_a = env.repo().canonicalize().unwrap().join("a.txt");
    let synced = changes
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["file"] == main_a.to_str().unwrap())
        .unwrap_or_else(|| panic!("{changes:#}"))["id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = env.run(&["revert", &synced]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(env.read("a.txt"), "a\n");

    let list = text(&env.run(&["sessions"]).stdout);
    assert!(
        list.contains(&format!(
            "(branch podcode/{session}): 1 unsynced change (a.txt was synced, then reverted in your checkout)\n"
        )),
        "{list}"
    );
    let wt = env.root.path().join("data/worktrees").join(&session);
    for args in [
        vec!["sessions", "prune"],
        vec!["sessions", "prune", &session],
    ] {
        let kept = env.run(&args);
        assert_eq!(kept.status.code(), Some(0), "{}", text(&kept.stderr));
        assert_eq!(
            text(&kept.stdout),
            format!(
                "{session}  kept {}: 1 unsynced change (a.txt was synced, then reverted in your checkout; sync them with the session's sync_to_main, or pass --force to discard)\n",
                wt.canonicalize().unwrap().display()
            )
        );
        assert!(wt.exists());
    }
}

/// `tui --worktree` says where it works; leaving a worktree the session never changed
/// removes it (and the session without a message), leaving one with work says how to sync
/// or drop it.
#[test]
fn tui_worktree_says_where_it_works_and_what_is_left_when_it_ends() {
    let env = Env::new(vec![
        Reply::new().tool_call(
            "c1",
            "write",
            r#"{"filePath": "new.txt", "content": "x\n"}"#,
        ),
        Reply::new().text("Wrote it."),
    ]);
    env.write_global(&format!(
        "[provider.scripted]\nbase_url = \"{}\"\n[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"allow\"\n",
        env.server.base_url()
    ));
    env.git_init();
    env.write("a.txt", "a\n");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "start"]);
    let worktrees = env.root.path().join("data/worktrees");

    // Opened and left at once: nothing is kept.
    let (screen, matched) = common::pty::drive(
        &env,
        &["tui", "--worktree"],
        &[("working in worktree", "\x03\x03")],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert!(screen.contains("thesessionchangednothinginit"), "{screen}");
    assert_eq!(std::fs::read_dir(&worktrees).unwrap().count(), 0);
    assert_eq!(text(&env.run(&["sessions"]).stdout), "");
    let branches = Command::new("git")
        .args(["branch", "--list", "podcode/*"])
        .current_dir(env.repo())
        .output()
        .unwrap();
    assert_eq!(text(&branches.stdout), "");

    // With work in it: kept, and the user is told how to get it or drop it.
    let (screen, matched) = common::pty::drive(
        &env,
        &["tui", "--worktree"],
        &[
            ("working in worktree", "write it\r"),
            ("Wrote it.", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    let session = env.last_session();
    let wt = worktrees.join(&session).canonicalize().unwrap();
    assert!(
        screen.contains(&format!("branchpodcode/{session})")),
        "{screen}"
    );
    let expected = format!(
        "Resume this session with: podcode --session {session}the session's worktree {} (branch podcode/{session}) has 1 unsynced change: resume the session and ask for sync_to_main to copy them into your checkout, or discard them with `podcode sessions prune --force {session}`",
        wt.display()
    );
    assert!(screen.contains(&expected.replace(' ', "")), "{screen}");
    assert!(wt.join("new.txt").exists());
}

/// A session in the user's checkout is never offered `sync_to_main`, also once the tool set
/// was rebuilt mid-run (a tool file appeared).
#[test]
fn sync_to_main_stays_out_of_a_checkout_session_after_a_tool_reload() {
    let env = Env::new(vec![]);
    for reply in common::hello_tool_script(&env) {
        env.server.push(reply);
    }
    let out = env.run(&["run", "install and use the hello tool", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = env.requests();
    assert_eq!(requests.len(), 3);
    for (i, request) in requests.iter().enumerate() {
        let names: Vec<&str> = request["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.contains(&"hello"), i > 0, "{i}: {names:?}");
        assert!(!names.contains(&"sync_to_main"), "{i}: {names:?}");
    }
}
