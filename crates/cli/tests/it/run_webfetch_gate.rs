//! `podcode run` driving `webfetch` against a local dev server this test runs on 127.0.0.1:
//! the private address is asked about for its origin like every other gate — without a
//! terminal that ask is rejected and the model reads why; a deny rule refuses, the refusal
//! printed whole by `run` with the rule that would allow the fetch, as TOML; pasted into
//! the config as printed, that rule lets the page be fetched. A refused fetch sends nothing.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use podcode_providers::testing::Reply;

use crate::common;
use common::web::*;
use common::*;

#[test]
fn a_local_dev_server_is_asked_about_and_a_refusal_names_the_rule_to_paste() {
    let (port, seen) = serve("127.0.0.1", |_, _| {
        (
            "Content-Type: text/html\r\n".into(),
            "<title>Dev</title><h1>Dev server</h1><p>Rows are added below</p>".into(),
        )
    });
    let url = format!("http://127.0.0.1:{port}/");
    let origin = format!("http://127.0.0.1:{port}");
    let call = || Reply::new().tool_call("c1", "webfetch", format!(r#"{{"url": "{url}"}}"#));
    let mut script = Vec::new();
    for _ in 0..3 {
        script.extend([call(), Reply::new().text("ok")]);
    }
    let env = Env::new(script);
    let result = |i: usize| tool_messages(&env.requests()[i])[0].1.clone();

    // Nobody can answer (no terminal, no --yes): the origin's ask is rejected.
    config(&env, "");
    let out = env.run(&["run", "read the dev server"]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("\"{origin}\"")), "{stderr}");
    assert_eq!(
        result(1),
        format!(
            "The user rejected the webfetch_private permission for \"{origin}\" and said: nobody could answer the permission prompt (non-interactive run without --yes)"
        )
    );

    // A deny rule for the bare host refuses, even with --yes; the refusal names the rule
    // for the origin that would allow it.
    let deny = "[[permission]]\npermission = \"webfetch_private\"\npattern = \"127.0.0.1\"\naction = \"deny\"\n";
    config(&env, deny);
    let out = env.run(&["run", "--yes", "read the dev server"]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let rule = format!(
        "[[permission]]\npermission = \"webfetch_private\"\npattern = \"{origin}\"\naction = \"allow\"\n"
    );
    let refusal = format!(
        "{url} was not fetched: 127.0.0.1 is a private, loopback or link-local address (127.0.0.1). A permission rule in the user's configuration denies it. To allow it, the user can add to their config.toml:\n\n{rule}"
    );
    assert_eq!(result(3), refusal);
    let shown = as_printed(&refusal);
    assert!(
        stderr.contains(&shown),
        "the whole refusal, as printed:\n{stderr}"
    );
    assert_eq!(*seen.lock().unwrap(), Vec::<String>::new());

    // The rule, pasted after the deny as printed, lets the page be fetched.
    let pasted: String = shown
        .split_once("  [[permission]]")
        .map(|(_, rest)| format!("[[permission]]{rest}"))
        .unwrap()
        .lines()
        .map(|l| format!("{}\n", l.trim_start()))
        .collect();
    config(&env, &format!("{deny}{pasted}"));
    let out = env.run(&["run", "read the dev server"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(result(5).contains("# Dev server"), "{}", result(5));
    assert_eq!(*seen.lock().unwrap(), vec!["/".to_string()]);
}
