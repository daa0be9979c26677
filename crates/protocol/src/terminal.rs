//! Making untrusted text safe to print on a terminal. Everything a tool, a plugin, an MCP
//! server or the model says can carry control sequences (clipboard writes through OSC 52,
//! title changes, screen erases, hyperlinks, DCS strings, cursor moves); printed raw they act
//! on the user's terminal instead of being read. Every front end passes such text through
//! [`sanitize`] before it reaches the screen.
//!
//! The rules, byte by byte:
//! - newlines, tabs and a carriage return directly before a newline (CRLF) are kept;
//! - a complete escape sequence is removed whole: CSI (`ESC [` … final byte), OSC (`ESC ]` …
//!   BEL or ST), DCS/SOS/PM/APC strings (`ESC P`, `ESC X`, `ESC ^`, `ESC _` … ST) and the
//!   short `ESC` + intermediates + final forms (`ESC c`, `ESC ( B`, `ESC 7`);
//! - an escape that does not complete (cut off by the end of the text or the line, or broken
//!   by a control character) is shown as `␛` and the rest is read as text again, so nothing is
//!   hidden;
//! - any other C0 control (BEL, backspace, a lone CR, form feed, …) and DEL are shown as
//!   their Unicode control picture (`␇`, `␈`, `␍`, `␌`, `␡`), so overwrite tricks are visible;
//! - C1 controls (U+0080–U+009F, which some terminals read as CSI, OSC, DCS …) become `�`;
//! - bidirectional controls, zero-width and other invisible characters are shown as
//!   `<U+XXXX>` markers (the rule and its exceptions for emoji and scripts are in
//!   `invisible`), so text cannot read differently from what it is;
//! - all other text, including any valid UTF-8, is unchanged.
//!
//! JSON output keeps its exact meaning instead: [`sanitize_json`] only escapes the controls
//! a JSON serializer leaves raw.

use std::borrow::Cow;

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';
/// C1 String Terminator.
const ST: char = '\u{9c}';

/// Returns `text` with every terminal control sequence removed or shown visibly, and every
/// invisible or direction-changing character shown as a marker; borrows when there is
/// nothing to change.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    let controlled = without_controls(text);
    if let Cow::Owned(shown) = crate::invisible::show_hidden_chars(&controlled) {
        return Cow::Owned(shown);
    }
    controlled
}

fn without_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_care) {
        return Cow::Borrowed(text);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == ESC {
            match escape_len(&chars[i..]) {
                Some(len) => i += len,
                None => {
                    out.push('␛');
                    i += 1;
                }
            }
            continue;
        }
        match c {
            '\n' | '\t' => out.push(c),
            '\r' if chars.get(i + 1) == Some(&'\n') => out.push(c),
            '\u{0}'..='\u{1f}' => out.push(control_picture(c)),
            '\u{7f}' => out.push('␡'),
            '\u{80}'..='\u{9f}' => out.push('\u{fffd}'),
            _ => out.push(c),
        }
        i += 1;
    }
    Cow::Owned(out)
}

/// Serialized JSON made safe to print without changing what it means: DEL and the C1
/// controls, which JSON allows raw inside strings, are written as `\u00XX` escapes (JSON
/// serializers already escape ESC and the other C0 controls). Only valid for JSON text,
/// where such characters can only occur inside strings.
pub fn sanitize_json(json: &str) -> Cow<'_, str> {
    if !json.chars().any(|c| ('\u{7f}'..='\u{9f}').contains(&c)) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if ('\u{7f}'..='\u{9f}').contains(&c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn needs_care(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || c == '\u{7f}'
}

/// The picture for a C0 control: U+2400 + the code (`␀` … `␟`).
fn control_picture(c: char) -> char {
    char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')
}

/// The length of the complete escape sequence at the start of `s` (which starts with ESC),
/// or `None` when it does not complete.
fn escape_len(s: &[char]) -> Option<usize> {
    let next = *s.get(1)?;
    match next {
        '[' => csi_len(s, 2),
        ']' | 'P' | 'X' | '^' | '_' => string_len(s, 2, next == ']'),
        // Intermediates (0x20–0x2F) then one final byte (0x30–0x7E): `ESC ( B`, `ESC # 8`.
        ' '..='/' => {
            let mut i = 2;
            while matches!(s.get(i), Some(' '..='/')) {
                i += 1;
            }
            matches!(s.get(i), Some('0'..='~')).then_some(i + 1)
        }
        '0'..='~' => Some(2),
        _ => None,
    }
}

/// CSI: parameter bytes (0x30–0x3F), intermediates (0x20–0x2F), one final byte (0x40–0x7E).
fn csi_len(s: &[char], start: usize) -> Option<usize> {
    let mut i = start;
    while matches!(s.get(i), Some('0'..='?')) {
        i += 1;
    }
    while matches!(s.get(i), Some(' '..='/')) {
        i += 1;
    }
    matches!(s.get(i), Some('@'..='~')).then_some(i + 1)
}

/// OSC/DCS/SOS/PM/APC: any text up to ST (`ESC \` or U+009C) on the same line; OSC may
/// also end with BEL.
fn string_len(s: &[char], start: usize, bel_ends: bool) -> Option<usize> {
    let mut i = start;
    while let Some(&c) = s.get(i) {
        match c {
            ESC => return (s.get(i + 1) == Some(&'\\')).then_some(i + 2),
            ST => return Some(i + 1),
            BEL if bel_ends => return Some(i + 1),
            // A string never spans lines here, so a stray introducer cannot hide the text
            // that follows it.
            '\n' => return None,
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(input, expected output)`, checked byte by byte.
    const TABLE: &[(&str, &str)] = &[
        // Plain text, newlines, tabs, CRLF and UTF-8 pass through.
        ("plain text", "plain text"),
        ("a\n\tb\r\nc", "a\n\tb\r\nc"),
        ("héllo 世界 🦀 ✓", "héllo 世界 🦀 ✓"),
        // OSC 52 clipboard write, ended by BEL and by ST.
        ("x\u{1b}]52;c;ZXZpbA==\u{7}y", "xy"),
        ("x\u{1b}]52;c;ZXZpbA==\u{1b}\\y", "xy"),
        // Window title change.
        ("\u{1b}]0;pwned\u{7}title", "title"),
        ("\u{1b}]2;pwned\u{1b}\\title", "title"),
        // OSC 8 hyperlink: the link goes, the visible text stays.
        (
            "\u{1b}]8;;http://evil.example/\u{1b}\\click\u{1b}]8;;\u{1b}\\",
            "click",
        ),
        // Screen erase, cursor home, scroll region, colours, private modes.
        ("a\u{1b}[2Jb", "ab"),
        ("a\u{1b}[Hb", "ab"),
        ("\u{1b}[1;31mred\u{1b}[0m", "red"),
        ("\u{1b}[?1049h\u{1b}[?25l", ""),
        ("\u{1b}[38;2;255;0;0mrgb", "rgb"),
        // DCS, SOS, PM and APC strings.
        ("a\u{1b}P1$qm\u{1b}\\b", "ab"),
        ("a\u{1b}Xsos\u{1b}\\b", "ab"),
        ("a\u{1b}^pm\u{1b}\\b", "ab"),
        ("a\u{1b}_apc\u{1b}\\b", "ab"),
        // Short escapes: reset, charset, save cursor, keypad mode.
        ("a\u{1b}cb", "ab"),
        ("a\u{1b}(Bb", "ab"),
        ("a\u{1b}7b\u{1b}8", "ab"),
        ("\u{1b}=\u{1b}>", ""),
        // C1 controls (8-bit CSI, OSC, DCS, ST, NEL) become visible replacement characters.
        ("a\u{9b}2Jb", "a\u{fffd}2Jb"),
        ("a\u{9d}0;t\u{9c}b", "a\u{fffd}0;t\u{fffd}b"),
        ("\u{90}\u{85}", "\u{fffd}\u{fffd}"),
        // Bare ESC, an unfinished sequence, an escape broken by a newline.
        ("a\u{1b}", "a␛"),
        ("a\u{1b}[12", "a␛[12"),
        ("a\u{1b}]52;c;Zm9v", "a␛]52;c;Zm9v"),
        ("a\u{1b}[1\nb", "a␛[1\nb"),
        ("a\u{1b}]0;x\nhidden?\u{7}", "a␛]0;x\nhidden?␇"),
        ("a\u{1b}\u{1b}[0mb", "a␛b"),
        // BEL, backspace, lone CR, NUL, form feed, vertical tab, DEL.
        ("ding\u{7}", "ding␇"),
        ("safe\u{8}\u{8}\u{8}\u{8}evil", "safe␈␈␈␈evil"),
        ("shown\rhidden", "shown␍hidden"),
        ("a\u{0}b\u{c}c\u{b}d\u{7f}", "a␀b␌c␋d␡"),
        // Bidi controls and zero-width characters are shown, escapes around them removed.
        (
            "echo safe # \u{202E} ; rm -rf ~ \u{202C}",
            "echo safe # <U+202E> ; rm -rf ~ <U+202C>",
        ),
        ("\u{1b}[1m\u{2067}x\u{200B}\u{1b}[0m", "<U+2067>x<U+200B>"),
    ];

    #[test]
    fn every_sequence_in_the_table_is_removed_or_shown() {
        for (input, expected) in TABLE {
            let got = sanitize(input);
            assert_eq!(
                got.as_bytes(),
                expected.as_bytes(),
                "input {input:?}: got {got:?}, expected {expected:?}"
            );
        }
    }

    #[test]
    fn no_output_byte_is_a_control_other_than_newline_tab_or_crlf() {
        for (input, _) in TABLE {
            let out = sanitize(input);
            let bytes = out.as_bytes();
            for (i, b) in bytes.iter().enumerate() {
                let ok = *b == b'\n'
                    || *b == b'\t'
                    || (*b == b'\r' && bytes.get(i + 1) == Some(&b'\n'))
                    || (*b >= 0x20 && *b != 0x7f);
                assert!(ok, "input {input:?} left byte {b:#04x} in {out:?}");
            }
            assert!(!out.chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c)));
        }
    }

    #[test]
    fn json_keeps_its_meaning_and_loses_raw_c1_controls() {
        let value = serde_json::json!({"t": "a\u{1b}]52;c;x\u{7}\u{9b}2J\u{7f}b ✓"});
        let text = serde_json::to_string(&value).unwrap();
        let safe = sanitize_json(&text);
        assert_eq!(
            safe,
            "{\"t\":\"a\\u001b]52;c;x\\u0007\\u009b2J\\u007fb ✓\"}"
        );
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn clean_text_is_borrowed() {
        assert!(matches!(sanitize("a\tb\nc ✓"), Cow::Borrowed(_)));
    }
}
