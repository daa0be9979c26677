//! Real language servers behind `LspManager`: typescript-language-server (tsserver) and
//! pyright, installed from npm into `tests/servers/` by `.ci/run` (`npm ci` there), report a
//! type error after an edit at the right line, and nothing once it is fixed; a server that
//! never answers costs the wait bound and says so; one that crashes is restarted once, then
//! reported and left alone.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use podcode_lsp::{DIAGNOSTICS_HEADER, LspManager, LspSettings, ServerSpec, builtin_servers};

fn bin(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/servers/node_modules/.bin")
        .join(name);
    assert!(
        path.exists(),
        "{} is missing: run `npm ci` in crates/lsp/tests/servers (.ci/run does)",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

fn builtin(name: &str, command: Vec<String>) -> ServerSpec {
    let mut spec = builtin_servers()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap();
    spec.commands = vec![command];
    spec
}

fn custom(name: &str, ext: &str, command: Vec<String>) -> ServerSpec {
    ServerSpec {
        name: name.into(),
        commands: vec![command],
        extensions: vec![ext.into()],
        root_markers: vec![],
        env: Default::default(),
        initialization: serde_json::Value::Null,
        install: String::new(),
        disabled: false,
    }
}

fn manager(project: &Path, servers: Vec<ServerSpec>, wait: Duration) -> Arc<LspManager> {
    manager_idle(project, servers, wait, Duration::from_secs(600))
}

fn manager_idle(
    project: &Path,
    servers: Vec<ServerSpec>,
    wait: Duration,
    idle: Duration,
) -> Arc<LspManager> {
    LspManager::new(LspSettings {
        project: project.to_path_buf(),
        servers,
        wait,
        warnings: false,
        per_file: 20,
        sandbox: None,
        project_programs: false,
        idle,
    })
}

async fn edit(m: &LspManager, file: &Path, text: &str) -> Option<String> {
    std::fs::write(file, text).unwrap();
    m.diagnose(&[file.to_path_buf()]).await
}

/// Long enough for a cold server on a loaded machine: the wait is a bound, not a delay.
const WAIT: Duration = Duration::from_secs(120);

#[tokio::test]
async fn typescript_type_errors_come_back_after_an_edit_and_go_once_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    std::fs::write(
        project.join("tsconfig.json"),
        r#"{"compilerOptions": {"strict": true, "noEmit": true}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(project.join("src")).unwrap();
    let file = project.join("src/a.ts");
    let ts = builtin(
        "typescript",
        vec![bin("typescript-language-server"), "--stdio".into()],
    );
    let m = manager(&project, vec![ts], WAIT);

    let out = edit(&m, &file, "export const x: number = \"s\";\n")
        .await
        .expect("diagnostics for the type error");
    assert_eq!(
        out,
        format!(
            "\n{DIAGNOSTICS_HEADER}\nsrc/a.ts:1:14 error Type 'string' is not assignable to type 'number'. (typescript 2322)"
        )
    );
    assert_eq!(edit(&m, &file, "export const x: number = 1;\n").await, None);
    // Still clean: the server publishes nothing new, the last (empty) set stands.
    assert_eq!(edit(&m, &file, "export const x: number = 2;\n").await, None);
    m.shutdown().await;
}

#[tokio::test]
async fn an_idle_server_is_shut_down_and_started_again_when_needed() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let file = project.join("app.py");
    let pyright = builtin("pyright", vec![bin("pyright-langserver"), "--stdio".into()]);
    let m = manager_idle(&project, vec![pyright], WAIT, Duration::from_millis(200));
    let out = edit(&m, &file, "count: int = \"three\"\n").await;
    assert!(out.is_some_and(|o| o.contains("app.py:1:14 error")));
    // Shut down once idle (polled: how soon depends on the machine, not on the test).
    let deadline = std::time::Instant::now() + WAIT;
    while !m.running().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "still running: {:?}",
            m.running()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The next edit starts it again (not counted as a crash).
    let out = edit(&m, &file, "count: int = \"four\"\n").await;
    assert!(out.is_some_and(|o| o.contains("app.py:1:14 error")));
    m.shutdown().await;
}

#[tokio::test]
async fn pyright_reports_through_pull_diagnostics() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    std::fs::write(project.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
    let file = project.join("app.py");
    let pyright = builtin("pyright", vec![bin("pyright-langserver"), "--stdio".into()]);
    let m = manager(&project, vec![pyright], WAIT);
    let out = edit(&m, &file, "count: int = \"three\"\n")
        .await
        .expect("diagnostics for the type error");
    assert!(
        out.starts_with(&format!("\n{DIAGNOSTICS_HEADER}\napp.py:1:14 error ")),
        "{out}"
    );
    assert!(out.contains("\"int\""), "{out}");
    assert_eq!(edit(&m, &file, "count: int = 3\n").await, None);
    m.shutdown().await;
}

#[tokio::test]
async fn a_server_that_never_answers_costs_the_wait_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let file = project.join("x.hang");
    let silent = custom(
        "silent",
        "hang",
        vec!["sh".into(), "-c".into(), "cat > /dev/null".into()],
    );
    let m = manager(&project, vec![silent], Duration::from_millis(300));
    let out = edit(&m, &file, "anything").await.unwrap();
    assert_eq!(out, format!("\n{}", podcode_lsp::starting_text("silent")));
    m.shutdown().await;
}

const CRASHER: &str = r#"
let buf = Buffer.alloc(0);
const send = (m) => { const b = JSON.stringify(m); process.stdout.write(`Content-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`); };
process.stdin.on("data", (d) => {
  buf = Buffer.concat([buf, d]);
  for (;;) {
    const end = buf.indexOf("\r\n\r\n");
    if (end < 0) return;
    const len = Number(/Content-Length: (\d+)/i.exec(buf.subarray(0, end).toString())[1]);
    if (buf.length < end + 4 + len) return;
    const msg = JSON.parse(buf.subarray(end + 4, end + 4 + len).toString());
    buf = buf.subarray(end + 4 + len);
    if (msg.method === "initialize") send({ jsonrpc: "2.0", id: msg.id, result: { capabilities: {} } });
    if (msg.method === "textDocument/didOpen") { console.error("crashing on purpose"); process.exit(3); }
  }
});
"#;

#[tokio::test]
async fn a_crashing_server_is_restarted_once_then_reported() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    let script = project.join("crasher.js");
    std::fs::write(&script, CRASHER).unwrap();
    let file = project.join("x.crash");
    let crasher = custom(
        "crasher",
        "crash",
        vec!["node".into(), script.to_string_lossy().into_owned()],
    );
    let m = manager(&project, vec![crasher], WAIT);
    let no_answer =
        "\n(crasher reported no diagnostics for x.crash within 120000 ms; they are not checked)";
    assert_eq!(edit(&m, &file, "one").await.as_deref(), Some(no_answer));
    // Restarted once: it crashes the same way.
    assert_eq!(edit(&m, &file, "two").await.as_deref(), Some(no_answer));
    let out = edit(&m, &file, "three").await.unwrap();
    assert!(
        out.starts_with(
            "\ncrasher stopped again after a restart and is not started any more. Its last output:\ncrashing on purpose"
        ),
        "{out}"
    );
    m.shutdown().await;
}
