//! What an editor's thread list and cards need from `podcode acp`, driven by the official
//! ACP client library against the scripted model server: `session/list` (this directory's
//! sessions with their titles and last activity, page by page; a thread never prompted is
//! not stored, so neither listed there nor by `podcode sessions`), the title and
//! context-meter updates of a turn and of a loaded session, a loaded thread's cards titled
//! as they were live, permission requests named by the action and its kind, and the
//! requests refused with a reason (a `cwd` that is a file or missing, an empty prompt, a
//! cursor never handed out).
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::acp::{client, find, updates, write_call};
use crate::common::{self, Env};

use podcode_providers::testing::Reply;
use serde_json::{Value, json};

/// `podcode acp`'s page size: one session more than a page makes a second page.
const PAGE_SIZE: usize = 50;

/// ISO 8601 in UTC as the protocol's `updatedAt` wants it: `2026-12-02T10:31:05.123Z`.
fn is_iso_time(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 24
        && s.ends_with('Z')
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && s[..4].bytes().all(|c| c.is_ascii_digit())
}

#[test]
fn a_turn_tells_the_editor_the_sessions_title_and_context_usage() {
    let env = Env::new(vec![
        Reply::new().text("Tidied.").usage(1200, 30).cost(0.25),
    ]);
    let v = client(&env, &["prompt", "Tidy the parser\nand more"], "allow_once");
    assert_eq!(v["stop"]["stopReason"], json!("end_turn"));
    // The title the first prompt gave the session reaches the editor during the turn,
    // and the context meter after the model's answer.
    let u = updates(&v);
    let titled = find(&u, 0, |x| x["sessionUpdate"] == "session_info_update");
    assert_eq!(u[titled]["title"], json!("Tidy the parser"));
    assert!(
        is_iso_time(u[titled]["updatedAt"].as_str().unwrap()),
        "{:#}",
        u[titled]
    );
    let usage = find(&u, 0, |x| x["sessionUpdate"] == "usage_update");
    assert_eq!(
        u[usage],
        json!({"sessionUpdate": "usage_update", "used": 1200, "size": 128000,
               "cost": {"amount": 0.25, "currency": "USD"}})
    );
}

#[test]
fn session_list_pages_this_directorys_sessions() {
    // Each session is prompted once: only a prompted session is stored and listed.
    let env = Env::new(
        (0..=PAGE_SIZE)
            .map(|_| Reply::new().text("Listed."))
            .collect(),
    );
    let count = (PAGE_SIZE + 1).to_string();
    let v = client(
        &env,
        &["list", &count, "Tidy the parser\nand more"],
        "allow_once",
    );
    assert_eq!(
        v["init"]["agentCapabilities"]["sessionCapabilities"]["list"],
        json!({}),
        "{:#}",
        v["init"]
    );
    assert_eq!(v["stop"]["stopReason"], json!("end_turn"));

    // Two pages: every session of the directory once, the cursor only on the first.
    let pages = v["pages"].as_array().unwrap();
    assert_eq!(pages.len(), 2, "{pages:#?}");
    assert_eq!(pages[0]["sessions"].as_array().unwrap().len(), PAGE_SIZE);
    assert!(pages[0]["nextCursor"].is_string(), "{:#}", pages[0]);
    assert!(pages[1]["nextCursor"].is_null(), "{:#}", pages[1]);
    let listed: Vec<&Value> = pages
        .iter()
        .flat_map(|p| p["sessions"].as_array().unwrap())
        .collect();
    let mut ids: Vec<&str> = listed
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    let mut created: Vec<&str> = v["sessionIds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    ids.sort();
    created.sort();
    assert_eq!(ids, created);
    let repo = env.repo().canonicalize().unwrap().display().to_string();
    for s in &listed {
        assert_eq!(s["cwd"], json!(repo), "{s:#}");
        assert!(is_iso_time(s["updatedAt"].as_str().unwrap()), "{s:#}");
    }
    let prompted = listed
        .iter()
        .find(|s| s["sessionId"] == v["sessionIds"][0])
        .unwrap();
    assert_eq!(prompted["title"], json!("Tidy the parser"));
    // Another directory's list does not hold this one's sessions.
    assert_eq!(v["elsewhere"]["sessions"], json!([]));
}

/// The permission request names the action and its kind, as the call's card does, instead
/// of repeating the command as its only text.
#[test]
fn a_permission_request_names_the_action_and_its_kind() {
    let env = Env::new(vec![
        common::bash_call("c1", "touch made.txt", "Make a file"),
        write_call("c2", "notes.txt", "hello\n"),
        Reply::new().text("Done."),
    ]);
    let v = client(&env, &["prompt", "make files"], "allow_once");
    assert_eq!(v["stop"]["stopReason"], json!("end_turn"));
    let asks: Vec<&Value> = v["seen"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s.get("permission"))
        .collect();
    let shown: Vec<(Value, Value, Value)> = asks
        .iter()
        .map(|a| {
            let call = &a["toolCall"];
            (
                call["toolCallId"].clone(),
                call["title"].clone(),
                call["kind"].clone(),
            )
        })
        .collect();
    let u = updates(&v);
    // The cards in the order the model asked: the command, then the write.
    let cards: Vec<Value> = u
        .iter()
        .filter(|x| x["sessionUpdate"] == "tool_call")
        .map(|x| x["toolCallId"].clone())
        .collect();
    assert_eq!(
        shown,
        vec![
            (
                cards[0].clone(),
                json!("Run `touch made.txt`"),
                json!("execute")
            ),
            (cards[1].clone(), json!("Write notes.txt"), json!("edit")),
        ],
        "{asks:#?}"
    );
    // The card's own title says the same.
    find(&u, 0, |x| x["title"] == "Run `touch made.txt`");
    assert_eq!(env.read("notes.txt"), "hello\n");
}

#[test]
fn a_wrong_cwd_an_empty_prompt_and_a_strange_cursor_are_refused_with_reasons() {
    let env = Env::new(vec![Reply::new().text("never asked")]);
    let file = env.write("notes.txt", "x\n");
    let file = file.display().to_string();
    let v = client(&env, &["refuse", &file], "allow_once");
    let missing = env.repo().join("missing").display().to_string();
    let refused = |key: &str, message: String| {
        assert_eq!(v[key]["code"], json!(-32602), "{key}: {:#}", v[key]);
        let got = v[key]["message"].as_str().unwrap_or_default();
        assert!(got.contains(&message), "{key}: {got:?} lacks {message:?}");
    };
    refused(
        "fileCwd",
        format!("cwd must be a directory, got the file {file}"),
    );
    refused("missingCwd", format!("cwd {missing} does not exist"));
    refused(
        "relativeList",
        "cwd must be an absolute path, got relative/dir".into(),
    );
    refused(
        "badCursor",
        "unknown cursor: pass the nextCursor of the previous session/list answer, or none for the first page".into(),
    );
    let empty = "The prompt is empty: send text, a file link or an embedded text file";
    refused("noBlocks", empty.into());
    refused("blank", empty.into());
    // The model was never asked.
    assert!(env.requests().is_empty());
}

/// Threads an editor opens and never writes in leave nothing behind: a new session is
/// stored (and titled) by its first prompt, as in the TUI.
#[test]
fn a_session_never_prompted_is_neither_stored_nor_listed() {
    let env = Env::new(vec![Reply::new().text("Tidied.")]);
    let v = client(&env, &["drafts", "Tidy the parser"], "allow_once");
    assert_eq!(v["stop"]["stopReason"], json!("end_turn"));
    assert_eq!(v["before"]["sessions"], json!([]), "{:#}", v["before"]);
    let after = v["after"]["sessions"].as_array().unwrap();
    assert_eq!(after.len(), 1, "{after:#?}");
    assert_eq!(after[0]["sessionId"], v["sessionIds"][0]);
    assert_eq!(after[0]["title"], json!("Tidy the parser"));
    // Once the agent has exited, the store holds the prompted session only.
    let out = env.run(&["sessions", "--json"]);
    let stored: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stored = stored.as_array().unwrap();
    assert_eq!(stored.len(), 1, "{stored:#?}");
    assert_eq!(stored[0]["id"], v["sessionIds"][0]);
    assert_eq!(stored[0]["title"], json!("Tidy the parser"));
}

/// The session a prompt runs a command in and then answers, with usage and cost, and what
/// a second client loading it sees.
fn loaded_after_a_command(env: &Env) -> (Vec<Value>, Vec<Value>) {
    let v = client(env, &["prompt", "list the files"], "allow_once");
    assert_eq!(v["stop"]["stopReason"], json!("end_turn"));
    let session_id = v["session"]["sessionId"].as_str().unwrap().to_string();
    let loaded = client(env, &["load", &session_id], "allow_once");
    (updates(&v), updates(&loaded))
}

fn command_then_answer() -> Env {
    Env::new(vec![
        common::bash_call("c1", "ls", "List files")
            .usage(1000, 20)
            .cost(0.25),
        Reply::new().text("Listed.").usage(1500, 10).cost(0.5),
    ])
}

/// A loaded thread's cards read as they did live: a command's says it runs the command.
#[test]
fn a_loaded_command_card_is_titled_as_it_was_live() {
    let env = command_then_answer();
    let (u, r) = loaded_after_a_command(&env);
    // Live, the card announced as the model asks for it is titled once its arguments are in.
    let live = find(&u, 0, |x| x["sessionUpdate"] == "tool_call");
    let id = u[live]["toolCallId"].clone();
    let started = find(&u, live, |x| {
        x["sessionUpdate"] == "tool_call_update" && x["status"] == "in_progress"
    });
    assert_eq!(u[started]["toolCallId"], id);
    assert_eq!(u[started]["title"], json!("Run `ls`"), "{:#}", u[started]);
    assert_eq!(u[started]["kind"], json!("execute"));

    let card = find(&r, 0, |x| {
        x["sessionUpdate"] == "tool_call" && x["toolCallId"] == id
    });
    assert_eq!(r[card]["title"], json!("Run `ls`"), "{:#}", r[card]);
    assert_eq!(r[card]["kind"], json!("execute"));
    assert_eq!(r[card]["status"], json!("completed"));
}

/// After the replay the editor hears a loaded thread's title, last activity and context
/// meter, as after a live turn.
#[test]
fn a_loaded_session_tells_the_editor_its_title_and_context_meter() {
    let env = command_then_answer();
    let (_, r) = loaded_after_a_command(&env);
    let answer = find(&r, 0, |x| {
        x["sessionUpdate"] == "agent_message_chunk" && x["content"]["text"] == "Listed."
    });
    let info = find(&r, answer, |x| x["sessionUpdate"] == "session_info_update");
    assert_eq!(r[info]["title"], json!("list the files"));
    assert!(
        is_iso_time(r[info]["updatedAt"].as_str().unwrap()),
        "{:#}",
        r[info]
    );
    // The meter as the last request left it (its prompt tokens), with the whole cost.
    let usage = find(&r, answer, |x| x["sessionUpdate"] == "usage_update");
    assert_eq!(
        r[usage],
        json!({"sessionUpdate": "usage_update", "used": 1500, "size": 128000,
               "cost": {"amount": 0.75, "currency": "USD"}})
    );
}
