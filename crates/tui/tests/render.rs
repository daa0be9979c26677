//! Render tests: each view drawn from a hand-built `AppState` into ratatui's test backend
//! (80x24 unless a test says otherwise) and compared with a snapshot file in
//! `tests/snapshots/`; colours, which snapshots do not show, are checked on buffer cells.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use podcode_protocol::{
    ChangeOp, Event, PermissionRequest, RecordedChange, StepUsage, ToolResult, TurnEnd, TurnSummary,
};
mod common;

use common::screen_sized;
use podcode_tui::{AppState, ChangeItem, PermissionModal, Screen, draw};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// A modal on screen long enough that its keys answer.
fn read_modal(tool: &str, call: &str, request: PermissionRequest) -> PermissionModal {
    let m = PermissionModal::new(tool, call, request);
    m.shown(std::time::Instant::now() - podcode_tui::KEY_GRACE);
    m
}

fn screen(state: &AppState) -> String {
    screen_sized(state, 80, 24)
}

fn base() -> AppState {
    let mut s = AppState::new("scripted/test", "build", "/work/repo", "ses_1");
    s.no_color = true;
    s
}

/// The user sends `text`, and the session reports it (as the engine does, first thing).
fn prompt(s: &mut AppState, text: &str) {
    s.push_user(text);
    s.apply_event(&Event::UserMessage {
        session_id: "ses_1".into(),
        message_id: format!("msg_user_{}", text.len()),
        text: text.into(),
        files: Vec::new(),
    });
}

/// The model asks for a call, and it starts.
fn started(s: &mut AppState, call: &str, tool: &str) {
    s.apply_event(&Event::ToolRequested {
        message_id: "msg_a".into(),
        call_id: call.into(),
        tool: tool.into(),
    });
    s.apply_event(&Event::ToolStarted {
        session_id: "ses_1".into(),
        call_id: call.into(),
        tool: tool.into(),
        args: serde_json::json!({}),
    });
}

#[test]
fn empty_session() {
    insta::assert_snapshot!(screen(&base()));
}

#[test]
fn streaming_text() {
    let mut s = base();
    prompt(&mut s, "explain the parser");
    for chunk in [
        "The parser ",
        "reads tokens.\n\n```rust\nfn parse() {}\n```\n",
        "It is ",
    ] {
        s.apply_event(&Event::TextDelta {
            message_id: "m1".into(),
            text: chunk.into(),
        });
    }
    s.apply_event(&Event::StepFinished {
        session_id: "ses_1".into(),
        message_id: "m1".into(),
        step: 1,
        status: "completed".into(),
        finish_reason: None,
        usage: StepUsage {
            input_tokens: 1200,
            output_tokens: 45,
            ..Default::default()
        },
    });
    insta::assert_snapshot!(screen(&s));
}

#[test]
fn tool_cards_running_failed_denied() {
    let mut s = base();
    prompt(&mut s, "build it");
    started(&mut s, "c1", "bash");
    s.apply_event(&Event::ToolMetadata {
        call_id: "c1".into(),
        title: Some("cargo build".into()),
        metadata: None,
    });
    s.tick(1500);
    started(&mut s, "c2", "read");
    s.apply_event(&Event::ToolFailed {
        call_id: "c2".into(),
        tool: "read".into(),
        error: "File not found: src/nope.rs".into(),
        duration_ms: 3,
        state: podcode_protocol::ToolCallState::Failed,
    });
    started(&mut s, "c3", "write");
    s.apply_event(&Event::ToolFailed {
        call_id: "c3".into(),
        tool: "write".into(),
        error: "The user rejected the edit permission for `a.rs`. Do not retry this call.".into(),
        duration_ms: 2100,
        state: podcode_protocol::ToolCallState::Denied,
    });
    started(&mut s, "c4", "list");
    s.apply_event(&Event::ToolFinished {
        call_id: "c4".into(),
        tool: "list".into(),
        result: ToolResult {
            title: "src".into(),
            output: "a.rs\nb.rs\nc.rs\nd.rs\ne.rs\nf.rs".into(),
            ..Default::default()
        },
        spill_path: None,
        duration_ms: 12,
    });
    // The running card is the first; it stays "running" while later ones end.
    s.tick(0);
    insta::assert_snapshot!(screen(&s));
}

#[test]
fn permission_modal() {
    let mut s = base();
    prompt(&mut s, "fix the typo");
    started(&mut s, "c1", "edit");
    s.modal = Some(read_modal(
        "edit",
        "c1",
        PermissionRequest {
            permission: "edit".into(),
            patterns: vec!["src/main.rs".into()],
            always: vec!["src/main.rs".into()],
            metadata: serde_json::json!({
                "diff": "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1 +1 @@\n-fn mian() {}\n+fn main() {}\n"
            }),
        },
    ));
    insta::assert_snapshot!(screen(&s));
    s.modal.as_mut().unwrap().feedback = Some("use the other file".into());
    insta::assert_snapshot!("permission_modal_feedback", screen(&s));
}

fn big_write() -> PermissionRequest {
    let diff: String =
        std::iter::once("--- a/big.txt\n+++ b/big.txt\n@@ -0,0 +1,400 @@\n".to_string())
            .chain((1..=400).map(|i| format!("+row {i}\n")))
            .collect();
    PermissionRequest {
        permission: "edit".into(),
        patterns: vec!["big.txt".into()],
        always: vec!["big.txt".into()],
        metadata: serde_json::json!({ "path": "big.txt", "diff": diff }),
    }
}

fn press(s: &mut AppState, code: crossterm::event::KeyCode) -> podcode_tui::Action {
    let key = crossterm::event::KeyEvent::new(code, crossterm::event::KeyModifiers::NONE);
    podcode_tui::handle_key(s, key)
}

#[test]
fn a_long_diff_scrolls_in_the_modal_under_a_header_and_answers_that_stay() {
    use crossterm::event::KeyCode;
    let mut s = base();
    prompt(&mut s, "write the table");
    started(&mut s, "c1", "write");
    s.modal = Some(read_modal("write", "c1", big_write()));
    let first = screen(&s);
    for seen in [
        "write asks for edit: big.txt",
        "+row 1",
        "of 402",
        "[y] allow once",
        "[esc]",
    ] {
        assert!(first.contains(seen), "{seen:?} not on screen:\n{first}");
    }
    assert!(!first.contains("+row 400"), "{first}");
    assert!(!first.contains("more lines"), "nothing is cut:\n{first}");
    press(&mut s, KeyCode::PageDown);
    let paged = screen(&s);
    assert!(!paged.contains("+row 1 "), "{paged}");
    assert!(paged.contains("write asks for edit: big.txt"), "{paged}");
    press(&mut s, KeyCode::End);
    let end = screen(&s);
    for seen in [
        "+row 400",
        "of 402",
        "write asks for edit: big.txt",
        "[y] allow once",
    ] {
        assert!(end.contains(seen), "{seen:?} not on screen:\n{end}");
    }
    press(&mut s, KeyCode::Home);
    assert!(screen(&s).contains("lines 1–"), "{}", screen(&s));
}

#[test]
fn in_a_short_terminal_the_modal_keeps_its_header_and_every_answer() {
    let mut s = base();
    prompt(&mut s, "write the table");
    started(&mut s, "c1", "write");
    s.modal = Some(read_modal("write", "c1", big_write()));
    let tiny = common::screen_sized(&s, 40, 10);
    for seen in [
        "write asks for edit:",
        // The change itself, not only the diff's header lines.
        "+row 1",
        "[y] once",
        "[a] always",
        "[n] reject",
        "[esc] stop",
    ] {
        assert!(tiny.contains(seen), "{seen:?} not on screen:\n{tiny}");
    }
}

#[test]
fn a_key_pressed_as_the_modal_appears_stays_with_the_screen_beneath() {
    use crossterm::event::KeyCode;
    let mut s = base();
    prompt(&mut s, "write the table");
    started(&mut s, "c1", "write");
    s.modal = Some(PermissionModal::new("write", "c1", big_write()));
    let fresh = screen(&s);
    assert!(fresh.contains("its keys answer in a moment"), "{fresh}");
    assert!(!fresh.contains("allow once"), "{fresh}");
    // Typing goes on in the input box; nothing is answered.
    assert_eq!(press(&mut s, KeyCode::Char('y')), podcode_tui::Action::None);
    assert_eq!(press(&mut s, KeyCode::Char('a')), podcode_tui::Action::None);
    assert_eq!(s.input.buffer.text(), "ya");
    assert!(s.modal.is_some());
    // Esc means what it meant beneath: with a turn running, stop it — never "reject".
    s.status.busy = true;
    assert_eq!(press(&mut s, KeyCode::Esc), podcode_tui::Action::Abort);
    // Once read, the modal answers.
    s.modal
        .as_ref()
        .unwrap()
        .shown(std::time::Instant::now() - podcode_tui::KEY_GRACE);
    assert_eq!(
        press(&mut s, KeyCode::Char('y')),
        podcode_tui::Action::Answer(podcode_protocol::PermissionReply::Once)
    );
}

/// Two finished calls whose outputs are longer than a collapsed card shows.
fn two_long_cards() -> AppState {
    let mut s = base();
    prompt(&mut s, "look around");
    for (call, name) in [("c1", "old"), ("c2", "new")] {
        started(&mut s, call, "bash");
        let output: String = (1..=9).map(|i| format!("{name} line {i}\n")).collect();
        s.apply_event(&Event::ToolFinished {
            call_id: call.into(),
            tool: "bash".into(),
            result: ToolResult {
                title: format!("print {name}"),
                output,
                ..Default::default()
            },
            spill_path: None,
            duration_ms: 3,
        });
    }
    s
}

#[test]
fn any_card_expands_from_the_keyboard_not_just_the_newest() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut s = two_long_cards();
    let alt_up = KeyEvent::new(KeyCode::Up, KeyModifiers::ALT);
    let ctrl_o = KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL);
    podcode_tui::handle_key(&mut s, alt_up);
    podcode_tui::handle_key(&mut s, alt_up);
    assert_eq!(s.transcript.selected.as_deref(), Some("c1"));
    podcode_tui::handle_key(&mut s, ctrl_o);
    let shown = screen_sized(&s, 80, 40);
    assert!(
        shown.contains("old line 9"),
        "the older card expanded:\n{shown}"
    );
    assert!(
        !shown.contains("new line 9"),
        "the newer one did not:\n{shown}"
    );
    // Sending a prompt ends the selection: ctrl-o is about the newest card again.
    s.push_user("next");
    podcode_tui::handle_key(&mut s, ctrl_o);
    assert!(screen_sized(&s, 80, 40).contains("new line 9"));
}

#[test]
fn a_click_expands_the_card_under_it_and_the_wheel_scrolls() {
    use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let mut s = two_long_cards();
    let shown = screen_sized(&s, 80, 40);
    let row = shown
        .lines()
        .position(|l| l.contains("print old"))
        .expect("the older card is on screen") as u16;
    let mouse = |kind, row| MouseEvent {
        kind,
        column: 4,
        row,
        modifiers: KeyModifiers::NONE,
    };
    assert!(podcode_tui::handle_mouse(
        &mut s,
        mouse(MouseEventKind::Down(MouseButton::Left), row + 1)
    ));
    let shown = screen_sized(&s, 80, 40);
    assert!(shown.contains("old line 9"), "{shown}");
    assert!(!shown.contains("new line 9"), "{shown}");
    // A click on the prompt above the cards hits no card.
    let prompt_row = shown
        .lines()
        .position(|l| l.contains("look around"))
        .unwrap() as u16;
    assert!(!podcode_tui::handle_mouse(
        &mut s,
        mouse(MouseEventKind::Down(MouseButton::Left), prompt_row)
    ));
    assert!(podcode_tui::handle_mouse(
        &mut s,
        mouse(MouseEventKind::ScrollUp, 5)
    ));
    assert_eq!(s.transcript.scroll, 3);
    podcode_tui::handle_mouse(&mut s, mouse(MouseEventKind::ScrollDown, 5));
    assert_eq!(s.transcript.scroll, 0);
}

#[test]
fn the_wheel_scrolls_a_long_permission_modal() {
    use crossterm::event::{KeyModifiers, MouseEvent, MouseEventKind};
    let mut s = base();
    prompt(&mut s, "write the table");
    started(&mut s, "c1", "write");
    s.modal = Some(read_modal("write", "c1", big_write()));
    let first = screen(&s);
    assert!(first.contains("lines 1–"), "{first}");
    let wheel = MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: 10,
        row: 10,
        modifiers: KeyModifiers::NONE,
    };
    podcode_tui::handle_mouse(&mut s, wheel);
    assert!(screen(&s).contains("lines 4–"), "{}", screen(&s));
}

#[test]
fn a_finished_task_card_shows_the_sub_agents_answer_not_the_models_wrapper() {
    let mut s = base();
    prompt(&mut s, "count the notes");
    started(&mut s, "t1", "task");
    s.apply_event(&Event::ToolFinished {
        call_id: "t1".into(),
        tool: "task".into(),
        result: ToolResult {
            title: "Count notes".into(),
            output: "task_id: ses_child (pass it as task_id to continue this sub-agent's session)\n\n<task_result>\nFound 3 notes.\n</task_result>\nThe sub-agent changed no files.\n".into(),
            ..Default::default()
        },
        spill_path: None,
        duration_ms: 900,
    });
    let shown = screen(&s);
    for seen in ["Found 3 notes.", "The sub-agent changed no files."] {
        assert!(shown.contains(seen), "{seen:?} not on screen:\n{shown}");
    }
    for gone in ["task_id", "task_result", "ses_child"] {
        assert!(!shown.contains(gone), "{gone:?} on screen:\n{shown}");
    }
}

#[test]
fn card_output_wraps_between_words() {
    let mut s = base();
    prompt(&mut s, "explain");
    started(&mut s, "c1", "bash");
    s.apply_event(&Event::ToolFinished {
        call_id: "c1".into(),
        tool: "bash".into(),
        result: ToolResult {
            title: "words".into(),
            output: "alpha beta gamma delta epsilon zeta theta iota kappa lambda".into(),
            ..Default::default()
        },
        spill_path: None,
        duration_ms: 3,
    });
    let shown = screen_sized(&s, 30, 20);
    let words: Vec<&str> = shown
        .lines()
        .filter_map(|l| l.strip_prefix("  │ "))
        .flat_map(str::split_whitespace)
        .collect();
    assert_eq!(
        words,
        [
            "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "iota", "kappa",
            "lambda"
        ],
        "{shown}"
    );
}

#[test]
fn a_card_whose_prompt_is_open_says_it_waits_for_the_user_and_its_clock_stops() {
    let mut s = base();
    prompt(&mut s, "write it");
    started(&mut s, "c1", "write");
    s.transcript.mark_waiting("c1", true);
    s.tick(4000);
    let shown = screen(&s);
    assert!(
        shown.contains("? write · waiting for your answer · 0ms"),
        "{shown}"
    );
    s.transcript.mark_waiting("c1", false);
    s.tick(100);
    assert!(
        screen(&s).contains("write · running · 100ms"),
        "{}",
        screen(&s)
    );
}

fn change(id: &str, call: &str, file: &str, old: &str, new: &str) -> ChangeItem {
    ChangeItem {
        change: RecordedChange {
            id: id.into(),
            session_id: "ses_1".into(),
            call_id: Some(call.into()),
            file: format!("/work/repo/{file}"),
            op: ChangeOp::Modify,
            old_content: Some(old.into()),
            new_content: Some(new.into()),
            time: 0,
            reverts: None,
        },
        turn: Some(("msg_1".into(), "fix the typo in main".into())),
        call_label: format!("write — {file}"),
        reverted: false,
        display: file.into(),
        diff: podcode_tools::unified_diff(file, old, new),
    }
}

fn changes_state() -> AppState {
    let mut s = base();
    s.screen = Screen::Changes;
    s.changes.changes = vec![
        change(
            "chg_1",
            "call_a",
            "src/main.rs",
            "fn mian() {}\n",
            "fn main() {}\n",
        ),
        change("chg_2", "call_a", "README.md", "# Old\n", "# New\ntext\n"),
        change("chg_3", "call_b", "notes.txt", "a\n", "b\n"),
    ];
    s.changes.changes[2].reverted = true;
    s
}

#[test]
fn changes_view_with_a_diff() {
    insta::assert_snapshot!(screen(&changes_state()));
}

#[test]
fn revert_conflict() {
    let mut s = changes_state();
    s.changes.conflict = Some((
        podcode_tui::RevertScope::Change,
        "/work/repo/src/main.rs changed since Podcode wrote it:\n--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1 +1 @@\n-fn main() {}\n+fn main() { println!(\"edited by hand\"); }\n".into(),
    ));
    s.changes.message =
        Some("revert refused: the file changed since (f forces, esc keeps it)".into());
    insta::assert_snapshot!(screen(&s));
}

#[test]
fn turn_summary_and_long_transcript_follow_the_end() {
    let mut s = base();
    for i in 0..10_000 {
        s.transcript
            .entries
            .push(podcode_tui::Entry::Notice(format!("line {i}")));
    }
    s.apply_event(&Event::TurnFinished {
        session_id: "ses_1".into(),
        summary: TurnSummary {
            session_id: "ses_1".into(),
            end: TurnEnd::Answered,
            steps: 2,
            tool_calls: 1,
            usage: StepUsage::default(),
            changes: vec![],
            files: vec!["a.rs".into()],
            error: None,
        },
    });
    let text = screen(&s);
    assert!(text.contains("line 9999"), "{text}");
    assert!(text.contains("── done · 2\u{a0}steps"), "{text}");
}

#[test]
fn no_color_draws_without_colours() {
    let mut s = base();
    prompt(&mut s, "hi");
    started(&mut s, "c1", "bash");
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|f| draw(f, &s)).unwrap();
    let buf = terminal.backend().buffer().clone();
    for cell in buf.content() {
        assert_eq!(cell.fg, ratatui::style::Color::Reset, "{cell:?}");
        assert_eq!(cell.bg, ratatui::style::Color::Reset, "{cell:?}");
    }
    s.no_color = false;
    terminal.draw(|f| draw(f, &s)).unwrap();
    let coloured = terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .any(|c| c.fg != ratatui::style::Color::Reset);
    assert!(coloured);
}

const MARKDOWN: &str = "## Plan

The parser is **fast** and *small*; call `parse()` first. See [the docs](https://docs.rs/x).

- read the tokens
- build the tree
  1. nodes
  2. edges

> Note: errors are
> collected, not thrown.

```rust
fn parse(src: &str) -> Tree {
    let tokens = lex(src); // one pass
    Tree::new(tokens)
}
```

---
Done.";

fn answer(s: &mut AppState, text: &str) {
    s.apply_event(&Event::TextDelta {
        message_id: "m1".into(),
        text: text.into(),
    });
}

#[test]
fn markdown_answer() {
    let mut s = base();
    prompt(&mut s, "how does it parse?");
    s.status.busy = false;
    answer(&mut s, MARKDOWN);
    insta::assert_snapshot!(screen_sized(&s, 80, 40));
}

/// Finds `word` on screen and returns the style of its first cell.
fn style_of(buf: &ratatui::buffer::Buffer, word: &str) -> Option<ratatui::style::Style> {
    let chars: Vec<char> = word.chars().collect();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width.saturating_sub(chars.len() as u16) {
            let hit = chars
                .iter()
                .enumerate()
                .all(|(i, c)| buf[(x + i as u16, y)].symbol() == c.to_string());
            if hit {
                return Some(buf[(x, y)].style());
            }
        }
    }
    None
}

#[test]
fn code_blocks_are_highlighted_in_colour() {
    use ratatui::style::{Color, Modifier};
    let mut s = base();
    s.no_color = false;
    answer(&mut s, MARKDOWN);
    let mut terminal = Terminal::new(TestBackend::new(80, 40)).unwrap();
    terminal.draw(|f| draw(f, &s)).unwrap();
    let buf = terminal.backend().buffer().clone();
    assert_eq!(
        style_of(&buf, "fn parse").and_then(|st| st.fg),
        Some(Color::Magenta)
    );
    assert_eq!(
        style_of(&buf, "let tokens").and_then(|st| st.fg),
        Some(Color::Magenta)
    );
    assert_eq!(
        style_of(&buf, "// one pass").and_then(|st| st.fg),
        Some(Color::DarkGray)
    );
    let parse = style_of(&buf, "parse()").unwrap();
    assert_eq!(parse.fg, Some(Color::Yellow), "inline code");
    let fast = style_of(&buf, "fast").unwrap();
    assert!(fast.add_modifier.contains(Modifier::BOLD));
    // Under NO_COLOR the keyword is only bold.
    s.no_color = true;
    terminal.draw(|f| draw(f, &s)).unwrap();
    let buf = terminal.backend().buffer().clone();
    let kw = style_of(&buf, "fn parse").unwrap();
    assert_eq!(kw.fg, Some(Color::Reset));
    assert!(kw.add_modifier.contains(Modifier::BOLD));
}

fn diff_card(s: &mut AppState, changes: usize) {
    let mut diff = format!("--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,{changes} +1,{changes} @@\n");
    for i in 1..=changes {
        diff.push_str(&format!("-let v{i} = {i};\n+let v{i} = {};\n", i * 2));
    }
    started(s, "c1", "edit");
    s.apply_event(&Event::ToolFinished {
        call_id: "c1".into(),
        tool: "edit".into(),
        result: ToolResult {
            title: "src/lib.rs".into(),
            output: "Edit applied successfully.".into(),
            metadata: serde_json::json!({ "diff": diff }),
            ..Default::default()
        },
        spill_path: None,
        duration_ms: 4,
    });
}

#[test]
fn card_with_a_diff() {
    let mut s = base();
    prompt(&mut s, "double them");
    diff_card(&mut s, 20);
    let text = screen(&s);
    assert!(!text.contains("Edit applied"), "{text}");
    insta::assert_snapshot!(text);
    s.transcript.toggle_last_output();
    let expanded = screen_sized(&s, 80, 60);
    assert!(expanded.contains("+let v20 = 40;"), "{expanded}");
    assert!(!expanded.contains("more lines"), "{expanded}");
}

#[test]
fn a_card_without_a_diff_shows_its_output() {
    let mut s = base();
    started(&mut s, "c1", "edit");
    s.apply_event(&Event::ToolFinished {
        call_id: "c1".into(),
        tool: "edit".into(),
        result: ToolResult {
            output: "Edit applied successfully.".into(),
            ..Default::default()
        },
        spill_path: None,
        duration_ms: 4,
    });
    assert!(screen(&s).contains("│ Edit applied successfully."));
}

fn mixed_session() -> AppState {
    let mut s = base();
    prompt(
        &mut s,
        "tidy up the parser and explain the change in some detail please",
    );
    s.apply_event(&Event::ReasoningDelta {
        message_id: "m1".into(),
        text: "look at lex\nthen the tree\n".into(),
    });
    diff_card(&mut s, 2);
    s.apply_event(&Event::TextDelta {
        message_id: "m2".into(),
        text: MARKDOWN.into(),
    });
    s.status.busy = false;
    s
}

#[test]
fn layout_80x24() {
    insta::assert_snapshot!(screen_sized(&mixed_session(), 80, 24));
}

#[test]
fn layout_120x40() {
    insta::assert_snapshot!(screen_sized(&mixed_session(), 120, 40));
}

#[test]
fn reasoning_streaming_shows_its_last_line() {
    let mut s = base();
    prompt(&mut s, "q");
    s.apply_event(&Event::ReasoningDelta {
        message_id: "m1".into(),
        text: "first idea\nsecond idea".into(),
    });
    let text = screen(&s);
    assert!(text.contains("▸ thinking (2 lines)"), "{text}");
    assert!(
        text.contains("second idea") && !text.contains("first idea"),
        "{text}"
    );
    s.status.busy = false;
    let text = screen(&s);
    assert!(!text.contains("second idea"), "{text}");
}

#[test]
fn resize_rewraps_at_words() {
    let mut s = base();
    let words: Vec<String> = (0..60).map(|i| format!("word{i}")).collect();
    answer(&mut s, &words.join(" "));
    s.status.busy = false;
    let wide = screen_sized(&s, 100, 12);
    let narrow = screen_sized(&s, 60, 16);
    // The same state (and cache) drawn at two widths: re-wrapped, not re-rendered.
    assert_eq!(s.transcript.render_cache.borrow().renders(), 1);
    for (text, width) in [(&wide, 100), (&narrow, 60)] {
        let body: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
        let joined = body.join(" ");
        assert_eq!(joined, words.join(" "), "words split or lost at {width}");
        assert!(body.iter().all(|l| l.chars().count() <= width));
    }
    insta::assert_snapshot!("resize_100", wide);
    insta::assert_snapshot!("resize_60", narrow);
}

#[test]
fn streaming_rerenders_only_the_last_entry() {
    let mut s = base();
    for i in 0..200 {
        s.transcript
            .entries
            .push(podcode_tui::Entry::Notice(format!("n{i}")));
    }
    answer(&mut s, "The answer ");
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|f| draw(f, &s)).unwrap();
    let before = s.transcript.render_cache.borrow().renders();
    answer(&mut s, "grows **here**");
    terminal.draw(|f| draw(f, &s)).unwrap();
    assert_eq!(s.transcript.render_cache.borrow().renders(), before + 1);
    terminal.draw(|f| draw(f, &s)).unwrap();
    assert_eq!(s.transcript.render_cache.borrow().renders(), before + 1);
}

#[test]
fn ten_thousand_lines_scroll_to_the_right_window() {
    let mut s = base();
    // 1,000 entries of 10 lines and a separator: 11,000 rows.
    for e in 0..1000 {
        let text: Vec<String> = (0..10).map(|l| format!("e{e} l{l}")).collect();
        s.transcript
            .entries
            .push(podcode_tui::Entry::Notice(text.join("\n")));
    }
    let rows = |s: &AppState| -> Vec<String> { screen(s).lines().map(str::to_string).collect() };
    let tail = rows(&s);
    let r = tail
        .iter()
        .position(|l| l == "e999 l9")
        .expect("the tail is visible");
    assert_eq!(tail[r + 1], "", "the separator follows");
    assert_eq!(tail[r - 9], "e999 l0");
    // Scrolling by 500 entries shows the same position 500 entries earlier…
    s.transcript.scroll = 11 * 500;
    let middle = rows(&s);
    assert_eq!(middle[r], "e499 l9");
    assert_eq!(middle[r - 1], "e499 l8");
    assert_eq!(middle[r - 9], "e499 l0");
    assert_eq!(middle[r - 10], "", "the separator before it");
    // …and three rows more moves it three lines up.
    s.transcript.scroll += 3;
    assert_eq!(rows(&s)[r], "e499 l6");
    // Past the top the first screenful stays.
    s.transcript.scroll = u16::MAX;
    assert_eq!(rows(&s)[0], "e0 l0");
}

#[test]
fn scrolling_down_from_the_top_starts_at_the_top() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut s = base();
    for i in 0..100 {
        s.transcript
            .entries
            .push(podcode_tui::Entry::Notice(format!("line {i}")));
    }
    podcode_tui::handle_key(&mut s, KeyEvent::new(KeyCode::Home, KeyModifiers::CONTROL));
    let top = screen(&s);
    assert!(top.starts_with("line 0\n"), "{top}");
    podcode_tui::handle_key(&mut s, KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE));
    let below = screen(&s);
    assert!(!below.contains("line 0\n"), "{below}");
    assert!(!below.contains("line 99"), "{below}");
    let first = below.lines().next().unwrap_or("");
    assert!(first.starts_with("line ") || first.is_empty(), "{below}");
}

/// Control sequences from the model, a tool or a permission request are removed or shown
/// visibly by the sanitiser the CLI uses too; their payload never reaches the screen.
#[test]
fn control_sequences_are_stripped_or_shown() {
    let mut s = base();
    prompt(&mut s, "show it");
    s.apply_event(&Event::TextDelta {
        message_id: "m1".into(),
        text: "Look\u{1b}]52;c;ZXZpbA==\u{7} here\u{1b}[2J.".into(),
    });
    started(&mut s, "c1", "bash");
    s.apply_event(&Event::ToolFinished {
        call_id: "c1".into(),
        tool: "bash".into(),
        result: ToolResult {
            title: "t\u{1b}]0;pwned\u{7}itle".into(),
            output: "a\u{1b}]8;;http://x.invalid/\u{1b}\\b\u{1b}]8;;\u{1b}\\c\u{8}d".into(),
            ..Default::default()
        },
        spill_path: None,
        duration_ms: 5,
    });
    s.modal = Some(read_modal(
        "bash",
        "c2",
        PermissionRequest {
            permission: "bash".into(),
            patterns: vec!["echo hi\rrm -rf x".into()],
            always: vec![],
            metadata: serde_json::json!({ "command": "echo hi\rrm -rf x" }),
        },
    ));
    let shown = screen_sized(&s, 100, 40);
    for gone in ["52;c", "ZXZpbA", "pwned", "x.invalid", "[2J"] {
        assert!(!shown.contains(gone), "{gone:?} on screen:\n{shown}");
    }
    for seen in ["Look here.", "bash — title", "abc␈d", "echo hi␍rm -rf x"] {
        assert!(shown.contains(seen), "{seen:?} not on screen:\n{shown}");
    }
}

/// A `todowrite` shows the list in a panel above the input box; Ctrl-L hides and shows it.
#[test]
fn todo_panel_shows_the_list_and_ctrl_l_toggles_it() {
    let mut s = base();
    prompt(&mut s, "fix the parser");
    started(&mut s, "c1", "todowrite");
    s.apply_event(&Event::ToolFinished {
        call_id: "c1".into(),
        tool: "todowrite".into(),
        result: ToolResult::text("[]").with_metadata(serde_json::json!({"todos": [
            {"content": "Write the failing test", "status": "completed", "priority": "high"},
            {"content": "Fix the parser", "status": "in_progress", "priority": "high"},
            {"content": "Old idea", "status": "cancelled", "priority": "low"},
        ]})),
        spill_path: None,
        duration_ms: 3,
    });
    let shown = screen(&s);
    for line in [
        "todo: 1 of 3 left (ctrl-l hides)",
        "[x] Write the failing test",
        "[>] Fix the parser",
        "[-] Old idea",
    ] {
        assert!(shown.contains(line), "{line:?} missing:\n{shown}");
    }
    let ctrl_l = crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('l'),
        crossterm::event::KeyModifiers::CONTROL,
    );
    podcode_tui::handle_key(&mut s, ctrl_l);
    assert!(!screen(&s).contains("[>] Fix the parser"));
    podcode_tui::handle_key(&mut s, ctrl_l);
    assert!(screen(&s).contains("[>] Fix the parser"));
}
