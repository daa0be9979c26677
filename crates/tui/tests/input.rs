//! Render tests of the input box and the `@path` completion popup: the whole screen is
//! drawn from an `AppState` driven through `handle_key` into ratatui's test backend, and
//! compared with a snapshot in `tests/snapshots/`; the terminal cursor position is checked
//! against the cell the input's cursor is on.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use podcode_tui::{Action, AppState, draw, handle_key};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Position;
use ratatui::style::Modifier;
use unicode_width::UnicodeWidthStr;

fn terminal(w: u16, h: u16, state: &AppState) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    terminal.draw(|f| draw(f, state)).expect("draw");
    terminal
}

fn screen(terminal: &Terminal<TestBackend>) -> String {
    let buf = terminal.backend().buffer();
    let mut out = String::new();
    // The status line (last row) shows the working directory; it is left out.
    for y in 0..buf.area.height - 1 {
        let mut line = String::new();
        let mut hidden = 0;
        for x in 0..buf.area.width {
            // Cells behind a wide char are drawn by it.
            if hidden > 0 {
                hidden -= 1;
                continue;
            }
            let symbol = buf[(x, y)].symbol();
            hidden = symbol.width().saturating_sub(1);
            line.push_str(symbol);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn cursor(terminal: &mut Terminal<TestBackend>) -> Position {
    terminal.get_cursor_position().expect("cursor")
}

fn base(cwd: &str) -> AppState {
    let mut s = AppState::new("scripted/test", "build", cwd, "ses_1");
    s.no_color = true;
    s
}

fn press(state: &mut AppState, code: KeyCode) -> Action {
    handle_key(state, KeyEvent::new(code, KeyModifiers::NONE))
}

fn type_text(state: &mut AppState, text: &str) {
    for c in text.chars() {
        press(state, KeyCode::Char(c));
    }
}

#[test]
fn input_box_wraps_wide_text_and_places_the_cursor() {
    let mut s = base("/work/repo");
    type_text(
        &mut s,
        "summarise 日本語のテキスト and 🦀 crabs, then explain the wrapping rules of this box",
    );
    handle_key(&mut s, KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    type_text(&mut s, "second line");
    // The first draw records the wrap width the box height depends on.
    let _ = terminal(80, 24, &s);
    let mut t = terminal(80, 24, &s);
    insta::assert_snapshot!(screen(&t));
    assert_eq!(cursor(&mut t), Position::new(12, 21));
    press(&mut s, KeyCode::Up);
    press(&mut s, KeyCode::Home);
    press(&mut s, KeyCode::End);
    let mut t = terminal(80, 24, &s);
    // End of the wrapped first line: "…of this box" ends on row 2 of the text.
    let pos = cursor(&mut t);
    assert_eq!(pos.y, 20);
    assert_eq!(
        t.backend().buffer()[(pos.x - 1, pos.y)].symbol(),
        "x",
        "the cursor sits just after the last char"
    );
}

#[test]
fn cursor_follows_wide_chars_in_a_large_terminal() {
    let mut s = base("/work/repo");
    type_text(&mut s, "界界🦀ab");
    press(&mut s, KeyCode::Left);
    press(&mut s, KeyCode::Left);
    let mut t = terminal(200, 60, &s);
    assert_eq!(cursor(&mut t), Position::new(7, 57));
    assert_eq!(t.backend().buffer()[(7, 57)].symbol(), "a");
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("src/parser")).expect("mkdir");
    for f in ["src/main.rs", "src/parser/mod.rs", "README.md", "notes.log"] {
        std::fs::write(root.join(f), "x").expect("write");
    }
    std::fs::write(root.join(".gitignore"), "*.log\n").expect("write");
    dir
}

/// Types `text` and waits (by polling, no timing) for the file index, then refreshes.
fn type_mention(state: &mut AppState, text: &str) {
    type_text(state, text);
    while state
        .input
        .file_index
        .as_ref()
        .is_some_and(|i| i.entries().is_none())
    {
        std::thread::yield_now();
    }
    press(state, KeyCode::Left);
    press(state, KeyCode::Right);
}

#[test]
fn mention_popup_lists_matches_above_the_input() {
    let dir = workspace();
    let cwd = dir.path().to_string_lossy().to_string();
    let mut s = base(&cwd);
    type_mention(&mut s, "explain @rs");
    press(&mut s, KeyCode::Down);
    let t = terminal(80, 24, &s);
    insta::assert_snapshot!(screen(&t));
    // The selected row is drawn in reverse video under no_color.
    let buf = t.backend().buffer();
    let reversed: Vec<u16> = (0..23)
        .filter(|&y| buf[(1, y)].modifier.contains(Modifier::REVERSED))
        .collect();
    assert_eq!(reversed, [17]);

    assert_eq!(press(&mut s, KeyCode::Tab), Action::None);
    assert!(s.input.buffer.text().starts_with("explain @src/"));
    assert!(s.input.buffer.text().ends_with(".rs "));
    assert!(s.input.completion.is_none());
    let t = terminal(80, 24, &s);
    assert!(!screen(&t).contains("@ files"));
}

#[test]
fn mention_popup_is_clipped_to_the_space_above_the_input() {
    let dir = workspace();
    let cwd = dir.path().to_string_lossy().to_string();
    let mut s = base(&cwd);
    type_mention(&mut s, "@");
    let t = terminal(40, 8, &s);
    insta::assert_snapshot!(screen(&t));
    let t = terminal(40, 5, &s);
    assert!(!screen(&t).contains("@ files"));
}

#[test]
fn ignored_files_are_not_offered_and_enter_attaches() {
    let dir = workspace();
    let cwd = dir.path().to_string_lossy().to_string();
    let mut s = base(&cwd);
    type_mention(&mut s, "@notes");
    let offered = s.input.completion.as_ref().map(|c| c.matches.clone());
    assert_eq!(offered, Some(vec![]));
    press(&mut s, KeyCode::Esc);
    for _ in 0.."@notes".len() {
        press(&mut s, KeyCode::Backspace);
    }
    type_mention(&mut s, "read @READ");
    press(&mut s, KeyCode::Enter);
    assert_eq!(s.input.buffer.text(), "read @README.md ");
    match press(&mut s, KeyCode::Enter) {
        Action::Submit { text, files } => {
            assert_eq!(text, "read @README.md");
            let readme = dir.path().join("README.md").to_string_lossy().to_string();
            assert_eq!(files, vec![readme]);
        }
        other => panic!("expected a submit, got {other:?}"),
    }
}
