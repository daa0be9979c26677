//! Custom commands through the installed binary against the scripted model, in a
//! repository laid out the way real ones are: opencode's legacy `.opencode/command/`, a
//! nested `.claude/commands/team/…`, opencode.json's `command`, a file named like a
//! built-in command and one with no prompt. Checked: `podcode commands`, and `podcode run
//! --command` sending the filled-in template — arguments, the `@path` file attached, the
//! ``!`git log` `` snippet run through `bash` (asked for: refused without a terminal,
//! allowed with `--yes`).
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::*;

use podcode_providers::testing::Reply;

fn layout(env: &Env) {
    env.write(
        ".opencode/command/review.md",
        "---\ndescription: Review a file for bugs\nargument-hint: <path>\n---\n\
         Review @$1 for real bugs.\nLast commit: !`git log -1 --format=%s`\nFocus: $2\nAsked: $ARGUMENTS\n",
    );
    env.write(".claude/commands/team/deploy.md", "Deploy $1 to $2.");
    env.write(".podcode/commands/compact.md", "My own compaction.");
    env.write(
        ".claude/commands/empty.md",
        "---\ndescription: nothing\n---\n",
    );
    env.write(
        "opencode.json",
        r#"{"command": {"fix": {"template": "Fix $ARGUMENTS now.", "description": "Fix something"}}}"#,
    );
    env.write("src/a.rs", "fn main() { let x = 1 / 0; }\n");
    env.git_init();
    env.git(&["add", "src"]);
    env.git(&["commit", "-qm", "Divide by zero on purpose"]);
}

#[test]
fn podcode_commands_lists_files_config_and_what_is_not_offered() {
    let env = Env::new(vec![]);
    layout(&env);
    let out = env.run(&["commands"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    for line in [
        "commands (3):",
        "  /fix          config  Fix something",
        "  /review       .opencode/command/review.md  Review a file for bugs  (from the repository)",
        "  /team/deploy  .claude/commands/team/deploy.md  (from the repository)",
        "hidden by a built-in command (1):",
        "  .podcode/commands/compact.md: /compact is Podcode's own command; rename the file to use it",
        "refused (1), not offered:",
        "  .claude/commands/empty.md: the file has no prompt after its front matter",
    ] {
        assert!(
            shown.lines().any(|l| l == line),
            "{line:?} missing:\n{shown}"
        );
    }
}

#[test]
fn run_command_fills_the_template_attaches_the_file_and_runs_the_snippet_as_asked() {
    let env = Env::new(vec![
        Reply::new().text("Found it."),
        Reply::new().text("Again."),
    ]);
    layout(&env);
    // Untrusted, no terminal: the snippet's bash call is asked for and refused.
    let out = env.run(&["run", "--command", "review", "src/a.rs", "the division"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Found it.");
    let sent = user_texts(&env.requests()[0]);
    assert!(sent.contains("Review @src/a.rs for real bugs."), "{sent}");
    assert!(sent.contains("Focus: the division"), "{sent}");
    assert!(
        sent.contains(r#"Asked: src/a.rs \"the division\""#),
        "{sent}"
    );
    assert!(
        sent.contains("let x = 1 / 0;"),
        "the @path file is attached: {sent}"
    );
    assert!(!sent.contains("Divide by zero on purpose"), "{sent}");
    assert!(
        !sent.contains("!`git log"),
        "the snippet is replaced: {sent}"
    );

    // Allowed, the snippet's output takes its place.
    let out = env.run(&["run", "--yes", "--command", "/review", "src/a.rs"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = user_texts(&env.requests()[1]);
    assert!(
        sent.contains("Last commit: Divide by zero on purpose"),
        "{sent}"
    );

    // An unknown name says which commands there are.
    let out = env.run(&["run", "--command", "nope"]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("no command named /nope; commands: /fix /review /team/deploy"),
        "{stderr}"
    );
}

#[test]
fn in_the_tui_slash_completes_a_command_and_enter_runs_it_after_its_snippet_is_allowed() {
    let env = Env::new(vec![Reply::new().text("Reviewed it.")]);
    layout(&env);
    env.write(
        ".claude/skills/git-release/SKILL.md",
        "---\nname: git-release\ndescription: Create releases\n---\nSteps.\n",
    );
    let (screen, matched) = common::pty::drive(
        &env,
        &["tui"],
        &[
            // The repository's skills are marked as such.
            ("enter to send", "/skills\r"),
            ("(from the repository)", "/rev"),
            ("Review a file for bugs", "\t"),
            ("/review ", "src/a.rs\r"),
            // The snippet's bash call asks.
            ("allow once", "o"),
            ("Reviewed it.", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    let sent = user_texts(&env.requests()[0]);
    assert!(sent.contains("Review @src/a.rs for real bugs."), "{sent}");
    assert!(
        sent.contains("Last commit: Divide by zero on purpose"),
        "{sent}"
    );
    assert!(sent.contains("let x = 1 / 0;"), "{sent}");
}

#[test]
fn a_subtask_command_runs_as_a_sub_agent_whose_answer_the_model_reads() {
    let env = Env::new(vec![
        Reply::new().text("The parser splits on commas."),
        Reply::new().text("Summary: it splits on commas."),
    ]);
    env.write(
        ".podcode/commands/explain.md",
        "---\ndescription: Explain code in a sub-agent\nsubtask: true\n---\nExplain $ARGUMENTS.\n",
    );
    let out = env.run(&["run", "--command", "explain", "the parser"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Summary: it splits on commas.");
    let requests = env.requests();
    // The sub-agent got the filled-in prompt; the session's model read its answer.
    let child = user_texts(&requests[0]);
    assert!(child.contains("Explain the parser."), "{child}");
    let parent = tool_messages(&requests[1]);
    assert_eq!(parent.len(), 1, "{parent:?}");
    assert!(
        parent[0].1.contains("The parser splits on commas."),
        "{parent:?}"
    );
    let tree = text(&env.run(&["sessions", "--tree"]).stdout);
    assert!(
        tree.contains("/explain"),
        "the child is named after the command: {tree}"
    );
}

/// A plugin's `command.execute.before` hook sees opencode's input and may add to the
/// prompt's parts before it is sent.
const HOOK: &str = r#"import type { Plugin } from "@opencode-ai/plugin"
import { appendFileSync } from "node:fs"

export const Commands: Plugin = async ({ directory }) => ({
  "command.execute.before": async (input, output) => {
    appendFileSync(`${directory}/seen.jsonl`, JSON.stringify({ input, texts: output.parts.map((p) => p.text) }) + "\n")
    output.parts.push({ type: "text", text: "Added by the plugin." })
  },
})
"#;

#[test]
fn a_plugin_s_command_execute_before_hook_sees_the_command_and_adds_to_its_prompt() {
    let env = Env::new(vec![Reply::new().text("ok")]);
    env.write(".podcode/commands/fix.md", "Fix $ARGUMENTS.");
    env.write(".opencode/plugins/commands.ts", HOOK);
    assert!(env.run(&["trust"]).status.success());
    let out = env.run(&["run", "--command", "fix", "the parser"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let seen = env.jsonl("seen.jsonl");
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["input"]["command"], "fix");
    assert_eq!(seen[0]["input"]["arguments"], "the parser");
    assert!(
        seen[0]["input"]["sessionID"]
            .as_str()
            .unwrap()
            .starts_with("ses_")
    );
    assert_eq!(seen[0]["texts"], serde_json::json!(["Fix the parser."]));
    let sent = user_texts(&env.requests()[0]);
    assert!(
        sent.contains("Fix the parser.\\nAdded by the plugin."),
        "{sent}"
    );
}
