//! Every text skills show: to the model (the `skill` tool's description, a loaded skill,
//! an unknown name) and to the user (`podcode skills`, the TUI's `/skills`).

use std::path::{Path, PathBuf};

use crate::catalog::SkillCatalog;
use crate::roots::{Roots, Scope};

/// What the `skill` tool's description says before the list of skills.
pub(crate) const DESCRIPTION_HEAD: &str = "Loads a skill: instructions for a kind of task (and files beside them) that the user or this project provides. When the task at hand matches a skill's description, call this tool with the skill's name before doing the work, then follow the instructions it returns. Relative paths in a skill resolve against the folder the result names.";

/// The `skill` tool's description: the head, then `available_skills:` with one
/// `- name: description` line per skill.
pub(crate) fn description(catalog: &SkillCatalog) -> String {
    let mut out = format!("{DESCRIPTION_HEAD}\n\navailable_skills:");
    for s in &catalog.skills {
        out.push_str(&format!(
            "\n- {}: {}",
            s.file.name,
            one_line(&s.file.description)
        ));
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The error for a name no skill has.
pub fn not_found_text(name: &str, available: &[&str]) -> String {
    if available.is_empty() {
        format!("no skill named {name:?}; no skills are available")
    } else {
        format!(
            "no skill named {name:?}; available skills: {}",
            available.join(", ")
        )
    }
}

/// What the model reads when a skill loads: its body, its folder and a sample of the files
/// in it, tagged so the skill stays recognisable later in a long conversation.
pub fn skill_output(name: &str, body: &str, dir: &Path, files: &[PathBuf]) -> String {
    let mut out = format!(
        "<skill_content name=\"{name}\">\n# Skill: {name}\n\n{body}\n\nBase directory for this skill: {}\nRelative paths in this skill (scripts/, reference/, …) are relative to this directory.\n",
        dir.display()
    );
    if !files.is_empty() {
        out.push_str("\n<skill_files>\n");
        for f in files {
            out.push_str(&format!("<file>{}</file>\n", f.display()));
        }
        out.push_str("</skill_files>\n");
    }
    out.push_str("</skill_content>");
    out
}

/// `podcode skills`: every skill with where it comes from (project skills marked as the
/// repository's), then the files refused and why, then the shadowed ones.
pub fn catalog_lines(catalog: &SkillCatalog, roots: &Roots) -> Vec<String> {
    let mut lines = Vec::new();
    if catalog.skills.is_empty() {
        lines.push("no skills found".to_string());
        lines.push(
            "  a skill is a folder with a SKILL.md, in .podcode/skills/, .opencode/skills/, .claude/skills/ or .agents/skills/ (project or home); see `podcode skills --help`"
                .to_string(),
        );
    } else {
        lines.push(format!("skills ({}):", catalog.skills.len()));
        let width = catalog
            .skills
            .iter()
            .map(|s| s.file.name.len())
            .max()
            .unwrap_or(0);
        for s in &catalog.skills {
            let from = match s.scope {
                Scope::Project => "  (from the repository)",
                Scope::User => "",
            };
            lines.push(format!(
                "  {:width$}  {}  {}{from}",
                s.file.name,
                roots.show(&s.location),
                clip(&one_line(&s.file.description), 80),
            ));
        }
    }
    if !catalog.refused.is_empty() {
        lines.push(format!("refused ({}), not offered:", catalog.refused.len()));
        for r in &catalog.refused {
            lines.push(format!("  {}: {}", roots.show(&r.location), r.reason));
        }
    }
    if !catalog.shadowed.is_empty() {
        lines.push(format!(
            "shadowed ({}), not offered:",
            catalog.shadowed.len()
        ));
        for s in &catalog.shadowed {
            lines.push(format!(
                "  {}: {} is taken by {}",
                roots.show(&s.location),
                s.name,
                roots.show(&s.by)
            ));
        }
    }
    lines
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max - 1).collect();
    format!("{}…", cut.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_facing_texts_are_pinned() {
        assert_eq!(
            not_found_text("x", &["a", "b"]),
            "no skill named \"x\"; available skills: a, b"
        );
        assert_eq!(
            not_found_text("x", &[]),
            "no skill named \"x\"; no skills are available"
        );
        assert_eq!(
            skill_output(
                "a",
                "Do.",
                Path::new("/s/a"),
                &[PathBuf::from("/s/a/run.sh")]
            ),
            "<skill_content name=\"a\">\n# Skill: a\n\nDo.\n\nBase directory for this skill: /s/a\nRelative paths in this skill (scripts/, reference/, …) are relative to this directory.\n\n<skill_files>\n<file>/s/a/run.sh</file>\n</skill_files>\n</skill_content>"
        );
        assert_eq!(
            description(&SkillCatalog::default()),
            format!("{DESCRIPTION_HEAD}\n\navailable_skills:")
        );
    }
}
