//! The sandbox through the installed binary: `podcode sandbox status` and `sandbox run`,
//! the hidden helper (`podcode __sandbox-exec`, not in `--help`), and API keys: removed
//! from a command's environment, and masked in tool output when the user passes one on.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

struct Env {
    root: tempfile::TempDir,
}

const KEY: &str = "sk-podcode-sandbox-test-0123456789";

impl Env {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("repo/.git")).unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        Self { root }
    }
    fn repo(&self) -> PathBuf {
        self.root.path().join("repo")
    }
    fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }
    fn config(&self, text: &str) {
        let p = self.root.path().join("config/config.toml");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_podcode"))
            .args(args)
            .current_dir(self.repo())
            .env("HOME", self.home())
            .env("PODCODE_CONFIG_DIR", self.root.path().join("config"))
            .env("PODCODE_DATA_DIR", self.root.path().join("data"))
            .env("OPENAI_API_KEY", KEY)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("PODCODE_SANDBOX_HELPER")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn landlock(env: &Env) -> bool {
    let status = out(&env.run(&["sandbox", "status", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&status).unwrap();
    let ok = v["landlock"]["available"] == true;
    if !ok {
        eprintln!("skipped: this kernel has no Landlock");
    }
    ok
}

#[test]
fn status_says_what_the_kernel_enforces_and_what_each_tool_gets() {
    let env = Env::new();
    let o = env.run(&["sandbox", "status"]);
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    assert!(text.contains("Landlock  "), "{text}");
    assert!(text.contains("Mode workspace-write"), "{text}");
    assert!(
        text.contains("bash               writes only the workspace"),
        "{text}"
    );
    assert!(text.contains("; network off"), "{text}");
    assert!(text.contains("plugin host        writes only the workspace, the session directory, its temp dir and the roots below; network on"), "{text}");
    assert!(text.contains("OPENAI_API_KEY"), "{text}");

    env.config("[sandbox]\nmode = \"full\"\n");
    let text = out(&env.run(&["sandbox", "status"]));
    assert!(
        text.contains("writes anywhere you can (mode full: no sandbox); network on"),
        "{text}"
    );

    let help = out(&env.run(&["--help"]));
    assert!(help.contains("sandbox"), "{help}");
    assert!(!help.contains("__sandbox-exec"), "{help}");
}

#[test]
fn sandbox_run_writes_the_workspace_and_explains_a_refused_write() {
    let env = Env::new();
    if !landlock(&env) {
        return;
    }
    let o = env.run(&["sandbox", "run", "--", "echo", "hi", ">", "inside.txt"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(env.repo().join("inside.txt")).unwrap(),
        "hi\n"
    );

    let target = env.home().join("outside.txt");
    let o = env.run(&["sandbox", "run", "--", "touch", target.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!target.exists());
    assert!(err(&o).contains("Permission denied"), "{}", err(&o));
    assert!(
        err(&o).contains(&format!(
            "podcode: The sandbox (workspace-write) stopped writing {}. To allow it,",
            target.display()
        )),
        "{}",
        err(&o)
    );

    env.config("[sandbox]\nmode = \"full\"\n");
    let o = env.run(&["sandbox", "run", "--", "touch", target.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(target.exists());
}

#[test]
fn an_api_key_in_the_environment_never_reaches_the_model_through_env() {
    let env = Env::new();
    let o = env.run(&["tool", "call", "bash", r#"{"command":"env"}"#, "--yes"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(!out(&o).contains(KEY), "{}", out(&o));
    assert!(!out(&o).contains("OPENAI_API_KEY="), "{}", out(&o));
    assert!(out(&o).contains("TMPDIR="), "{}", out(&o));

    // Passed on by the user: the command sees it, the model still does not.
    env.config("[sandbox]\nallow_env = [\"OPENAI_API_KEY\"]\n");
    let o = env.run(&["tool", "call", "bash", r#"{"command":"env"}"#, "--yes"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(!out(&o).contains(KEY), "{}", out(&o));
    assert!(
        out(&o).contains("OPENAI_API_KEY=[OPENAI_API_KEY hidden]"),
        "{}",
        out(&o)
    );
}

#[test]
fn the_helper_runs_a_command_under_a_policy_and_refuses_a_bad_one() {
    let env = Env::new();
    let o = Command::new(env!("CARGO_BIN_EXE_podcode"))
        .args([
            "__sandbox-exec",
            "--policy",
            r#"{"mode":"read-only","network":false,"writable":[]}"#,
            "--",
            "echo",
            "from the helper",
        ])
        .current_dir(env.repo())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o), "from the helper\n");
    let o = Command::new(env!("CARGO_BIN_EXE_podcode"))
        .args(["__sandbox-exec", "echo"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(126));
    assert_eq!(
        err(&o),
        "podcode sandbox: usage: __sandbox-exec --policy <json> -- <command> [args…]\n"
    );
}
