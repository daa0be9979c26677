//! The full-screen UI end to end: the real binary in a pseudo-terminal (python3's `pty`)
//! against the scripted model server. Keys are typed as a user would; the test waits for
//! text on the screen before each key and checks the file on disk at the end.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::pty::drive;
use common::{Env, text};
use podcode_providers::testing::{Gate, Reply};

#[test]
fn prompt_permission_changes_view_and_revert_in_a_pty() {
    let env = Env::new(vec![]);
    let file = env.write("notes.txt", "old line\n");
    let args = serde_json::json!({"filePath": file, "content": "new line\n"}).to_string();
    env.server
        .push(Reply::new().tool_call("c1", "write", &args));
    env.server.push(Reply::new().text("I rewrote the notes."));

    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "rewrite the notes\r"),
            ("allow once", "o"),
            ("I rewrote the notes.", "\x07"),
            ("▶ modify", "r"),
            ("reverted 1 change", "\x1b"),
            ("", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert_eq!(env.read("notes.txt"), "old line\n", "{screen}");
    assert!(screen.contains("write"), "{screen}");
    // The model got the tool's result, and the revert is journaled.
    assert_eq!(env.requests().len(), 2);
    let changes = text(&env.run(&["changes"]).stdout);
    assert!(changes.matches("notes.txt").count() >= 2, "{changes}");
}

#[test]
fn reject_with_feedback_reaches_the_model() {
    let env = Env::new(vec![]);
    let file = env.write("notes.txt", "keep me\n");
    let args = serde_json::json!({"filePath": file, "content": "gone\n"}).to_string();
    env.server
        .push(Reply::new().tool_call("c1", "write", &args));
    env.server.push(Reply::new().text("Understood."));

    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "change the notes\r"),
            ("allow once", "f"),
            ("feedback for the model", "leave it alone\r"),
            ("Understood.", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert_eq!(env.read("notes.txt"), "keep me\n");
    let reqs = env.requests();
    let tool_msgs = common::tool_messages(&reqs[1]);
    assert!(tool_msgs[0].1.contains("leave it alone"), "{tool_msgs:?}");
}

#[test]
fn esc_aborts_a_streaming_turn_and_ctrl_c_twice_quits() {
    // The answer stops after its first words and never goes on: only the abort ends it.
    let env = Env::new(vec![
        Reply::new()
            .text("Thinking slowly")
            .text(" and more")
            .hold_after(2, &Gate::new()),
    ]);
    // Bare `podcode` on a terminal opens the UI.
    let (screen, matched) = drive(
        &env,
        &[],
        &[
            ("enter to send", "take your time\r"),
            ("Thinking slowly", "\x1b"),
            ("── aborted", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert!(!screen.contains("andmore"), "{screen}");
}

#[test]
fn continue_shows_the_stored_conversation() {
    let env = Env::new(vec![Reply::new().text("Earlier answer here.")]);
    // `podcode run -` reads the prompt from standard input.
    let mut run = env.cmd(&["run", "-"]);
    run.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = run.spawn().unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), b"first question\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Bare `podcode -c` is the UI continuing the newest session, as `tui --continue`.
    for args in [&["tui", "--continue"][..], &["-c"][..]] {
        let (screen, matched) = drive(&env, args, &[("Earlier answer here.", "\x03\x03")]);
        assert!(matched.iter().all(|m| *m), "{args:?} {matched:?}\n{screen}");
        assert!(screen.contains("firstquestion"), "{screen}");
        // On the way out: how to come back to it.
        let hint = format!(
            "Resumethissessionwith:podcode--session{}",
            env.last_session()
        );
        assert!(screen.contains(&hint), "{screen}");
    }
    // A UI left before any prompt stored nothing: nothing to resume.
    let (screen, matched) = drive(&env, &[], &[("enter to send", "\x03\x03")]);
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert!(!screen.contains("Resumethissession"), "{screen}");
    let first = common::user_texts(&env.requests()[0]);
    assert!(
        first.contains("first question") && !first.contains("first question\\n"),
        "{first}"
    );
}

#[test]
fn a_conflicting_revert_shows_the_conflict_and_can_be_forced() {
    let env = Env::new(vec![]);
    let file = env.write("notes.txt", "v0\n");
    env.server.push(common::write_call("c1", &file, "v1\n"));
    env.server.push(common::write_call("c2", &file, "v2\n"));
    env.server.push(Reply::new().text("Two edits made."));

    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "edit twice\r"),
            // "always" covers the second write.
            ("allow once", "a"),
            ("Two edits made.", "\x07"),
            // The first change is selected; the second write changed the file since.
            ("▶ modify", "r"),
            ("revert refused", "f"),
            ("reverted 1 change", "\x1b\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert!(screen.contains("changedsincePodcodewroteit"), "{screen}");
    assert_eq!(env.read("notes.txt"), "v0\n");
}

#[test]
fn the_permission_modal_shows_a_tools_arguments_and_each_remembered_bash_rule() {
    let env = Env::new(vec![]);
    // A user tool (executable) with no preview of its own: its arguments are shown, the
    // secret one masked.
    let tools = env.root.path().join("config/tools");
    std::fs::create_dir_all(&tools).unwrap();
    let tool = tools.join("deploy_status");
    std::fs::write(
        &tool,
        "#!/bin/sh\nif [ \"$1\" = describe ]; then\n  echo '{\"description\": \"Deploy status.\", \"parameters\": {\"type\": \"object\", \"properties\": {\"service\": {\"type\": \"string\"}, \"token\": {\"type\": \"string\"}}}}'\nelse\n  echo healthy\nfi\n",
    )
    .unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.server.push(Reply::new().tool_call(
        "c1",
        "deploy_status",
        r#"{"service": "api", "token": "sk-very-secret"}"#,
    ));
    env.server
        .push(common::bash_call("c2", "ls -la && echo done", "list"));
    env.server.push(Reply::new().text("All done."));
    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "check the deploy\r"),
            ("always allow deploy_status in this project", "o"),
            ("each rule remembered", "o"),
            ("All done.", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    // What the UI drew, spaces removed.
    // The compound command's header names it once, not each part after it.
    assert!(!screen.contains("echodonels-laechodone"), "{screen}");
    for shown in [
        "deploy_statusaskstorun",
        "\"service\":\"api\"",
        "\"token\":\"********\"",
        "[a]alwaysallowdeploy_statusinthisproject",
        "bashasksforbash:ls-la&&echodone",
        // "Always" on the compound command remembers each part's family, one per line.
        // (The screen is redrawn by difference: what lies between the lines varies.)
        "[a]alwaysallowinthisproject(bash,eachruleremembered):",
        "`ls*`",
        "`echo*`",
    ] {
        assert!(screen.contains(shown), "{shown} in {screen}");
    }
}

#[test]
fn a_long_write_is_read_whole_in_the_modal_and_its_card_expands_from_the_keyboard() {
    let env = Env::new(vec![]);
    let file = env.root.path().join("repo/rows.txt");
    let content: String = (1..=120).map(|i| format!("row {i}\n")).collect();
    let args = serde_json::json!({"filePath": file, "content": content}).to_string();
    env.server
        .push(Reply::new().tool_call("c1", "write", &args));
    env.server
        .push(Reply::new().text("Done:\n\n| file | rows |\n|------|-----:|\n| rows.txt | 120 |\n"));
    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "write the rows\r"),
            // The modal's body scrolls: page down, then to the end, before answering.
            ("allow once", "\x1b[6~"),
            ("+row 30", "\x1b[F"),
            ("+row 120", "o"),
            // The answer's table is drawn in columns.
            ("rows.txt │  120", ""),
            // alt-↑ picks the card, ctrl-o expands it and shows it from its first line.
            ("more lines (ctrl-o or a click expands)", "\x1b[1;3A\x0f"),
            ("+row 20", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert_eq!(env.read("rows.txt"), content);
}
