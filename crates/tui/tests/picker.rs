//! The picker overlay (`/sessions`, `/model`, `/agent`) drawn into ratatui's test backend:
//! the filter line, the selection marker, details, and the typed-model hint.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use podcode_tui::{AppState, PickItem, Picker, PickerKind};

fn screen(state: &AppState, w: u16, h: u16) -> String {
    common::screen_sized(state, w, h)
}

fn state(kind: PickerKind, filter: &str) -> AppState {
    let mut s = AppState::new("scripted/test", "build", "/work/repo", "ses_1");
    s.no_color = true;
    let items = match kind {
        PickerKind::Session => vec![
            PickItem {
                value: "ses_2".into(),
                label: "fix the parser".into(),
                detail: "5m ago · build · ses_2".into(),
            },
            PickItem {
                value: "ses_3".into(),
                label: "add a CLI flag".into(),
                detail: "2d ago · plan · ses_3".into(),
            },
        ],
        _ => vec![
            PickItem::new("openai/gpt-4.1", "config default"),
            PickItem::new("anthropic/claude-sonnet-4-5", "used before"),
        ],
    };
    let mut p = Picker::new(kind, items);
    p.filter = filter.into();
    s.picker = Some(p);
    s
}

#[test]
fn session_picker() {
    insta::assert_snapshot!(screen(&state(PickerKind::Session, ""), 80, 24));
}

#[test]
fn model_picker_with_a_typed_model_that_is_not_listed() {
    let s = state(PickerKind::Model, "ollama/qwen3");
    let text = screen(&s, 80, 24);
    assert!(text.contains("enter uses the model you typed"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn a_picker_fits_a_small_terminal() {
    let text = screen(&state(PickerKind::Session, ""), 40, 12);
    assert!(text.contains("resume a session"), "{text}");
    assert!(text.contains("▶ fix the parser"), "{text}");
}
