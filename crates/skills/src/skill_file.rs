//! One `SKILL.md`: its front matter checked against the rules every agent that reads
//! skills shares — `name` 1–64 characters of lowercase letters and digits in
//! hyphen-separated words, equal to the folder's name; `description` 1–1024 characters;
//! optional `license`, `compatibility` and `metadata` (a map of strings). Other keys
//! (`allowed-tools`, …) are ignored. A file that breaks a rule gets one reason, said for
//! the person fixing it.

use std::collections::BTreeMap;

use podcode_config::{parse_front_matter, split_front_matter};
use serde::Deserialize;

/// The longest name a skill may have, in characters.
pub const MAX_NAME: usize = 64;
/// The longest description a skill may have, in characters.
pub const MAX_DESCRIPTION: usize = 1024;

/// A checked `SKILL.md`.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillFile {
    /// The skill's name (its folder's name).
    pub name: String,
    /// When to use it, as the model reads it.
    pub description: String,
    /// `license`, when given.
    pub license: Option<String>,
    /// `compatibility`, when given.
    pub compatibility: Option<String>,
    /// `metadata`, when given (plain values, kept as the text written).
    pub metadata: BTreeMap<String, String>,
    /// The instructions after the front matter, trimmed.
    pub body: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FrontMatter {
    // Strings, so a plain `name: y` or `version: 2` stays the text written (YAML would
    // read them as a boolean and a number).
    name: Option<String>,
    description: Option<String>,
    license: Option<String>,
    compatibility: Option<String>,
    metadata: Option<BTreeMap<String, String>>,
}

/// Reads one `SKILL.md`'s text found in folder `folder`. `Err` is the reason it is refused.
pub fn parse_skill(text: &str, folder: &str) -> Result<SkillFile, String> {
    let (front, body) = split_front_matter(text)?;
    if front.trim().is_empty() {
        return Err(format!(
            "no front matter: start the file with a `---` block holding `name: {folder}` and a `description:`"
        ));
    }
    let fm: FrontMatter = match simple_front_matter(front) {
        Some(fm) => fm,
        None => parse_front_matter(front)?,
    };
    let name = fm
        .name
        .ok_or_else(|| format!("no `name` in the front matter: add `name: {folder}`"))?;
    check_name(&name, folder)?;
    let description = fm
        .description
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty())
        .ok_or_else(|| {
            "no `description` in the front matter: say in up to 1024 characters what the skill does and when to use it".to_string()
        })?;
    let n = description.chars().count();
    if n > MAX_DESCRIPTION {
        return Err(format!(
            "`description` is {n} characters long; the limit is {MAX_DESCRIPTION}"
        ));
    }
    Ok(SkillFile {
        name,
        description,
        license: fm.license,
        compatibility: fm.compatibility,
        metadata: fm.metadata.unwrap_or_default(),
        body: body.trim().to_string(),
    })
}

/// Front matter of plain `key: value` lines only (no quotes, flow or block indicators,
/// comments, nulls or indented lines) read without the YAML parser: the usual `SKILL.md`,
/// several times faster, which counts when a project carries hundreds. `None`: anything
/// else, which the YAML parser reads.
fn simple_front_matter(front: &str) -> Option<FrontMatter> {
    let mut fm = FrontMatter::default();
    for line in front.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            continue;
        }
        if line.starts_with(char::is_whitespace) || line.starts_with('#') {
            return None;
        }
        let (key, value) = line.split_once(": ")?;
        let value = value.trim();
        let special = value.is_empty()
            || value.starts_with(|c: char| "\"'[]{}|>&*!%@`#,?-~".contains(c))
            || value.contains(": ")
            || value.contains(" #")
            || value.eq_ignore_ascii_case("null");
        if special || key.contains(char::is_whitespace) {
            return None;
        }
        let value = Some(value.to_string());
        match key {
            "name" => fm.name = value,
            "description" => fm.description = value,
            "license" => fm.license = value,
            "compatibility" => fm.compatibility = value,
            "metadata" => return None,
            _ => {}
        }
    }
    Some(fm)
}

/// Whether `name` is lowercase letters and digits in words joined by single hyphens.
fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('-').all(|word| {
            !word.is_empty()
                && word
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

fn check_name(name: &str, folder: &str) -> Result<(), String> {
    let n = name.chars().count();
    if n > MAX_NAME {
        return Err(format!(
            "`name` is {n} characters long; the limit is {MAX_NAME}"
        ));
    }
    if !is_valid_name(name) {
        return Err(format!(
            "`name` {name:?} is not lowercase letters and digits in words joined by single hyphens (like \"git-release\")"
        ));
    }
    if name != folder {
        return Err(format!(
            "`name` {name:?} differs from its folder's name {folder:?}: rename one so they match"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(front: &str) -> String {
        format!("---\n{front}\n---\n\n# Steps\n1. Do it.\n")
    }

    #[test]
    fn a_valid_skill_reads_with_its_optional_fields_and_ignores_unknown_keys() {
        let s = parse_skill(
            &file(
                "name: git-release\ndescription: Create releases\nlicense: MIT\n\
                 compatibility: opencode\nallowed-tools: Bash\nmetadata:\n  audience: maintainers\n  version: 2",
            ),
            "git-release",
        )
        .unwrap();
        assert_eq!(s.name, "git-release");
        assert_eq!(s.description, "Create releases");
        assert_eq!(s.license.as_deref(), Some("MIT"));
        assert_eq!(s.metadata["version"], "2");
        assert_eq!(s.body, "# Steps\n1. Do it.");
    }

    #[test]
    fn plain_front_matter_reads_the_same_without_the_yaml_parser() {
        for front in [
            "name: git-release\ndescription: Create releases: tags and notes\nlicense: MIT",
            "name: x\ndescription: d # comment\n",
            "name: x\ndescription: \"quoted: yes\"",
            "name: x\ndescription: >\n  folded\n  text",
            "name: x\ndescription: d\nmetadata:\n  a: b",
            "name: x\ndescription: d\nallowed-tools: Bash, Read",
            "name: y\ndescription: 2",
        ] {
            match parse_front_matter::<FrontMatter>(front) {
                Ok(yaml) => {
                    if let Some(simple) = simple_front_matter(front) {
                        assert_eq!(format!("{simple:?}"), format!("{yaml:?}"), "{front}");
                    }
                }
                // What YAML refuses, the fast path leaves to it (so the reason is YAML's).
                Err(_) => assert!(simple_front_matter(front).is_none(), "{front}"),
            }
        }
        assert!(simple_front_matter("name: x\ndescription: plain words").is_some());
        assert!(simple_front_matter("name: x\ndescription: \"q\"").is_none());
    }

    #[test]
    fn every_rule_has_its_reason() {
        let long = "a".repeat(65);
        let cases = [
            (
                "",
                "no front matter: start the file with a `---` block holding `name: x` and a `description:`",
            ),
            (
                "description: d",
                "no `name` in the front matter: add `name: x`",
            ),
            (
                "name: My_Skill\ndescription: d",
                "`name` \"My_Skill\" is not lowercase letters and digits in words joined by single hyphens (like \"git-release\")",
            ),
            (
                "name: a--b\ndescription: d",
                "`name` \"a--b\" is not lowercase letters and digits in words joined by single hyphens (like \"git-release\")",
            ),
            (
                "name: -a\ndescription: d",
                "`name` \"-a\" is not lowercase letters and digits in words joined by single hyphens (like \"git-release\")",
            ),
            (
                "name: y\ndescription: d",
                "`name` \"y\" differs from its folder's name \"x\": rename one so they match",
            ),
            (
                "name: x",
                "no `description` in the front matter: say in up to 1024 characters what the skill does and when to use it",
            ),
            (
                "name: x\ndescription: \"  \"",
                "no `description` in the front matter: say in up to 1024 characters what the skill does and when to use it",
            ),
        ];
        for (front, reason) in cases {
            let text = if front.is_empty() {
                "just text".to_string()
            } else {
                file(front)
            };
            assert_eq!(parse_skill(&text, "x").unwrap_err(), reason, "{front}");
        }
        let e = parse_skill(&file(&format!("name: {long}\ndescription: d")), &long).unwrap_err();
        assert_eq!(e, "`name` is 65 characters long; the limit is 64");
        let e = parse_skill(
            &file(&format!("name: x\ndescription: {}", "d".repeat(1025))),
            "x",
        )
        .unwrap_err();
        assert_eq!(
            e,
            "`description` is 1025 characters long; the limit is 1024"
        );
        for front in [
            "name: x\ndescription: [a]",
            "name: x\ndescription: d\nmetadata:\n  a: [1]",
        ] {
            let e = parse_skill(&file(front), "x").unwrap_err();
            assert!(
                e.starts_with("invalid front matter: ") && e.contains("line "),
                "{e}"
            );
        }
        let e = parse_skill("---\nname: x\n", "x").unwrap_err();
        assert!(e.contains("never closed"), "{e}");
    }
}
