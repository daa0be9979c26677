//! JSON text from other programs (plugin sidecars, MCP servers) made readable when one of its
//! strings holds half of a UTF-16 surrogate pair. JavaScript strings are UTF-16, so a string
//! cut in the middle of an emoji serializes as a lone `\ud83d`; serde_json refuses such a
//! string and with it the whole message. [`repair_lone_surrogates`] rewrites each `\uXXXX`
//! escape of a lone high (U+D800–U+DBFF) or low (U+DC00–U+DFFF) surrogate as `\ufffd`, the
//! replacement character, and leaves every other byte alone (pairs, other escapes, text
//! outside strings), so the message then parses with the broken half shown as `�`.

use std::borrow::Cow;

/// `json` with every lone surrogate escape replaced by `\ufffd`; borrows when there is none.
pub fn repair_lone_surrogates(json: &[u8]) -> Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut i = 0;
    let mut in_string = false;
    while i < json.len() {
        match json[i] {
            b'"' => {
                in_string = !in_string;
                i += 1;
            }
            b'\\' if in_string => {
                let Some(unit) = escaped_unit(json, i) else {
                    // `\"`, `\\`, `\n` …: two bytes, whatever the second is.
                    i += 2;
                    continue;
                };
                let lone = match unit {
                    0xD800..=0xDBFF => match escaped_unit(json, i + 6) {
                        Some(0xDC00..=0xDFFF) => {
                            // A well-formed pair: keep both halves.
                            i += 12;
                            continue;
                        }
                        _ => true,
                    },
                    0xDC00..=0xDFFF => true,
                    _ => false,
                };
                if lone {
                    let buf = out.get_or_insert_with(|| Vec::with_capacity(json.len()));
                    buf.extend_from_slice(&json[copied..i]);
                    buf.extend_from_slice(b"\\ufffd");
                    copied = i + 6;
                }
                i += 6;
            }
            _ => i += 1,
        }
    }
    match out {
        None => Cow::Borrowed(json),
        Some(mut buf) => {
            buf.extend_from_slice(&json[copied.min(json.len())..]);
            Cow::Owned(buf)
        }
    }
}

/// The UTF-16 unit of a `\uXXXX` escape starting at `at`, if one is there.
fn escaped_unit(json: &[u8], at: usize) -> Option<u16> {
    let esc = json.get(at..at + 6)?;
    if esc[0] != b'\\' || esc[1] != b'u' {
        return None;
    }
    let hex = std::str::from_utf8(&esc[2..]).ok()?;
    u16::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repaired(json: &str) -> String {
        String::from_utf8(repair_lone_surrogates(json.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn lone_halves_become_replacement_characters_and_pairs_stay() {
        let table = [
            (r#"{"t":"cut \ud83d"}"#, r#"{"t":"cut \ufffd"}"#),
            (r#"{"t":"\ude00 low"}"#, r#"{"t":"\ufffd low"}"#),
            (
                r#"{"t":"\uD83D\uDE00 pair"}"#,
                r#"{"t":"\uD83D\uDE00 pair"}"#,
            ),
            (
                r#"{"t":"\ud83d\ud83d\ude00"}"#,
                r#"{"t":"\ufffd\ud83d\ude00"}"#,
            ),
            (r#"{"t":"\ud83dx\ude00"}"#, r#"{"t":"\ufffdx\ufffd"}"#),
            (r#"{"t":"\\ud83d is text"}"#, r#"{"t":"\\ud83d is text"}"#),
            (r#"{"t":"\"\ud800"}"#, r#"{"t":"\"\ufffd"}"#),
            (r#"{"\udbff":"\u00e9"}"#, r#"{"\ufffd":"\u00e9"}"#),
        ];
        for (input, expected) in table {
            assert_eq!(repaired(input), expected, "{input}");
            let v: serde_json::Value = serde_json::from_str(expected).unwrap();
            assert!(v.is_object());
        }
        let v: serde_json::Value = serde_json::from_str(&repaired(r#"{"t":"ab\ud83d"}"#)).unwrap();
        assert_eq!(v["t"], "ab\u{fffd}");
    }

    #[test]
    fn text_without_lone_halves_is_borrowed() {
        for json in [
            r#"{"a":"\ud83d\ude00 ✓"}"#,
            "not json \\ud800 outside a string",
            "\"\\",
        ] {
            assert!(matches!(
                repair_lone_surrogates(json.as_bytes()),
                Cow::Borrowed(_)
            ));
        }
    }
}
