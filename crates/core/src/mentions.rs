//! `@path` file mentions in a prompt, for every front end that attaches them (the TUI's
//! prompt box, the web page's `"mentions": true`): each `@word` at the start of the text or
//! after whitespace (`@"…"` for a path with spaces) that names a file, relative to the
//! session's directory, becomes an attachment (the front end reads it through the `read`
//! tool and its permission rules). Sentence punctuation after a mention (`@a.rs,`) is
//! dropped when the word with it is not a file; words that name no file (an e-mail address,
//! `@someone`, a folder) stay plain text.

use std::path::{Component, Path, PathBuf};

/// The files `text` mentions, as absolute paths, each once, in the order mentioned.
pub fn mentioned_files(text: &str, dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for word in mention_words(text) {
        if let Some(path) = resolve_file(&word, dir)
            && !found.contains(&path)
        {
            found.push(path);
        }
    }
    found
}

/// The path text of every `@` word.
fn mention_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for (i, _) in text.match_indices('@') {
        if !text[..i]
            .chars()
            .next_back()
            .is_none_or(char::is_whitespace)
        {
            continue;
        }
        let rest = &text[i + 1..];
        if let Some(quoted) = rest.strip_prefix('"') {
            if let Some(end) = quoted
                .find(['"', '\n'])
                .filter(|&e| quoted[e..].starts_with('"'))
            {
                words.push(quoted[..end].to_string());
            }
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            words.push(rest[..end].to_string());
        }
    }
    words
}

/// `raw` as an absolute, lexically normalised path when it names a file.
fn resolve_file(raw: &str, dir: &Path) -> Option<String> {
    let mut candidate = raw;
    loop {
        if !candidate.is_empty() {
            let joined = dir.join(candidate);
            if joined.is_file() {
                return Some(normalise(&joined).to_string_lossy().into_owned());
            }
        }
        candidate = candidate.strip_suffix([',', '.', ';', ':', '!', '?', ')', '\'', '`'])?;
    }
}

/// `a/./b/../c` as `a/c`, without touching the file system (links stay as written); a
/// `..` with nothing left to fold stays.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(part);
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::mentioned_files;

    #[test]
    fn mentions_of_files_become_paths_and_other_words_stay_text() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "").unwrap();
        std::fs::write(dir.path().join("with space.txt"), "").unwrap();
        let abs = |rel: &str| dir.path().join(rel).to_string_lossy().into_owned();
        assert_eq!(
            mentioned_files(
                "see @src/a.rs, @\"with space.txt\" and @./src/../src/a.rs; not@src/a.rs, @missing.rs or mail@host",
                dir.path()
            ),
            vec![abs("src/a.rs"), abs("with space.txt")]
        );
        assert!(mentioned_files("@src", dir.path()).is_empty(), "a folder");
    }
}
