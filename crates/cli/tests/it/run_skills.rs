//! Agent skills through the installed binary against the scripted model, in a repository
//! laid out the way real ones are: `.claude/skills/`, opencode's legacy `.opencode/skill/`,
//! a grouped `.agents/skills/docs/…`, a skill with a bad name, the user's own skills (one
//! shadowed by the project's). Checked: `podcode skills`, the `skill` tool's description,
//! the body and folder a call returns, opencode.json's `permission.skill` per name, and a
//! loaded skill surviving a compaction and a resume.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::*;

use podcode_providers::testing::Reply;
use serde_json::Value;

fn skill(env: &Env, rel_dir: &str, name: &str, description: &str, body: &str) {
    env.write(
        &format!("{rel_dir}/SKILL.md"),
        &format!("---\nname: {name}\ndescription: {description}\n---\n\n{body}\n"),
    );
}

fn global_skill(env: &Env, rel_dir: &str, name: &str, description: &str) {
    let dir = env.root.path().join("home").join(rel_dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\nGlobal {name}.\n"),
    )
    .unwrap();
}

fn layout(env: &Env) {
    let release = format!(
        "Do the release carefully.\nRun scripts/bump.sh first.\n{}",
        "Check every line of the changelog. ".repeat(60)
    );
    skill(
        env,
        ".claude/skills/git-release",
        "git-release",
        "Create consistent releases and changelogs",
        &release,
    );
    env.write(".claude/skills/git-release/scripts/bump.sh", "echo bump\n");
    skill(
        env,
        ".opencode/skill/internal-docs",
        "internal-docs",
        "Internal documentation rules",
        "Secret process.",
    );
    skill(
        env,
        ".agents/skills/docs/pdf-tools",
        "pdf-tools",
        "Work with PDF files",
        "Use pdftotext.",
    );
    env.write(
        ".claude/skills/Bad_Name/SKILL.md",
        "---\nname: Bad_Name\ndescription: d\n---\n",
    );
    global_skill(env, ".claude/skills/notes", "notes", "Take meeting notes");
    global_skill(
        env,
        ".config/opencode/skills/git-release",
        "git-release",
        "The user's own release steps",
    );
    env.write(
        "opencode.json",
        r#"{"permission": {"skill": {"*": "allow", "internal-*": "deny"}}}"#,
    );
}

#[test]
fn podcode_skills_lists_sources_marks_the_repository_s_and_says_why_one_is_refused() {
    let env = Env::new(vec![]);
    layout(&env);
    let out = env.run(&["skills"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    for line in [
        "skills (4):",
        "  git-release    .claude/skills/git-release/SKILL.md  Create consistent releases and changelogs  (from the repository)",
        "  internal-docs  .opencode/skill/internal-docs/SKILL.md  Internal documentation rules  (from the repository)",
        "  notes          ~/.claude/skills/notes/SKILL.md  Take meeting notes",
        "  pdf-tools      .agents/skills/docs/pdf-tools/SKILL.md  Work with PDF files  (from the repository)",
        "refused (1), not offered:",
        "  .claude/skills/Bad_Name/SKILL.md: `name` \"Bad_Name\" is not lowercase letters and digits in words joined by single hyphens (like \"git-release\")",
        "shadowed (1), not offered:",
        "  ~/.config/opencode/skills/git-release/SKILL.md: git-release is taken by .claude/skills/git-release/SKILL.md",
    ] {
        assert!(
            shown.lines().any(|l| l == line),
            "{line:?} missing:\n{shown}"
        );
    }
    // `podcode tools` warns about the refused file.
    let tools = text(&env.run(&["tools"]).stdout);
    assert!(
        tools.contains("warning: skill .claude/skills/Bad_Name/SKILL.md not offered"),
        "{tools}"
    );
}

fn skill_tool(request: &Value) -> Value {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "skill")
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn a_skill_loads_per_its_permission_and_survives_compaction_and_resume() {
    let overflow = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#;
    let env = Env::new(vec![
        Reply::new()
            .tool_call("c1", "skill", r#"{"name": "git-release"}"#)
            .tool_call("c2", "skill", r#"{"name": "internal-docs"}"#)
            .tool_call("c3", "skill", r#"{"name": "nope"}"#),
        Reply::new().text("Loaded."),
        Reply::raw(400, "application/json", overflow),
        Reply::new().text("SUMMARY: a release was asked for."),
        Reply::new().text("Released."),
        Reply::new().text("Yes."),
    ]);
    layout(&env);
    let out = env.run(&["run", "make a release"]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let first = &env.requests()[0];
    let description = skill_tool(first)["function"]["description"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        description.ends_with("\n\navailable_skills:\n- git-release: Create consistent releases and changelogs\n- internal-docs: Internal documentation rules\n- notes: Take meeting notes\n- pdf-tools: Work with PDF files"),
        "{description}"
    );
    let results = tool_messages(&env.requests()[1]);
    let dir = env.repo().join(".claude/skills/git-release");
    let loaded = &results[0].1;
    assert!(
        loaded.starts_with("<skill_content name=\"git-release\">\n# Skill: git-release\n\nDo the release carefully.\nRun scripts/bump.sh first."),
        "{loaded}"
    );
    assert!(
        loaded.contains(&format!(
            "Base directory for this skill: {}\n",
            dir.display()
        )),
        "{loaded}"
    );
    assert!(
        loaded.contains(&format!(
            "<file>{}</file>",
            dir.join("scripts/bump.sh").display()
        )),
        "{loaded}"
    );
    assert!(
        results[1].1.contains("denied"),
        "internal-* is denied by opencode.json: {}",
        results[1].1
    );
    assert!(!results[1].1.contains("Secret process"), "{}", results[1].1);
    assert!(
        results[2].1.contains("no skill named \"nope\"; available skills: git-release, internal-docs, notes, pdf-tools"),
        "{}",
        results[2].1
    );

    // The next turn overflows: the summary that replaces the first turn carries the skill.
    let out = env.run(&["run", "--continue", "go on"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = env.run(&["run", "--continue", "done?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = env.requests();
    for (i, r) in [(4, &requests[4]), (5, &requests[5])] {
        let first_message = r["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "user")
            .unwrap()["content"]
            .to_string();
        assert!(
            first_message.contains("SUMMARY: a release was asked for."),
            "request {i}: {first_message}"
        );
        assert!(
            first_message
                .contains("Skills loaded earlier in this session; their instructions still apply:")
                && first_message.contains("Do the release carefully."),
            "request {i}: {first_message}"
        );
    }
}
