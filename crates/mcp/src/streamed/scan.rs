//! The incremental JSON scanner behind `streamed`: one long line in, its skeleton out (the
//! message with each `result.content[i].text` string replaced by a marker) and those texts
//! unescaped into a temporary file, with memory bounded by the limit whatever the line's
//! size. Also finds the top-level `id` wherever it is, for the over-limit error.

use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::{COPY_CHUNK, MARKER_JSON, Spills};

/// Object keys are compared only against short names; longer ones are cut here.
const MAX_KEY: usize = 16;
const MAX_ID: usize = 1024;

/// What a long line turned into.
#[derive(Debug, PartialEq)]
pub enum Finished {
    /// The message for rmcp: the line itself, or its skeleton with markers.
    Message(Vec<u8>),
    /// The message without its texts is still over the limit (`id` when it was found).
    Oversized { id: Option<Value>, bytes: u64 },
    /// The texts could not be written to disk.
    SpillFailed { id: Option<Value>, why: String },
}

enum Frame {
    Object { key: Vec<u8>, in_value: bool },
    Array,
}

#[derive(Clone, Copy)]
enum Lex {
    Between,
    /// In a string kept in the skeleton (an object key when `key`).
    Str {
        key: bool,
        escaped: bool,
    },
    /// In a result text, written unescaped to the spill file.
    Text {
        esc: Esc,
        high: Option<u16>,
    },
}

#[derive(Clone, Copy, PartialEq)]
enum Esc {
    No,
    Backslash,
    Hex { n: u8, val: u16 },
}

enum Id {
    Waiting,
    /// The raw value so far; `true` for a string (ends at its closing quote).
    Capturing(Vec<u8>, bool),
    Done(Option<Value>),
}

/// The temporary file the texts go to; removed on drop unless handed to `Spills`.
struct SpillFile {
    path: PathBuf,
    writer: Option<BufWriter<File>>,
    written: u64,
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        if self.writer.is_some() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Reads one long line incrementally; see the module doc.
pub struct Streamer {
    limit: usize,
    token: u64,
    total: u64,
    skeleton: Vec<u8>,
    overflow: bool,
    frames: Vec<Frame>,
    lex: Lex,
    id: Id,
    spill: SpillFile,
    spill_error: Option<String>,
    text_start: u64,
    ranges: Vec<(u64, u64)>,
}

/// A token no server can guess: std's randomly keyed hasher over a counter and the time.
fn new_token() -> u64 {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNT.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    h.finish()
}

impl Streamer {
    /// `limit` caps what is kept in memory (the message without its streamed texts).
    pub fn new(limit: u64) -> Self {
        let token = new_token();
        let path = std::env::temp_dir().join(format!(
            "podcode-mcp-{}-{token:016x}.txt",
            std::process::id()
        ));
        Self {
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            token,
            total: 0,
            skeleton: Vec::new(),
            overflow: false,
            frames: Vec::new(),
            lex: Lex::Between,
            id: Id::Waiting,
            spill: SpillFile {
                path,
                writer: None,
                written: 0,
            },
            spill_error: None,
            text_start: 0,
            ranges: Vec::new(),
        }
    }

    pub fn feed(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        while !data.is_empty() {
            let used = match self.lex {
                Lex::Text { esc, high } => self.text(data, esc, high),
                Lex::Str { key, escaped } => self.string(data, key, escaped),
                Lex::Between => {
                    self.between(data[0]);
                    1
                }
            };
            data = &data[used..];
        }
    }

    /// Ends the line (its newline was seen).
    pub fn finish(mut self, spills: &Spills) -> Finished {
        self.end_literal_id();
        let id = match std::mem::replace(&mut self.id, Id::Waiting) {
            Id::Done(v) => v,
            _ => None,
        };
        if self.overflow {
            return Finished::Oversized {
                id,
                bytes: self.total,
            };
        }
        if self.ranges.is_empty() {
            return Finished::Message(std::mem::take(&mut self.skeleton));
        }
        let flushed = match self.spill.writer.as_mut() {
            Some(w) => w.flush().map_err(|e| e.to_string()),
            None => Err("the file was not opened".to_string()),
        };
        if let Some(why) = self.spill_error.take().or(flushed.err()) {
            return Finished::SpillFailed { id, why };
        }
        // A line that is not JSON after all: rmcp ignores it, the texts are not kept.
        if serde_json::from_slice::<serde::de::IgnoredAny>(&self.skeleton).is_err() {
            return Finished::Message(std::mem::take(&mut self.skeleton));
        }
        // Handed over: the file now belongs to `spills`.
        self.spill.writer = None;
        spills.insert(
            self.token,
            self.spill.path.clone(),
            std::mem::take(&mut self.ranges),
        );
        Finished::Message(std::mem::take(&mut self.skeleton))
    }

    /// Appends to the skeleton while it is within the limit.
    fn keep(&mut self, bytes: &[u8]) {
        if self.overflow {
            return;
        }
        if self.skeleton.len() + bytes.len() > self.limit {
            self.overflow = true;
            self.skeleton = Vec::new();
            // The call fails anyway: stop writing texts nobody will read.
            self.spill_error.get_or_insert_with(String::new);
            return;
        }
        self.skeleton.extend_from_slice(bytes);
    }

    fn at_text(&self) -> bool {
        let key = |f: &Frame, name: &[u8]| matches!(f, Frame::Object { key, in_value: true } if key == name);
        match self.frames.as_slice() {
            [top, result, content, item] => {
                key(top, b"result")
                    && key(result, b"content")
                    && matches!(content, Frame::Array)
                    && key(item, b"text")
            }
            _ => false,
        }
    }

    fn at_id(&self) -> bool {
        matches!(
            self.frames.as_slice(),
            [Frame::Object { key, in_value: true }] if key == b"id"
        ) && matches!(self.id, Id::Waiting)
    }

    fn end_literal_id(&mut self) {
        if let Id::Capturing(raw, false) = &self.id {
            self.id = Id::Done(scalar(raw));
        }
    }

    fn between(&mut self, b: u8) {
        match b {
            b'"' => {
                let is_key = matches!(
                    self.frames.last(),
                    Some(Frame::Object {
                        in_value: false,
                        ..
                    })
                );
                if is_key {
                    if let Some(Frame::Object { key, .. }) = self.frames.last_mut() {
                        key.clear();
                    }
                    self.keep(b"\"");
                    self.lex = Lex::Str {
                        key: true,
                        escaped: false,
                    };
                } else if self.at_text() {
                    self.keep(b"\"");
                    let marker = format!("{MARKER_JSON}{:016x}:{}", self.token, self.ranges.len());
                    self.keep(marker.as_bytes());
                    self.open();
                    self.text_start = self.spill.written;
                    self.lex = Lex::Text {
                        esc: Esc::No,
                        high: None,
                    };
                } else {
                    if self.at_id() {
                        self.id = Id::Capturing(b"\"".to_vec(), true);
                    }
                    self.keep(b"\"");
                    self.lex = Lex::Str {
                        key: false,
                        escaped: false,
                    };
                }
            }
            b'{' | b'[' => {
                self.keep(&[b]);
                self.frames.push(if b == b'{' {
                    Frame::Object {
                        key: Vec::new(),
                        in_value: false,
                    }
                } else {
                    Frame::Array
                });
            }
            b'}' | b']' => {
                self.end_literal_id();
                self.keep(&[b]);
                self.frames.pop();
            }
            b':' => {
                self.keep(&[b]);
                if let Some(Frame::Object { in_value, .. }) = self.frames.last_mut() {
                    *in_value = true;
                }
            }
            b',' => {
                self.end_literal_id();
                self.keep(&[b]);
                if let Some(Frame::Object { key, in_value }) = self.frames.last_mut() {
                    key.clear();
                    *in_value = false;
                }
            }
            b' ' | b'\t' | b'\r' => {
                self.end_literal_id();
                self.keep(&[b]);
            }
            _ => {
                // A number, `true`, `false` or `null`.
                if self.at_id() {
                    self.id = Id::Capturing(Vec::new(), false);
                }
                if let Id::Capturing(raw, false) = &mut self.id
                    && raw.len() < MAX_ID
                {
                    raw.push(b);
                }
                self.keep(&[b]);
            }
        }
    }

    /// A string kept in the skeleton; returns how much of `data` it used.
    fn string(&mut self, data: &[u8], key: bool, escaped: bool) -> usize {
        let used = if escaped {
            self.lex = Lex::Str {
                key,
                escaped: false,
            };
            1
        } else {
            match memchr::memchr2(b'"', b'\\', data) {
                None => data.len(),
                Some(i) => {
                    self.lex = if data[i] == b'"' {
                        Lex::Between
                    } else {
                        Lex::Str { key, escaped: true }
                    };
                    i + 1
                }
            }
        };
        let piece = &data[..used];
        self.keep(piece);
        if key && let Some(Frame::Object { key: k, .. }) = self.frames.last_mut() {
            let room = (MAX_KEY + 1).saturating_sub(k.len());
            let ends = matches!(self.lex, Lex::Between);
            let body = if ends {
                &piece[..piece.len() - 1]
            } else {
                piece
            };
            k.extend_from_slice(&body[..room.min(body.len())]);
        }
        if let Id::Capturing(raw, true) = &mut self.id {
            let room = MAX_ID.saturating_sub(raw.len());
            raw.extend_from_slice(&piece[..room.min(piece.len())]);
            if matches!(self.lex, Lex::Between) {
                self.id = Id::Done(scalar(raw));
            }
        }
        used
    }

    /// A result text, unescaped into the spill file; returns how much of `data` it used.
    fn text(&mut self, data: &[u8], esc: Esc, high: Option<u16>) -> usize {
        let b = data[0];
        match esc {
            Esc::No if high.is_none() => {
                let Some(i) = memchr::memchr2(b'"', b'\\', data) else {
                    self.write(data);
                    return data.len();
                };
                self.write(&data[..i]);
                if data[i] == b'"' {
                    self.ranges
                        .push((self.text_start, self.spill.written - self.text_start));
                    self.keep(b"\"");
                    self.lex = Lex::Between;
                } else {
                    self.lex = Lex::Text {
                        esc: Esc::Backslash,
                        high: None,
                    };
                }
                i + 1
            }
            // After a high surrogate: its low half must follow as `\uDC00`..`\uDFFF`.
            Esc::No if b == b'\\' => {
                self.lex = Lex::Text {
                    esc: Esc::Backslash,
                    high,
                };
                1
            }
            Esc::No => {
                // A lone high surrogate: not a character.
                self.write_char(char::REPLACEMENT_CHARACTER);
                self.lex = Lex::Text { esc, high: None };
                0
            }
            Esc::Backslash => {
                let plain = match b {
                    b'n' => Some(b'\n'),
                    b't' => Some(b'\t'),
                    b'r' => Some(b'\r'),
                    b'b' => Some(8),
                    b'f' => Some(12),
                    b'u' => None,
                    other => Some(other),
                };
                let mut high = high;
                if let Some(c) = plain {
                    if high.take().is_some() {
                        self.write_char(char::REPLACEMENT_CHARACTER);
                    }
                    self.write(&[c]);
                    self.lex = Lex::Text { esc: Esc::No, high };
                } else {
                    self.lex = Lex::Text {
                        esc: Esc::Hex { n: 0, val: 0 },
                        high,
                    };
                }
                1
            }
            Esc::Hex { n, val } => {
                let Some(digit) = (b as char).to_digit(16) else {
                    // Not an escape after all: drop it, read on.
                    self.write_char(char::REPLACEMENT_CHARACTER);
                    self.lex = Lex::Text {
                        esc: Esc::No,
                        high: None,
                    };
                    return 0;
                };
                let val = val << 4 | digit as u16;
                if n < 3 {
                    self.lex = Lex::Text {
                        esc: Esc::Hex { n: n + 1, val },
                        high,
                    };
                    return 1;
                }
                let mut next_high = None;
                match (high, val) {
                    (Some(h), 0xDC00..=0xDFFF) => {
                        let c =
                            0x10000 + ((u32::from(h) - 0xD800) << 10) + (u32::from(val) - 0xDC00);
                        self.write_char(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
                    }
                    (h, 0xD800..=0xDBFF) => {
                        if h.is_some() {
                            self.write_char(char::REPLACEMENT_CHARACTER);
                        }
                        next_high = Some(val);
                    }
                    (h, v) => {
                        if h.is_some() {
                            self.write_char(char::REPLACEMENT_CHARACTER);
                        }
                        self.write_char(
                            char::from_u32(u32::from(v)).unwrap_or(char::REPLACEMENT_CHARACTER),
                        );
                    }
                }
                self.lex = Lex::Text {
                    esc: Esc::No,
                    high: next_high,
                };
                1
            }
        }
    }

    fn write_char(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.write(c.encode_utf8(&mut buf).as_bytes());
    }

    /// Creates the file at the first text.
    fn open(&mut self) {
        if self.spill.writer.is_some() || self.spill_error.is_some() {
            return;
        }
        let opened = File::options()
            .write(true)
            .create_new(true)
            .open(&self.spill.path);
        match opened {
            Ok(f) => self.spill.writer = Some(BufWriter::with_capacity(COPY_CHUNK, f)),
            Err(e) => self.spill_error = Some(format!("{}: {e}", self.spill.path.display())),
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        if bytes.is_empty() || self.spill_error.is_some() {
            return;
        }
        if let Some(w) = self.spill.writer.as_mut() {
            match w.write_all(bytes) {
                Ok(()) => self.spill.written += bytes.len() as u64,
                Err(e) => self.spill_error = Some(format!("{}: {e}", self.spill.path.display())),
            }
        }
    }
}

/// A number or string id from its raw JSON.
fn scalar(raw: &[u8]) -> Option<Value> {
    serde_json::from_slice::<Value>(raw)
        .ok()
        .filter(|v| v.is_number() || v.is_string())
}
