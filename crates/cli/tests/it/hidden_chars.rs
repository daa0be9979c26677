//! Invisible and direction-changing characters (bidi controls, zero-width characters) in
//! what the model sends, on a real terminal: `podcode run`'s permission prompt and the
//! full-screen UI's permission modal show each one as a visible `<U+XXXX>` marker and flag
//! the ask with a warning line, and the model's text shows them as markers too. The real
//! binary in a pseudo-terminal against the scripted model server.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::pty::{drive, run_in_pty};
use common::{Env, bash_call};
use podcode_providers::testing::Reply;

/// Reads as `echo safe # ~ fr- mr ;` where bidi controls act: a harmless comment.
const COMMAND: &str = "echo safe # \u{202E} ; rm -rf ~ \u{202C}";
const WARNING: &str = "warning: this request contains invisible or direction-changing characters, shown as <U+XXXX>; what it does may differ from how it reads";

fn raw_hidden(screen: &str) -> Vec<String> {
    screen
        .chars()
        .filter(|c| {
            matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
        })
        .map(|c| format!("U+{:04X}", c as u32))
        .collect()
}

#[test]
fn run_shows_hidden_characters_in_the_prompt_and_flags_the_ask() {
    let env = Env::new(vec![
        bash_call("c1", COMMAND, "print\u{200B} safe"),
        Reply::new().text("Not run.\u{2066} Fine\u{2069}."),
    ]);
    let screen = run_in_pty(&env, &["run", "print something"], &["r"]);
    assert!(screen.contains(&format!("  ! {WARNING}")), "{screen}");
    assert!(
        screen.contains("command:\r\n    echo safe # <U+202E> ; rm -rf ~ <U+202C>"),
        "{screen}"
    );
    assert!(screen.contains("print<U+200B> safe"), "{screen}");
    assert!(
        screen.contains("Not run.<U+2066> Fine<U+2069>."),
        "{screen}"
    );
    assert_eq!(raw_hidden(&screen), Vec::<String>::new(), "{screen}");
}

#[test]
fn the_tui_modal_shows_hidden_characters_and_flags_the_ask() {
    let env = Env::new(vec![]);
    env.server
        .push(bash_call("c1", COMMAND, "print\u{200B} safe"));
    env.server
        .push(Reply::new().text("Not run.\u{2066} Fine\u{2069}."));
    let (screen, matched) = drive(
        &env,
        &["tui"],
        &[
            ("enter to send", "print something\r"),
            ("allow once", "r"),
            ("Fine", "\x03\x03"),
        ],
    );
    assert!(matched.iter().all(|m| *m), "{matched:?}\n{screen}");
    // What the UI drew, spaces removed.
    for shown in [
        "!warning:thisrequestcontainsinvisibleordirection-changingcharacters",
        "echosafe#<U+202E>;rm-rf~<U+202C>",
        "Notrun.<U+2066>Fine<U+2069>.",
    ] {
        assert!(screen.contains(shown), "{shown} in {screen}");
    }
    assert_eq!(raw_hidden(&screen), Vec::<String>::new(), "{screen}");
}
