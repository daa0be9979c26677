//! What the listing commands print: `podcode agents` (profiles, then agent files that could
//! not be used), `podcode tools` (the tool set as the model sees it, what the config switched
//! off, load problems), `podcode permissions list` (remembered approvals) and `podcode mcp
//! list` (each server's state). Text lines pass the terminal sanitiser here; JSON values
//! pass `sanitize_json` in the front end when printed.

use podcode_agent::AgentCatalog;
use podcode_mcp::ServerStatus;
use podcode_protocol::{Truncation, sanitize_for_terminal as clean};
use podcode_store::ApprovalRow;
use podcode_tools::ProblemLevel;
use serde_json::{Value, json};

use crate::listing::ToolListing;

/// `podcode agents --help`'s explanation of agent files.
pub const AGENTS_HELP: &str = "Agent files are Markdown with YAML front matter (description, mode, model,\n\
    temperature, steps, tools, permission); the body is the prompt, the file name the agent's\n\
    name. They are read from ~/.config/opencode/agent(s)/, $OPENCODE_CONFIG_DIR/agent(s)/,\n\
    ~/.config/podcode/agent(s)/, then the project's .opencode/agent(s)/ and\n\
    .podcode/agent(s)/ (project files only in a trusted workspace: `podcode trust`);\n\
    [agent.NAME] in config.toml refines any of them.\n\n\
    Example (.podcode/agents/review.md):\n  \
    ---\n  \
    description: Reviews a diff for bugs\n  \
    mode: subagent\n  \
    tools: {write: false, edit: false}\n  \
    permission: {bash: {\"git diff*\": allow, \"*\": deny}}\n  \
    ---\n  \
    You review code. Report real bugs only, with file and line.";

/// `podcode skills --help`'s explanation of skills.
pub const SKILLS_HELP: &str = "A skill is a folder holding a SKILL.md: YAML front matter with `name` (lowercase words\n\
    joined by hyphens, the folder's name) and `description` (when to use it, up to 1024\n\
    characters), then the instructions. The model sees every skill's name and description in\n\
    the `skill` tool and loads one when a task matches it.\n\n\
    Skills are read from the project (from the working directory up to the project root):\n\
    .podcode/skills/, .opencode/skills/ (or skill/), .claude/skills/, .agents/skills/; then\n\
    ~/.config/podcode/skills/, ~/.config/opencode/skills/, ~/.claude/skills/, ~/.agents/skills/.\n\
    The first skill of a name wins. A project's skills load even in an untrusted workspace\n\
    (they are instructions, not code) and are marked \"from the repository\".\n\n\
    Permission `skill` applies per skill name; loading is allowed unless a rule says otherwise:\n  \
    [[permission]]\n  \
    permission = \"skill\"\n  \
    pattern = \"deploy-*\"\n  \
    action = \"ask\"\n\n\
    Example (.podcode/skills/git-release/SKILL.md):\n  \
    ---\n  \
    name: git-release\n  \
    description: Prepare a release - changelog, version bump, tag. Use when asked to release.\n  \
    ---\n  \
    1. Read CHANGELOG.md ...";

/// `podcode commands --help`'s explanation of custom commands.
pub const COMMANDS_HELP: &str = "A custom command is a Markdown file whose body is a prompt: .podcode/commands/review.md\n\
    is /review, .podcode/commands/team/deploy.md is /team/deploy. They are read from the\n\
    project (from the working directory up to the project root): .podcode/commands/,\n\
    .opencode/commands/ (or command/), .claude/commands/; then ~/.config/podcode/commands/,\n\
    ~/.config/opencode/commands/, ~/.claude/commands/; and [commands.NAME] in config.toml\n\
    (opencode.json's \"command\"), which comes first. Front matter: description, agent, model,\n\
    argument-hint, subtask (true: a sub-agent runs it). A command may not take a built-in\n\
    name (/new, /compact, …).\n\n\
    In the prompt, $ARGUMENTS is what you type after the name, $1 … $9 its words (quotes\n\
    group words; the highest one used takes the rest); !`cmd` is replaced by the command's\n\
    output (run by the bash tool: its permission rules and sandbox apply, so it asks unless\n\
    a rule allows it); @path attaches that file. Run one with /review src/a.rs in the UI,\n\
    the web page or an editor, or podcode run --command review src/a.rs.\n\n\
    Example (.podcode/commands/review.md):\n  \
    ---\n  \
    description: Review a file for bugs\n  \
    argument-hint: <path>\n  \
    ---\n  \
    Review @$1 for real bugs. Recent history: !`git log --oneline -5 -- $1`";

/// `podcode lsp --help`: how language servers are configured.
pub const LSP_HELP: &str = "Language servers check the files an edit changed; their errors join the edit's result,\n\
    and the lsp tool asks them about definitions, references, hover text and symbols.\n\
    A server is used when its program is on PATH (or, in a trusted workspace, in the project's\n\
    node_modules/.bin); Podcode never downloads one. Servers run in the sandbox of commands.\n\n\
    In ~/.config/podcode/config.toml (opencode.json's \"lsp\" maps onto it):\n  \
    [lsp]\n  \
    wait_ms = 3000          how long an edit waits for diagnostics\n  \
    warnings = true         report warnings too, not only errors\n  \
    disabled = true         no language servers at all\n  \
    [lsp.typescript]\n  \
    disabled = true         switch one server off\n  \
    [lsp.zls]\n  \
    command = [\"zls\"]       add a server: its command and the files it checks\n  \
    extensions = [\"zig\"]";

/// `podcode --help`'s long description.
pub const MAIN_ABOUT: &str = "A terminal coding agent whose tools anyone can extend.\n\n\
        Tools come from the built-ins, executables in .podcode/tools/ and ~/.config/podcode/tools/,\n\
        JS/TS plugins and opencode tool files (.podcode/plugins/, .opencode/tools/, ...; run\n\
        with Bun or Node 20+), and MCP servers. Every tool goes through the same pipeline:\n\
        schema validation, permission prompts, output truncation and the change journal.";

/// `podcode --help`'s examples.
pub const MAIN_EXAMPLES: &str = "Examples:\n  podcode run \"fix the failing test\"      one agent turn (text to stdout)\n  \
        podcode sessions                      stored sessions, newest first\n  \
        podcode tools                         list every tool the model can call\n  \
        podcode agents                        agent profiles and sub-agents, and broken agent files\n  \
        podcode skills                        skills (SKILL.md) the model may load, and broken ones\n  \
        podcode commands                      custom /commands, and broken ones\n  \
        podcode plugins                       plugin and tool files, and why one failed\n  \
        podcode auth login                    sign in to a model provider (API key or a plugin's login)\n  \
        podcode tool call read '{\"filePath\":\"README.md\"}'\n  \
        podcode sandbox status                what commands may write, and the network\n  \
        podcode changes                       what tools changed, newest last\n  \
        podcode revert --session ses_…        undo a whole session's edits\n  \
        podcode web                           the web page (and `podcode serve`: the API)\n  \
        podcode acp                           serve editors (Zed, …) over the Agent Client Protocol";

/// One line of `podcode auth list`: the provider, what is stored, the plugin signing in.
pub fn auth_line(l: &crate::AuthListing) -> String {
    let stored = match l.stored.as_deref() {
        Some("api") => "API key stored".to_string(),
        Some("oauth") => "signed in (OAuth tokens stored)".to_string(),
        Some(other) => format!("{other} credentials stored"),
        None => "nothing stored: `podcode auth login` signs in".to_string(),
    };
    match &l.plugin {
        Some(file) => format!("{:<16} {stored}; signed in by {file}", l.provider),
        None => format!("{:<16} {stored}", l.provider),
    }
}

/// `podcode agents --json`: the profiles and the problems.
pub fn agents_json(catalog: &AgentCatalog) -> Value {
    let agents: Vec<_> = catalog
        .entries()
        .iter()
        .map(|e| {
            let p = &e.profile;
            json!({
                "name": p.name,
                "mode": p.mode.as_str(),
                "source": e.source,
                "description": p.description,
                "model": p.model,
                "hidden": p.hidden,
                "disabled": e.disabled,
            })
        })
        .collect();
    let problems: Vec<_> = catalog
        .problems()
        .iter()
        .map(|p| json!({"file": p.file, "message": p.message}))
        .collect();
    json!({"agents": agents, "problems": problems})
}

/// `podcode agents`: one line per profile (its description's first line under it), then
/// one per unusable agent file.
pub fn agent_lines(catalog: &AgentCatalog) -> Vec<String> {
    let width = catalog
        .entries()
        .iter()
        .map(|e| e.profile.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    for e in catalog.entries() {
        let p = &e.profile;
        let mut flags = String::new();
        if e.disabled {
            flags.push_str(" (disabled)");
        }
        if p.hidden {
            flags.push_str(" (hidden)");
        }
        out.push(format!(
            "{:<width$}  {:<8}  {}{}",
            clean(&p.name),
            p.mode.as_str(),
            clean(&e.source),
            flags
        ));
        if let Some(d) = &p.description {
            out.push(format!(
                "{:<width$}  {}",
                "",
                clean(d.lines().next().unwrap_or(""))
            ));
        }
    }
    for p in catalog.problems() {
        out.push(format!("⚠ {}: {}", clean(&p.file), clean(&p.message)));
    }
    out
}

/// `podcode tools`: a header, two lines per tool (id, flags, source; its description's
/// first line), then what was switched off and the load problems.
pub fn tool_lines(listing: &ToolListing) -> Vec<String> {
    let width = listing
        .tools
        .iter()
        .map(|t| t.id.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = vec![format!("{:width$}  {:22}  SOURCE", "TOOL", "FLAGS")];
    for t in &listing.tools {
        let mut flags = Vec::new();
        if t.protected {
            flags.push("protected");
        }
        if t.idempotent {
            flags.push("read-only");
        }
        if t.truncation == Truncation::Tail {
            flags.push("tail");
        }
        let mut source = t.source.name.clone();
        if let Some(r) = &t.replaced {
            source.push_str(&format!(" (replaces {r})"));
        }
        out.push(format!("{:width$}  {:22}  {source}", t.id, flags.join(",")));
        let first = t.description.lines().next().unwrap_or_default();
        out.push(format!("{:width$}  {}", "", clean(first)));
        if let Some(note) = &t.note {
            out.push(format!("{:width$}  note: {note}", ""));
        }
    }
    if !listing.switched_off.is_empty() {
        out.push(
            "\nSwitched off by config (tools.disable, or opencode's \"tools\": {\"name\": false}):"
                .into(),
        );
        for t in &listing.switched_off {
            let text = format!("{} (from {}; entry \"{}\")", t.id, t.source, t.by);
            out.push(format!("  {}", clean(&text)));
        }
    }
    if !listing.problems.is_empty() {
        out.push("\nProblems:".into());
        for p in &listing.problems {
            let level = match p.level {
                ProblemLevel::Error => "error",
                ProblemLevel::Warning => "warning",
            };
            let text = format!("{} ({})", p.message, p.source);
            out.push(format!("  {level}: {}", clean(&text)));
        }
    }
    out
}

/// `podcode permissions list`: one line per remembered approval.
pub fn approval_lines(rows: &[ApprovalRow]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            let when = humantime::format_rfc3339_seconds(
                std::time::UNIX_EPOCH
                    + std::time::Duration::from_millis(r.created_at.max(0) as u64),
            );
            let line = format!(
                "{}  {} {}  ({}, {when})",
                r.id, r.permission, r.pattern, r.project
            );
            clean(&line).into_owned()
        })
        .collect()
}

/// `podcode mcp list`: a header and one line per server (its last error under it).
pub fn mcp_lines(status: &[ServerStatus]) -> Vec<String> {
    let width = status
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut out = vec![format!(
        "{:width$}  {:8}  {:>5}  TRANSPORT",
        "SERVER", "STATE", "TOOLS"
    )];
    for s in status {
        out.push(format!(
            "{:width$}  {:8}  {:>5}  {}",
            s.name,
            s.state.as_str(),
            s.tools,
            s.transport
        ));
        if let Some(e) = &s.last_error {
            out.push(format!("{:width$}  last error: {}", "", clean(e)));
        }
    }
    out
}
