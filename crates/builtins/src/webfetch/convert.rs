//! Turning a downloaded body into what the model reads.
//!
//! `classify` decides what the bytes are, by `Content-Type` and, when that is missing or
//! generic, by sniffing (image magic bytes, an HTML start, text without NUL bytes); the
//! text is decoded with the declared charset (header, BOM or `<meta charset>`), UTF-8 by
//! default. HTML becomes Markdown with `htmd`, minus page chrome (scripts, styles,
//! navigation, asides, forms, embedded frames; site headers and footers unless they sit
//! inside `<article>` or `<main>`), or plain text through a walk of the same DOM. Large pages
//! are converted in pieces (`chunks`) so that only one piece's DOM is in memory at a time.
//! The text walk is iterative, and a piece nested too deeply for `htmd`'s recursion gets
//! the text instead.

use std::rc::Rc;

use htmd::HtmlToMarkdown;
use htmd::element_handler::{HandlerResult, Handlers};
use markup5ever_rcdom::{Node, NodeData};

use super::chunks;
use super::text::{depth, has_ancestor, squeeze_blank_lines, text_of};

/// Elements dropped from both Markdown and text.
pub(crate) const CHROME: &[&str] = &[
    "script", "style", "noscript", "template", "nav", "aside", "svg", "iframe", "frame",
    "frameset", "object", "embed", "canvas", "form", "button", "select", "input", "textarea",
    "dialog", "link", "meta",
];
/// Dropped unless inside an `<article>` or `<main>` (where they hold the article's title).
pub(crate) const SITE_CHROME: &[&str] = &["header", "footer"];
/// Pages nested deeper than this are not handed to `htmd`, which recurses per level.
const MAX_MARKDOWN_DEPTH: usize = 512;
/// The size of the pieces a large page is converted in.
const CHUNK_BYTES: usize = 256 * 1024;

/// What a body is.
#[derive(Debug)]
pub(crate) enum Body {
    Html(String),
    Text(String),
    Image { mime: &'static str, data: Vec<u8> },
}

/// The mime type without parameters, lower case.
pub(crate) fn essence(content_type: Option<&str>) -> Option<String> {
    content_type
        .and_then(|c| c.split(';').next())
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty())
}

/// Decides what `bytes` are. `Err` carries the content type for the "unsupported" text.
pub(crate) fn classify(content_type: Option<&str>, bytes: Vec<u8>) -> Result<Body, String> {
    if let Some(mime) = image_mime(&bytes) {
        return Ok(Body::Image { mime, data: bytes });
    }
    let mime = essence(content_type);
    let kind = match mime.as_deref() {
        Some("text/html" | "application/xhtml+xml") => Kind::Html,
        Some(m) if is_textual(m) => Kind::Text,
        None | Some("application/octet-stream" | "binary/octet-stream") => {
            if looks_like_html(&bytes) {
                Kind::Html
            } else if !bytes.iter().take(8192).any(|b| *b == 0) {
                Kind::Text
            } else {
                return Err(mime.unwrap_or_else(|| "unknown (binary data)".into()));
            }
        }
        Some(m) => return Err(m.to_string()),
    };
    let text = decode(content_type, bytes, kind == Kind::Html);
    Ok(match kind {
        Kind::Html => Body::Html(text),
        Kind::Text => Body::Text(text),
    })
}

#[derive(PartialEq)]
enum Kind {
    Html,
    Text,
}

fn is_textual(mime: &str) -> bool {
    mime.starts_with("text/")
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
        || matches!(
            mime,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/ecmascript"
                | "application/x-javascript"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/x-sh"
                | "application/sql"
                | "application/graphql"
                | "application/x-ndjson"
        )
}

fn looks_like_html(bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).to_ascii_lowercase();
    let head = head.trim_start_matches('\u{feff}').trim_start();
    head.starts_with("<!doctype html") || head.starts_with("<html") || head.starts_with("<head")
}

pub(crate) fn image_mime(head: &[u8]) -> Option<&'static str> {
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

/// Decodes with the charset from the header, a BOM, or (for HTML) a `<meta>` near the top.
fn decode(content_type: Option<&str>, bytes: Vec<u8>, html: bool) -> String {
    let label = content_type
        .and_then(charset_param)
        .or_else(|| html.then(|| meta_charset(&bytes)).flatten());
    let encoding = label
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (bom, _) = encoding_rs::Encoding::for_bom(&bytes).unwrap_or((encoding, 0));
    if bom == encoding_rs::UTF_8 {
        // The common case decodes in place, without a second copy of the body.
        let mut text = match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        if text.starts_with('\u{feff}') {
            text.drain(..3);
        }
        return text;
    }
    bom.decode(&bytes).0.into_owned()
}

fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("charset"))
            .then(|| v.trim().trim_matches(['"', '\'']).to_string())
    })
}

/// `<meta charset="x">` or `<meta http-equiv=… content="text/html; charset=x">` in the first KiB.
fn meta_charset(bytes: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let rest = head[at..].trim_start_matches(['"', '\'']);
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(rest.len());
    Some(rest[..end].to_string()).filter(|s| !s.is_empty())
}

fn parse(html: &str) -> Rc<Node> {
    let converter = HtmlToMarkdown::builder().scripting_enabled(false).build();
    match converter.html_to_tree(html) {
        Ok(tree) => tree,
        Err(_) => Node::new(NodeData::Document),
    }
}

/// Markdown, piece by piece (`chunks`), so only one piece's DOM exists at a time. A piece
/// nested too deeply for `htmd` becomes text, and a note says so.
pub(crate) fn html_to_markdown(html: &str) -> String {
    let converter = HtmlToMarkdown::builder()
        .scripting_enabled(false)
        .skip_tags(CHROME.to_vec())
        .add_handler(
            SITE_CHROME.to_vec(),
            |handlers: &dyn Handlers, element: htmd::Element| {
                if has_ancestor(element.node, &["article", "main"]) {
                    handlers.fallback(element)
                } else {
                    None::<HandlerResult>
                }
            },
        )
        .build();
    let mut out = String::new();
    let mut too_deep = false;
    for piece in chunks::split(html, CHUNK_BYTES) {
        let tree = parse(&piece.text(html));
        let part = if depth(&tree) > MAX_MARKDOWN_DEPTH {
            too_deep = true;
            text_of(&tree)
        } else {
            squeeze_blank_lines(&converter.tree_to_markdown(&tree))
        };
        append_block(&mut out, &part);
    }
    if too_deep {
        out.insert_str(0, super::texts::too_deep());
    }
    out
}

/// All text, without markup: blocks on their own lines, whitespace collapsed.
pub(crate) fn html_to_text(html: &str) -> String {
    let mut out = String::new();
    for piece in chunks::split(html, CHUNK_BYTES) {
        append_block(&mut out, &text_of(&parse(&piece.text(html))));
    }
    out
}

fn append_block(out: &mut String, part: &str) {
    if part.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(part);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_and_sniffing() {
        let html = b"<!DOCTYPE html><p>x</p>".to_vec();
        assert!(matches!(classify(None, html.clone()), Ok(Body::Html(_))));
        assert!(matches!(
            classify(Some("text/html; charset=utf-8"), html),
            Ok(Body::Html(_))
        ));
        assert!(matches!(
            classify(Some("application/json"), b"{}".to_vec()),
            Ok(Body::Text(_))
        ));
        assert!(matches!(
            classify(
                Some("application/octet-stream"),
                b"\x89PNG\r\n\x1a\nxx".to_vec()
            ),
            Ok(Body::Image {
                mime: "image/png",
                ..
            })
        ));
        assert_eq!(
            classify(Some("application/pdf"), b"%PDF-1.4".to_vec()).unwrap_err(),
            "application/pdf"
        );
        assert_eq!(
            classify(None, b"\0\x01\x02".to_vec()).unwrap_err(),
            "unknown (binary data)"
        );
    }

    #[test]
    fn charsets_are_honoured() {
        let latin1 = b"caf\xe9".to_vec();
        match classify(Some("text/plain; charset=iso-8859-1"), latin1).unwrap() {
            Body::Text(t) => assert_eq!(t, "café"),
            other => panic!("{other:?}"),
        }
        let meta =
            b"<html><head><meta charset=\"windows-1252\"></head><body>\x93hi\x94</body>".to_vec();
        match classify(Some("text/html"), meta).unwrap() {
            Body::Html(t) => assert!(t.contains("\u{201c}hi\u{201d}")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn text_drops_markup_and_chrome() {
        let html = "<html><head><title>T</title><style>p{}</style></head><body><nav>menu</nav><h1>Head</h1><p>One <b>two</b>\n three</p><ul><li>a</li><li>b</li></ul><script>x()</script><pre>  keep\n  this</pre></body></html>";
        assert_eq!(
            html_to_text(html),
            "T\n\nHead\n\nOne two three\n\na\nb\n\n  keep\n  this"
        );
    }

    #[test]
    fn pieces_convert_like_the_whole_page() {
        let section = "<section><h2>S</h2><p>Para with <a href=\"/x\">a link</a>.</p><ul><li>a</li><li>b</li></ul><pre><code>code\n</code></pre></section>";
        let html = format!(
            "<html><head><title>T</title></head><body><main><article><header><h1>Top</h1></header>{}</article></main></body></html>",
            section.repeat(CHUNK_BYTES * 3 / section.len())
        );
        assert!(chunks::split(&html, CHUNK_BYTES).len() >= 3);
        let whole = HtmlToMarkdown::builder()
            .skip_tags(CHROME.to_vec())
            .build()
            .convert(&html)
            .unwrap();
        assert_eq!(html_to_markdown(&html), squeeze_blank_lines(&whole));
        assert!(html_to_markdown(&html).starts_with(
            "T\n\n# Top\n\n## S\n\nPara with [a link](/x).\n\n*   a\n*   b\n\n```\ncode\n```"
        ));
    }

    #[test]
    fn deep_pages_fall_back_to_text() {
        let html = format!("{}deep{}", "<div>".repeat(2000), "</div>".repeat(2000));
        let md = html_to_markdown(&html);
        assert_eq!(md, format!("{}deep", super::super::texts::too_deep()));
    }
}
