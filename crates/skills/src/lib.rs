//! Agent skills and custom commands: Markdown instructions found in the project's and the
//! user's folders (`roots`). Custom commands (`commands`, `template`) are prompts a user
//! runs as `/name args`.
//!
//! Skills: folders holding a `SKILL.md` (YAML front matter with `name` and
//! `description`, then instructions) that the model loads on demand with the `skill` tool.
//! The format is the one opencode, Claude Code and Codex read, so a repository's
//! `.claude/skills/` or `.opencode/skills/` works unchanged.
//!
//! Data flow: `Roots::skills` lists where skills may live, highest precedence first
//! (the project's folders from the working directory up to the project root, then the
//! user's) ▸ `SkillCatalog::discover` scans them: each `SKILL.md` is checked
//! (`skill_file`), a valid one becomes a `Skill` unless a skill of that name was found
//! earlier (then it is listed as shadowed), an invalid one is listed with the reason ▸
//! `SkillTool` offers the catalog to the model (names and descriptions in its description)
//! and, on a call, asks permission `skill` for the name, reads the file again and returns
//! its body with the folder it lives in.

mod catalog;
mod commands;
mod roots;
mod skill_file;
mod template;
mod texts;
mod tool;

pub use catalog::{RefusedSkill, ShadowedSkill, Skill, SkillCatalog};
pub use commands::{
    CommandCatalog, CommandOrigin, CustomCommand, RefusedCommand, command_lines, parse_command,
};
pub use roots::{Root, Roots, Scope};
pub use skill_file::{SkillFile, parse_skill};
pub use template::{file_mentions, fill_arguments, shell_snippets, split_arguments};
pub use texts::{catalog_lines, not_found_text, skill_output};
pub use tool::{SKILL_PARAMETERS, SkillTool};
