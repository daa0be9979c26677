//! Output truncation with a spill file. Everything a call outputs flows through one
//! `OutputSink`: while the output is within the limits it stays in memory; the moment it
//! crosses either limit (lines or bytes) the sink opens a spill file, writes everything so
//! far to it and from then on streams every byte there, keeping in memory only the end the
//! tool asked for (`head`: the first lines, `tail`: a ring of the last bytes). Memory stays
//! bounded by the limits however much a tool prints.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use podcode_protocol::Truncation;

/// Where the full text of a truncated output went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillInfo {
    /// The spill file.
    pub path: PathBuf,
}

/// What truncation did, for the note the model reads and for front ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncated {
    /// The file holding the full output.
    pub spill_path: PathBuf,
    /// Lines of the full output.
    pub total_lines: u64,
    /// Bytes of the full output.
    pub total_bytes: u64,
    /// Lines the model got.
    pub kept_lines: u64,
    /// Lines cut.
    pub cut_lines: u64,
    /// Bytes cut.
    pub cut_bytes: u64,
    /// Why the spill file could not be written completely (then it was removed, and the
    /// note says the full output could not be saved instead of pointing at it).
    pub spill_error: Option<String>,
}

/// Collects a call's output within the line and byte limits (keeping the head or the tail),
/// spilling the full text to a file once it passes them.
pub struct OutputSink {
    mode: Truncation,
    max_lines: usize,
    max_bytes: usize,
    spill_path: PathBuf,
    /// All output while within limits; after overflow in head mode, the kept head.
    buf: Vec<u8>,
    /// Tail mode after overflow: the last `max_bytes` bytes.
    ring: VecDeque<u8>,
    /// The byte just before the ring's first byte, to know if the ring starts mid-line.
    ring_prev: Option<u8>,
    spill: Option<BufWriter<File>>,
    total_bytes: u64,
    newlines: u64,
    last_byte: Option<u8>,
    error: Option<String>,
}

impl OutputSink {
    /// A sink keeping `mode`'s end within `max_lines`/`max_bytes`, spilling to `spill_path`.
    pub fn new(mode: Truncation, max_lines: usize, max_bytes: usize, spill_path: PathBuf) -> Self {
        Self {
            mode,
            max_lines: max_lines.max(1),
            max_bytes: max_bytes.max(1),
            spill_path,
            buf: Vec::new(),
            ring: VecDeque::new(),
            ring_prev: None,
            spill: None,
            total_bytes: 0,
            newlines: 0,
            last_byte: None,
            error: None,
        }
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.total_bytes == 0
    }

    fn total_lines(&self) -> u64 {
        match self.last_byte {
            None => 0,
            Some(b'\n') => self.newlines,
            Some(_) => self.newlines + 1,
        }
    }

    /// Appends output.
    pub fn write(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        self.total_bytes += data.len() as u64;
        self.newlines += memchr_count(data);
        self.last_byte = data.last().copied();
        if self.spill.is_none() {
            self.buf.extend_from_slice(data);
            if self.total_bytes as usize > self.max_bytes
                || self.total_lines() as usize > self.max_lines
            {
                self.overflow();
            }
            return;
        }
        if let Some(w) = self.spill.as_mut()
            && let Err(e) = w.write_all(data)
        {
            self.error.get_or_insert(e.to_string());
        }
        if self.mode == Truncation::Tail {
            self.push_ring(data);
        }
    }

    fn overflow(&mut self) {
        let file = std::fs::create_dir_all(self.spill_path.parent().unwrap_or(Path::new(".")))
            .and_then(|_| File::create(&self.spill_path));
        let mut writer = match file {
            Ok(f) => BufWriter::with_capacity(256 * 1024, f),
            Err(e) => {
                self.error = Some(format!(
                    "could not create spill file {}: {e}",
                    self.spill_path.display()
                ));
                // Still bound memory: fall back to a writer that discards.
                match File::create("/dev/null") {
                    Ok(f) => BufWriter::new(f),
                    Err(_) => return,
                }
            }
        };
        if let Err(e) = writer.write_all(&self.buf) {
            self.error.get_or_insert(e.to_string());
        }
        self.spill = Some(writer);
        let buf = std::mem::take(&mut self.buf);
        match self.mode {
            Truncation::Head => {
                let end = head_cut(&buf, self.max_lines, self.max_bytes);
                self.buf = buf[..end].to_vec();
            }
            Truncation::Tail => self.push_ring(&buf),
        }
    }

    fn push_ring(&mut self, data: &[u8]) {
        let data = if data.len() > self.max_bytes {
            self.ring.clear();
            self.ring_prev = Some(data[data.len() - self.max_bytes - 1]);
            &data[data.len() - self.max_bytes..]
        } else {
            data
        };
        self.ring.extend(data);
        let excess = self.ring.len().saturating_sub(self.max_bytes);
        if excess > 0 {
            self.ring_prev = self.ring.get(excess - 1).copied();
            self.ring.drain(..excess);
        }
    }

    /// Ends the stream: the kept text, and what was cut if anything was.
    pub fn finish(mut self) -> (String, Option<Truncated>) {
        let total_lines = self.total_lines();
        let Some(mut writer) = self.spill.take() else {
            return (String::from_utf8_lossy(&self.buf).into_owned(), None);
        };
        // Complete means on disk: a full disk may only report itself at flush or sync.
        if let Err(e) = writer.flush().and_then(|()| writer.get_ref().sync_data()) {
            self.error.get_or_insert(e.to_string());
        }
        drop(writer);
        if self.error.is_some() {
            // A partial spill file would be read as the whole output; better none at all.
            let _ = std::fs::remove_file(&self.spill_path);
        }
        let kept: Vec<u8> = match self.mode {
            Truncation::Head => std::mem::take(&mut self.buf),
            Truncation::Tail => {
                let ring: Vec<u8> = self.ring.iter().copied().collect();
                let mid_line = self.ring_prev.is_some_and(|b| b != b'\n');
                let start = tail_cut(&ring, self.max_lines, self.max_bytes, mid_line);
                ring[start..].to_vec()
            }
        };
        let kept_lines =
            memchr_count(&kept) + u64::from(!kept.is_empty() && !kept.ends_with(b"\n"));
        let text = String::from_utf8_lossy(&kept)
            .trim_end_matches('\n')
            .to_string();
        let info = Truncated {
            spill_path: self.spill_path.clone(),
            total_lines,
            total_bytes: self.total_bytes,
            kept_lines,
            cut_lines: total_lines.saturating_sub(kept_lines),
            cut_bytes: self.total_bytes.saturating_sub(kept.len() as u64),
            spill_error: self.error.take(),
        };
        (text, Some(info))
    }

    /// An I/O problem while spilling (e.g. a full disk); the kept text is still valid.
    pub fn spill_error(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

fn memchr_count(data: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', data).count() as u64
}

/// Byte offset that keeps at most `max_lines` whole lines and `max_bytes` bytes from the start.
fn head_cut(buf: &[u8], max_lines: usize, max_bytes: usize) -> usize {
    let mut end = buf.len().min(max_bytes);
    if let Some((i, _)) = buf[..end]
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(max_lines - 1)
    {
        end = i + 1;
    } else if end < buf.len()
        && let Some(nl) = buf[..end].iter().rposition(|b| *b == b'\n')
    {
        end = nl + 1;
    }
    char_boundary_back(buf, end)
}

/// Byte offset from which at most `max_lines` lines and `max_bytes` bytes remain.
fn tail_cut(buf: &[u8], max_lines: usize, max_bytes: usize, starts_mid_line: bool) -> usize {
    let mut start = buf.len().saturating_sub(max_bytes);
    let body = buf.strip_suffix(b"\n").unwrap_or(buf);
    let mut seen = 0;
    for (i, b) in body.iter().enumerate().rev() {
        if *b == b'\n' {
            seen += 1;
            if seen == max_lines {
                start = start.max(i + 1);
                break;
            }
        }
    }
    let mid_line = if start == 0 {
        starts_mid_line
    } else {
        buf[start - 1] != b'\n'
    };
    if mid_line
        && let Some(nl) = buf[start..].iter().position(|b| *b == b'\n')
        && start + nl + 1 < buf.len()
    {
        start += nl + 1;
    }
    char_boundary_fwd(buf, start)
}

fn char_boundary_back(buf: &[u8], mut i: usize) -> usize {
    while i > 0 && i < buf.len() && (buf[i] & 0xC0) == 0x80 {
        i -= 1;
    }
    i
}

fn char_boundary_fwd(buf: &[u8], mut i: usize) -> usize {
    while i < buf.len() && (buf[i] & 0xC0) == 0x80 {
        i += 1;
    }
    i
}

/// Removes spill files older than `max_age`; returns how many were removed.
pub fn clean_spill_dir(dir: &Path, max_age: Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let now = SystemTime::now();
    let mut removed = 0;
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .map(|t| now.duration_since(t).unwrap_or_default() > max_age)
            .unwrap_or(false);
        if old && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink(mode: Truncation, lines: usize, bytes: usize, dir: &Path) -> OutputSink {
        OutputSink::new(mode, lines, bytes, dir.join("spill.txt"))
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn small_output_is_untouched_and_spills_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = sink(Truncation::Head, 10, 1000, dir.path());
        s.write(b"a\nb\n");
        let (text, t) = s.finish();
        assert_eq!(text, "a\nb\n");
        assert!(t.is_none());
        assert!(!dir.path().join("spill.txt").exists());
    }

    #[test]
    fn head_keeps_the_first_lines_and_spills_everything() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = sink(Truncation::Head, 3, 1000, dir.path());
        let all = numbered(10);
        for chunk in all.as_bytes().chunks(4) {
            s.write(chunk);
        }
        let (text, t) = s.finish();
        assert_eq!(text, "line 1\nline 2\nline 3");
        let t = t.unwrap();
        assert_eq!((t.total_lines, t.kept_lines, t.cut_lines), (10, 3, 7));
        assert_eq!(std::fs::read_to_string(&t.spill_path).unwrap(), all);
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = sink(Truncation::Tail, 2, 1000, dir.path());
        s.write(numbered(50).as_bytes());
        let (text, t) = s.finish();
        assert_eq!(text, "line 49\nline 50");
        assert_eq!(t.unwrap().cut_lines, 48);
    }

    #[test]
    fn byte_limit_cuts_at_a_line_and_never_inside_a_character() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = sink(Truncation::Head, 1000, 10, dir.path());
        s.write("ééééééééé\nxx\n".as_bytes());
        let (text, t) = s.finish();
        assert!(t.is_some());
        assert!(text.len() <= 10);
        assert!(std::str::from_utf8(text.as_bytes()).is_ok());
        let mut s = sink(Truncation::Tail, 1000, 9, dir.path());
        s.write("aaaa\nbbbb\ncccc\n".as_bytes());
        assert_eq!(s.finish().0, "cccc");
    }

    #[test]
    fn memory_stays_bounded_while_streaming() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = sink(Truncation::Tail, 100, 4096, dir.path());
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..64 {
            s.write(&chunk);
            assert!(s.buf.len() <= 4096 && s.ring.len() <= 4096);
        }
        let (_, t) = s.finish();
        assert_eq!(t.unwrap().total_bytes, 64 * 64 * 1024);
    }

    #[test]
    fn a_spill_that_cannot_be_written_is_reported_and_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        // The spill folder's place is taken by a file, so the spill file cannot be created.
        std::fs::write(dir.path().join("blocked"), "").unwrap();
        let mut s = OutputSink::new(
            Truncation::Head,
            2,
            1000,
            dir.path().join("blocked/spill.txt"),
        );
        s.write(numbered(10).as_bytes());
        let (text, t) = s.finish();
        assert_eq!(text, "line 1\nline 2");
        let t = t.unwrap();
        let why = t.spill_error.unwrap();
        assert!(why.starts_with("could not create spill file "), "{why}");
        assert!(!t.spill_path.exists());
    }

    #[test]
    fn old_spill_files_are_cleaned() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        assert_eq!(clean_spill_dir(dir.path(), Duration::from_secs(3600)), 0);
        assert_eq!(clean_spill_dir(dir.path(), Duration::ZERO), 1);
    }
}
