//! Language servers through the installed binary: the scripted model writes a TypeScript file
//! with a type error and reads the server's diagnostic in the write's result (the server runs
//! in the default sandbox); it fixes the file and reads no diagnostic; the `lsp` tool answers
//! hover and diagnostics for the same file; `[lsp] disabled` switches it all off.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::*;

use podcode_providers::testing::Reply;

fn ts_server() -> String {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../lsp/tests/servers/node_modules/.bin/typescript-language-server");
    assert!(
        path.exists(),
        "{} is missing: run `npm ci` in crates/lsp/tests/servers (.ci/run does)",
        path.display()
    );
    path.canonicalize().unwrap().to_string_lossy().into_owned()
}

fn write_call(id: &str, file: &str, content: &str) -> Reply {
    let args = serde_json::json!({"filePath": file, "content": content}).to_string();
    Reply::new().tool_call(id, "write", &args)
}

fn env_with_typescript(replies: Vec<Reply>, extra: &str) -> Env {
    let env = Env::new(replies);
    // The wait is a bound, not a delay: long enough for a cold server on a loaded machine.
    env.write_global(&format!(
        "[provider.scripted]\nbase_url = \"{}\"\n[lsp]\nwait_ms = 120000\n{extra}[lsp.typescript]\ncommand = [{:?}, \"--stdio\"]\n",
        env.server.base_url(),
        ts_server()
    ));
    env.write(
        "tsconfig.json",
        r#"{"compilerOptions": {"strict": true, "noEmit": true}}"#,
    );
    env
}

#[test]
fn an_edit_result_carries_the_language_servers_errors_and_the_fix_clears_them() {
    let env = env_with_typescript(
        vec![
            write_call(
                "c1",
                "src/count.ts",
                "export const count: number = \"three\";\n",
            ),
            write_call("c2", "src/count.ts", "export const count: number = 3;\n"),
            Reply::new().text("Fixed."),
        ],
        "",
    );
    let out = env.run(&["run", "add a counter", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = env.requests();
    let first = tool_messages(&requests[1]);
    assert!(
        first[0].1.ends_with(
            "Language server diagnostics for the changed files:\nsrc/count.ts:1:14 error Type 'string' is not assignable to type 'number'. (typescript 2322)"
        ),
        "{}",
        first[0].1
    );
    let second = tool_messages(&requests[2]);
    assert!(!second[1].1.contains("diagnostics"), "{}", second[1].1);

    // The lsp tool reads the same server.
    let out = env.run(&[
        "tool",
        "call",
        "lsp",
        r#"{"operation": "hover", "filePath": "src/count.ts", "line": 1, "character": 14}"#,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("const count: number"),
        "{}",
        text(&out.stdout)
    );
    let out = env.run(&[
        "tool",
        "call",
        "lsp",
        r#"{"operation": "diagnostics", "filePath": "src/count.ts"}"#,
    ]);
    assert_eq!(text(&out.stdout).trim(), "no diagnostics in src/count.ts");
}

#[test]
fn lsp_disabled_in_config_leaves_edits_and_tools_alone() {
    let env = env_with_typescript(
        vec![
            write_call(
                "c1",
                "src/count.ts",
                "export const count: number = \"three\";\n",
            ),
            Reply::new().text("Done."),
        ],
        "disabled = true\n",
    );
    let out = env.run(&["run", "add a counter", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first = tool_messages(&env.requests()[1]);
    assert!(!first[0].1.contains("diagnostics"), "{}", first[0].1);
    let tools = text(&env.run(&["tools"]).stdout);
    assert!(
        !tools.lines().any(|l| l.trim_start().starts_with("lsp ")),
        "{tools}"
    );
}

#[test]
fn podcode_lsp_lists_each_server_installed_switched_off_or_how_to_install_it() {
    let env = env_with_typescript(
        vec![],
        "[lsp.pyright]\ndisabled = true\n[lsp.zls]\ncommand = [\"zls-not-here\"]\nextensions = [\".zig\"]\n[lsp.broken]\ncommand = [\"x\"]\n",
    );
    let out = env.run(&["lsp"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    let line = |name: &str| {
        listing
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} line in\n{listing}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        line("typescript"),
        format!(
            ".ts .tsx .js .jsx .mjs .cjs .mts .cts installed: {} --stdio",
            ts_server()
        )
        .replace(".ts .tsx", "typescript .ts .tsx")
    );
    assert_eq!(line("pyright"), "pyright .py .pyi switched off by config");
    assert_eq!(
        line("zls"),
        "zls .zig not installed; to install: install zls-not-here yourself"
    );
    assert_eq!(
        line("gopls"),
        "gopls .go not installed; to install: go install golang.org/x/tools/gopls@latest"
    );
    assert!(
        listing.contains("an edit waits up to 120000 ms for them"),
        "{listing}"
    );
    // Formatters follow, with when each runs; this workspace is not trusted.
    assert!(
        listing
            .contains("Formatters (they run only once the workspace is trusted: `podcode trust`):"),
        "{listing}"
    );
    assert!(
        listing.contains(
            "prettier  when package.json names prettier or a prettier config file exists; "
        ),
        "{listing}"
    );
    assert!(
        text(&out.stderr).contains(
            "warning: [lsp.broken] is not a built-in server, so it needs `command` and `extensions`"
        ),
        "{}",
        text(&out.stderr)
    );
}

/// Servers outlive the seconds between edits: one that watches its parent's pid (as
/// typescript-language-server does every 3 s) must not be told a pid the sandbox's PID
/// namespace cannot see, or it exits — and after one restart it is given up.
#[test]
fn the_server_lives_on_between_edits_in_the_sandbox() {
    let bash = |id: &str| {
        Reply::new().tool_call(
            id,
            "bash",
            r#"{"command": "sleep 4", "description": "Wait a moment"}"#,
        )
    };
    let env = env_with_typescript(
        vec![
            write_call(
                "c1",
                "src/count.ts",
                "export const count: number = \"three\";\n",
            ),
            bash("b1"),
            write_call(
                "c2",
                "src/count.ts",
                "export const count: number = \"four\";\n",
            ),
            bash("b2"),
            write_call(
                "c3",
                "src/count.ts",
                "export const count: number = \"five\";\n",
            ),
            Reply::new().text("Done."),
        ],
        "",
    );
    let out = env.run(&["run", "count slowly", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = env.requests();
    let last = tool_messages(requests.last().unwrap());
    assert!(
        last.last().unwrap().1.ends_with(
            "src/count.ts:1:14 error Type 'string' is not assignable to type 'number'. (typescript 2322)"
        ),
        "{}",
        last.last().unwrap().1
    );
}

#[test]
fn sync_to_main_reports_the_servers_errors_for_the_files_it_wrote_in_the_checkout() {
    let env = env_with_typescript(
        vec![
            write_call(
                "c1",
                "src/count.ts",
                "export const count: number = \"three\";\n",
            ),
            Reply::new().tool_call("s1", "sync_to_main", r#"{"message": "Add a counter"}"#),
            Reply::new().text("Synced."),
        ],
        "",
    );
    env.git_init();
    env.git(&["add", "-A"]);
    env.git(&["commit", "-qm", "start"]);
    let out = env.run(&["run", "--worktree", "add a counter", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The file reached the checkout, and the sync's result names its error there (listed
    // relative to the checkout, as the sync lists its files).
    assert!(env.repo().join("src/count.ts").exists());
    let requests = env.requests();
    let sync = tool_messages(&requests[2]);
    let result = &sync.last().unwrap().1;
    assert!(
        result.starts_with("Synced 1 file into the main workspace")
            && result.ends_with(
                "Language server diagnostics for the changed files:\nsrc/count.ts:1:14 error Type 'string' is not assignable to type 'number'. (typescript 2322)"
            ),
        "{result}"
    );
}
