//! Unit tests of mention detection, completion keys and `attached_files`.

use std::sync::Arc;

use crossterm::event::KeyModifiers;

use super::*;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn mention(marked: &str) -> Option<(String, String)> {
    let cursor = marked.find('|').expect("cursor mark");
    let text = marked.replacen('|', "", 1);
    mention_at(&text, cursor).map(|(r, q)| (text[r].to_string(), q))
}

#[test]
fn mentions_start_at_a_word_start() {
    let m = |w: &str, q: &str| Some((w.to_string(), q.to_string()));
    assert_eq!(mention("see @src/ma|"), m("@src/ma", "src/ma"));
    assert_eq!(mention("@|"), m("@", ""));
    assert_eq!(mention("x\n@ab|c d"), m("@abc", "ab"));
    assert_eq!(mention("see @\"my fi|"), m("@\"my fi", "my fi"));
    assert_eq!(
        mention("@\"my fi|le.txt\" x"),
        m("@\"my file.txt\"", "my fi")
    );
    assert_eq!(mention("mail a@b.c|"), None);
    assert_eq!(mention("@done now|"), None);
    assert_eq!(mention("@\"closed\" |"), None);
    assert_eq!(mention("plain|"), None);
}

/// A state whose index is already built over `entries`.
fn state_with(entries: &[&str], text: &str) -> Input {
    let index = FileIndex::default();
    index.fill(entries.iter().map(|e| e.to_string()).collect(), false);
    let mut state = Input {
        file_index: Some(Arc::new(index)),
        ..Default::default()
    };
    state.buffer.set(text);
    refresh(&mut state, "");
    state
}

#[test]
fn refresh_opens_and_closes_the_popup() {
    let mut s = state_with(&["src/main.rs", "src/lib.rs", "README.md"], "look at @main");
    let c = s.completion.clone().expect("open");
    assert_eq!(c.matches, ["src/main.rs"]);
    assert!(!c.indexing);
    s.buffer.insert_char(' ');
    refresh(&mut s, "");
    assert_eq!(s.completion, None);
}

#[test]
fn the_popup_waits_for_the_index() {
    let mut s = Input {
        file_index: Some(Arc::new(FileIndex::default())),
        ..Default::default()
    };
    s.buffer.set("@x");
    refresh(&mut s, "");
    assert!(s.completion.as_ref().is_some_and(|c| c.indexing));
    if let Some(index) = &s.file_index {
        index.fill(vec!["x.rs".into()], false);
    }
    poll(&mut s, "");
    assert_eq!(s.completion.map(|c| c.matches), Some(vec!["x.rs".into()]));
}

#[test]
fn keys_select_accept_and_close() {
    let mut s = state_with(&["a1.rs", "a2.rs", "a3.rs"], "@a");
    assert_eq!(s.completion.as_ref().map(|c| c.matches.len()), Some(3));
    assert!(completion_key(&mut s, key(KeyCode::Down), ""));
    assert!(completion_key(&mut s, key(KeyCode::Down), ""));
    let ctrl_p = KeyEvent::new(KeyCode::Char('p'), KeyModifiers::CONTROL);
    assert!(completion_key(&mut s, ctrl_p, ""));
    assert_eq!(s.completion.as_ref().map(|c| c.selected), Some(1));
    // Up from the first row wraps to the last.
    let mut w = state_with(&["a1.rs", "a2.rs"], "@a");
    completion_key(&mut w, key(KeyCode::Up), "");
    assert_eq!(w.completion.as_ref().map(|c| c.selected), Some(1));
    // Other keys pass through.
    assert!(!completion_key(&mut s, key(KeyCode::Char('x')), ""));
    let picked = s.completion.as_ref().map(|c| c.matches[1].clone());
    assert!(completion_key(&mut s, key(KeyCode::Tab), ""));
    assert_eq!(
        Some(s.buffer.text().to_string()),
        picked.map(|p| format!("@{p} "))
    );
    assert_eq!(s.completion, None);
    let mut e = state_with(&["a1.rs"], "@a");
    assert!(completion_key(&mut e, key(KeyCode::Esc), ""));
    assert_eq!(e.completion, None);
    assert!(!completion_key(&mut e, key(KeyCode::Esc), ""));
}

#[test]
fn accepting_replaces_the_whole_word() {
    let mut s = state_with(&["src/main.rs"], "read @mai and more");
    s.buffer.set_cursor(9);
    refresh(&mut s, "");
    completion_key(&mut s, key(KeyCode::Enter), "");
    assert_eq!(s.buffer.text(), "read @src/main.rs and more");
    assert_eq!(s.buffer.cursor(), "read @src/main.rs ".len());
}

#[test]
fn accepting_a_directory_keeps_completing_inside_it() {
    let mut s = state_with(&["src/", "src/main.rs"], "@sr");
    completion_key(&mut s, key(KeyCode::Enter), "");
    assert_eq!(s.buffer.text(), "@src/");
    let c = s.completion.clone().expect("still open");
    assert_eq!(c.query, "src/");
    assert_eq!(c.matches[0], "src/");
}

#[test]
fn paths_with_spaces_are_quoted() {
    let mut s = state_with(&["docs/my notes.md", "my dir/"], "@notes");
    completion_key(&mut s, key(KeyCode::Tab), "");
    assert_eq!(s.buffer.text(), "@\"docs/my notes.md\" ");
    let mut d = state_with(&["my dir/"], "@mydir");
    completion_key(&mut d, key(KeyCode::Tab), "");
    assert_eq!(d.buffer.text(), "@\"my dir/");
    assert!(d.completion.is_some_and(|c| c.query == "my dir/"));
}

#[test]
fn enter_without_matches_submits() {
    let mut s = state_with(&["a.rs"], "@zzz");
    assert!(!completion_key(&mut s, key(KeyCode::Enter), ""));
    assert_eq!(s.completion, None);
}

#[test]
fn attached_files_are_existing_files_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::write(root.join("src/main.rs"), "fn main() {}").expect("write");
    std::fs::write(root.join("my file.txt"), "x").expect("write");
    let outside = tempfile::NamedTempFile::new().expect("temp file");
    let cwd = root.to_string_lossy().to_string();
    let abs = |p: &str| root.join(p).to_string_lossy().to_string();
    let prompt = format!(
        "fix @src/main.rs, mail a@b.c, ask @someone, see @src and @\"my file.txt\"\n\
         again @./src/main.rs and @{}",
        outside.path().display()
    );
    assert_eq!(
        attached_files(&prompt, &cwd),
        [
            abs("src/main.rs"),
            abs("my file.txt"),
            outside.path().to_string_lossy().to_string()
        ]
    );
    assert_eq!(attached_files("no mentions", &cwd), Vec::<String>::new());
}

#[test]
fn the_real_index_hides_ignored_files_from_completion() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join(".gitignore"), "*.secret\n").expect("write");
    std::fs::write(dir.path().join("keys.secret"), "x").expect("write");
    std::fs::write(dir.path().join("keys.rs"), "x").expect("write");
    let cwd = dir.path().to_string_lossy().to_string();
    let mut s = Input::default();
    s.buffer.set("@keys");
    refresh(&mut s, &cwd);
    while s.file_index.as_ref().is_some_and(|i| i.entries().is_none()) {
        std::thread::yield_now();
    }
    poll(&mut s, &cwd);
    assert_eq!(
        s.completion.map(|c| c.matches),
        Some(vec!["keys.rs".into()])
    );
}

#[test]
fn a_stale_popup_is_refreshed_before_a_key_acts() {
    let mut s = state_with(&["src/main.rs"], "@main");
    // An edit that did not call `refresh`: the word is gone.
    s.buffer.insert_char(' ');
    assert!(!completion_key(&mut s, key(KeyCode::Tab), ""));
    assert_eq!(s.buffer.text(), "@main ");
    assert_eq!(s.completion, None);
}
