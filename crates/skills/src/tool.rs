//! The `skill` tool: its parameters are opencode's, byte for byte (`{name}`), so plugins and
//! models that know opencode's tool see the same; its description lists the catalog's
//! skills. A call asks permission `skill` with the skill's name as the pattern (so
//! `pattern = "git-*"` rules and opencode.json's `permission.skill` apply per skill), then
//! reads the `SKILL.md` again — an edit since discovery is what the model gets, a file
//! broken since is refused with its reason — and answers the body, the skill's folder and
//! up to ten of the files beside it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use podcode_protocol::{PermissionRequest, ToolResult, ToolSpec};
use podcode_tools::{Tool, ToolContext, ToolError};
use serde_json::{Value, json};

use crate::catalog::{SkillCatalog, read_skill};
use crate::texts::{description, not_found_text, skill_output};

/// opencode's `skill` parameter schema, as its JSON text.
pub const SKILL_PARAMETERS: &str = r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"name":{"type":"string","description":"The name of the skill from available_skills"}},"required":["name"]}"#;

/// How many of a skill's other files a load lists.
const SAMPLE_FILES: usize = 10;
/// How many entries the sample looks at before it stops.
const SAMPLE_BUDGET: usize = 1_000;

/// The `skill` tool over one catalog.
pub struct SkillTool {
    spec: ToolSpec,
    catalog: Arc<SkillCatalog>,
}

impl SkillTool {
    /// The tool offering `catalog`'s skills.
    pub fn new(catalog: Arc<SkillCatalog>) -> Self {
        let schema = serde_json::from_str(SKILL_PARAMETERS).unwrap_or_default();
        Self {
            spec: ToolSpec::new("skill", description(&catalog), schema).idempotent(true),
            catalog,
        }
    }
}

#[async_trait]
impl Tool for SkillTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let name = args["name"].as_str().unwrap_or("").trim();
        let Some(skill) = self.catalog.get(name) else {
            let names: Vec<&str> = self.catalog.skills.iter().map(|s| s.name()).collect();
            return Err(ToolError::failed(not_found_text(name, &names)));
        };
        ctx.ask(PermissionRequest {
            permission: "skill".into(),
            patterns: vec![skill.name().into()],
            always: vec![skill.name().into()],
            metadata: json!({ "name": skill.name(), "path": skill.location }),
        })
        .await?;
        let file = read_skill(&skill.location, skill.name()).map_err(|reason| {
            ToolError::failed(format!(
                "skill {:?} cannot be loaded any more: {reason} ({})",
                skill.name(),
                skill.location.display()
            ))
        })?;
        let dir = skill.dir().to_path_buf();
        let files = sample_files(&dir);
        Ok(
            ToolResult::text(skill_output(&file.name, &file.body, &dir, &files))
                .with_title(format!("Loaded skill: {}", file.name))
                .with_metadata(json!({ "name": file.name, "dir": dir })),
        )
    }
}

/// Up to [`SAMPLE_FILES`] files in `dir` and below, sorted, `SKILL.md` itself left out.
fn sample_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut queue = vec![dir.to_path_buf()];
    let mut budget = SAMPLE_BUDGET;
    while let Some(d) = queue.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            if budget == 0 {
                break;
            }
            budget -= 1;
            let path = entry.path();
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if name != ".git" && name != "node_modules" {
                    queue.push(path);
                }
            } else if path != dir.join("SKILL.md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out.truncate(SAMPLE_FILES);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_leaves_out_skill_md_and_is_sorted() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::create_dir_all(d.join("scripts")).unwrap();
        std::fs::create_dir_all(d.join("node_modules/x")).unwrap();
        for f in ["SKILL.md", "scripts/run.sh", "b.md", "node_modules/x/i.js"] {
            std::fs::write(d.join(f), "x").unwrap();
        }
        assert_eq!(
            sample_files(d),
            vec![d.join("b.md"), d.join("scripts/run.sh")]
        );
    }
}
