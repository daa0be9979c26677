//! The helper on the real kernel: a shell started through `podcode-sandbox-exec` under
//! each mode, writing inside and outside the writable roots and connecting to a loopback
//! port. Landlock-dependent checks are skipped (and say so) on a kernel without it.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use podcode_sandbox::{Denial, KernelSupport, Mode, Policy, Sandbox, Settings, detect};

fn sandbox(mode: Mode, network: bool) -> Sandbox {
    Sandbox::new(
        PathBuf::from(env!("CARGO_BIN_EXE_podcode-sandbox-exec")),
        Settings { mode, network },
    )
}

fn run(sb: &Sandbox, policy: &Policy, script: &str, cwd: &Path) -> Output {
    let (program, args) = sb.wrap(policy, "/bin/sh".as_ref(), &["-c".into(), script.into()]);
    Command::new(program)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("spawn the helper")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn landlock() -> bool {
    let ok = KernelSupport::detect().has_landlock();
    if !ok {
        eprintln!("skipped: this kernel has no Landlock");
    }
    ok
}

#[test]
fn workspace_write_allows_the_workspace_and_refuses_home_and_etc() {
    if !landlock() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let sb = sandbox(Mode::WorkspaceWrite, false);
    let policy = sb.policy([ws.path()]);

    let out = run(
        &sb,
        &policy,
        "echo hi > inside.txt && cat inside.txt",
        ws.path(),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("inside.txt")).unwrap(),
        "hi\n"
    );

    let target = outside.path().join("escape.txt");
    let out = run(
        &sb,
        &policy,
        &format!("touch '{}'", target.display()),
        ws.path(),
    );
    assert!(!out.status.success());
    assert!(text(&out).contains("Permission denied"), "{}", text(&out));
    assert!(!target.exists());
    assert_eq!(
        detect(&text(&out), &policy, ws.path()),
        Some(Denial::Write(target.clone()))
    );

    let out = run(
        &sb,
        &policy,
        "echo x > /etc/podcode-sandbox-test",
        ws.path(),
    );
    assert!(!out.status.success());
    assert!(text(&out).contains("Permission denied"), "{}", text(&out));
    assert!(!Path::new("/etc/podcode-sandbox-test").exists());

    // Reading is still allowed everywhere, and /dev/null stays writable.
    let out = run(
        &sb,
        &policy,
        "cat /etc/hostname >/dev/null && echo ok",
        ws.path(),
    );
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn read_only_refuses_even_the_workspace_and_full_refuses_nothing() {
    if !landlock() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let ro = sandbox(Mode::ReadOnly, false);
    let out = run(
        &ro,
        &ro.policy([ws.path()]),
        "echo x > inside.txt",
        ws.path(),
    );
    assert!(!out.status.success());
    assert!(text(&out).contains("Permission denied"), "{}", text(&out));
    assert!(!ws.path().join("inside.txt").exists());

    let outside = tempfile::tempdir().unwrap();
    let full = sandbox(Mode::Full, true);
    let target = outside.path().join("anywhere.txt");
    let out = run(
        &full,
        &full.policy([ws.path()]),
        &format!("echo x > '{}'", target.display()),
        ws.path(),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(target.exists());
}

/// A loopback listener; [`accepted`] counts what connected to it.
fn listener() -> (u16, TcpListener) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    (port, l)
}

/// The connections made to `l`, counted after the command that connects has ended: by then
/// its connect either failed or sits in the accept queue, however slow the machine was.
fn accepted(l: TcpListener) -> usize {
    l.set_nonblocking(true).unwrap();
    let mut n = 0;
    while let Ok((mut s, _)) = l.accept() {
        n += 1;
        let _ = s.read(&mut [0u8; 16]);
    }
    n
}

#[test]
fn a_loopback_connect_fails_with_the_network_off_and_works_with_it_on() {
    let ws = tempfile::tempdir().unwrap();
    let connect = |port: u16| format!("exec bash -c 'echo ping > /dev/tcp/127.0.0.1/{port}'");

    let (port, l) = listener();
    let off = sandbox(Mode::WorkspaceWrite, false);
    let policy = off.policy([ws.path()]);
    let out = run(&off, &policy, &connect(port), ws.path());
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        matches!(
            detect(&text(&out), &policy, ws.path()),
            Some(Denial::Network(_))
        ),
        "{}",
        text(&out)
    );
    assert_eq!(accepted(l), 0);

    let (port, l) = listener();
    let on = sandbox(Mode::WorkspaceWrite, true);
    let out = run(&on, &on.policy([ws.path()]), &connect(port), ws.path());
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(accepted(l), 1);
}

#[test]
fn unix_sockets_keep_working_with_the_network_off() {
    if Command::new("python3").arg("-V").output().is_err() {
        eprintln!("skipped: no python3");
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let sock = ws.path().join("s.sock");
    let l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let sb = sandbox(Mode::WorkspaceWrite, false);
    let script = "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(\"ok\")' s.sock";
    let out = run(&sb, &sb.policy([ws.path()]), script, ws.path());
    assert!(out.status.success(), "{}", text(&out));
    drop(l);
}

#[test]
fn a_missing_command_and_a_bad_policy_say_what_went_wrong() {
    let helper = env!("CARGO_BIN_EXE_podcode-sandbox-exec");
    let out = Command::new(helper)
        .args([
            "__sandbox-exec",
            "--policy",
            r#"{"mode":"full","network":true,"writable":[]}"#,
            "--",
            "/no/such/program",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert!(
        text(&out).starts_with("podcode sandbox: /no/such/program: "),
        "{}",
        text(&out)
    );
    let out = Command::new(helper)
        .args(["--policy", "{", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(126));
    assert!(
        text(&out).contains("the sandbox policy is not valid JSON"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_program_written_a_moment_ago_runs_once_its_writer_lets_go() {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let ws = tempfile::tempdir().unwrap();
    let path = ws.path().join("tool.sh");
    let mut held = std::fs::File::create(&path).unwrap();
    held.write_all(b"#!/bin/sh\necho ran\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let closer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(150));
        drop(held);
    });
    // The helper (not the test) runs the file, while the test still holds it for writing.
    let sb = sandbox(Mode::WorkspaceWrite, false);
    let (program, args) = sb.wrap(&sb.policy([ws.path()]), path.as_os_str(), &[]);
    let out = Command::new(program).args(args).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(text(&out), "ran\n");
    closer.join().unwrap();
}
