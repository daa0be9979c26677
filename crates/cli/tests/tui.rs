//! The full-screen UI end to end: the real binary in a pseudo-terminal (python3's `pty`)
//! against the scripted model server. Keys are typed as a user would; the test waits for
//! text on the screen before each key and checks the file on disk at the end.

mod common;

use std::process::Command;

use common::{Env, text};
use podcode_providers::testing::Reply;

/// Drives `podcode ARGS` through `steps`: each is (text to wait for, keys to send then).
/// Returns everything the UI drew, escape sequences and spaces removed, and whether each
/// wait matched (plus, last, whether the terminal was restored: alternate screen left).
fn drive(env: &Env, args: &[&str], steps: &[(&str, &str)]) -> (String, Vec<bool>) {
    let script = r#"
import os, pty, sys, time, select, re, json, fcntl, termios, struct
steps = json.loads(sys.argv[1]); args = sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(args[0], args)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
ansi = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]")
out, plain, matched = b"", "", []
def pump(t):
    global out, plain
    r, _, _ = select.select([fd], [], [], t)
    if r:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return False
        if not chunk:
            return False
        out += chunk
        # Cells the screen already shows are skipped by cursor moves: compare without spaces.
        plain = re.sub(r"\s", "", ansi.sub(b"", out).decode(errors="replace"))
    return True
alive = True
for wait_for, keys in steps:
    deadline, seen_at = time.time() + 20, len(plain)
    ok = False
    while alive and time.time() < deadline:
        if wait_for.replace(" ", "") in plain[seen_at - 200 if seen_at > 200 else 0:]:
            ok = True
            break
        alive = pump(0.1)
    matched.append(ok)
    time.sleep(0.3)
    os.write(fd, keys.encode())
end = time.time() + 10
while alive and time.time() < end:
    alive = pump(0.1)
    try:
        p, _ = os.waitpid(pid, os.WNOHANG)
        if p:
            break
    except ChildProcessError:
        break
# Leaving the alternate screen is the last thing a clean exit writes.
matched.append(b"\x1b[?1049l" in out)
sys.stdout.write(json.dumps({"screen": plain, "matched": matched}))
"#;
    let steps_json = serde_json::to_string(
        &steps
            .iter()
            .map(|(w, k)| vec![w.to_string(), k.to_string()])
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let cmd = env.cmd(&[]);
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(steps_json)
        .arg(env!("CARGO_BIN_EXE_podcode"))
        .args(args)
        .current_dir(env.repo())
        .envs(
            cmd.get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        )
        .env("TERM", "xterm-256color")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)));
    let matched = v["matched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_bool().unwrap())
        .collect();
    (v["screen"].as_str().unwrap().to_string(), matched)
}

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
            ("modify notes.txt", "r"),
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
    let env = Env::new(vec![
        Reply::new()
            .text("Thinking slowly")
            .text(" and more")
            .text(" and more")
            .pace(std::time::Duration::from_secs(3)),
    ]);
    let started = std::time::Instant::now();
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
    // Aborted long before the model would have finished its reply.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(8),
        "{screen}"
    );
}

#[test]
fn continue_shows_the_stored_conversation() {
    let env = Env::new(vec![Reply::new().text("Earlier answer here.")]);
    let out = env.run(&["run", "first question"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (screen, matched) = drive(
        &env,
        &["tui", "--continue"],
        &[("Earlier answer here.", "\x03\x03")],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert!(screen.contains("firstquestion"), "{screen}");
}

#[test]
fn a_conflicting_revert_shows_the_conflict_and_can_be_forced() {
    let env = Env::new(vec![]);
    let file = env.write("notes.txt", "v0\n");
    let write =
        |content: &str| serde_json::json!({"filePath": file, "content": content}).to_string();
    env.server
        .push(Reply::new().tool_call("c1", "write", write("v1\n")));
    env.server
        .push(Reply::new().tool_call("c2", "write", write("v2\n")));
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
            ("modify notes.txt", "r"),
            ("revert refused", "f"),
            ("reverted 1 change", "\x1b\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    assert!(screen.contains("changedsincePodcodewroteit"), "{screen}");
    assert_eq!(env.read("notes.txt"), "v0\n");
}
