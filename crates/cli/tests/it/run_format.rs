//! Formatters after edits, through the installed binary in a trusted workspace: a Rust
//! project with a `rustfmt.toml` gets the model's badly laid out file formatted by rustfmt
//! (in the sandbox), the model is told, the change journal holds the formatted text and a
//! revert restores the state from before the edit; a file rustfmt cannot parse stays exactly
//! as written, with a note; prettier runs where package.json names it, and what it changed
//! beyond layout is shown to the user.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::*;

use podcode_providers::testing::Reply;

fn write_call(id: &str, file: &str, content: &str) -> Reply {
    let args = serde_json::json!({"filePath": file, "content": content}).to_string();
    Reply::new().tool_call(id, "write", &args)
}

#[test]
fn rustfmt_formats_an_edit_the_journal_keeps_it_and_revert_undoes_it() {
    let env = Env::new(vec![
        write_call(
            "c1",
            "src/main.rs",
            "fn main(){let answer=42;println!(\"{answer}\");}\n",
        ),
        write_call("c2", "src/broken.rs", "fn broken( {\n"),
        Reply::new().text("Done."),
    ]);
    env.write(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    env.write("rustfmt.toml", "");
    // No language server here: only the formatter speaks.
    env.write_global(&format!(
        "[provider.scripted]\nbase_url = \"{}\"\n[lsp]\ndisabled = true\n",
        env.server.base_url()
    ));
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "write main", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let formatted = "fn main() {\n    let answer = 42;\n    println!(\"{answer}\");\n}\n";
    // Only layout changed: nothing to show the user again.
    assert!(!text(&out.stderr).contains("changed more than layout"));
    assert_eq!(env.read("src/main.rs"), formatted);
    let requests = env.requests();
    let first = tool_messages(&requests[1]);
    assert!(
        first[0]
            .1
            .ends_with("(rustfmt reformatted src/main.rs: read it again before editing it)"),
        "{}",
        first[0].1
    );
    // rustfmt cannot parse this one: it stays as written, and the model is told why.
    assert_eq!(env.read("src/broken.rs"), "fn broken( {\n");
    let second = tool_messages(&requests[2]);
    assert!(
        second[1]
            .1
            .contains("(rustfmt could not format src/broken.rs (exit status: 1: error"),
        "{}",
        second[1].1
    );
    assert!(
        second[1].1.ends_with("; the file is as written)"),
        "{}",
        second[1].1
    );

    // The journal holds the formatter's change; reverting the session undoes both.
    let changes = text(&env.run(&["changes"]).stdout);
    assert_eq!(changes.matches("src/main.rs").count(), 2, "{changes}");
    let session = env.last_session();
    let out = env.run(&["revert", "--session", &session]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!env.repo().join("src/main.rs").exists());
}

#[test]
fn prettier_runs_where_package_json_names_it() {
    let prettier = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../lsp/tests/servers/node_modules/.bin/prettier")
        .canonicalize()
        .expect("prettier is missing: run `npm ci` in crates/lsp/tests/servers (.ci/run does)");
    let env = Env::new(vec![
        write_call(
            "c1",
            "app.ts",
            "const  greeting = {text:'hi'}\nexport default greeting\n",
        ),
        Reply::new().text("Done."),
    ]);
    env.write("package.json", r#"{"devDependencies": {"prettier": "3"}}"#);
    env.write_global(&format!(
        "[provider.scripted]\nbase_url = \"{}\"\n[lsp]\ndisabled = true\n[formatter.prettier]\ncommand = [{:?}, \"--write\", \"$FILE\"]\n",
        env.server.base_url(),
        prettier.to_string_lossy()
    ));
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "write app", "--yes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        env.read("app.ts"),
        "const greeting = { text: \"hi\" };\nexport default greeting;\n"
    );
    // Quotes and semicolons are more than layout: the user sees what changed since they
    // approved the text.
    let err = text(&out.stderr);
    assert!(
        err.contains("prettier changed more than layout in app.ts:"),
        "{err}"
    );
    assert!(err.contains("+export default greeting;"), "{err}");
}
