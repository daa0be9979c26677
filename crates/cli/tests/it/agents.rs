//! `podcode agents` lists agent profiles from every layer and says which agent files could
//! not be used and why; `podcode run --format json` tags a sub-agent's events with its
//! session id, and `podcode sessions --tree` shows the child under its parent.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::*;

use podcode_providers::testing::Reply;
use serde_json::Value;

#[test]
fn agents_lists_built_ins_files_and_broken_files_and_waits_for_trust_on_project_files() {
    let env = Env::new(vec![]);
    let global = env.root.path().join("home/.config/opencode/agent");
    std::fs::create_dir_all(&global).unwrap();
    std::fs::write(
        global.join("review.md"),
        "---\ndescription: Reviews diffs\nmode: subagent\ntools:\n  write: false\n---\nReview.\n",
    )
    .unwrap();
    std::fs::write(global.join("broken.md"), "---\nmode: sometimes\n---\n").unwrap();
    let project_file = env.write(
        ".podcode/agents/docs.md",
        "---\ndescription: Writes docs\n---\n",
    );

    let list = |env: &Env| -> Value {
        let out = env.run(&["agents", "--json"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = list(&env);
    let names: Vec<&str> = v["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["build", "plan", "explore", "general", "review"]);
    let review = &v["agents"][4];
    assert_eq!(review["mode"], "subagent");
    assert_eq!(review["description"], "Reviews diffs");
    assert_eq!(
        review["source"],
        global.join("review.md").display().to_string()
    );
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert_eq!(
        problems[0]["file"],
        global.join("broken.md").display().to_string()
    );
    assert!(
        problems[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid front matter: ")
    );
    assert_eq!(problems[1]["file"], project_file.display().to_string());
    assert_eq!(
        problems[1]["message"],
        "not loaded: this workspace is not trusted (run `podcode trust` to use the project's agent files)"
    );

    assert!(env.run(&["trust"]).status.success());
    let v = list(&env);
    assert_eq!(v["agents"].as_array().unwrap().len(), 6);
    assert_eq!(v["agents"][5]["name"], "docs");
    assert_eq!(v["agents"][5]["mode"], "all");
    assert_eq!(v["problems"].as_array().unwrap().len(), 1);

    let human = text(&env.run(&["agents"]).stdout);
    assert!(human.contains("explore  subagent  built-in"), "{human}");
    assert!(
        human.contains("⚠ ") && human.contains("broken.md: invalid front matter"),
        "{human}"
    );
}

#[test]
fn run_json_tags_sub_agent_events_and_sessions_tree_nests_the_child() {
    let env = Env::new(vec![
        Reply::new().tool_call(
            "t1",
            "task",
            r#"{"description": "Find notes", "prompt": "List the files.", "subagent_type": "explore"}"#,
        ),
        Reply::new().tool_call("l1", "list", "{}"),
        Reply::new().text("There are no notes."),
        Reply::new().text("The explorer found no notes."),
    ]);
    let out = env.run(&["run", "--format", "json", "--yes", "find notes"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let tagged: Vec<&Value> = events.iter().filter(|e| e["type"] == "subagent").collect();
    assert!(!tagged.is_empty());
    let child = tagged[0]["session_id"].as_str().unwrap().to_string();
    for e in &tagged {
        assert_eq!(e["session_id"], child.as_str());
        assert_eq!(e["agent"], "explore");
        assert_eq!(e["description"], "Find notes");
    }
    let inner: Vec<&str> = tagged
        .iter()
        .map(|e| e["event"]["type"].as_str().unwrap())
        .collect();
    assert!(
        inner.contains(&"turn_started") && inner.contains(&"turn_finished"),
        "{inner:?}"
    );
    assert!(inner.contains(&"tool_finished"), "{inner:?}");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "turn_finished");
    let parent = last["session_id"].as_str().unwrap();

    let tree = text(&env.run(&["sessions", "--tree"]).stdout);
    let lines: Vec<&str> = tree.lines().collect();
    assert_eq!(lines.len(), 2, "{tree}");
    assert!(lines[0].starts_with(parent), "{tree}");
    assert!(lines[1].starts_with(&format!("└─ {child}")), "{tree}");
    assert!(
        lines[1].contains("explore") && lines[1].ends_with("Find notes"),
        "{tree}"
    );
}

#[test]
fn agent_refuses_a_sub_agent_profile_and_task_refuses_a_primary_one() {
    let env = Env::new(vec![
        Reply::new().tool_call(
            "t1",
            "task",
            r#"{"description": "Build it", "prompt": "Build.", "subagent_type": "build"}"#,
        ),
        Reply::new().text("I will build it myself."),
    ]);
    let out = env.run(&["run", "--agent", "explore", "hello"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(
            "agent \"explore\" is a sub-agent (mode: subagent), which only the task tool starts; primary agents: build, plan"
        ),
        "{}",
        text(&out.stderr)
    );

    let out = env.run(&["run", "--format", "json", "--yes", "build it"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "subagent_type \\\"build\\\" is a primary agent (mode: primary): only the user runs it, a task cannot start it; available sub-agents: explore, general"
        ),
        "{stdout}"
    );
    let sessions = text(&env.run(&["sessions", "--tree"]).stdout);
    assert_eq!(sessions.lines().count(), 1, "no child session: {sessions}");
}

#[test]
fn tools_lists_task_as_the_model_sees_it_and_notes_where_sync_to_main_is_offered() {
    let env = Env::new(vec![Reply::new().text("hi")]);
    let out = env.run(&["run", "hello"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = env.requests()[0]["tools"].clone();
    let sent_task = sent
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "task")
        .expect("the model is offered task")["function"]
        .clone();

    let out = env.run(&["tools", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools = v["tools"].as_array().unwrap();
    let task = tools.iter().find(|t| t["id"] == "task").unwrap();
    assert_eq!(task["description"], sent_task["description"]);
    assert_eq!(task["parameters"], sent_task["parameters"]);
    assert_eq!(task["source"]["kind"], "builtin");
    assert_eq!(task["protected"], true);
    assert!(task.get("note").is_none());
    let sync = tools.iter().find(|t| t["id"] == "sync_to_main").unwrap();
    assert_eq!(sync["note"], "only in worktree sessions (--worktree)");
    assert!(
        !sent.to_string().contains("\"sync_to_main\""),
        "a session in the user's checkout is not offered sync_to_main"
    );

    let human = text(&env.run(&["tools"]).stdout);
    assert!(human.contains("\ntask "), "{human}");
    assert!(
        human.contains("Start a sub-agent: it works on one task in its own session"),
        "{human}"
    );
    assert!(
        human.contains("note: only in worktree sessions (--worktree)"),
        "{human}"
    );
}
