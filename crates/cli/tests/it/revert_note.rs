//! Undo is visible to the model: after a revert (`podcode revert`, the TUI's `/undo`) the
//! next request carries a note that the change is gone, stored in the session so a resumed
//! session sends it too. The real binary against the scripted model; the request bodies are
//! what the server received.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::pty::drive;
use common::*;
use podcode_providers::testing::Reply;
use serde_json::Value;

const NOTE: &str =
    "The user reverted the change to undo_me.txt (the file is back to its previous content).";

/// The model writes `undo_me.txt` and says it did.
fn write_script(env: &Env) {
    let file = env.write("undo_me.txt", "original\n");
    env.server.push(write_call("w1", &file, "changed\n"));
    env.server.push(Reply::new().text("Wrote it."));
}

/// Where `needle` is in the request's messages (serialized), which must hold it.
fn at(body: &Value, needle: &str) -> usize {
    let messages = body["messages"].to_string();
    let quoted = serde_json::to_string(needle).unwrap();
    messages
        .find(&quoted[1..quoted.len() - 1])
        .unwrap_or_else(|| panic!("{needle:?} not in {messages}"))
}

#[test]
fn after_podcode_revert_the_next_request_says_the_change_is_gone() {
    let env = Env::new(vec![]);
    write_script(&env);
    let out = env.run(&["run", "change undo_me.txt", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(env.read("undo_me.txt"), "changed\n");
    let session = env.last_session();
    let out = env.run(&["revert", "--session", &session]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(env.read("undo_me.txt"), "original\n");

    env.server.push(Reply::new().text("Understood."));
    let out = env.run(&["run", "--continue", "what is in the file now?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let reqs = env.requests();
    assert_eq!(reqs.len(), 3);
    // The note comes after the write's result and before the new prompt.
    let body = &reqs[2];
    assert!(at(body, "Wrote it.") < at(body, NOTE), "{body:#}");
    assert!(
        at(body, NOTE) < at(body, "what is in the file now?"),
        "{body:#}"
    );
    assert_every_call_answered(body);
}

#[test]
fn after_undo_in_the_tui_the_next_request_says_the_change_is_gone() {
    let env = Env::new(vec![]);
    env.write_global(&format!(
        "[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"allow\"\n\
         [provider.scripted]\nbase_url = \"{}\"\n[provider.scripted.models.\"test\"]\ncontext = 128000\n",
        env.server.base_url()
    ));
    write_script(&env);
    env.server.push(Reply::new().text("Understood."));
    let (screen, matched) = drive(
        &env,
        &["tui", "--agent", "build"],
        &[
            ("enter to send", "change undo_me.txt\r"),
            ("Wrote it.", "/undo\r"),
            ("undo:", "what is in the file now?\r"),
            ("Understood.", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert_eq!(env.read("undo_me.txt"), "original\n");
    let reqs = env.requests();
    assert_eq!(reqs.len(), 3);
    let body = &reqs[2];
    assert!(
        at(body, NOTE) < at(body, "what is in the file now?"),
        "{body:#}"
    );
}
