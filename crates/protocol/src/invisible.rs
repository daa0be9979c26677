//! Characters that change what text looks like without being seen: bidirectional controls
//! (with a right-to-left override, `echo safe # <U+202E> ; rm -rf ~ <U+202C>` reads as the
//! harmless comment `echo safe # ~ fr- mr ;`), zero-width and other format characters,
//! invisible "tag" characters that can smuggle instructions, line/paragraph separators and
//! blank fillers. Every front end shows each one as a visible `<U+XXXX>` marker instead:
//! the terminal sanitiser (`terminal::sanitize`) calls [`show_hidden_chars`], permission
//! prompts (`prompt_text`) use it for every line and add [`HIDDEN_CHARS_WARNING`] when
//! [`has_hidden_chars`], `podcode acp` marks what it sends the editor, and the web page
//! mirrors the same rule in `web/assets/render.mjs` (`hiddenAt`).
//!
//! The set: every Unicode format character (general category Cf), U+2028/U+2029, the
//! combining grapheme joiner U+034F, the Hangul fillers, supplementary variation selectors
//! (U+E0100–U+E01EF), and a variation selector U+FE00–U+FE0F that does not directly follow
//! a visible character. Kept as they are, because scripts and emoji need them and they
//! reorder nothing: a zero-width joiner between two emoji (👨 U+200D 👩 U+200D 👧) or, like the
//! non-joiner, between two letters of a script that uses them (Arabic, Indic); one
//! variation selector right after a visible character (❤️).

use std::borrow::Cow;

/// The line a permission prompt adds when its text holds one of these characters.
pub const HIDDEN_CHARS_WARNING: &str = "warning: this request contains invisible or direction-changing characters, shown as <U+XXXX>; what it does may differ from how it reads";

/// Whether `text` holds a character that [`show_hidden_chars`] would mark.
pub fn has_hidden_chars(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len()).any(|i| is_hidden_at(&chars, i))
}

/// `text` with every hidden character replaced by a visible `<U+XXXX>` marker; borrows when
/// there is none.
pub fn show_hidden_chars(text: &str) -> Cow<'_, str> {
    if !text.chars().any(maybe_hidden) {
        return Cow::Borrowed(text);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 16);
    for i in 0..chars.len() {
        if is_hidden_at(&chars, i) {
            out.push_str(&format!("<U+{:04X}>", chars[i] as u32));
        } else {
            out.push(chars[i]);
        }
    }
    Cow::Owned(out)
}

/// Whether the character at `i` is hidden, given its neighbours.
fn is_hidden_at(chars: &[char], i: usize) -> bool {
    let c = chars[i];
    if !maybe_hidden(c) {
        return false;
    }
    let prev = i.checked_sub(1).map(|p| chars[p]);
    let next = chars.get(i + 1).copied();
    match c {
        '\u{200D}' => {
            !(prev.is_some_and(ends_emoji) && next.is_some_and(is_pictographic)
                || prev.is_some_and(joins) && next.is_some_and(joins))
        }
        '\u{200C}' => !(prev.is_some_and(joins) && next.is_some_and(joins)),
        '\u{FE00}'..='\u{FE0F}' => !prev.is_some_and(|p| !p.is_whitespace() && !maybe_hidden(p)),
        _ => true,
    }
}

/// The candidates; `is_hidden_at` lets a few of them through in context.
fn maybe_hidden(c: char) -> bool {
    matches!(c,
        // Format characters (Cf).
        '\u{AD}'
        | '\u{600}'..='\u{605}'
        | '\u{61C}'
        | '\u{6DD}'
        | '\u{70F}'
        | '\u{890}'..='\u{891}'
        | '\u{8E2}'
        | '\u{180E}'
        | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{206F}'
        | '\u{FEFF}'
        | '\u{FFF9}'..='\u{FFFB}'
        | '\u{110BD}'
        | '\u{110CD}'
        | '\u{13430}'..='\u{1343F}'
        | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0001}'
        | '\u{E0020}'..='\u{E007F}'
        // Line and paragraph separators, which some terminals and editors break lines at.
        | '\u{2028}'..='\u{2029}'
        // Invisible in every font: the combining grapheme joiner, the Hangul fillers.
        | '\u{34F}'
        | '\u{115F}'..='\u{1160}'
        | '\u{3164}'
        | '\u{FFA0}'
        // Variation selectors.
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{E0100}'..='\u{E01EF}'
    )
}

/// Emoji and symbols that join into one picture with U+200D.
fn is_pictographic(c: char) -> bool {
    matches!(c, '\u{2190}'..='\u{2BFF}' | '\u{1F000}'..='\u{1FAFF}')
}

/// What may come right before a joining U+200D: an emoji, or one ended by a variation
/// selector (❤️) or a skin-tone modifier (inside the emoji range).
fn ends_emoji(c: char) -> bool {
    is_pictographic(c) || c == '\u{FE0F}'
}

/// Letters of the scripts that use the zero-width (non-)joiner in ordinary words.
fn joins(c: char) -> bool {
    matches!(c,
        '\u{600}'..='\u{6FF}'
        | '\u{750}'..='\u{77F}'
        | '\u{8A0}'..='\u{8FF}'
        | '\u{900}'..='\u{DFF}'
        | '\u{FB50}'..='\u{FDFF}'
        | '\u{FE70}'..='\u{FEFC}'
    ) && !maybe_hidden(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_controls_and_invisible_characters_are_shown() {
        let table = [
            (
                "echo safe # \u{202E} ; rm -rf ~ \u{202C}",
                "echo safe # <U+202E> ; rm -rf ~ <U+202C>",
            ),
            (
                "a\u{2066}b\u{2069}c\u{2067}d\u{2068}",
                "a<U+2066>b<U+2069>c<U+2067>d<U+2068>",
            ),
            ("\u{200E}\u{200F}\u{61C}", "<U+200E><U+200F><U+061C>"),
            ("rm\u{200B} -rf", "rm<U+200B> -rf"),
            ("a\u{200D}b\u{200C}c", "a<U+200D>b<U+200C>c"),
            ("x\u{2060}y\u{FEFF}z\u{AD}", "x<U+2060>y<U+FEFF>z<U+00AD>"),
            ("one\u{2028}two\u{2029}", "one<U+2028>two<U+2029>"),
            (
                "tag\u{E0041}\u{E0042}\u{E007F}",
                "tag<U+E0041><U+E0042><U+E007F>",
            ),
            ("vs\u{FE0F}\u{FE0F}", "vs\u{FE0F}<U+FE0F>"),
            ("\u{FE0F}start", "<U+FE0F>start"),
            ("a \u{FE0F}", "a <U+FE0F>"),
            ("s\u{E0100}", "s<U+E0100>"),
            ("\u{3164}\u{115F}", "<U+3164><U+115F>"),
        ];
        for (input, expected) in table {
            assert_eq!(show_hidden_chars(input), expected, "{input:?}");
            assert!(has_hidden_chars(input), "{input:?}");
        }
    }

    #[test]
    fn emoji_and_scripts_that_need_joiners_are_kept() {
        for text in [
            "family 👨\u{200D}👩\u{200D}👧",
            "heart ❤\u{FE0F} and ❤\u{FE0F}\u{200D}🔥",
            "skin 👋🏽\u{200D}",
            "persian می\u{200C}خواهم",
            "hindi क्\u{200D}ष",
            "plain ascii, tabs\tand\nnewlines",
        ] {
            // The last joiner of "skin" has nothing to join: shown.
            if text.starts_with("skin") {
                assert!(has_hidden_chars(text));
                continue;
            }
            assert_eq!(show_hidden_chars(text), text, "{text:?}");
            assert!(!has_hidden_chars(text), "{text:?}");
        }
        assert!(matches!(show_hidden_chars("plain"), Cow::Borrowed(_)));
    }
}
