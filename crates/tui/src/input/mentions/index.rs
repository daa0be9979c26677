//! The workspace file index behind `@path` completion: every file and directory under the
//! working directory that git would not ignore (`.gitignore`, `.ignore` and global excludes
//! apply, `.git` is skipped), as relative `/`-separated paths with directories ending in
//! `/`. It is built once, on a background thread, so typing never waits for the walk; until
//! it is ready `entries` returns `None` and the popup says "indexing…". `best_matches`
//! ranks entries against a query with `nucleo-matcher`.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization};
use nucleo_matcher::{Config, Matcher, Utf32Str};

/// The most entries indexed; a bigger tree is cut off (and `truncated` says so).
pub const MAX_ENTRIES: usize = 200_000;

/// Relative paths of the workspace's files and directories.
#[derive(Debug, Default)]
pub struct FileIndex {
    entries: OnceLock<Vec<String>>,
    truncated: OnceLock<bool>,
}

impl FileIndex {
    /// Starts indexing `root` on a background thread and returns the (not yet ready) index.
    /// An empty root gives an empty index at once.
    pub fn spawn(root: &str) -> Arc<Self> {
        let index = Arc::new(Self::default());
        if root.is_empty() {
            index.fill(Vec::new(), false);
            return index;
        }
        let (root, filling) = (root.to_string(), index.clone());
        let spawned = std::thread::Builder::new()
            .name("podcode-file-index".into())
            .spawn(move || {
                let (entries, truncated) = walk(Path::new(&root), MAX_ENTRIES);
                filling.fill(entries, truncated);
            });
        if spawned.is_err() {
            index.fill(Vec::new(), false);
        }
        index
    }

    /// Indexes `root` on this thread, keeping at most `cap` entries.
    pub fn build(root: &Path, cap: usize) -> Self {
        let index = Self::default();
        let (entries, truncated) = walk(root, cap);
        index.fill(entries, truncated);
        index
    }

    pub(crate) fn fill(&self, entries: Vec<String>, truncated: bool) {
        let _ = self.truncated.set(truncated);
        let _ = self.entries.set(entries);
    }

    /// The entries, once the walk has finished.
    pub fn entries(&self) -> Option<&[String]> {
        self.entries.get().map(Vec::as_slice)
    }

    /// Whether the walk stopped at the entry cap.
    pub fn truncated(&self) -> bool {
        self.truncated.get().copied().unwrap_or(false)
    }
}

fn walk(root: &Path, cap: usize) -> (Vec<String>, bool) {
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let mut entries = Vec::new();
    for entry in walker.flatten() {
        if entry.depth() == 0 {
            continue;
        }
        if entries.len() >= cap {
            return (entries, true);
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let mut path = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            path.push('/');
        }
        entries.push(path);
    }
    (entries, false)
}

/// The `limit` entries matching `query` best (fuzzy, smart case), ties to the shorter path.
/// An empty query lists the shortest paths.
pub fn best_matches(entries: &[String], query: &str, limit: usize) -> Vec<String> {
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    let atom = Atom::new(
        query,
        CaseMatching::Smart,
        Normalization::Smart,
        AtomKind::Fuzzy,
        false,
    );
    let mut buf = Vec::new();
    let mut scored: Vec<(u16, &String)> = entries
        .iter()
        .filter_map(|e| {
            let score = atom.score(Utf32Str::new(e, &mut buf), &mut matcher)?;
            Some((score, e))
        })
        .collect();
    let order = |a: &(u16, &String), b: &(u16, &String)| {
        b.0.cmp(&a.0)
            .then(a.1.len().cmp(&b.1.len()))
            .then(a.1.cmp(b.1))
    };
    if scored.len() > limit && limit > 0 {
        scored.select_nth_unstable_by(limit - 1, order);
        scored.truncate(limit);
    }
    scored.sort_unstable_by(order);
    scored
        .into_iter()
        .take(limit)
        .map(|(_, e)| e.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for d in ["src/parser", ".git", "target", ".github"] {
            std::fs::create_dir_all(root.join(d)).expect("mkdir");
        }
        for f in [
            "src/main.rs",
            "src/parser/lexer.rs",
            "README.md",
            "target/out.bin",
            ".git/HEAD",
            ".github/ci.yml",
            "secret.log",
        ] {
            std::fs::write(root.join(f), "x").expect("write");
        }
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n").expect("write");
        dir
    }

    #[test]
    fn the_index_skips_ignored_files_and_git() {
        let dir = tree();
        let index = FileIndex::build(dir.path(), MAX_ENTRIES);
        let mut entries = index.entries().expect("built").to_vec();
        entries.sort();
        assert_eq!(
            entries,
            [
                ".github/",
                ".github/ci.yml",
                ".gitignore",
                "README.md",
                "src/",
                "src/main.rs",
                "src/parser/",
                "src/parser/lexer.rs",
            ]
        );
        assert!(!index.truncated());
    }

    #[test]
    fn the_index_is_capped() {
        let dir = tree();
        let index = FileIndex::build(dir.path(), 3);
        assert_eq!(index.entries().map(<[String]>::len), Some(3));
        assert!(index.truncated());
    }

    #[test]
    fn a_spawned_index_becomes_ready() {
        let dir = tree();
        let index = FileIndex::spawn(&dir.path().to_string_lossy());
        // Waits on the walk by polling; no timing assertion.
        while index.entries().is_none() {
            std::thread::yield_now();
        }
        assert!(index.entries().is_some_and(|e| e.len() == 8));
        assert_eq!(FileIndex::spawn("").entries(), Some(&[][..]));
    }

    #[test]
    fn fuzzy_matches_rank_best_first_and_prefer_short_paths() {
        let entries: Vec<String> = [
            "src/parser/lexer.rs",
            "src/main.rs",
            "docs/main.rs.md",
            "tests/lexer_tests.rs",
            "Cargo.toml",
        ]
        .map(String::from)
        .to_vec();
        let m = best_matches(&entries, "lexer", 10);
        assert_eq!(m.len(), 2);
        assert!(m.contains(&"src/parser/lexer.rs".to_string()));
        assert_eq!(best_matches(&entries, "main", 10)[0], "src/main.rs");
        assert_eq!(best_matches(&entries, "zzz", 10), Vec::<String>::new());
        assert_eq!(best_matches(&entries, "", 2), ["Cargo.toml", "src/main.rs"]);
        assert_eq!(best_matches(&entries, "srcmain", 10), ["src/main.rs"]);
    }
}
