//! The DOM helpers `convert` shares, and the plain-text rendering of a page: an
//! iterative walk (no recursion, so any nesting depth is safe) that drops page chrome, puts
//! blocks on their own lines with a blank line after paragraphs, collapses whitespace
//! outside `<pre>`, and separates table cells with tabs.

use std::rc::Rc;

use markup5ever_rcdom::{Node, NodeData};

use super::convert::{CHROME, SITE_CHROME};

fn element_name(node: &Node) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

pub(crate) fn has_ancestor(node: &Rc<Node>, names: &[&str]) -> bool {
    let mut current = parent(node);
    while let Some(n) = current {
        if element_name(&n).is_some_and(|e| names.contains(&e)) {
            return true;
        }
        current = parent(&n);
    }
    false
}

fn parent(node: &Node) -> Option<Rc<Node>> {
    let weak = node.parent.take();
    let strong = weak.as_ref().and_then(|w| w.upgrade());
    node.parent.set(weak);
    strong
}

pub(crate) fn depth(root: &Rc<Node>) -> usize {
    let mut max = 0;
    let mut stack = vec![(root.clone(), 0usize)];
    while let Some((node, d)) = stack.pop() {
        max = max.max(d);
        for child in node.children.borrow().iter() {
            stack.push((child.clone(), d + 1));
        }
    }
    max
}

const BLOCKS: &[&str] = &[
    "address",
    "article",
    "blockquote",
    "body",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "figcaption",
    "figure",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "li",
    "main",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "title",
    "tr",
    "ul",
    "header",
    "footer",
    "caption",
    "thead",
    "tbody",
    "tfoot",
];

/// Blocks followed by a blank line.
const PARAGRAPHS: &[&str] = &[
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "blockquote",
    "table",
    "ul",
    "ol",
    "dl",
    "figure",
    "title",
];

/// Iterative walk: `Enter` a node (inside a `<pre>` or not), or `Leave` a block (to end
/// its line, with a blank line after paragraphs).
enum Step {
    Enter(Rc<Node>, bool),
    Leave(bool),
}

fn end_line(out: &mut String, blank: bool) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if blank && !out.ends_with("\n\n") {
        out.push('\n');
    }
}

pub(crate) fn text_of(root: &Rc<Node>) -> String {
    let mut out = String::new();
    let mut stack = vec![Step::Enter(root.clone(), false)];
    while let Some(step) = stack.pop() {
        let (node, in_pre) = match step {
            Step::Leave(blank) => {
                end_line(&mut out, blank);
                continue;
            }
            Step::Enter(node, in_pre) => (node, in_pre),
        };
        match &node.data {
            NodeData::Text { contents } => push_text(&mut out, &contents.borrow(), in_pre),
            NodeData::Element { name, .. } => {
                let tag: &str = &name.local;
                if CHROME.contains(&tag)
                    || SITE_CHROME.contains(&tag) && !has_ancestor(&node, &["article", "main"])
                {
                    continue;
                }
                match tag {
                    "br" => out.push('\n'),
                    "td" | "th" if !out.is_empty() && !out.ends_with('\n') => out.push('\t'),
                    _ => {}
                }
                if BLOCKS.contains(&tag) {
                    end_line(&mut out, false);
                    stack.push(Step::Leave(PARAGRAPHS.contains(&tag)));
                }
                let pre = in_pre || tag == "pre";
                for child in node.children.borrow().iter().rev() {
                    stack.push(Step::Enter(child.clone(), pre));
                }
            }
            NodeData::Document => {
                for child in node.children.borrow().iter().rev() {
                    stack.push(Step::Enter(child.clone(), false));
                }
            }
            _ => {}
        }
    }
    squeeze_blank_lines(&out)
}

fn push_text(out: &mut String, text: &str, in_pre: bool) {
    if in_pre {
        out.push_str(text);
        return;
    }
    for (i, word) in text.split_whitespace().enumerate() {
        let starts_with_space = text.starts_with(char::is_whitespace);
        if (i > 0 || starts_with_space) && !out.ends_with([' ', '\n', '\t']) {
            out.push(' ');
        }
        out.push_str(word);
    }
    if text.ends_with(char::is_whitespace) && !text.trim().is_empty() {
        out.push(' ');
    }
}

/// At most one blank line in a row; no leading or trailing blank lines.
pub(crate) fn squeeze_blank_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.lines() {
        if line.trim().is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line.trim_end());
    }
    out
}
