//! Splitting a large HTML page into pieces that can be converted one at a time.
//!
//! A DOM costs about ten times the HTML it comes from, so a 5 MiB page parsed whole would
//! need far more memory than the page itself. Instead, a light scan of the tags (comments,
//! quoted attributes and raw-text elements such as `<script>` understood, the common
//! implied end tags applied) tracks which elements are open, and the page is cut after the
//! end tag of a block element whenever everything still open is a plain container
//! (`html`, `body`, `main`, `article`, `section`, `div`) and the piece has reached the
//! target size. Each later piece is prefixed with the containers open at its start, so it
//! parses in the same context (an `<article>`'s header is still inside the article). Where
//! the scan finds no safe place (one giant table, or markup too broken to track), the page
//! simply stays in one piece.

use std::ops::Range;

/// Elements that may be open across a cut.
const CONTAINERS: &[&str] = &["html", "body", "main", "article", "section", "div"];
/// End tags after which a cut may happen.
const BLOCK_ENDS: &[&str] = &[
    "section",
    "div",
    "article",
    "p",
    "ul",
    "ol",
    "dl",
    "table",
    "pre",
    "blockquote",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "figure",
    "header",
    "footer",
    "nav",
    "aside",
    "main",
    "form",
    "details",
    "address",
];
/// Elements without an end tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "keygen",
];
/// Elements whose content is not markup: skipped to their end tag.
const RAW: &[&str] = &[
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes",
];
/// Start tags that close an open `<p>`.
const CLOSES_P: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "div",
    "dl",
    "fieldset",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "ul",
    "figure",
    "details",
];

/// One piece: the containers to reopen, then a range of the page.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) prefix: String,
    pub(crate) range: Range<usize>,
}

impl Piece {
    pub(crate) fn text(&self, html: &str) -> String {
        let mut s = String::with_capacity(self.prefix.len() + self.range.len());
        s.push_str(&self.prefix);
        s.push_str(&html[self.range.clone()]);
        s
    }
}

/// Cuts `html` into pieces of about `target` bytes (see the module docs).
pub(crate) fn split(html: &str, target: usize) -> Vec<Piece> {
    let b = html.as_bytes();
    let mut pieces = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    let mut prefix = String::new();
    let mut start = 0;
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'<', &b[i..]) {
        let lt = i + off;
        let rest = &b[lt..];
        if rest.starts_with(b"<!--") {
            i = find(b, lt + 4, b"-->").map_or(b.len(), |p| p + 3);
            continue;
        }
        if rest.starts_with(b"<!") || rest.starts_with(b"<?") {
            i = memchr::memchr(b'>', &b[lt..]).map_or(b.len(), |p| lt + p + 1);
            continue;
        }
        let closing = rest.starts_with(b"</");
        let name_at = lt + if closing { 2 } else { 1 };
        let name_len = b[name_at..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'-')
            .count();
        if name_len == 0 || !b[name_at].is_ascii_alphabetic() {
            i = lt + 1;
            continue;
        }
        let name = html[name_at..name_at + name_len].to_ascii_lowercase();
        let end = tag_end(b, name_at + name_len);
        i = end;
        if closing {
            if let Some(pos) = stack.iter().rposition(|n| *n == name) {
                stack.truncate(pos);
            }
        } else {
            open(&mut stack, &name);
            let self_closing = end >= 2 && b[end - 2] == b'/';
            if RAW.contains(&name.as_str()) {
                i = raw_end(b, end, &name);
                continue;
            }
            if !VOID.contains(&name.as_str()) && !self_closing {
                stack.push(name);
            }
            continue;
        }
        if i - start >= target
            && BLOCK_ENDS.contains(&name.as_str())
            && stack.iter().all(|n| CONTAINERS.contains(&n.as_str()))
        {
            pieces.push(Piece {
                prefix: std::mem::take(&mut prefix),
                range: start..i,
            });
            prefix = stack.iter().map(|n| format!("<{n}>")).collect();
            start = i;
        }
    }
    if start < b.len() || pieces.is_empty() {
        pieces.push(Piece {
            prefix,
            range: start..b.len(),
        });
    }
    pieces
}

/// The implied end tags a start tag brings (the common cases of the HTML parsing rules).
fn open(stack: &mut Vec<String>, name: &str) {
    if CLOSES_P.contains(&name) && stack.last().is_some_and(|t| t == "p") {
        stack.pop();
    }
    let close_to = |stack: &mut Vec<String>, same: &[&str], scope: &[&str]| {
        for pos in (0..stack.len()).rev() {
            if scope.contains(&stack[pos].as_str()) {
                return;
            }
            if same.contains(&stack[pos].as_str()) {
                stack.truncate(pos);
                return;
            }
        }
    };
    match name {
        "li" => close_to(stack, &["li"], &["ul", "ol", "menu"]),
        "dt" | "dd" => close_to(stack, &["dt", "dd"], &["dl"]),
        "tr" => close_to(stack, &["tr"], &["table", "thead", "tbody", "tfoot"]),
        "td" | "th" => close_to(stack, &["td", "th"], &["tr", "table"]),
        "thead" | "tbody" | "tfoot" => close_to(stack, &["thead", "tbody", "tfoot"], &["table"]),
        "option" => close_to(stack, &["option"], &["select", "datalist"]),
        "body" => close_to(stack, &["head"], &["html"]),
        _ => {}
    }
}

/// The byte after the `>` that ends a tag whose name ends at `from`, skipping quoted values.
fn tag_end(b: &[u8], from: usize) -> usize {
    let mut quote = None;
    for (k, c) in b[from..].iter().enumerate() {
        match (quote, *c) {
            (None, b'"' | b'\'') => quote = Some(*c),
            (Some(q), c) if c == q => quote = None,
            (None, b'>') => return from + k + 1,
            _ => {}
        }
    }
    b.len()
}

/// The byte after `</name ...>`, searched case-insensitively from `from`.
fn raw_end(b: &[u8], from: usize, name: &str) -> usize {
    let mut at = from;
    while let Some(off) = find(b, at, b"</") {
        let after = off + 2;
        let candidate = &b[after..(after + name.len()).min(b.len())];
        if candidate.eq_ignore_ascii_case(name.as_bytes()) {
            return tag_end(b, after + name.len());
        }
        at = after;
    }
    b.len()
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(&b[from.min(b.len())..], needle).map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(html: &str, target: usize) -> Vec<String> {
        split(html, target).iter().map(|p| p.text(html)).collect()
    }

    #[test]
    fn small_pages_stay_whole() {
        let html = "<html><body><p>a</p></body></html>";
        assert_eq!(texts(html, 1024), vec![html.to_string()]);
    }

    #[test]
    fn cuts_between_blocks_and_reopens_containers() {
        let html = "<html><body><main><section><p>one</p><ul><li>a<li>b</ul><p>two</section><section><pre>x</pre></section></main></body></html>";
        assert_eq!(
            texts(html, 10),
            vec![
                "<html><body><main><section><p>one</p>",
                "<html><body><main><section><ul><li>a<li>b</ul>",
                "<html><body><main><section><p>two</section>",
                "<html><body><main><section><pre>x</pre>",
                "<html><body><main><section></section>",
                "<html><body><main></main></body></html>",
            ]
        );
    }

    #[test]
    fn never_cuts_inside_lists_tables_scripts_or_comments() {
        let html = "<div><table><tr><td><p>x</p></td></tr></table><script>if (a</div>) {}</script><!-- </p> --><p>y</p></div>";
        assert_eq!(
            texts(html, 1),
            vec![
                "<div><table><tr><td><p>x</p></td></tr></table>",
                "<div><script>if (a</div>) {}</script><!-- </p> --><p>y</p>",
                "<div></div>",
            ]
        );
    }
}
