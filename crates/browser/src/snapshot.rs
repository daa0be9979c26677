//! The page as text: Chromium's accessibility tree (`Accessibility.getFullAXTree`), one
//! line per element, indented by nesting: `[ref=e12] button "Save" disabled`.
//!
//! Ignored nodes and unnamed generic containers are skipped (their children move up);
//! text that only repeats its parent's name is dropped, and so are the line boxes
//! (`InlineTextBox`) Chromium lays a text out in: the text line above them has it all. Every element line carries a ref,
//! the same for the same DOM node until it goes away (`Tab::ref_for`). The text is bounded
//! by `MAX_LINES` and `MAX_CHARS`, with a note saying so.

use std::collections::HashMap;

use chromiumoxide::cdp::browser_protocol::accessibility::{AxNode, AxValue, GetFullAxTreeParams};
use podcode_tools::ToolError;
use serde_json::Value;

use crate::page::Tab;
use crate::texts;

const MAX_LINES: usize = 600;
const MAX_CHARS: usize = 40_000;
const MAX_NAME: usize = 160;

/// Roles that are structure only: shown when they have a name, skipped otherwise.
const PLAIN: [&str; 8] = [
    "generic",
    "none",
    "presentation",
    "LineBreak",
    "InlineTextBox",
    "paragraph",
    "group",
    "Section",
];

/// States worth a word after the name (boolean true ⇒ the word; other values ⇒ word=value).
const STATES: [&str; 12] = [
    "focused",
    "disabled",
    "checked",
    "selected",
    "expanded",
    "pressed",
    "required",
    "readonly",
    "invalid",
    "level",
    "multiselectable",
    "url",
];

/// Takes a snapshot of the tab's page.
pub(crate) async fn take(tab: &Tab) -> Result<String, ToolError> {
    let tree = tab.call(GetFullAxTreeParams::default()).await?;
    Ok(render(&|node| tab.ref_for(node), &tree.nodes))
}

fn text(v: &Option<AxValue>) -> String {
    match v.as_ref().and_then(|v| v.value.as_ref()) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn quoted(s: &str) -> String {
    let one_line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let clipped: String = if one_line.chars().count() > MAX_NAME {
        let mut c: String = one_line.chars().take(MAX_NAME).collect();
        c.push('…');
        c
    } else {
        one_line
    };
    format!("\"{}\"", clipped.replace('"', "\\\""))
}

/// Gives the ref of a DOM node (by its backend id).
type RefFor<'a> = &'a dyn Fn(i64) -> String;

fn render(ref_for: RefFor<'_>, nodes: &[AxNode]) -> String {
    let by_id: HashMap<&str, &AxNode> = nodes
        .iter()
        .map(|n| (n.node_id.inner().as_str(), n))
        .collect();
    let Some(root) = nodes.iter().find(|n| n.parent_id.is_none()) else {
        return String::from("(empty page)");
    };
    let mut lines = Vec::new();
    walk(ref_for, &by_id, root, 0, "", &mut lines);
    let total = lines.len();
    let mut out = String::new();
    let mut shown = 0;
    for line in &lines {
        if shown >= MAX_LINES || out.len() + line.len() > MAX_CHARS {
            break;
        }
        out.push_str(line);
        out.push('\n');
        shown += 1;
    }
    if shown < total {
        out.push_str(&texts::truncated(shown, total));
    }
    out
}

fn walk(
    ref_for: RefFor<'_>,
    by_id: &HashMap<&str, &AxNode>,
    node: &AxNode,
    depth: usize,
    parent_name: &str,
    lines: &mut Vec<String>,
) {
    let role = text(&node.role);
    let name = text(&node.name);
    let children = node.child_ids.as_deref().unwrap_or_default();
    let skip = node.ignored
        || (PLAIN.contains(&role.as_str()) && name.trim().is_empty())
        // One line box of the text it sits in (`parent_name`), already shown there.
        || (role == "InlineTextBox" && parent_name.contains(name.trim()));
    let mut next_depth = depth;
    let mut next_parent = parent_name.to_string();
    if !skip {
        if role == "StaticText" {
            let t = name.trim();
            if !t.is_empty() && t != parent_name.trim() {
                lines.push(format!("{}text {}", "  ".repeat(depth), quoted(t)));
            }
            next_parent = name.clone();
        } else {
            let mut line = "  ".repeat(depth);
            if let Some(backend) = &node.backend_dom_node_id {
                line.push_str(&format!("[ref={}] ", ref_for(*backend.inner())));
            }
            line.push_str(if role == "RootWebArea" { "page" } else { &role });
            if !name.trim().is_empty() {
                line.push(' ');
                line.push_str(&quoted(&name));
            }
            let value = text(&node.value);
            if !value.is_empty() && value != name {
                line.push_str(&format!(" value={}", quoted(&value)));
            }
            for p in node.properties.as_deref().unwrap_or_default() {
                let key = serde_json::to_value(&p.name)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                if !STATES.contains(&key.as_str()) {
                    continue;
                }
                match p.value.value.as_ref() {
                    Some(Value::Bool(true)) => line.push_str(&format!(" {key}")),
                    Some(Value::String(s)) if key == "checked" && s == "true" => {
                        line.push_str(" checked")
                    }
                    Some(Value::String(s)) if key == "checked" && s == "mixed" => {
                        line.push_str(" checked=mixed")
                    }
                    Some(Value::String(s)) if key == "url" && !s.is_empty() => {
                        line.push_str(&format!(" -> {s}"))
                    }
                    Some(Value::Number(n)) if key == "level" => {
                        line.push_str(&format!(" level={n}"))
                    }
                    _ => {}
                }
            }
            lines.push(line);
            next_depth = depth + 1;
            next_parent = name;
        }
    }
    for child in children {
        if let Some(c) = by_id.get(child.inner().as_str()) {
            walk(ref_for, by_id, c, next_depth, &next_parent, lines);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, role: &str, name: &str, children: &[&str], parent: Option<&str>) -> Value {
        serde_json::json!({
            "nodeId": id,
            "ignored": false,
            "role": {"type": "role", "value": role},
            "name": {"type": "computedString", "value": name},
            "childIds": children,
            "parentId": parent,
            "backendDOMNodeId": id.parse::<i64>().unwrap(),
        })
    }

    #[test]
    fn each_text_shows_once_not_again_as_its_line_boxes() {
        // A heading, and a paragraph whose text Chromium laid out in two line boxes.
        let nodes: Vec<AxNode> = serde_json::from_value(Value::Array(vec![
            node("1", "RootWebArea", "Page", &["2", "5"], None),
            node("2", "heading", "Counter", &["3"], Some("1")),
            node("3", "StaticText", "Counter", &["4"], Some("2")),
            node("4", "InlineTextBox", "Counter", &[], Some("3")),
            node("5", "paragraph", "", &["6"], Some("1")),
            node(
                "6",
                "StaticText",
                "Rows are added below",
                &["7", "8"],
                Some("5"),
            ),
            node("7", "InlineTextBox", "Rows are ", &[], Some("6")),
            node("8", "InlineTextBox", "added below", &[], Some("6")),
        ]))
        .unwrap();
        let text = render(&|n| format!("e{n}"), &nodes);
        assert_eq!(
            text,
            "[ref=e1] page \"Page\"\n  [ref=e2] heading \"Counter\"\n  text \"Rows are added below\"\n"
        );
    }
}
