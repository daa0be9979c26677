//! The full-screen UI's session features end to end, in a pseudo-terminal against the
//! scripted model server: `@path` attachments with completion, pasting, `/model` and
//! `/agent` switches, `/plugins`, the `/sessions` picker, `/undo`, queued prompts, and
//! tools installed mid-session being offered from the next request.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::pty::{drive, drive_with};
use common::{Env, text, user_texts};
use podcode_providers::testing::{Gate, Reply};
use serde_json::Value;

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn an_at_mention_completes_attaches_the_file_and_a_paste_keeps_its_newlines() {
    let env = Env::new(vec![
        Reply::new().text("It defines secret_sauce."),
        Reply::new().text("Two lines received."),
    ]);
    env.write("src/lib.rs", "pub fn secret_sauce() -> u32 { 42 }\n");
    env.write("docs/guide.md", "# Guide\n");
    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "what is in @src/li"),
            // The completion popup offers the file; tab accepts, enter sends.
            ("src/lib.rs", "\t\r"),
            (
                "It defines secret_sauce.",
                "\x1b[200~first line\nsecond line\x1b[201~\r",
            ),
            ("Two lines received.", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert!(screen.contains("📎attached"), "{screen}");
    let reqs = env.requests();
    let first = user_texts(&reqs[0]);
    assert!(first.contains("what is in @src/lib.rs"), "{first}");
    assert!(first.contains("The user attached"), "{first}");
    assert!(first.contains("pub fn secret_sauce() -> u32"), "{first}");
    let second = user_texts(&reqs[1]);
    assert!(second.contains("first line\\nsecond line"), "{second}");
}

#[test]
fn model_and_agent_switches_apply_to_the_next_turn_and_plugins_reports() {
    let env = Env::new(vec![Reply::new().text("Planning only.")]);
    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "/model scripted/other-model\r"),
            ("scripted/other-model", "/agent plan\r"),
            ("agent plan", "/plugins\r"),
            ("JavaScript runtime", "/model nowhere/x\r"),
            ("model not changed", "what next?\r"),
            ("Planning only.", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    let reqs = env.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0]["model"], "other-model");
    let names = tool_names(&reqs[0]);
    assert!(names.contains(&"read".to_string()), "{names:?}");
    assert!(!names.contains(&"write".to_string()), "{names:?}");
    // plan offers bash, but every command asks (the profile's rule).
    assert!(names.contains(&"bash".to_string()), "{names:?}");
}

#[test]
fn the_sessions_picker_resumes_an_earlier_conversation() {
    let env = Env::new(vec![
        Reply::new().text("Noted: pineapple."),
        Reply::new().text("It was pineapple."),
    ]);
    let out = env.run(&["run", "remember the code word pineapple"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "/sessions\r"),
            ("resume a session", "\r"),
            ("Noted: pineapple.", "what was the code word?\r"),
            ("It was pineapple.", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    let reqs = env.requests();
    assert_eq!(reqs.len(), 2);
    let resumed = user_texts(&reqs[1]);
    assert!(
        resumed.contains("remember the code word pineapple"),
        "{resumed}"
    );
    assert!(resumed.contains("what was the code word?"), "{resumed}");
}

#[test]
fn undo_reverts_the_newest_turn_then_the_one_before() {
    let env = Env::new(vec![]);
    let file = env.write("notes.txt", "v0\n");
    env.server.push(common::write_call("c1", &file, "v1\n"));
    env.server.push(Reply::new().text("First edit done."));
    env.server.push(common::write_call("c2", &file, "v2\n"));
    env.server.push(Reply::new().text("Second edit done."));
    env.write_global(&format!(
        "[provider.scripted]\nbase_url = \"{}\"\n[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"allow\"\n",
        env.server.base_url()
    ));
    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "first\r"),
            ("First edit done.", "second\r"),
            ("Second edit done.", "/undo\r"),
            ("undo: reverted 1 change", "/undo\r"),
            ("", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert_eq!(env.read("notes.txt"), "v0\n", "{screen}");
}

#[test]
fn a_prompt_sent_while_a_turn_runs_is_queued_and_sent_after_it() {
    // The first answer is held after its first word until the second prompt shows as
    // queued: the turn is certainly running when it is typed, however slow the machine.
    let rest = Gate::new();
    let env = Env::new(vec![
        Reply::new()
            .text("Working")
            .text(" slowly")
            .text(" on it.")
            .hold_after(2, &rest),
        Reply::new().text("Second answer."),
    ]);
    let (screen, matched) = drive_with(
        &env,
        &["tui"],
        &[
            ("enter to send", "first\r"),
            ("Working", "and then this\r"),
            ("queued", ""),
            ("Second answer.", "\x03\x03"),
        ],
        |step| {
            if step == 2 {
                rest.open();
            }
        },
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    let reqs = env.requests();
    assert_eq!(reqs.len(), 2);
    assert!(user_texts(&reqs[1]).contains("and then this"));
}

#[test]
fn a_tool_installed_during_the_session_is_offered_from_the_next_request() {
    let env = Env::new(vec![]);
    for reply in common::hello_tool_script(&env) {
        env.server.push(reply);
    }
    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "install the hello tool and use it\r"),
            // Each modal's keys answer once it has been on screen a moment.
            ("bash asks for", ""),
            ("allow once", "o"),
            // The install writes outside the workspace: the sandbox stops it and asks.
            ("asks for sandbox", ""),
            ("allow once", "o"),
            ("hello asks to run", ""),
            ("allow once", "o"),
            ("It said hello.", "/tools\r"),
            ("hello · ", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    // The notice is drawn over cells already on screen, so only its tail is contiguous
    // in the captured stream ("tools reloaded: N tool(s) offered (/tools lists them)").
    assert!(
        screen.contains("tool(s)offered(/toolsliststhem)"),
        "{screen}"
    );
    let reqs = env.requests();
    assert!(!tool_names(&reqs[0]).contains(&"hello".to_string()));
    assert!(tool_names(&reqs[1]).contains(&"hello".to_string()));
}

/// Nothing changed on disk since the UI opened: the first prompt does not reload the tools
/// (no "tools reloaded" notice), with skills and a plugin-free workspace alike.
#[test]
fn the_first_prompt_does_not_reload_unchanged_tools() {
    let env = Env::new(vec![Reply::new().text("Hello there.")]);
    env.write(
        ".claude/skills/notes/SKILL.md",
        "---\nname: notes\ndescription: Take notes\n---\nSteps.\n",
    );
    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[("enter to send", "hi\r"), ("Hello there.", "\x03\x03")],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert!(!screen.contains("tool(s)offered"), "{screen}");
}

#[test]
fn config_warnings_show_in_the_transcript_at_start() {
    let env = Env::new(vec![]);
    env.write(
        ".podcode/config.toml",
        "model = \"scripted/test\"\ncolour = \"blue\"\n",
    );
    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", ""),
            // On the UI's own screen, not only on the terminal it covers until it quits.
            ("unknown key `colour` ignored", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
}
