//! Merging tool sources: built-ins first, protected ids refused with the exact text,
//! replacements and shadowing always reported.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use podcode_tools::testing;
use podcode_tools::*;

fn source(name: &str) -> ToolOrigin {
    ToolOrigin::new(SourceKind::Plugin, name)
}

#[test]
fn protected_builtins_cannot_be_replaced_but_the_rest_of_the_source_loads() {
    let mut r = ToolRegistry::new();
    r.register_builtin(testing::noop("grep"));
    r.register_builtin(testing::noop("todo"));
    r.merge(
        source("evil.mjs"),
        vec![testing::echo("grep"), testing::echo("deploy_status")],
    );
    assert_eq!(r.get("grep").unwrap().source, ToolOrigin::builtin());
    assert!(r.get("grep").unwrap().protected);
    assert_eq!(r.get("deploy_status").unwrap().source.name, "evil.mjs");
    let p = &r.problems()[0];
    assert_eq!(
        p.message,
        "plugin: refusing to override protected built-in tool grep"
    );
    assert_eq!(
        (p.source.as_str(), p.level),
        ("evil.mjs", ProblemLevel::Error)
    );
}

#[test]
fn every_protected_id_is_refused() {
    for id in PROTECTED_TOOL_IDS {
        let mut r = ToolRegistry::new();
        r.register_builtin(testing::noop(id));
        r.merge(source("p.mjs"), vec![testing::echo(id)]);
        assert_eq!(
            r.problems()[0].message,
            format!("plugin: refusing to override protected built-in tool {id}")
        );
    }
    assert_eq!(PROTECTED_TOOL_IDS.len(), 23);
}

#[test]
fn an_unprotected_builtin_is_replaced_and_the_replacement_is_reported() {
    let mut r = ToolRegistry::new();
    r.register_builtin(testing::noop("todo"));
    r.merge(source("mine.mjs"), vec![testing::echo("todo")]);
    let t = r.get("todo").unwrap();
    assert_eq!(t.source.name, "mine.mjs");
    assert_eq!(t.replaced.as_deref(), Some("built-in todo"));
    assert_eq!(
        r.problems()[0].message,
        "tool todo from mine.mjs replaces the built-in todo"
    );
    assert_eq!(r.problems()[0].level, ProblemLevel::Warning);
}

#[test]
fn between_custom_sources_the_later_wins_and_the_loser_is_named() {
    let mut r = ToolRegistry::new();
    r.merge(
        source("~/.config/podcode/plugins/a.mjs"),
        vec![testing::echo("deploy")],
    );
    r.merge(
        source(".podcode/plugins/b.mjs"),
        vec![testing::echo("deploy")],
    );
    let t = r.get("deploy").unwrap();
    assert_eq!(t.source.name, ".podcode/plugins/b.mjs");
    assert_eq!(
        t.replaced.as_deref(),
        Some("~/.config/podcode/plugins/a.mjs")
    );
    assert_eq!(
        r.problems()[0].message,
        "tool deploy from .podcode/plugins/b.mjs shadows the one from ~/.config/podcode/plugins/a.mjs"
    );
    assert_eq!(r.tools().len(), 1);
}

#[test]
fn invalid_ids_are_rejected_naming_the_source() {
    let mut r = ToolRegistry::new();
    r.merge(
        source("tools/bad.ts"),
        vec![
            testing::echo("9lives"),
            testing::echo("has.dot"),
            testing::echo("fine"),
        ],
    );
    assert_eq!(r.tools().len(), 1);
    assert_eq!(
        r.problems()[0].message,
        "tools/bad.ts: invalid tool id \"9lives\": ids must match ^[A-Za-z][A-Za-z0-9_-]{0,63}$"
    );
    assert_eq!(r.problems().len(), 2);
}

#[test]
fn ambiguous_case_insensitive_names_are_not_guessed() {
    let mut r = ToolRegistry::new();
    r.merge(
        source("a"),
        vec![testing::echo("Deploy"), testing::echo("deploy")],
    );
    assert!(r.resolve("deploy").is_ok());
    let err = r.resolve("DEPLOY").err().unwrap();
    assert_eq!(
        err,
        "Unknown tool \"DEPLOY\": it matches several tools when case is ignored (Deploy, deploy). Call one of them by its exact id."
    );
}

#[test]
fn switched_off_tools_leave_the_set_and_are_listed_with_the_entry() {
    let mut r = ToolRegistry::new();
    r.register_builtin(testing::noop("grep"));
    r.register_builtin(testing::noop("write"));
    r.merge(
        source("gh.mjs"),
        vec![testing::echo("github_issues"), testing::echo("deploy")],
    );
    r.switch_off(|id| match id {
        "write" => Some("write".into()),
        id if id.starts_with("github_") => Some("github_*".into()),
        _ => None,
    });
    let ids: Vec<&str> = r.tools().iter().map(|t| t.id()).collect();
    assert_eq!(ids, ["grep", "deploy"]);
    assert!(r.get("write").is_none() && r.get("deploy").is_some());
    assert_eq!(
        r.resolve("github_issues").err().unwrap(),
        "The github_issues tool is switched off by the user's config (tools entry \"github_*\"): it cannot be called in this session. Do the task with the tools you were given."
    );
    assert_eq!(
        r.switched_off(),
        [
            SwitchedOff {
                id: "write".into(),
                source: "built-in".into(),
                by: "write".into()
            },
            SwitchedOff {
                id: "github_issues".into(),
                source: "gh.mjs".into(),
                by: "github_*".into()
            },
        ]
    );
    assert!(
        r.listing()
            .contains(&"○ write · built-in (switched off by tools entry \"write\")".to_string())
    );
}
