//! The sandbox through the installed binary: `podcode sandbox status` and `sandbox run`,
//! the hidden helper (`podcode __sandbox-exec`, not in `--help`), and API keys: removed
//! from a command's environment, unreachable through `/proc`, and masked in tool output
//! when the user passes one on. Also the ways around it that are closed: `.git` and
//! `.podcode` (read-only, checked with a real git running hooks), a worktree session's
//! checkout, and denials named by the sandbox itself (a shell redirect, curl in a pipe).
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

struct Env {
    root: tempfile::TempDir,
}

const KEY: &str = "sk-podcode-sandbox-test-0123456789";
const TOKEN: &str = "podcode-server-token-test-abcdefgh";

/// Denies the escalation ask (bash itself is allowed with `--yes`), so a refused command
/// stays refused and the test sees what the sandbox did.
const NO_ESCALATION: &str =
    "[[permission]]\npermission = \"sandbox\"\npattern = \"*\"\naction = \"deny\"\n";

fn git(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=T", "-c", "user.email=t@t"])
        .args(args)
        .env("HOME", dir)
        .output()
        .unwrap()
}

fn reversed(s: &str) -> String {
    s.chars().rev().collect()
}

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
        self.run_with_home(&self.home(), args)
    }
    fn run_with_home(&self, home: &std::path::Path, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_podcode"))
            .args(args)
            .current_dir(self.repo())
            .env("HOME", home)
            .env("PODCODE_CONFIG_DIR", self.root.path().join("config"))
            .env("PODCODE_DATA_DIR", self.root.path().join("data"))
            .env("OPENAI_API_KEY", KEY)
            .env("PODCODE_SERVER_TOKEN", TOKEN)
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

/// `sandbox run` was stopped writing `target` and said so, with how to allow it.
fn assert_stopped_writing(o: &Output, target: &Path, what: &str) {
    let e = err(o);
    assert!(
        e.contains(&format!(
            "podcode: The sandbox (workspace-write) stopped writing {}. To allow it,",
            target.display()
        )),
        "{what}: {e}"
    );
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
    let o = env.run(&["sandbox", "run", "--", "sh", "-c", "echo hi > inside.txt"]);
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
    assert_stopped_writing(&o, &target, "touch");

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

#[test]
fn a_sandboxed_command_cannot_read_keys_from_other_processes() {
    let env = Env::new();
    if !landlock(&env) {
        return;
    }
    env.config(NO_ESCALATION);
    // Every environment and memory a command could reach, reversed (which masking does
    // not catch): Podcode's own (the shell's parent) and every other visible process's.
    let command = r#"cat /proc/$PPID/environ | rev; for f in /proc/[0-9]*/environ; do rev < "$f"; done; head -c 64 /proc/$PPID/mem | rev; ls /proc | grep -c '^[0-9]'; env | rev"#;
    let args = serde_json::json!({ "command": command }).to_string();
    let o = env.run(&["tool", "call", "bash", &args, "--yes"]);
    let text = out(&o) + &err(&o);
    assert!(!text.contains(&reversed(KEY)), "{text}");
    assert!(!text.contains(&reversed(TOKEN)), "{text}");
    assert!(!text.contains(KEY) && !text.contains(TOKEN), "{text}");
    // The same through `sandbox run` (its parent is the podcode process holding both).
    let o = env.run(&[
        "sandbox",
        "run",
        "--",
        "sh",
        "-c",
        "rev < /proc/$PPID/environ",
    ]);
    assert!(!out(&o).contains(&reversed(KEY)), "{}", out(&o));
    assert!(!out(&o).contains(&reversed(TOKEN)), "{}", out(&o));
}

#[test]
fn git_and_podcode_dirs_are_read_only_so_no_hook_or_config_escapes() {
    let env = Env::new();
    if !landlock(&env) {
        return;
    }
    let repo = env.repo();
    std::fs::remove_dir_all(repo.join(".git")).unwrap();
    assert!(git(&repo, &["init", "-q"]).status.success());
    std::fs::create_dir_all(repo.join(".podcode")).unwrap();
    let marker = env.root.path().join("hook-ran");
    let script = format!(
        "printf '#!/bin/sh\\ntouch {m}\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
         git config core.hooksPath .githooks; mkdir -p .githooks; cp .git/hooks/pre-commit .githooks/ 2>/dev/null; \
         printf '#!/bin/sh\\ntouch {m}\\n' > .githooks/pre-commit; chmod +x .githooks/pre-commit; \
         printf '[sandbox]\\nmode = \"full\"\\n' > .podcode/config.toml; echo ok > src.txt",
        m = marker.display()
    );
    let o = env.run(&["sandbox", "run", "--", "sh", "-c", &script]);
    let e = err(&o);
    assert!(
        e.contains(&format!(
            "podcode: The sandbox (workspace-write) stopped writing {}: .git, .podcode and .opencode stay read-only to sandboxed commands, because git and Podcode run code from there outside the sandbox. To allow this write, approve running the command outside the sandbox when asked, or run it yourself.",
            repo.canonicalize().unwrap().join(".git/hooks/pre-commit").display()
        )),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("src.txt")).unwrap(),
        "ok\n"
    );
    assert!(!repo.join(".podcode/config.toml").exists());
    assert!(!repo.join(".git/hooks/pre-commit").exists());
    // The user's git, unsandboxed, runs no hook the command tried to plant.
    assert!(git(&repo, &["add", "-A"]).status.success());
    let c = git(&repo, &["commit", "-qm", "x"]);
    assert!(c.status.success(), "{}", err(&c));
    assert!(
        !marker.exists(),
        "a hook written by a sandboxed command ran"
    );
    // The next call is still sandboxed: the project config did not switch it off.
    let outside = env.home().join("after.txt");
    let o = env.run(&["sandbox", "run", "--", "touch", outside.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(!outside.exists());
}

#[test]
fn denials_name_the_real_path_and_the_connection_even_through_a_pipe() {
    let env = Env::new();
    if !landlock(&env) {
        return;
    }
    let target = env.home().join("redirected.txt");
    for argv in [
        vec!["sh", "-c", "echo hi > \"$0\"", target.to_str().unwrap()],
        vec!["bash", "-c", "echo hi > \"$0\"", target.to_str().unwrap()],
        vec![
            "python3",
            "-c",
            "import sys\ntry: open(sys.argv[1], 'w')\nexcept OSError: pass",
            target.to_str().unwrap(),
        ],
    ] {
        let o = env.run(&[&["sandbox", "run", "--"], argv.as_slice()].concat());
        assert_stopped_writing(&o, &target, &format!("{argv:?}"));
        assert!(!err(&o).contains("stopped writing /bin/"), "{}", err(&o));
    }
    // curl's refused connection, with the pipe's `head` exiting 0.
    let o = env.run(&[
        "sandbox",
        "run",
        "--",
        "sh",
        "-c",
        "curl -s http://127.0.0.1:9/ | head -1",
    ]);
    assert!(o.status.success());
    assert!(
        err(&o).contains("podcode: The sandbox (workspace-write) stopped a network connection (curl opened an IPv4 socket). To allow it, set `network = true` under `[sandbox]` in the config."),
        "{}",
        err(&o)
    );
    // Through the bash tool: the escalation ask names the path (refused here by a rule).
    env.config(NO_ESCALATION);
    let args = serde_json::json!({ "command": format!("echo hi > {}", target.display()) });
    let o = env.run(&["tool", "call", "bash", &args.to_string(), "--yes"]);
    let text = out(&o) + &err(&o);
    assert!(
        text.contains(&format!(
            "The sandbox stopped writing {} and running the command outside the sandbox was not allowed",
            target.display()
        )),
        "{text}"
    );
    let args = serde_json::json!({ "command": "curl -s http://127.0.0.1:9/ | head -1" });
    let o = env.run(&["tool", "call", "bash", &args.to_string(), "--yes"]);
    let text = out(&o) + &err(&o);
    assert!(
        text.contains("The sandbox stopped a network connection (curl opened an IPv4 socket) and running the command outside the sandbox was not allowed"),
        "{text}"
    );
}

/// An executable tool (a shell script in the user's tools folder) run in the sandbox.
/// Writes a plugin file into the global config's plugins folder.
fn global_plugin(env: &Env, name: &str, text: &str) {
    let dir = env.root.path().join("config/plugins");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), text).unwrap();
}

fn shell_tool(env: &Env, name: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let dir = env.root.path().join("config/tools");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, script).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn an_executable_tools_refused_write_names_the_path_the_sandbox_refused() {
    let env = Env::new();
    if !landlock(&env) {
        return;
    }
    let outside = env.root.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let o = outside.display();
    // sh reports a refused redirect as "<script>: 3: cannot create <target>: Permission
    // denied": the first path in that line is the script's own, not what was refused.
    shell_tool(
        &env,
        "describe_escape",
        &format!(
            "#!/bin/sh\nif [ \"$1\" = describe ]; then\n  echo x > {o}/described || exit 3\n  echo '{{\"description\":\"d\"}}'\nfi\n"
        ),
    );
    shell_tool(
        &env,
        "run_escape",
        &format!(
            "#!/bin/sh\nif [ \"$1\" = describe ]; then echo '{{\"description\":\"d\"}}'; exit 0; fi\necho x > {o}/ran\n"
        ),
    );
    let v: serde_json::Value = serde_json::from_str(&out(&env.run(&["tools", "--json"]))).unwrap();
    let problem = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["source"].as_str().unwrap().ends_with("describe_escape"))
        .unwrap_or_else(|| panic!("{v}"))["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        problem.ends_with(&format!("\nThe sandbox (workspace-write) stopped writing {o}/described. To allow it, add the directory to `writable` under `[sandbox]` in the config, or set `mode = \"full\"` there.")),
        "{problem}"
    );
    let o2 = env.run(&["tool", "call", "run_escape", "{}", "--yes"]);
    assert!(
        err(&o2).contains(&format!(
            "The sandbox (workspace-write) stopped writing {o}/ran. To allow it"
        )),
        "{}",
        err(&o2)
    );
    assert!(!outside.join("ran").exists() && !outside.join("described").exists());
}

/// The first process of a sandbox (the helper's supervisor) as `ps` would name it.
const SUPERVISOR_NAME: &str = "tr '\\0' ' ' < /proc/1/cmdline";

#[test]
fn commands_start_through_the_small_helper_installed_beside_podcode() {
    let env = Env::new();
    if !landlock(&env) {
        return;
    }
    // The supervisor is PID 1 of the command's PID namespace: the program that started is
    // the small helper, not the whole podcode binary (which costs milliseconds to load).
    let args = serde_json::json!({ "command": SUPERVISOR_NAME }).to_string();
    let o = env.run(&["tool", "call", "bash", &args, "--yes"]);
    assert!(
        out(&o).contains("podcode-sandbox-helper __sandbox-exec --policy"),
        "{}{}",
        out(&o),
        err(&o)
    );
    let o = env.run(&["sandbox", "run", "--", "sh", "-c", SUPERVISOR_NAME]);
    assert!(
        out(&o).contains("podcode-sandbox-helper __sandbox-exec --policy"),
        "{}{}",
        out(&o),
        err(&o)
    );
    // It takes the same command line as `podcode __sandbox-exec`, with or without the
    // subcommand, and says the same when it is wrong.
    for args in [&["__sandbox-exec", "echo"][..], &["echo"][..]] {
        let o = Command::new(env!("CARGO_BIN_EXE_podcode-sandbox-helper"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(126));
        assert_eq!(
            err(&o),
            "podcode sandbox: usage: __sandbox-exec --policy <json> -- <command> [args…]\n"
        );
    }
}

#[test]
fn sandbox_run_passes_its_arguments_as_given() {
    let env = Env::new();
    let o = env.run(&[
        "sandbox", "run", "--", "printf", "[%s]\\n", "a b", "$HOME", "c'd",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o), "[a b]\n[$HOME]\n[c'd]\n");
}

#[test]
fn status_lists_proc_and_the_protected_git_dirs() {
    let env = Env::new();
    if !landlock(&env) {
        return;
    }
    let text = out(&env.run(&["sandbox", "status"]));
    assert!(text.contains("  namespaces available"), "{text}");
    assert!(
        text.contains("  /proc      only the sandbox's own processes (own PID namespace and /proc): not Podcode's nor any other of yours"),
        "{text}"
    );
    assert!(
        text.contains(".git, .podcode and .opencode in the workspace: read-only (own mount namespace); a write there asks to run the command outside the sandbox"),
        "{text}"
    );
    let git_dir = env.repo().canonicalize().unwrap().join(".git");
    assert!(
        text.contains(&format!("  {}\n", git_dir.display())),
        "{text}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&out(&env.run(&["sandbox", "status", "--json"]))).unwrap();
    assert_eq!(v["namespaces"], "available");
    assert_eq!(v["protected"]["found"][0], git_dir.to_str().unwrap());
}

#[test]
fn a_worktree_session_cannot_write_the_users_checkout() {
    // The session works in <root>/data/worktrees/<id>; the checkout is <root>/repo.
    let command = "echo leaked > ../../../repo/leak.txt; rm -f ../../../repo/a.txt; echo fine > in-worktree.txt";
    let env = common::Env::new(vec![
        common::bash_call("c1", command, "write the checkout"),
        podcode_providers::testing::Reply::new().text("Done."),
    ]);
    let repo = env.repo();
    std::fs::remove_dir_all(repo.join(".git")).unwrap();
    assert!(git(&repo, &["init", "-q"]).status.success());
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    assert!(git(&repo, &["add", "-A"]).status.success());
    assert!(git(&repo, &["commit", "-qm", "start"]).status.success());
    let mut global = std::fs::read_to_string(env.root.path().join("config/config.toml")).unwrap();
    global.push_str(NO_ESCALATION);
    env.write_global(&global);
    let o = env.run(&["run", "--worktree", "--yes", "write there"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        !repo.join("leak.txt").exists(),
        "the sandboxed command wrote the user's checkout"
    );
    assert!(
        repo.join("a.txt").exists(),
        "the sandboxed command deleted a file of the checkout"
    );
    let wt = env
        .root
        .path()
        .join("data/worktrees")
        .join(env.last_session());
    assert_eq!(
        std::fs::read_to_string(wt.join("in-worktree.txt")).unwrap(),
        "fine\n"
    );
}

/// The plugin host runs in the sandbox, which cannot write Podcode's data folder: what a
/// plugin logs through `client.app.log` from a tool reaches the plugin log all the same.
#[test]
fn a_plugins_client_log_from_a_tool_reaches_the_plugin_log_under_the_sandbox() {
    let env = Env::new();
    if !landlock(&env) {
        return;
    }
    global_plugin(
        &env,
        "logme.js",
        r#"export const LogMe = async ({ client }) => ({
  tool: {
    logme: {
      description: "Logs a line.",
      args: {},
      async execute() {
        await client.app.log({ body: { service: "logme", level: "warn", message: "from a tool" } })
        return "logged"
      },
    },
  },
})
"#,
    );
    let o = env.run(&["tool", "call", "logme", "{}", "--yes"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o).trim(), "logged");
    let log = std::fs::read_to_string(env.root.path().join("data/logs/plugins.log")).unwrap();
    let line: serde_json::Value = serde_json::from_str(log.trim()).unwrap();
    assert_eq!(line["service"], "logme");
    assert_eq!(line["level"], "warn");
    assert_eq!(line["message"], "from a tool");
    assert!(
        line["file"].as_str().unwrap().ends_with("logme.js"),
        "{line}"
    );
}

/// A plugin that keeps state in its own folder in the home directory loads and works under
/// the default sandbox: its writes land in the plugins' home layer (kept from one run to the
/// next, listed by `podcode plugins`), the real home is not changed, and the workspace inside
/// the home stays the real one. A folder the config lists as writable is the real one.
#[test]
fn a_plugin_keeps_its_state_folder_in_the_home_layer_and_the_workspace_stays_real() {
    let env = Env::new();
    if !landlock(&env) {
        return;
    }
    global_plugin(
        &env,
        "stateful.js",
        r#"import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
export const Stateful = async () => {
  const dir = `${homedir()}/.stateful-plugin`
  mkdirSync(dir, { recursive: true })
  let count = 0
  try { count = Number(readFileSync(`${dir}/count`, "utf8")) } catch {}
  writeFileSync(`${dir}/count`, String(count + 1))
  return { tool: { stateful: { description: "Has state.", args: {}, async execute(_args, ctx) {
    writeFileSync(`${ctx.directory}/note.txt`, "from the plugin")
    return `loads ${readFileSync(`${dir}/count`, "utf8")}`
  } } } }
}
"#,
    );
    // The usual layout: the project, config and data all inside the home.
    let home = env.root.path();
    let o = env.run_with_home(home, &["plugins"]);
    let report = out(&o);
    assert!(report.contains("loaded   "), "{report}");
    let upper = env.root.path().join("data/plugin-home/upper");
    // Bun's own cache may be there too (`~/.bun`).
    let kept = format!(
        "Plugins' own files in your home are kept in {} (your home itself is not changed): ",
        upper.display()
    );
    let line = report.lines().find(|l| l.starts_with(&kept));
    assert!(
        line.is_some_and(|l| l[kept.len()..].split(", ").any(|n| n == ".stateful-plugin")),
        "{report}"
    );
    assert!(
        !home.join(".stateful-plugin").exists(),
        "the real home was written"
    );
    assert_eq!(
        std::fs::read_to_string(upper.join(".stateful-plugin/count")).unwrap(),
        "1"
    );
    // The next run's load finds the state it left.
    let o = env.run_with_home(home, &["tool", "call", "stateful", "{}", "--yes"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o).trim(), "loads 2");
    assert_eq!(
        std::fs::read_to_string(env.repo().join("note.txt")).unwrap(),
        "from the plugin",
        "the plugin's workspace write reached the real workspace"
    );
    // A folder the config makes writable is the real one.
    let state = home.join(".stateful-plugin");
    std::fs::create_dir_all(&state).unwrap();
    env.config("[sandbox]\nwritable = [\"~/.stateful-plugin\"]\n");
    let o = env.run_with_home(home, &["tool", "call", "stateful", "{}", "--yes"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o).trim(), "loads 1");
    assert_eq!(std::fs::read_to_string(state.join("count")).unwrap(), "1");
}

#[test]
fn credential_stores_read_as_empty_inside_the_sandbox() {
    let env = Env::new();
    if !landlock(&env) {
        return;
    }
    let status: serde_json::Value =
        serde_json::from_str(&out(&env.run(&["sandbox", "status", "--json"]))).unwrap();
    if status["namespaces"] != "available" {
        eprintln!("skipped: no mount namespaces here");
        return;
    }
    let podcode = env.root.path().join("data/auth.json");
    assert_eq!(
        status["hidden_files"][0],
        podcode.to_str().unwrap(),
        "{status}"
    );
    let opencode = env.home().join(".local/share/opencode/auth.json");
    for (file, secret) in [
        (&podcode, "podcode-token-1"),
        (&opencode, "opencode-token-2"),
    ] {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            file,
            format!("{{\"p\":{{\"type\":\"api\",\"key\":\"{secret}\"}}}}"),
        )
        .unwrap();
    }
    let script = format!(
        "cat {} {} | rev; wc -c < {}",
        podcode.display(),
        opencode.display(),
        podcode.display()
    );
    let args = serde_json::json!({ "command": script }).to_string();
    let o = env.run(&["tool", "call", "bash", &args, "--yes"]);
    let text = out(&o) + &err(&o);
    assert!(o.status.success(), "{text}");
    for secret in ["podcode-token-1", "opencode-token-2"] {
        assert!(!text.contains(&reversed(secret)), "{text}");
    }
    assert_eq!(out(&o).trim(), "0", "{text}");
    let o = env.run(&["sandbox", "run", "--", "cat", podcode.to_str().unwrap()]);
    assert!(!out(&o).contains("podcode-token-1"), "{}", out(&o));
    // Outside the sandbox the files are untouched.
    assert!(
        std::fs::read_to_string(&podcode)
            .unwrap()
            .contains("podcode-token-1")
    );
}
