//! A session is stored when its first prompt is sent, and titled from that prompt, in every
//! front end: the TUI (launched and left without a prompt, or `/new` left empty, stores
//! nothing) and ACP. The real binary in a pseudo-terminal and under a real ACP client,
//! against the scripted model.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::process::Command;

use common::pty::drive;
use common::*;
use podcode_providers::testing::Reply;
use serde_json::Value;

fn sessions(env: &Env) -> Vec<Value> {
    let out = env.run(&["sessions", "--json"]);
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_tui_launch_without_a_prompt_stores_no_session() {
    let env = Env::new(vec![]);
    let (screen, matched) = drive(&env, &["tui"], &[("enter to send", "\x03\x03")]);
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert_eq!(sessions(&env), Vec::<Value>::new());
}

#[test]
fn a_tui_session_is_titled_from_its_first_prompt_and_an_empty_new_one_is_not_stored() {
    let env = Env::new(vec![Reply::new().text("Hello there.")]);
    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "name this session please\nsecond line\r"),
            ("Hello there.", "/new\r"),
            ("enter to send", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    let all = sessions(&env);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(all[0]["title"], "name this session please");
}

#[test]
fn an_acp_session_is_titled_from_its_first_prompt() {
    let env = Env::new(vec![Reply::new().text("Done.")]);
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("../acp/tests/client");
    assert!(
        client
            .join("node_modules/@agentclientprotocol/sdk")
            .exists(),
        "run `npm ci` in crates/acp/tests/client first (.ci/run does)"
    );
    let cmd = env.cmd(&[]);
    let out = Command::new("node")
        .arg(client.join("client.mjs"))
        .args(["prompt", "tidy the notes folder"])
        .current_dir(&client)
        .envs(
            cmd.get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        )
        .env("PODCODE_BIN", env!("CARGO_BIN_EXE_podcode"))
        .env("ACP_CWD", env.repo())
        .env("ACP_PERMISSION", "allow_once")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let all = sessions(&env);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(all[0]["title"], "tidy the notes folder");
}
