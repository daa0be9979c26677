//! How the change journal holds a file that plain text cannot: binary bytes, or a file whose
//! permission bits matter (an executable bit `sync_to_main` set). Journal rows keep content
//! in text columns, so such content is wrapped in an envelope: a first line that starts with
//! a NUL byte (which no text a tool writes starts with), naming the mode and the encoding,
//! then the body (base64 for bytes, the text itself otherwise). Plain text stays plain, so
//! every older row reads as before. Writers (`podcode-tools`' journaled writes, revert,
//! recovery) decode to bytes + mode; front ends show `display_text`.

use std::borrow::Cow;

/// The envelope's first bytes.
const MARK: &str = "\0podcode-file v1 ";

/// A file as the journal restores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContent {
    /// The file's exact bytes.
    pub bytes: Vec<u8>,
    /// Permission bits (`0o755`) to restore; `None`: whatever the file has (plain text rows).
    pub mode: Option<u32>,
}

impl FileContent {
    /// Journal text for `bytes` with permission bits `mode`: the plain text when it is
    /// UTF-8 and no mode is recorded, an envelope otherwise.
    pub fn encode(bytes: &[u8], mode: Option<u32>) -> String {
        // A NUL byte makes content binary here as it does for git (and keeps NULs out of
        // the journal's text columns).
        let text = std::str::from_utf8(bytes)
            .ok()
            .filter(|t| !t.contains('\0'));
        match (text, mode) {
            (Some(t), None) => t.to_string(),
            (Some(t), _) => format!("{MARK}{} text\n{t}", mode_field(mode)),
            (None, _) => format!("{MARK}{} base64\n{}", mode_field(mode), base64(bytes)),
        }
    }

    /// What journal text stands for. Text that is not a well-formed envelope is plain text.
    pub fn decode(stored: &str) -> FileContent {
        let plain = || FileContent {
            bytes: stored.as_bytes().to_vec(),
            mode: None,
        };
        let Some(rest) = stored.strip_prefix(MARK) else {
            return plain();
        };
        let Some((head, body)) = rest.split_once('\n') else {
            return plain();
        };
        let Some((mode, encoding)) = head.split_once(' ') else {
            return plain();
        };
        let mode = match mode.strip_prefix("mode=") {
            Some("-") => None,
            Some(m) => match u32::from_str_radix(m, 8) {
                Ok(m) => Some(m),
                Err(_) => return plain(),
            },
            None => return plain(),
        };
        let bytes = match encoding {
            "text" => body.as_bytes().to_vec(),
            "base64" => match unbase64(body) {
                Some(b) => b,
                None => return plain(),
            },
            _ => return plain(),
        };
        FileContent { bytes, mode }
    }

    /// Whether this content is `bytes` with permission bits `mode` (a recorded mode must
    /// match; without one, any mode does).
    pub fn matches(&self, bytes: &[u8], mode: Option<u32>) -> bool {
        self.bytes == bytes && (self.mode.is_none() || self.mode == mode)
    }
}

/// Journal text as a person reads it in a diff: text as is (an envelope's text body), and
/// one line for binary content.
pub fn display_text(stored: Option<&str>) -> Cow<'_, str> {
    let Some(stored) = stored else {
        return Cow::Borrowed("");
    };
    if !stored.starts_with(MARK) {
        return Cow::Borrowed(stored);
    }
    let c = FileContent::decode(stored);
    let mode = c.mode.map(|m| format!(", mode {m:o}")).unwrap_or_default();
    match String::from_utf8(c.bytes) {
        Ok(text) if text.contains('\0') => {
            Cow::Owned(format!("(binary file, {} bytes{mode})\n", text.len()))
        }
        Ok(text) if c.mode.is_none() => Cow::Owned(text),
        Ok(text) => {
            let gap = if text.is_empty() || text.ends_with('\n') {
                ""
            } else {
                "\n"
            };
            Cow::Owned(format!(
                "{text}{gap}(file mode {:o})\n",
                c.mode.unwrap_or(0)
            ))
        }
        Err(e) => Cow::Owned(format!(
            "(binary file, {} bytes{mode})\n",
            e.as_bytes().len()
        )),
    }
}

fn mode_field(mode: Option<u32>) -> String {
    match mode {
        Some(m) => format!("mode={m:o}"),
        None => "mode=-".into(),
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn unbase64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end();
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    for chunk in text.as_bytes().chunks(4) {
        let pad = chunk.iter().rev().take_while(|b| **b == b'=').count();
        if pad > 2 {
            return None;
        }
        let mut n = 0u32;
        for (i, b) in chunk.iter().enumerate() {
            let v = if i >= 4 - pad {
                0
            } else {
                ALPHABET.iter().position(|a| a == b)? as u32
            };
            n |= v << (18 - 6 * i);
        }
        for i in 0..3 - pad {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_stays_plain_and_decodes_as_itself() {
        assert_eq!(
            FileContent::encode(b"fn main() {}\n", None),
            "fn main() {}\n"
        );
        let c = FileContent::decode("fn main() {}\n");
        assert_eq!((c.bytes.as_slice(), c.mode), (&b"fn main() {}\n"[..], None));
        assert_eq!(display_text(Some("a\n")), "a\n");
    }

    #[test]
    fn bytes_and_modes_round_trip_exactly() {
        for len in 0..8 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 97 + 200) as u8).collect();
            for mode in [None, Some(0o755), Some(0o600)] {
                let mut with_nul = bytes.clone();
                with_nul.insert(0, 0);
                for b in [&bytes, &with_nul] {
                    let stored = FileContent::encode(b, mode);
                    let back = FileContent::decode(&stored);
                    assert_eq!((&back.bytes, back.mode), (b, mode), "{stored:?}");
                }
            }
        }
        assert_eq!(
            FileContent::encode(b"\x89PNG", Some(0o644)),
            "\0podcode-file v1 mode=644 base64\niVBORw=="
        );
        assert_eq!(
            FileContent::encode(b"#!/bin/sh\n", Some(0o755)),
            "\0podcode-file v1 mode=755 text\n#!/bin/sh\n"
        );
    }

    #[test]
    fn display_names_binary_content_in_one_line() {
        let stored = FileContent::encode(&[0xff, 0, 1], Some(0o755));
        assert_eq!(
            display_text(Some(&stored)),
            "(binary file, 3 bytes, mode 755)\n"
        );
        let stored = FileContent::encode(b"echo\n", Some(0o755));
        assert_eq!(display_text(Some(&stored)), "echo\n(file mode 755)\n");
    }

    #[test]
    fn a_malformed_envelope_is_read_as_text() {
        let odd = "\0podcode-file v1 mode=zz base64\nAAAA";
        assert_eq!(FileContent::decode(odd).bytes, odd.as_bytes());
    }
}
