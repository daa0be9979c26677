//! Turning an MCP `CallToolResult` into a Podcode `ToolResult`: text content joined with
//! blank lines, images (and audio) become attachments as `data:` URLs, resources and
//! embedded resources become text that names their URI, resource links become a line with
//! their URI, and `isError` results become a failed call carrying the server's message.
//! Works on the JSON form so it accepts every protocol version's shape.

use podcode_protocol::{Attachment, ToolResult};
use serde_json::Value;

/// What a failed call says when the server flagged `isError` without any text.
pub const EMPTY_ERROR_TEXT: &str = "the MCP tool reported an error without a message";

/// `Ok(result)` for a successful call, `Err(message)` for an `isError` result.
pub fn convert(result: &Value) -> Result<ToolResult, String> {
    let mut parts: Vec<String> = Vec::new();
    let mut attachments = Vec::new();
    let items = result
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for item in &items {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
        let s = |k: &str| {
            item.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        match kind {
            "text" => parts.push(s("text")),
            "image" | "audio" => {
                let mime = s("mimeType");
                attachments.push(Attachment {
                    url: format!("data:{mime};base64,{}", s("data")),
                    mime: mime.clone(),
                    filename: None,
                });
                parts.push(format!("[{kind} attached: {mime}]"));
            }
            "resource" => {
                let res = item.get("resource").cloned().unwrap_or(Value::Null);
                parts.push(resource_text(&res));
            }
            "resource_link" => {
                let name = s("name");
                let uri = s("uri");
                parts.push(
                    format!("[resource link: {uri}] {name}")
                        .trim_end()
                        .to_string(),
                );
            }
            _ => parts.push(item.to_string()),
        }
    }
    if parts.is_empty()
        && let Some(structured) = result.get("structuredContent")
        && !structured.is_null()
    {
        parts.push(structured.to_string());
    }
    let output = parts.join("\n\n");
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return Err(if output.trim().is_empty() {
            EMPTY_ERROR_TEXT.to_string()
        } else {
            output
        });
    }
    Ok(ToolResult {
        output,
        attachments,
        ..ToolResult::default()
    })
}

fn resource_text(res: &Value) -> String {
    let uri = res.get("uri").and_then(Value::as_str).unwrap_or("");
    let mime = res.get("mimeType").and_then(Value::as_str);
    if let Some(text) = res.get("text").and_then(Value::as_str) {
        return format!("[resource: {uri}]\n{text}");
    }
    let size = res
        .get("blob")
        .and_then(Value::as_str)
        .map(|b| b.len() * 3 / 4)
        .unwrap_or(0);
    format!(
        "[resource: {uri}] binary content ({}, about {size} bytes) not shown",
        mime.unwrap_or("unknown type")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_is_joined_and_images_become_attachments() {
        let r = convert(&json!({"content": [
            {"type": "text", "text": "one"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "text", "text": "two"}
        ]}))
        .unwrap();
        assert_eq!(r.output, "one\n\n[image attached: image/png]\n\ntwo");
        assert_eq!(r.attachments[0].url, "data:image/png;base64,AAAA");
        assert_eq!(r.attachments[0].mime, "image/png");
    }

    #[test]
    fn resources_name_their_uri() {
        let r = convert(&json!({"content": [
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
            {"type": "resource", "resource": {"uri": "test://b", "blob": "AAAA", "mimeType": "application/gzip"}},
            {"type": "resource_link", "uri": "test://c", "name": "c"}
        ]}))
        .unwrap();
        assert_eq!(
            r.output,
            "[resource: file:///a.txt]\nhello\n\n[resource: test://b] binary content (application/gzip, about 3 bytes) not shown\n\n[resource link: test://c] c"
        );
    }

    #[test]
    fn is_error_fails_with_the_server_message() {
        assert_eq!(
            convert(
                &json!({"isError": true, "content": [{"type": "text", "text": "no such file"}]})
            ),
            Err("no such file".to_string())
        );
        assert_eq!(
            convert(&json!({"isError": true, "content": []})),
            Err(EMPTY_ERROR_TEXT.to_string())
        );
    }
}
