//! A sub-agent's permission ask in the full-screen UI: the real binary in a pseudo-terminal
//! against the scripted model. The parent's `task` call starts a `general` sub-agent whose
//! `write` asks; the modal of the parent's UI names the sub-agent, the user allows it once,
//! and the child's edit lands.

mod common;

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
            ("sub-agent general · Edit notes", "o"),
            ("The sub-agent edited the notes.", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert_eq!(env.read("notes.txt"), "new\n", "{screen}");
    assert_eq!(env.requests().len(), 4);
}
