//! `bash` in the sandbox on the real kernel, through the whole pipeline: the harness runs
//! every call in Podcode's default sandbox (workspace-write, network off) with the
//! `podcode-sandbox-exec` helper. Writes inside the workspace work; writes outside fail
//! and ask permission `sandbox` to run again outside it ("always" remembers the prefix
//! family); the network is off unless configured; `read-only` and `full` behave as named;
//! API keys are masked in what the model reads.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::net::TcpListener;
use std::sync::Arc;

use podcode_builtins::{default_rules, register_all};
use podcode_protocol::{PermissionAction, PermissionReply, PermissionRule};
use podcode_sandbox::{KernelSupport, Mode, Secret, Settings};
use podcode_tools::testing::{Harness, Setup, default_sandbox, harness};
use podcode_tools::{CallStatus, RuntimeOptions, ToolRegistry};
use serde_json::json;

fn registry() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    register_all(&mut r);
    r
}

fn rules() -> Vec<PermissionRule> {
    let mut rules = default_rules();
    rules.push(PermissionRule::new("bash", "*", PermissionAction::Allow));
    rules
}

fn with(
    replies: Vec<PermissionReply>,
    opts: impl FnOnce(&mut RuntimeOptions) + 'static,
) -> Harness {
    harness(
        registry(),
        Setup {
            rules: rules(),
            replies,
            opts: Box::new(opts),
            ..Default::default()
        },
    )
}

/// The default sandbox with another mode or network setting.
fn settings(mode: Mode, network: bool) -> impl FnOnce(&mut RuntimeOptions) {
    move |opts: &mut RuntimeOptions| {
        let data = opts
            .spill_dir
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_default();
        let sb = default_sandbox(&data, &opts.spill_dir);
        let sb =
            podcode_sandbox::Sandbox::new(sb.helper().to_path_buf(), Settings { mode, network })
                .with_writable([opts.spill_dir.clone()])
                .with_temp_root(data.join("tmp"));
        opts.sandbox = Some(Arc::new(sb));
    }
}

fn landlock() -> bool {
    let ok = KernelSupport::detect().has_landlock();
    if !ok {
        eprintln!("skipped: this kernel has no Landlock");
    }
    ok
}

async fn bash(h: &Harness, command: &str) -> podcode_tools::CallOutcome {
    h.call_json("bash", json!({"command": command})).await
}

#[tokio::test]
async fn workspace_writes_work_and_the_temp_dir_is_the_sessions() {
    let h = with(vec![], |_| {});
    let out = bash(
        &h,
        "echo hi > made.txt && cat made.txt && echo \"$TMPDIR\" && touch \"$TMPDIR/scratch\"",
    )
    .await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert!(h.work().join("made.txt").exists());
    let tmp = h.dir.path().join("data/tmp").join(&h.session);
    assert!(
        out.model_text.contains(&tmp.display().to_string()),
        "{}",
        out.model_text
    );
    assert!(tmp.join("scratch").exists());
    assert!(h.user.asks().is_empty());
}

#[tokio::test]
async fn a_write_outside_fails_with_eacces_and_asks_to_leave_the_sandbox() {
    if !landlock() {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escape.txt");
    let h = with(vec![PermissionReply::Reject { feedback: None }], |_| {});
    let out = bash(&h, &format!("touch '{}'", target.display())).await;
    assert!(!target.exists());
    assert!(
        out.model_text.contains("Permission denied"),
        "{}",
        out.model_text
    );
    let asks = h.user.asks();
    assert_eq!(asks.len(), 1, "{asks:?}");
    let ask = &asks[0].request;
    assert_eq!(ask.permission, "sandbox");
    assert_eq!(
        ask.metadata["command"],
        json!(format!("touch '{}'", target.display()))
    );
    assert_eq!(
        ask.metadata["denied"],
        json!(format!(
            "The sandbox stopped writing {}. Run the command again outside the sandbox, with your full rights?",
            target.display()
        ))
    );
    assert_eq!(out.status, CallStatus::Denied);
    assert!(
        out.model_text.contains(&format!(
            "The sandbox stopped writing {} and running the command outside the sandbox was not allowed",
            target.display()
        )),
        "{}",
        out.model_text
    );

    // /etc is refused the same way (and nothing is written there).
    let h = with(vec![PermissionReply::Reject { feedback: None }], |_| {});
    let out = bash(&h, "echo x > /etc/podcode-sandbox-probe").await;
    assert!(
        out.model_text.contains("Permission denied"),
        "{}",
        out.model_text
    );
    assert!(!std::path::Path::new("/etc/podcode-sandbox-probe").exists());
}

#[tokio::test]
async fn an_approved_escalation_runs_again_outside_and_always_remembers_the_family() {
    if !landlock() {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let a = outside.path().join("a.txt");
    let b = outside.path().join("b.txt");
    let h = with(vec![PermissionReply::Always], |_| {});
    let out = bash(&h, &format!("touch '{}'", a.display())).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert!(a.exists());
    assert!(
        out.model_text
            .contains("the user allowed running it again outside the sandbox"),
        "{}",
        out.model_text
    );
    assert_eq!(h.user.asks()[0].request.always, vec!["touch *".to_string()]);
    // Same family: no second ask.
    let out = bash(&h, &format!("touch '{}'", b.display())).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert!(b.exists());
    assert_eq!(h.user.asks().len(), 1);
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

#[tokio::test]
async fn a_loopback_connect_fails_with_the_network_off_and_works_with_it_on() {
    let connect = |port: u16| format!("bash -c 'echo ping > /dev/tcp/127.0.0.1/{port}'");
    let (port, l) = listener();
    let h = with(vec![PermissionReply::Reject { feedback: None }], |_| {});
    let out = bash(&h, &connect(port)).await;
    assert!(
        out.model_text.contains("Permission denied"),
        "{}",
        out.model_text
    );
    assert_eq!(h.user.asks()[0].request.permission, "sandbox");
    assert!(
        h.user.asks()[0].request.metadata["denied"]
            .as_str()
            .unwrap()
            .contains("a network connection"),
    );
    assert_eq!(accepted(l), 0);

    let (port, l) = listener();
    let h = with(vec![], settings(Mode::WorkspaceWrite, true));
    let out = bash(&h, &connect(port)).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert_eq!(accepted(l), 1);
    assert!(h.user.asks().is_empty());
}

#[tokio::test]
async fn read_only_refuses_a_workspace_write_and_full_behaves_as_before() {
    if !landlock() {
        return;
    }
    let h = with(
        vec![PermissionReply::Reject { feedback: None }],
        settings(Mode::ReadOnly, false),
    );
    let out = bash(&h, "echo x > inside.txt").await;
    assert!(
        out.model_text.contains("Permission denied"),
        "{}",
        out.model_text
    );
    assert!(!h.work().join("inside.txt").exists());
    assert_eq!(h.user.asks()[0].request.permission, "sandbox");

    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("free.txt");
    let h = with(vec![], settings(Mode::Full, false));
    let out = bash(&h, &format!("echo x > '{}' && echo done", target.display())).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert!(target.exists());
    assert!(h.user.asks().is_empty());
}

#[tokio::test]
async fn an_api_key_printed_by_a_command_is_masked_for_the_model() {
    let key = "sk-podcode-test-0123456789abcdef";
    let h = with(vec![], move |opts| {
        opts.secrets = vec![Secret {
            name: "OPENAI_API_KEY".into(),
            value: key.into(),
        }];
    });
    let out = bash(&h, &format!("echo OPENAI_API_KEY={key}")).await;
    assert_eq!(out.status, CallStatus::Completed, "{}", out.model_text);
    assert!(!out.model_text.contains(key), "{}", out.model_text);
    assert!(
        out.model_text
            .contains("OPENAI_API_KEY=[OPENAI_API_KEY hidden]"),
        "{}",
        out.model_text
    );
    assert!(!out.result.output.contains(key));
}
