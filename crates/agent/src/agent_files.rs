//! Agent profiles as Markdown files: YAML front matter for the settings, the body for the
//! prompt. The format is opencode's, read unchanged, so `.opencode/agent/*.md` files work
//! as they are: `description`, `mode`, `model`, `temperature`, `steps` (or `maxSteps`),
//! `tools` (`{write: false}`; `"*": false` offers only the ids set to `true`), `permission`
//! (`{edit: deny, bash: {"git *": allow, "*": ask}}`), `prompt`, `hidden`, `disable`. Keys
//! Podcode has no use for (`color`, `top_p`, …) are ignored. The file name (without `.md`)
//! is the agent's name. `parse` turns one file into an `AgentConfig` or a reason it cannot.

use std::collections::BTreeMap;

use podcode_config::{AgentConfig, AgentMode, ToolFilter, parse_front_matter, split_front_matter};
use podcode_protocol::{PermissionAction, PermissionRule};
use serde::Deserialize;

/// One agent file's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentFile {
    /// The settings, in the shape of a config `[agent.NAME]` table.
    pub config: AgentConfig,
    /// `hidden: true`: not listed to the model as a sub-agent.
    pub hidden: bool,
    /// `disable: true`: the file is read, and the agent is not offered.
    pub disabled: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FrontMatter {
    description: Option<String>,
    mode: Option<AgentMode>,
    model: Option<String>,
    temperature: Option<f64>,
    #[serde(alias = "maxSteps")]
    steps: Option<u32>,
    prompt: Option<String>,
    tools: Option<BTreeMap<String, bool>>,
    permission: Option<BTreeMap<String, Permission>>,
    hidden: bool,
    disable: bool,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Permission {
    Action(String),
    Patterns(BTreeMap<String, String>),
}

/// Reads one agent file's text. `Err` is the reason, said for a person fixing the file.
pub fn parse(text: &str) -> Result<AgentFile, String> {
    let (front, body) = split_front_matter(text)?;
    let fm: FrontMatter = parse_front_matter(front)?;
    let body = body.trim();
    let prompt = match (fm.prompt, body.is_empty()) {
        (Some(p), true) => Some(p),
        (Some(p), false) => Some(format!("{p}\n\n{body}")),
        (None, false) => Some(body.to_string()),
        (None, true) => None,
    };
    let config = AgentConfig {
        prompt,
        model: fm.model,
        tools: fm.tools.map(tool_filter),
        permission: match fm.permission {
            Some(p) => rules(p)?,
            None => Vec::new(),
        },
        description: fm.description,
        mode: fm.mode,
        temperature: fm.temperature,
        steps: fm.steps,
        sandbox: None,
    };
    Ok(AgentFile {
        config,
        hidden: fm.hidden,
        disabled: fm.disable,
    })
}

/// `{write: false}` denies ids; `{"*": false, read: true}` offers only the `true` ones.
fn tool_filter(tools: BTreeMap<String, bool>) -> ToolFilter {
    if tools.get("*") == Some(&false) {
        return ToolFilter {
            allow: Some(
                tools
                    .iter()
                    .filter(|(k, on)| **on && k.as_str() != "*")
                    .map(|(k, _)| k.clone())
                    .collect(),
            ),
            deny: Vec::new(),
        };
    }
    ToolFilter {
        allow: None,
        deny: tools
            .into_iter()
            .filter(|(_, on)| !on)
            .map(|(k, _)| k)
            .collect(),
    }
}

/// One rule per permission (pattern `*`) or per pattern. Within one permission the broader
/// patterns come first, so the more specific ones win (rules apply last-match-wins), the
/// way opencode ranks them whatever order the file lists them in.
fn rules(map: BTreeMap<String, Permission>) -> Result<Vec<PermissionRule>, String> {
    let mut out = Vec::new();
    for (permission, value) in map {
        match value {
            Permission::Action(a) => out.push(PermissionRule::new(
                &permission,
                "*",
                action(&permission, &a)?,
            )),
            Permission::Patterns(patterns) => {
                let mut list: Vec<(String, String)> = patterns.into_iter().collect();
                list.sort_by_key(|(p, _)| (p != "*", p.len()));
                for (pattern, a) in list {
                    out.push(PermissionRule::new(
                        &permission,
                        &pattern,
                        action(&permission, &a)?,
                    ));
                }
            }
        }
    }
    Ok(out)
}

fn action(permission: &str, a: &str) -> Result<PermissionAction, String> {
    match a {
        "allow" => Ok(PermissionAction::Allow),
        "ask" => Ok(PermissionAction::Ask),
        "deny" => Ok(PermissionAction::Deny),
        other => Err(format!(
            "permission.{permission}: \"{other}\" is not one of allow, ask, deny"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opencode_sub_agent_file_reads_unchanged() {
        let f = parse(
            "---\ndescription: Reviews code\nmode: subagent\nmodel: anthropic/claude-x\n\
             temperature: 0.1\nmaxSteps: 12\ncolor: \"#ff0000\"\nfallback_models:\n  - a/b\n\
             tools:\n  write: false\n  edit: false\npermission:\n  webfetch: deny\n  bash:\n    \
             \"git diff*\": allow\n    \"*\": ask\n---\n\nYou review code.\n",
        )
        .unwrap();
        let c = &f.config;
        assert_eq!(c.description.as_deref(), Some("Reviews code"));
        assert_eq!(c.mode, Some(AgentMode::Subagent));
        assert_eq!(c.model.as_deref(), Some("anthropic/claude-x"));
        assert_eq!((c.temperature, c.steps), (Some(0.1), Some(12)));
        assert_eq!(c.prompt.as_deref(), Some("You review code."));
        let tools = c.tools.as_ref().unwrap();
        assert_eq!(
            (tools.allow.clone(), tools.deny.clone()),
            (None, vec!["edit".to_string(), "write".to_string()])
        );
        let rules: Vec<_> = c
            .permission
            .iter()
            .map(|r| (r.permission.as_str(), r.pattern.as_str(), r.action))
            .collect();
        assert_eq!(
            rules,
            vec![
                ("bash", "*", PermissionAction::Ask),
                ("bash", "git diff*", PermissionAction::Allow),
                ("webfetch", "*", PermissionAction::Deny),
            ]
        );
    }

    #[test]
    fn star_false_offers_only_the_tools_set_to_true() {
        let f =
            parse("---\ntools:\n  \"*\": false\n  read: true\n  grep: true\n---\nbody").unwrap();
        let tools = f.config.tools.unwrap();
        assert_eq!(
            tools.allow,
            Some(vec!["grep".to_string(), "read".to_string()])
        );
    }

    #[test]
    fn a_file_without_front_matter_is_all_prompt() {
        let f = parse("Just do it.\n").unwrap();
        assert_eq!(f.config.prompt.as_deref(), Some("Just do it."));
        assert_eq!(f.config.mode, None);
    }

    #[test]
    fn malformed_files_say_why() {
        assert_eq!(
            parse("---\nmode: subagent\nno end").unwrap_err(),
            "the front matter opened with `---` is never closed by a `---` line"
        );
        assert_eq!(
            parse("---\nmode: sometimes\n---\n").unwrap_err(),
            "invalid front matter: unknown variant `sometimes`, expected one of primary, subagent, all at line 2, column 7"
        );
        let e = parse("---\npermission:\n  edit: maybe\n---\n").unwrap_err();
        assert_eq!(
            e,
            "permission.edit: \"maybe\" is not one of allow, ask, deny"
        );
        let e = parse("---\ndescription: [unclosed\n---\n").unwrap_err();
        assert!(e.starts_with("invalid front matter: "), "{e}");
    }
}
