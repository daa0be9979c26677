//! The skills found in a `Roots`: every folder holding a `SKILL.md`, up to three
//! folders deep under a root (`skills/git-release/SKILL.md`, or grouped:
//! `skills/docs/pdf/SKILL.md`). The first valid skill of a name wins (roots are in
//! precedence order); later ones are kept as shadowed and invalid ones as refused, so a
//! listing can say what happened to every file. `stamp` tells cheaply whether a new scan
//! could find something else: it walks the same folders without reading a file and hashes
//! the modification times of every root, folder and `SKILL.md`.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use crate::roots::{Roots, Scope};
use crate::skill_file::{SkillFile, parse_skill};

/// How many folders deep under a root a `SKILL.md` may be.
const MAX_DEPTH: usize = 3;
/// A scan stops looking into folders after this many (a root pointing at a huge tree).
const MAX_FOLDERS: usize = 5_000;
/// The largest `SKILL.md` read.
pub(crate) const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// A skill the model may load.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// The checked front matter (the body as read at discovery).
    pub file: SkillFile,
    /// The `SKILL.md` path.
    pub location: PathBuf,
    /// Whose folder it came from.
    pub scope: Scope,
}

impl Skill {
    /// The skill's name.
    pub fn name(&self) -> &str {
        &self.file.name
    }
    /// The folder holding `SKILL.md` (relative paths in the skill resolve against it).
    pub fn dir(&self) -> &Path {
        self.location.parent().unwrap_or(Path::new("."))
    }
}

/// A `SKILL.md` that is not offered, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct RefusedSkill {
    /// The file.
    pub location: PathBuf,
    /// Whose folder it came from.
    pub scope: Scope,
    /// What is wrong, for the person fixing it.
    pub reason: String,
}

/// A valid skill hidden by an earlier one of the same name.
#[derive(Debug, Clone, PartialEq)]
pub struct ShadowedSkill {
    /// The shared name.
    pub name: String,
    /// The file not used.
    pub location: PathBuf,
    /// The file used instead.
    pub by: PathBuf,
}

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkillCatalog {
    /// The skills offered, by name.
    pub skills: Vec<Skill>,
    /// Files not offered, with their reasons.
    pub refused: Vec<RefusedSkill>,
    /// Valid skills whose name an earlier root already gave.
    pub shadowed: Vec<ShadowedSkill>,
}

/// What the walk meets, with the metadata it already read (so the stamp needs no more).
enum Visit<'a> {
    /// A folder it looks into (or at).
    Folder(&'a std::fs::Metadata),
    /// A skill folder with its `SKILL.md`.
    Skill(&'a Path, PathBuf, Scope, &'a std::fs::Metadata),
}

/// Every folder under `roots` that may hold skills, in precedence order, up to three deep:
/// one `stat` per folder and one per `SKILL.md` looked for. The same walk serves discovery
/// and the stamp, so the stamp of what a load found equals the stamp computed before it.
/// Walks the roots `present` says exist (the stamp looked at each already: a missing one
/// is not opened a second time, at every model request).
fn walk(roots: &Roots, present: &[bool], visit: &mut dyn FnMut(Visit)) {
    let mut budget = MAX_FOLDERS;
    for (root, _) in roots.roots().iter().zip(present).filter(|(_, p)| **p) {
        walk_dir(&root.dir, root.scope, 1, &mut budget, visit);
    }
}

fn walk_dir(
    dir: &Path,
    scope: Scope,
    depth: usize,
    budget: &mut usize,
    visit: &mut dyn FnMut(Visit),
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut folders: Vec<(PathBuf, std::fs::Metadata)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name() != ".git" && e.file_name() != "node_modules")
        // Followed, so a symlinked skill folder counts.
        .filter_map(|e| std::fs::metadata(e.path()).ok().map(|m| (e.path(), m)))
        .filter(|(_, m)| m.is_dir())
        .collect();
    folders.sort_by(|a, b| a.0.cmp(&b.0));
    for (folder, meta) in folders {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        visit(Visit::Folder(&meta));
        let file = folder.join("SKILL.md");
        match std::fs::metadata(&file) {
            Ok(m) if m.is_file() => visit(Visit::Skill(&folder, file, scope, &m)),
            _ if depth < MAX_DEPTH => walk_dir(&folder, scope, depth + 1, budget, visit),
            _ => {}
        }
    }
}

impl SkillCatalog {
    /// Scans `roots` in order.
    pub fn discover(roots: &Roots) -> Self {
        Self::discover_stamped(roots).0
    }

    /// [`Self::discover`], and the [`Self::stamp`] of what it found, from the same walk.
    pub fn discover_stamped(roots: &Roots) -> (Self, u64) {
        let mut cat = Self::default();
        let mut stamp = Stamp::new(roots);
        let present = stamp.present.clone();
        walk(roots, &present, &mut |v| {
            stamp.visit(&v);
            if let Visit::Skill(folder, file, scope, _) = v {
                cat.add(folder, file, scope);
            }
        });
        cat.skills.sort_by(|a, b| a.file.name.cmp(&b.file.name));
        (cat, stamp.finish())
    }

    fn add(&mut self, folder: &Path, location: PathBuf, scope: Scope) {
        let name = folder.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let parsed = read_skill(&location, name);
        match parsed {
            Err(reason) => self.refused.push(RefusedSkill {
                location,
                scope,
                reason,
            }),
            Ok(file) => match self.skills.iter().find(|s| s.file.name == file.name) {
                Some(first) => self.shadowed.push(ShadowedSkill {
                    name: file.name,
                    location,
                    by: first.location.clone(),
                }),
                None => self.skills.push(Skill {
                    file,
                    location,
                    scope,
                }),
            },
        }
    }

    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.file.name == name)
    }

    /// Changes whenever a new scan of `roots` could find something else: the modification
    /// times of the roots, of every folder the scan looks into and of every `SKILL.md`
    /// (folders and files are only listed and looked at, not read).
    pub fn stamp(roots: &Roots) -> u64 {
        let mut stamp = Stamp::new(roots);
        let present = stamp.present.clone();
        walk(roots, &present, &mut |v| stamp.visit(&v));
        stamp.finish()
    }
}

/// The hash a stamp is: the roots' modification times, then every folder's and
/// `SKILL.md`'s the walk meets, in its order. `present`: which roots exist.
struct Stamp {
    hash: DefaultHasher,
    present: Vec<bool>,
}

impl Stamp {
    fn new(roots: &Roots) -> Self {
        let mut stamp = Self {
            hash: DefaultHasher::new(),
            present: Vec::new(),
        };
        for root in roots.roots() {
            let meta = std::fs::metadata(&root.dir).ok();
            stamp.present.push(meta.is_some());
            stamp.mark(meta.as_ref());
        }
        stamp
    }

    fn mark(&mut self, m: Option<&std::fs::Metadata>) {
        m.and_then(|m| Some((m.modified().ok()?, m.len())))
            .hash(&mut self.hash);
    }

    fn visit(&mut self, v: &Visit) {
        match v {
            Visit::Folder(m) | Visit::Skill(_, _, _, m) => self.mark(Some(m)),
        }
    }

    fn finish(self) -> u64 {
        self.hash.finish()
    }
}

/// Reads and checks one `SKILL.md` in folder `name`.
pub(crate) fn read_skill(location: &Path, name: &str) -> Result<SkillFile, String> {
    let size = std::fs::metadata(location)
        .map_err(|e| format!("cannot read it: {e}"))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(format!(
            "the file is {size} bytes; the limit is {MAX_FILE_BYTES}"
        ));
    }
    let text = std::fs::read_to_string(location).map_err(|e| format!("cannot read it: {e}"))?;
    parse_skill(&text, name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roots::Root;

    fn skill(dir: &Path, name: &str, description: &str) {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        std::fs::write(
            dir.join(name).join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n"),
        )
        .unwrap();
    }

    #[test]
    fn earlier_roots_win_nested_folders_count_and_bad_files_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("p/.claude/skills");
        let user = tmp.path().join("home/.claude/skills");
        skill(&project, "git-release", "project release");
        skill(&project.join("docs"), "pdf", "PDF files");
        skill(&user, "git-release", "user release");
        skill(&user, "notes", "take notes");
        std::fs::create_dir_all(project.join("Bad")).unwrap();
        std::fs::write(
            project.join("Bad/SKILL.md"),
            "---\nname: Bad\ndescription: d\n---\n",
        )
        .unwrap();
        let roots = Roots::new(
            vec![
                Root {
                    dir: project.clone(),
                    scope: Scope::Project,
                },
                Root {
                    dir: tmp.path().join("p/.agents/skills"),
                    scope: Scope::Project,
                },
                Root {
                    dir: user.clone(),
                    scope: Scope::User,
                },
            ],
            &tmp.path().join("p"),
            &tmp.path().join("home"),
        );
        let cat = SkillCatalog::discover(&roots);
        let names: Vec<(&str, &str, Scope)> = cat
            .skills
            .iter()
            .map(|s| (s.name(), s.file.description.as_str(), s.scope))
            .collect();
        assert_eq!(
            names,
            [
                ("git-release", "project release", Scope::Project),
                ("notes", "take notes", Scope::User),
                ("pdf", "PDF files", Scope::Project),
            ]
        );
        assert_eq!(cat.get("pdf").unwrap().dir(), project.join("docs/pdf"));
        assert_eq!(cat.refused.len(), 1);
        assert!(cat.refused[0].reason.contains("\"Bad\""));
        assert_eq!(cat.shadowed[0].location, user.join("git-release/SKILL.md"));
        assert_eq!(cat.shadowed[0].by, project.join("git-release/SKILL.md"));

        let before = SkillCatalog::stamp(&roots);
        assert_eq!(before, SkillCatalog::stamp(&roots));
        assert_eq!(
            SkillCatalog::discover_stamped(&roots).1,
            before,
            "one walk, one stamp"
        );
        // A new skill folder in a root that did not exist changes the stamp.
        skill(&tmp.path().join("p/.agents/skills"), "later", "added later");
        assert_ne!(before, SkillCatalog::stamp(&roots));
        let before = SkillCatalog::stamp(&roots);
        // So does an edit of a SKILL.md (its size changes).
        std::fs::write(
            user.join("notes/SKILL.md"),
            "---\nname: notes\ndescription: take notes, now longer\n---\n",
        )
        .unwrap();
        assert_ne!(before, SkillCatalog::stamp(&roots));
    }
}
