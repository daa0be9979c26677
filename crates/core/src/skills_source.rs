//! Skills as a tool source: each load scans the engine's `Roots` (the working
//! directory up to the project root, then the user's folders) and offers one `skill` tool
//! listing what it found — none when there is no skill, so a project without skills sends
//! no definition for it. Files that break the rules become warnings of the tool set (shown
//! by `podcode tools`; `podcode skills` lists them with their reasons). Skills are
//! instructions, not code, so an untrusted project's load too; the listing marks them as
//! the repository's. `stamp` walks the same folders (nothing read), so adding or editing a
//! skill reaches the next model request, and an unchanged folder never rebuilds the set.

use std::sync::Arc;

use async_trait::async_trait;
use podcode_skills::{Roots, SkillCatalog, SkillTool};
use podcode_tools::{ProblemLevel, Tool, ToolOrigin};

use crate::sources::{SourceLoad, ToolSource};

/// The `skill` tool over this engine's skill folders.
pub struct Skills {
    roots: Roots,
}

impl Skills {
    /// Skills from `roots`; nothing is scanned until `load`.
    pub fn new(roots: Roots) -> Self {
        Self { roots }
    }
}

#[async_trait]
impl ToolSource for Skills {
    fn name(&self) -> &'static str {
        "skills"
    }

    async fn load(&self) -> SourceLoad {
        let roots = self.roots.clone();
        let (catalog, stamp) =
            tokio::task::spawn_blocking(move || SkillCatalog::discover_stamped(&roots))
                .await
                .unwrap_or_default();
        let catalog = Arc::new(catalog);
        let mut out = SourceLoad {
            stamp: Some(stamp),
            ..SourceLoad::default()
        };
        for refused in &catalog.refused {
            out.problem(
                "skills",
                ProblemLevel::Warning,
                format!(
                    "skill {} not offered: {}",
                    self.roots.show(&refused.location),
                    refused.reason
                ),
            );
        }
        if !catalog.skills.is_empty() {
            let tool: Arc<dyn Tool> = Arc::new(SkillTool::new(catalog.clone()));
            out.groups.push((ToolOrigin::builtin(), vec![tool]));
        }
        out
    }

    fn stamp(&self) -> u64 {
        SkillCatalog::stamp(&self.roots)
    }

    fn stamps_its_loads(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolset::ToolSets;
    use podcode_skills::{Root, Scope};

    fn skill(dir: &std::path::Path, name: &str) {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        std::fs::write(
            dir.join(name).join("SKILL.md"),
            format!("---\nname: {name}\ndescription: The {name} steps\n---\nDo it.\n"),
        )
        .unwrap();
    }

    #[tokio::test]
    async fn an_added_skill_rebuilds_the_set_once_and_an_unchanged_folder_never_does() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(".claude/skills");
        skill(&dir, "first");
        let roots = Roots::new(
            vec![Root {
                dir: dir.clone(),
                scope: Scope::Project,
            }],
            tmp.path(),
            tmp.path(),
        );
        let (bus, _) = tokio::sync::broadcast::channel(16);
        let sources: Vec<Arc<dyn ToolSource>> = vec![Arc::new(Skills::new(roots))];
        let sets = ToolSets::start_switched(sources, None, bus, Default::default(), None).await;
        let description = |set: &crate::toolset::ToolSet| {
            set.registry
                .tools()
                .iter()
                .find(|t| t.tool.spec().id == "skill")
                .map(|t| t.tool.spec().description.clone())
                .unwrap_or_default()
        };
        for _ in 0..2 {
            assert_eq!(sets.refresh().await.generation, 0, "nothing changed");
        }
        skill(&dir, "second");
        let set = sets.refresh().await;
        assert_eq!(set.generation, 1);
        assert!(description(&set).contains("- second: The second steps"));
        assert_eq!(sets.refresh().await.generation, 1, "rebuilt once");
    }
}
