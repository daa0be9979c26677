//! What a repository's `opencode.json` may read with `{file:}` and `{env:}`, through the real
//! binary: a scratch project whose opencode config puts the user's SSH key (a fake one in a
//! scratch HOME), a secret-named variable, a symlink out of the project and a file of the
//! project into the build agent's prompt. What reaches the scripted model's request bodies,
//! the warnings and `podcode plugins` are checked before trust, after `podcode trust`, after
//! `podcode trust --allow-secrets`, and after `podcode trust --revoke`; and on a terminal,
//! the question a trusted project's config asks before it reads them, answered no and yes.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use podcode_providers::testing::Reply;
use serde_json::Value;

use crate::common;
use common::*;

const SSH_KEY: &str = "FAKE-SSH-KEY-4f1c77";
const AWS_SECRET: &str = "FAKE-AWS-SECRET-9d2e01";
const PLAIN: &str = "plain-value-5b3a";
const STYLE: &str = "STYLE-GUIDE-OF-THE-PROJECT";

fn setup() -> Env {
    setup_answering("ok")
}

/// `setup` with a model that answers `answer` to every prompt.
fn setup_answering(answer: &str) -> Env {
    let env = Env::new((0..4).map(|_| Reply::new().text(answer)).collect());
    let home = env.root.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), format!("{SSH_KEY}\n")).unwrap();
    env.write("notes/style.md", &format!("{STYLE}\n"));
    std::os::unix::fs::symlink(
        home.join(".ssh/id_ed25519"),
        env.repo().join("notes/key.md"),
    )
    .unwrap();
    env.write(
        "opencode.json",
        r#"{
  "agent": {
    "build": {
      "prompt": "Style: {file:./notes/style.md} Key: {file:~/.ssh/id_ed25519} Linked: {file:./notes/key.md} Aws: {env:AWS_SECRET_ACCESS_KEY} Plain: {env:PODCODE_TEST_PLAIN}"
    }
  }
}"#,
    );
    env
}

/// Runs one prompt with the secret-named and plain variables set; (stderr, the request's
/// system prompt).
fn run(env: &Env) -> (String, String) {
    let before = env.requests().len();
    let out = env
        .cmd(&["run", "hello"])
        .env("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
        .env("PODCODE_TEST_PLAIN", PLAIN)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let requests = env.requests();
    assert_eq!(requests.len(), before + 1);
    let body: &Value = &requests[before];
    let system = body["messages"][0]["content"].as_str().unwrap().to_string();
    assert!(
        system.contains("Style: "),
        "the agent's prompt is used: {system}"
    );
    (stderr, system)
}

fn plugins(env: &Env) -> String {
    let out = env
        .cmd(&["plugins"])
        .env("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

fn trust(env: &Env, args: &[&str]) {
    let out = env.run(&[&["trust"], args].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn a_projects_opencode_config_reads_no_secret_until_the_user_allows_it() {
    let env = setup();

    // Untrusted: only files inside the project; no variable at all.
    let (stderr, system) = run(&env);
    assert!(system.contains(STYLE), "{system}");
    for secret in [SSH_KEY, AWS_SECRET, PLAIN] {
        assert!(
            !system.contains(secret),
            "{secret} reached the model: {system}"
        );
    }
    for needle in [
        "opencode.json: this workspace is not trusted, so its config may not read environment variables or files outside the project; left empty: ",
        "agent.build.prompt ({file:~/.ssh/id_ed25519})",
        "agent.build.prompt ({file:./notes/key.md})",
        "agent.build.prompt ({env:AWS_SECRET_ACCESS_KEY})",
        "agent.build.prompt ({env:PODCODE_TEST_PLAIN})",
        "(run `podcode trust` to trust it, and `podcode trust --allow-secrets` to let its config read secrets)",
    ] {
        assert!(stderr.contains(needle), "{needle:?} missing:\n{stderr}");
    }
    let listing = plugins(&env);
    assert!(
        listing.contains("left empty (this workspace's config may not read them): agent.build.prompt ({file:~/.ssh/id_ed25519})"),
        "{listing}"
    );
    assert!(!listing.contains(SSH_KEY) && !listing.contains(AWS_SECRET));

    // Trusted: plain variables, but secrets still wait for the user's word.
    trust(&env, &[]);
    let (stderr, system) = run(&env);
    assert!(system.contains(STYLE) && system.contains(PLAIN), "{system}");
    assert!(
        !system.contains(SSH_KEY) && !system.contains(AWS_SECRET),
        "{system}"
    );
    for needle in [
        "a project's config may read files outside the project and secret environment variables only once you allow it; left empty: ",
        "agent.build.prompt ({file:~/.ssh/id_ed25519})",
        "agent.build.prompt ({env:AWS_SECRET_ACCESS_KEY})",
        "(run `podcode trust --allow-secrets` to allow this project's config to read them)",
    ] {
        assert!(stderr.contains(needle), "{needle:?} missing:\n{stderr}");
    }
    assert!(!stderr.contains("{env:PODCODE_TEST_PLAIN}"), "{stderr}");

    // Allowed: the user said so.
    trust(&env, &["--allow-secrets"]);
    let (stderr, system) = run(&env);
    for value in [STYLE, SSH_KEY, AWS_SECRET, PLAIN] {
        assert!(system.contains(value), "{value} missing: {system}");
    }
    assert!(!stderr.contains("left empty"), "{stderr}");

    // Revoked: back to nothing outside the project.
    trust(&env, &["--revoke"]);
    let (_, system) = run(&env);
    for secret in [SSH_KEY, AWS_SECRET, PLAIN] {
        assert!(
            !system.contains(secret),
            "{secret} reached the model: {system}"
        );
    }
}

/// The system prompt of the model request number `n`.
fn system_of(env: &Env, n: usize) -> String {
    env.requests()[n]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn on_a_terminal_a_trusted_projects_config_asks_before_it_reads_a_secret() {
    const ANSWER: &str = "Answered-by-the-model-31d7";
    let env = setup_answering(ANSWER);
    trust(&env, &[]);
    let question = "Let this workspace's config read them? [y/N]";

    // No: the secret stays empty, this time and (not remembered) asked again next time.
    let (screen, matched) = pty::drive(&env, &["run", "hello"], &[(question, "n\r"), (ANSWER, "")]);
    assert!(matched[0] && matched[1], "{matched:?}\n{screen}");
    let asked = "opencode config reads files outside the project or secret environment variables: agent.build.prompt ({file:~/.ssh/id_ed25519})";
    assert!(screen.contains(&asked.replace(' ', "")), "{screen}");
    assert!(
        screen.contains(&"Not allowed: they stay empty (run `podcode trust --allow-secrets` later to allow them).".replace(' ', "")),
        "{screen}"
    );
    let system = system_of(&env, 0);
    assert!(
        system.contains(STYLE) && !system.contains(SSH_KEY),
        "{system}"
    );

    // Yes: read now, and remembered (a run without a terminal reads it too).
    let (screen, matched) = pty::drive(&env, &["run", "hello"], &[(question, "y\r"), (ANSWER, "")]);
    assert!(matched[0] && matched[1], "{matched:?}\n{screen}");
    assert!(system_of(&env, 1).contains(SSH_KEY));
    let (stderr, system) = run(&env);
    assert!(system.contains(SSH_KEY), "{system}");
    assert!(!stderr.contains("left empty"), "{stderr}");
}
