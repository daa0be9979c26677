//! Render tests: each view drawn from a hand-built `AppState` into ratatui's test backend
//! (80x24) and compared with a snapshot file in `tests/snapshots/`.

use podcode_protocol::{
    ChangeOp, Event, PermissionRequest, RecordedChange, StepUsage, ToolResult, TurnEnd, TurnSummary,
};
use podcode_tui::{AppState, ChangeItem, PermissionModal, Screen, draw};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn screen(state: &AppState) -> String {
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|f| draw(f, state)).unwrap();
    let buf = terminal.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn base() -> AppState {
    let mut s = AppState::new("scripted/test", "build", "/work/repo", "ses_1");
    s.no_color = true;
    s
}

fn started(s: &mut AppState, call: &str, tool: &str) {
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
    s.push_user("explain the parser");
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
    s.push_user("build it");
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
    });
    started(&mut s, "c3", "write");
    s.apply_event(&Event::ToolFailed {
        call_id: "c3".into(),
        tool: "write".into(),
        error: "The user rejected the edit permission for `a.rs`. Do not retry this call.".into(),
        duration_ms: 2100,
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
    s.push_user("fix the typo");
    started(&mut s, "c1", "edit");
    s.modal = Some(PermissionModal {
        tool: "edit".into(),
        call_id: "c1".into(),
        request: PermissionRequest {
            permission: "edit".into(),
            patterns: vec!["src/main.rs".into()],
            always: vec!["src/main.rs".into()],
            metadata: serde_json::json!({
                "diff": "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1 +1 @@\n-fn mian() {}\n+fn main() {}\n"
            }),
        },
        feedback: None,
    });
    insta::assert_snapshot!(screen(&s));
    s.modal.as_mut().unwrap().feedback = Some("use the other file".into());
    insta::assert_snapshot!("permission_modal_feedback", screen(&s));
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
        "chg_1".into(),
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
        s.entries
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
    let started = std::time::Instant::now();
    let text = screen(&s);
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    assert!(text.contains("line 9999"), "{text}");
    assert!(text.contains("── done · 2 step(s)"), "{text}");
}

#[test]
fn no_color_draws_without_colours() {
    let mut s = base();
    s.push_user("hi");
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
