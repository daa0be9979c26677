//! The `read` built-in: a window of a text file as numbered lines, an image as an
//! attachment, or a folder's entries.
//!
//! Data flow: `{filePath, offset?, limit?}` → the path is resolved against the session
//! directory and gated (`external_directory` when outside the workspace, except the spill
//! folder; then `read` with the path's pattern, which the default rules turn into an ask
//! for `.env` files; then `sensitive` for keys and credentials, see `secrets`) → on a
//! blocking thread: a folder is listed; otherwise the first 4 KiB
//! are sniffed (image magic bytes → attachment; NUL bytes or mostly control characters →
//! refusal) → a text file is streamed through a 64 KiB buffer: lines before `offset` are
//! counted with `memchr` and never stored, each shown line is copied up to a fixed cap, so
//! memory stays bounded even for a 2 GiB file with no newline → numbered lines plus a footer
//! telling the model how to continue. A successful read is remembered in `FileTimes` so
//! `write`/`edit` can refuse to clobber changes the model has not seen.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine;
use podcode_protocol::{Attachment, PermissionRequest, ToolResult, ToolSpec};
use podcode_tools::{Tool, ToolContext, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::glob::parse_args;
use crate::workspace::{FileTimes, ResolvedPath, Workspace};

/// Lines shown when the model gives no `limit`.
const DEFAULT_LIMIT: u64 = 2000;
/// Lines longer than this many characters are cut.
const MAX_LINE_CHARS: usize = 2000;
/// The whole output stays within the pipeline's default truncation limits (2000 lines,
/// 50 KiB), so a read is never spilled and its footer always survives.
const MAX_OUTPUT_LINES: usize = 2000 - 2;
const MAX_OUTPUT_BYTES: usize = 50 * 1024 - 512;
/// Images larger than this are refused rather than attached.
const MAX_IMAGE_BYTES: u64 = 10 * 1024 * 1024;
const SNIFF_BYTES: usize = 4096;

const DESCRIPTION: &str = "Reads a file and returns its lines numbered like `cat -n` (line number, tab, text). Read a file before editing it; read also gets the rest of a truncated tool output.
- Returns up to 2000 lines from the start; for long files pass `offset` (1-based first line) and `limit`, and follow the footer, which says where to continue.
- Lines over 2000 characters are cut; output is capped at about 50 KB per call.
- png, jpeg, gif and webp images come back as attachments; other binary files are refused. A folder path lists its entries.
Example: {\"filePath\": \"src/main.rs\", \"offset\": 120, \"limit\": 80}";

fn default_limit() -> u64 {
    DEFAULT_LIMIT
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ReadArgs {
    /// The file to read, relative to the working directory or absolute.
    file_path: String,
    /// The 1-based line to start at (default: the first).
    #[serde(default)]
    offset: Option<u64>,
    /// How many lines to read.
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1))]
    limit: u64,
}

pub struct ReadTool {
    spec: ToolSpec,
    times: Arc<FileTimes>,
}

impl ReadTool {
    pub fn new(times: Arc<FileTimes>) -> Self {
        let spec =
            ToolSpec::new("read", DESCRIPTION, crate::params_schema::<ReadArgs>()).idempotent(true);
        Self { spec, times }
    }
}

/// What a read produced.
enum Outcome {
    Text {
        output: String,
        shown: usize,
        more: bool,
    },
    Image {
        mime: &'static str,
        data: Vec<u8>,
    },
    Folder {
        output: String,
    },
}

#[async_trait]
impl Tool for ReadTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn gates_itself(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolResult, ToolError> {
        let args: ReadArgs = parse_args("read", args)?;
        if args.file_path.trim().is_empty() {
            return Err(ToolError::failed(
                "filePath is empty. Pass the path of the file to read, relative to the working directory or absolute.",
            ));
        }
        let resolved = Workspace::resolve(&ctx, args.file_path.trim());
        Workspace::ensure_access(&ctx, &resolved, true).await?;
        ctx.ask(PermissionRequest {
            permission: "read".into(),
            patterns: vec![resolved.pattern.clone()],
            always: vec![resolved.pattern.clone()],
            metadata: json!({ "path": resolved.abs }),
        })
        .await?;
        crate::secrets::ensure_allowed(&ctx, &resolved).await?;
        let offset = args.offset.unwrap_or(1).max(1);
        let limit = args.limit.max(1);
        let abort = ctx.abort().clone();
        let path = resolved.clone();
        // A folder's listing leaves secret entries out, unless the folder itself was approved.
        let approved = (crate::secrets::classify(&resolved.abs)
            == Some(crate::secrets::Secret::Credential))
        .then(|| resolved.abs.clone());
        let secrets = crate::secrets::SecretFilter::new(&ctx, true, approved);
        let outcome =
            tokio::task::spawn_blocking(move || read_path(&path, offset, limit, &secrets, &abort))
                .await
                .map_err(|e| ToolError::failed(format!("reading stopped unexpectedly: {e}")))??;
        let title = resolved.pattern.clone();
        let abs = resolved.abs.to_string_lossy().into_owned();
        Ok(match outcome {
            Outcome::Folder { output } => ToolResult::text(output)
                .with_title(title)
                .with_metadata(json!({ "path": abs })),
            Outcome::Image { mime, data } => {
                self.times.mark(ctx.session_id(), &resolved.abs);
                let url = format!(
                    "data:{mime};base64,{}",
                    base64::engine::general_purpose::STANDARD.encode(&data)
                );
                let mut result = ToolResult::text(format!(
                    "{} is an image ({mime}, {} bytes); it is attached to this result.",
                    resolved.pattern,
                    data.len()
                ))
                .with_title(title)
                .with_metadata(json!({ "path": abs, "mime": mime }));
                let filename = resolved
                    .abs
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned());
                result.attachments.push(Attachment {
                    mime: mime.into(),
                    url,
                    filename,
                });
                result
            }
            Outcome::Text {
                output,
                shown,
                more,
            } => {
                self.times.mark(ctx.session_id(), &resolved.abs);
                ToolResult::text(output)
                    .with_title(title)
                    .with_metadata(json!({
                        "path": abs, "offset": offset, "lines": shown, "truncated": more,
                    }))
            }
        })
    }
}

fn read_path(
    path: &ResolvedPath,
    offset: u64,
    limit: u64,
    secrets: &crate::secrets::SecretFilter,
    abort: &CancellationToken,
) -> Result<Outcome, ToolError> {
    let label = path.pattern.as_str();
    let meta = match std::fs::metadata(&path.abs) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_found(path)),
        Err(e) => return Err(open_error(label, &e)),
    };
    if meta.is_dir() {
        let output =
            crate::list::flat_listing(&path.abs, label, offset, limit, MAX_OUTPUT_LINES, secrets)?;
        return Ok(Outcome::Folder { output });
    }
    if !meta.is_file() {
        return Err(ToolError::failed(format!(
            "{label} is not a regular file (it is a device, socket or pipe), so it cannot be read."
        )));
    }
    let mut file = File::open(&path.abs).map_err(|e| open_error(label, &e))?;
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut file)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| open_error(label, &e))?;
    if let Some(mime) = image_mime(&head) {
        if meta.len() > MAX_IMAGE_BYTES {
            return Err(ToolError::failed(format!(
                "{label} is an image of {} bytes, too large to attach (the limit is {MAX_IMAGE_BYTES} bytes).",
                meta.len()
            )));
        }
        let data = std::fs::read(&path.abs).map_err(|e| open_error(label, &e))?;
        return Ok(Outcome::Image { mime, data });
    }
    if is_binary(&head) {
        return Err(ToolError::failed(binary_text(label, meta.len())));
    }
    // Read the sniffed bytes again through the same reader: the file is not reopened.
    let reader = BufReader::with_capacity(64 * 1024, std::io::Cursor::new(head).chain(file));
    read_lines(reader, label, offset, limit, abort)
}

/// The text shown for a binary file that is not a supported image.
fn binary_text(label: &str, size: u64) -> String {
    format!(
        "{label} is a binary file ({size} bytes), not text, so it cannot be shown. read only shows text files and png, jpeg, gif or webp images."
    )
}

fn read_lines<R: BufRead>(
    mut reader: R,
    label: &str,
    offset: u64,
    limit: u64,
    abort: &CancellationToken,
) -> Result<Outcome, ToolError> {
    let io_err = |e: std::io::Error| ToolError::failed(format!("reading {label} failed: {e}"));
    let skipped = skip_lines(&mut reader, offset - 1, abort).map_err(io_err)?;
    if abort.is_cancelled() {
        return Err(ToolError::Aborted);
    }
    let mut out = String::new();
    let mut line = Vec::new();
    let mut shown = 0usize;
    let mut invalid_utf8 = false;
    let max_lines = usize::try_from(limit)
        .unwrap_or(usize::MAX)
        .min(MAX_OUTPUT_LINES);
    // Why the window ended before the end of the file, if it did.
    let mut stopped: Option<&str> = None;
    loop {
        let cut = match next_line(&mut reader, &mut line, MAX_LINE_CHARS * 4).map_err(io_err)? {
            None => break,
            Some(cut) => cut,
        };
        let (text, bad) = decode_line(&line, cut);
        invalid_utf8 |= bad;
        let numbered = format!("{:>6}\t{text}\n", offset + shown as u64);
        if out.len() + numbered.len() > MAX_OUTPUT_BYTES {
            stopped = Some("bytes");
            break;
        }
        out.push_str(&numbered);
        shown += 1;
        if shown >= max_lines {
            if reader.fill_buf().map_err(io_err)?.is_empty() {
                break;
            }
            stopped = Some("lines");
            break;
        }
    }
    if shown == 0 && offset > 1 {
        let total = skipped;
        return Err(ToolError::failed(format!(
            "offset {offset} is past the end of {label}, which has {total} lines. Use an offset between 1 and {total}."
        )));
    }
    let next = offset + shown as u64;
    let footer = match stopped {
        None if shown == 0 => "(File is empty.)".to_string(),
        None => format!("(End of file - total {} lines)", next - 1),
        Some("bytes") => {
            format!("(Output capped at 50 KB. File has more lines. Use offset={next} to continue.)")
        }
        Some(_) => format!("(File has more lines. Use offset={next} to continue.)"),
    };
    let mut output = out;
    if shown > 0 {
        output.push('\n');
    }
    output.push_str(&footer);
    if invalid_utf8 {
        output.push_str("\n(Some bytes are not valid UTF-8 and are shown as \u{FFFD}.)");
    }
    Ok(Outcome::Text {
        output,
        shown,
        more: stopped.is_some(),
    })
}

/// Skips `n` lines without storing them; returns how many were skipped (fewer at EOF).
fn skip_lines<R: BufRead>(
    reader: &mut R,
    n: u64,
    abort: &CancellationToken,
) -> std::io::Result<u64> {
    let mut skipped = 0;
    let mut partial = false;
    while skipped < n {
        if abort.is_cancelled() {
            return Ok(skipped);
        }
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            // A last line without a newline still counts as a line.
            return Ok(skipped + u64::from(partial));
        }
        let mut used = buf.len();
        partial = true;
        for i in memchr::memchr_iter(b'\n', buf) {
            skipped += 1;
            partial = false;
            if skipped == n {
                used = i + 1;
                break;
            }
        }
        if used == buf.len() && buf.last() != Some(&b'\n') {
            partial = true;
        }
        reader.consume(used);
    }
    Ok(skipped)
}

/// Reads the next line into `out` (without its `\n`), keeping at most `cap` bytes and
/// skipping the rest. `None` at end of file; `Some(true)` when the line was cut.
fn next_line<R: BufRead>(
    reader: &mut R,
    out: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<bool>> {
    out.clear();
    let mut any = false;
    let mut cut = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(any.then_some(cut));
        }
        any = true;
        let (chunk, used, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        let room = cap.saturating_sub(out.len());
        if chunk.len() > room {
            cut = true;
        }
        out.extend_from_slice(&chunk[..chunk.len().min(room)]);
        reader.consume(used);
        if done {
            return Ok(Some(cut));
        }
    }
}

/// Lossy-decodes a line, cutting it at `MAX_LINE_CHARS`. Returns the text and whether it
/// held invalid UTF-8 (a sequence cut off by the byte cap does not count).
fn decode_line(bytes: &[u8], byte_cut: bool) -> (String, bool) {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    // `from_utf8` reports the first problem; an incomplete sequence at the very end of a
    // line the byte cap cut is the cap's doing, not the file's.
    let invalid = match std::str::from_utf8(bytes) {
        Ok(_) => false,
        Err(e) => !(byte_cut && e.error_len().is_none()),
    };
    let text = String::from_utf8_lossy(bytes);
    let cut_at = text.char_indices().nth(MAX_LINE_CHARS).map(|(i, _)| i);
    let kept = &text[..cut_at.unwrap_or(text.len())];
    if cut_at.is_some() || byte_cut {
        (
            format!("{kept}… [line truncated at {MAX_LINE_CHARS} characters]"),
            invalid,
        )
    } else {
        (kept.to_string(), invalid)
    }
}

fn image_mime(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if head.starts_with(b"\xff\xd8\xff") {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// NUL bytes, or more than 30% control characters, mean binary.
fn is_binary(head: &[u8]) -> bool {
    if head.is_empty() {
        return false;
    }
    if head.contains(&0) || head.starts_with(b"%PDF-") {
        return true;
    }
    let control = head
        .iter()
        .filter(|b| {
            (**b < 0x20 && !matches!(**b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b | 0x08))
                || **b == 0x7f
        })
        .count();
    control * 10 > head.len() * 3
}

fn open_error(label: &str, e: &std::io::Error) -> ToolError {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => ToolError::failed(format!(
            "the operating system denied access to {label} (permission denied). Podcode cannot read it; ask the user if you need its contents."
        )),
        _ => ToolError::failed(format!("{label} could not be read: {e}.")),
    }
}

/// "File not found", with up to three similar names from the same folder.
fn not_found(path: &ResolvedPath) -> ToolError {
    let label = &path.pattern;
    let Some(parent) = path.abs.parent() else {
        return ToolError::failed(format!("File not found: {label}."));
    };
    let wanted = path
        .abs
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let entries = match std::fs::read_dir(parent) {
        Ok(e) => e,
        Err(_) => {
            return ToolError::failed(format!(
                "File not found: {label}. Its folder does not exist either; use list or glob to find the file."
            ));
        }
    };
    let mut scored: Vec<(f64, String)> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|name| {
            let lower = name.to_lowercase();
            let score = strsim::normalized_damerau_levenshtein(&wanted, &lower)
                .max(strsim::jaro_winkler(&wanted, &lower) - 0.15);
            let related = wanted.len() >= 3
                && lower.len() >= 3
                && (lower.contains(&wanted) || wanted.contains(&lower));
            (score >= 0.6 || related).then_some((score.max(if related { 0.6 } else { 0.0 }), name))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let prefix = Path::new(label)
        .parent()
        .filter(|p| !p.as_os_str().is_empty());
    let suggestions: Vec<String> = scored
        .into_iter()
        .take(3)
        .map(|(_, name)| match prefix {
            Some(p) => p.join(name).to_string_lossy().into_owned(),
            None => name,
        })
        .collect();
    if suggestions.is_empty() {
        ToolError::failed(format!(
            "File not found: {label}. Check the path, or use glob or list to find the file."
        ))
    } else {
        ToolError::failed(format!(
            "File not found: {label}\n\nDid you mean one of these?\n{}",
            suggestions.join("\n")
        ))
    }
}
