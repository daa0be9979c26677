//! The Language Server Protocol's base layer: JSON-RPC messages framed by a
//! `Content-Length` header on the server's stdin/stdout, and `file://` URIs for paths.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// Messages larger than this are refused (a runaway server).
const MAX_MESSAGE: usize = 256 * 1024 * 1024;

/// `value` as one framed message.
pub(crate) fn encode(value: &Value) -> Vec<u8> {
    let body = value.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// Reads the next message; `Ok(None)` at the end of the stream.
pub(crate) async fn read_message<R: AsyncBufRead + Unpin>(
    reader: &mut R,
) -> std::io::Result<Option<Value>> {
    let mut length: Option<usize> = None;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).await? == 0 {
            return Ok(None);
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            if length.is_some() {
                break;
            }
            continue;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok();
        }
    }
    let length = length.unwrap_or(0);
    if length > MAX_MESSAGE {
        return Err(std::io::Error::other(format!(
            "a message of {length} bytes is larger than the {MAX_MESSAGE} this client reads"
        )));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| std::io::Error::other(format!("a message is not JSON: {e}")))
}

/// `file:///…` for an absolute path, with the characters URIs reserve escaped.
pub fn file_uri(path: &Path) -> String {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The path of a `file://` URI (`None` for another scheme).
pub fn uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?, 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(PathBuf::from(String::from_utf8_lossy(&out).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn messages_round_trip_through_the_framing() {
        let a = serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"é": "ü"}});
        let b = serde_json::json!({"jsonrpc": "2.0", "method": "x"});
        let mut bytes = encode(&a);
        bytes.extend(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n".iter());
        bytes.extend(encode(&b));
        let mut reader = tokio::io::BufReader::new(&bytes[..]);
        assert_eq!(read_message(&mut reader).await.unwrap(), Some(a));
        assert_eq!(read_message(&mut reader).await.unwrap(), Some(b));
        assert_eq!(read_message(&mut reader).await.unwrap(), None);
    }

    #[test]
    fn uris_escape_and_come_back() {
        let p = Path::new("/tmp/a dir/b#c%.ts");
        let uri = file_uri(p);
        assert_eq!(uri, "file:///tmp/a%20dir/b%23c%25.ts");
        assert_eq!(uri_path(&uri).unwrap(), p);
        assert_eq!(uri_path("untitled:x"), None);
    }
}
