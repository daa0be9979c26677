//! A sub-agent's permission ask in the full-screen UI: the real binary in a pseudo-terminal
//! against the scripted model. The parent's `task` call starts a `general` sub-agent whose
//! `write` asks; the modal of the parent's UI names the sub-agent, the user allows it once,
//! and the child's edit lands.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Env;
use common::pty::drive;
use podcode_providers::testing::Reply;

#[test]
fn a_sub_agent_s_ask_is_answered_in_the_parent_s_modal() {
    let env = Env::new(vec![]);
    let file = env.write("notes.txt", "old\n");
    let write = serde_json::json!({"filePath": file, "content": "new\n"}).to_string();
    env.server.push(Reply::new().tool_call(
        "t1",
        "task",
        r#"{"description": "Edit notes", "prompt": "Write new to notes.txt.", "subagent_type": "general"}"#,
    ));
    env.server
        .push(Reply::new().tool_call("w1", "write", &write));
    env.server.push(Reply::new().text("notes edited"));
    env.server
        .push(Reply::new().text("The sub-agent edited the notes."));

    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "delegate the edit\r"),
            ("sub-agent general · Edit notes", ""),
            ("allow once", "o"),
            ("The sub-agent edited the notes.", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert_eq!(env.read("notes.txt"), "new\n", "{screen}");
    assert_eq!(env.requests().len(), 4);
}

#[test]
fn a_sub_agent_s_transcript_opens_from_the_keyboard_live_and_esc_goes_back() {
    let env = Env::new(vec![]);
    env.write_global(&format!(
        "[[permission]]\npermission = \"bash\"\npattern = \"*\"\naction = \"allow\"\n\
         [provider.scripted]\nbase_url = \"{}\"\n[provider.scripted.models.\"test\"]\ncontext = 128000\n",
        env.server.base_url()
    ));
    env.server.push(Reply::new().tool_call(
        "t1",
        "task",
        r#"{"description": "Count notes", "prompt": "Count the notes carefully.", "subagent_type": "general"}"#,
    ));
    env.server.push(Reply::new().tool_call(
        "b1",
        "bash",
        r#"{"command": "sleep 6; echo counted", "description": "Wait for the count"}"#,
    ));
    env.server
        .push(Reply::new().text("Found 3 notes in the folder."));
    env.server.push(Reply::new().text("Done counting."));

    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "count the notes\r"),
            // The card shows the child at work: ctrl-t lists the sub-agents.
            ("general · Count notes — bash", "\x14"),
            ("sub-agents (enter opens its transcript)", "\r"),
            // The child's own transcript, from the store, while it still runs.
            ("(live) · esc: back to the main conversation", ""),
            ("Count the notes carefully.", ""),
            // Its answer arrives live, then esc shows the main conversation again.
            ("Found 3 notes in the folder.", "\x1b"),
            ("Done counting.", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert_eq!(env.requests().len(), 4);
}
