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
        let catalog = tokio::task::spawn_blocking(move || SkillCatalog::discover(&roots))
            .await
            .unwrap_or_default();
        let catalog = Arc::new(catalog);
        let mut out = SourceLoad::default();
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
}
