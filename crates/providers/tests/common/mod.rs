//! Helpers shared by the client tests: requests, endpoints, and draining a turn.
#![allow(dead_code)]

use std::time::Duration;

use podcode_protocol::{Attachment, ToolSpec};
use podcode_providers::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;

pub fn endpoint(base: &str) -> Endpoint {
    let mut e = Endpoint::new(base).with_key("test-key", Some("TEST_API_KEY"));
    e.retry.base_delay = Duration::from_millis(10);
    e
}

pub fn user(text: &str) -> Message {
    Message {
        role: Role::User,
        parts: vec![Part::Text { text: text.into() }],
    }
}

pub fn request(messages: Vec<Message>) -> ChatRequest {
    ChatRequest {
        model: String::new(),
        system: "You are a test.".into(),
        messages,
        tools: vec![ToolSpec {
            id: "read".into(),
            description: "Read a file.".into(),
            parameters: json!({"type": "object", "properties": {"filePath": {"type": "string"}}}),
            truncation: Default::default(),
            idempotent: true,
            timeout_ms: None,
            offered_after: None,
        }]
        .into(),
        max_tokens: None,
        temperature: None,
        top_p: None,
        top_k: None,
        options: Default::default(),
        cache_key: None,
        headers: Vec::new(),
    }
}

pub const PNG: &str = "data:image/png;base64,iVBORw0KGgo=";

/// A conversation whose last turn carries a tool result with an image attachment.
pub fn history_with_image_result() -> Vec<Message> {
    vec![
        user("look at the screenshot"),
        Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall {
                id: "call_1".into(),
                name: "read".into(),
                arguments: r#"{"filePath":"s.png"}"#.into(),
            }],
        },
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: "call_1".into(),
                output: "Image read.".into(),
                is_error: false,
                attachments: vec![Attachment {
                    mime: "image/png".into(),
                    url: PNG.into(),
                    filename: Some("s.png".into()),
                }],
            }],
        },
    ]
}

/// Every event of a turn, and the error that ended it, if any.
pub async fn drain(mut rx: EventStream) -> (Vec<StreamEvent>, Option<ProviderError>) {
    let mut events = Vec::new();
    while let Some(item) = rx.recv().await {
        match item {
            Ok(e) => events.push(e),
            Err(e) => {
                assert!(rx.recv().await.is_none(), "nothing may follow an error");
                return (events, Some(e));
            }
        }
    }
    (events, None)
}

pub async fn run(
    client: &dyn ModelClient,
    req: ChatRequest,
) -> Result<(Vec<StreamEvent>, Option<ProviderError>), ProviderError> {
    let rx = client.stream(&req, CancellationToken::new()).await?;
    Ok(drain(rx).await)
}

/// The text of all text deltas.
pub fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| {
            if let StreamEvent::TextDelta { text } = e {
                Some(text.as_str())
            } else {
                None
            }
        })
        .collect()
}

/// (id, name, reassembled arguments) per tool call index.
pub fn tool_calls(events: &[StreamEvent]) -> Vec<(String, String, String)> {
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for e in events {
        match e {
            StreamEvent::ToolCallStart { index, id, name } => {
                assert_eq!(*index, calls.len(), "calls start in order");
                calls.push((id.clone(), name.clone(), String::new()));
            }
            StreamEvent::ToolCallDelta { index, arguments } => calls[*index].2.push_str(arguments),
            _ => {}
        }
    }
    calls
}
