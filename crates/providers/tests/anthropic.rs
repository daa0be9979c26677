//! The Anthropic Messages client against the scripted server over real HTTP.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::*;
use podcode_providers::testing::{Reply, ScriptedModel};
use podcode_providers::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn client(server: &ScriptedModel) -> AnthropicClient {
    AnthropicClient::new(
        ModelRef::parse("anthropic/claude-test").unwrap(),
        endpoint(&server.base_url()),
    )
    .unwrap()
}

#[tokio::test]
async fn text_usage_headers_and_the_request_sent() {
    let server = ScriptedModel::start(vec![
        Reply::new()
            .text("Hel")
            .text("lo")
            .usage(1000, 20)
            .cache(600, 100),
    ])
    .await;
    let (events, err) = run(&client(&server), request(vec![user("hi")]))
        .await
        .unwrap();
    assert_eq!(err, None);
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta { text: "Hel".into() },
            StreamEvent::TextDelta { text: "lo".into() },
            StreamEvent::Usage {
                usage: Usage {
                    input_tokens: 1000,
                    output_tokens: 20,
                    cache_read_tokens: 600,
                    cache_write_tokens: 100,
                    reasoning_tokens: 0,
                    cost: None
                }
            },
            StreamEvent::Finish {
                reason: FinishReason::Stop
            },
        ]
    );
    let r = &server.recorded()[0];
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.headers["x-api-key"], "test-key");
    assert_eq!(r.headers["anthropic-version"], "2023-06-01");
    assert!(!r.headers.contains_key("authorization"));
    assert_eq!(
        r.body,
        json!({
            "model": "claude-test",
            "max_tokens": 8192,
            "stream": true,
            "system": [{"type": "text", "text": "You are a test.", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}],
            "tools": [{"name": "read", "description": "Read a file.",
                "input_schema": {"type": "object", "properties": {"filePath": {"type": "string"}}},
                "cache_control": {"type": "ephemeral"}}],
        })
    );
}

#[tokio::test]
async fn several_tool_calls_split_across_chunks_are_reassembled() {
    let args_a = r#"{"filePath":"a.rs","limit":5}"#;
    let args_b = r#"{"filePath":"b/ünï.rs"}"#;
    let server = ScriptedModel::start(vec![
        Reply::new()
            .text("Both.")
            .tool_call("toolu_a", "read", args_a)
            .tool_call("toolu_b", "read", args_b)
            .split_args(4),
    ])
    .await;
    let (events, err) = run(&client(&server), request(vec![user("read")]))
        .await
        .unwrap();
    assert_eq!(err, None);
    assert_eq!(text_of(&events), "Both.");
    assert_eq!(
        tool_calls(&events),
        vec![
            ("toolu_a".into(), "read".into(), args_a.to_string()),
            ("toolu_b".into(), "read".into(), args_b.to_string()),
        ]
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, StreamEvent::ToolCallDelta { .. }))
            .count(),
        8
    );
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish {
            reason: FinishReason::ToolCalls
        })
    );
}

#[tokio::test]
async fn thinking_with_signature_is_streamed_and_sent_back() {
    let server = ScriptedModel::start(vec![
        Reply::new()
            .reasoning("Let me check.", Some("sig-123"))
            .tool_call("toolu_1", "read", r#"{"filePath":"x"}"#),
        Reply::new().text("Done."),
    ])
    .await;
    let c = client(&server);
    let (events, _) = run(&c, request(vec![user("check x")])).await.unwrap();
    assert_eq!(
        events[0],
        StreamEvent::ReasoningDelta {
            text: "Let me check.".into()
        }
    );
    assert_eq!(
        events[1],
        StreamEvent::ReasoningSignature {
            signature: "sig-123".into()
        }
    );

    // The agent keeps the thinking block in history; the next request carries it back.
    let history = vec![
        user("check x"),
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::Reasoning {
                    text: "Let me check.".into(),
                    signature: Some("sig-123".into()),
                },
                Part::ToolCall {
                    id: "toolu_1".into(),
                    name: "read".into(),
                    arguments: r#"{"filePath":"x"}"#.into(),
                },
            ],
        },
        Message {
            role: Role::User,
            parts: vec![Part::ToolResult {
                call_id: "toolu_1".into(),
                output: "no such file".into(),
                is_error: true,
                attachments: vec![],
            }],
        },
    ];
    let (events, _) = run(&c, request(history)).await.unwrap();
    assert_eq!(text_of(&events), "Done.");
    assert_eq!(
        server.requests()[1]["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "check x"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Let me check.", "signature": "sig-123"},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"filePath": "x"}, "cache_control": {"type": "ephemeral"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "no such file"}], "is_error": true, "cache_control": {"type": "ephemeral"}}]},
        ])
    );
}

#[tokio::test]
async fn image_attachments_go_inside_the_tool_result() {
    let server = ScriptedModel::start(vec![Reply::new().text("I see it.")]).await;
    run(&client(&server), request(history_with_image_result()))
        .await
        .unwrap();
    assert_eq!(
        server.requests()[0]["messages"][2],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": [
            {"type": "text", "text": "Image read."},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}],
            "cache_control": {"type": "ephemeral"}}]})
    );
}

#[tokio::test]
async fn overloaded_with_retry_after_is_retried() {
    let server = ScriptedModel::start(vec![
        Reply::http_error(529, Some(1)),
        Reply::new().text("ok"),
    ])
    .await;
    let started = Instant::now();
    let (events, err) = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap();
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!((text_of(&events), err), ("ok".to_string(), None));
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn an_error_event_before_any_content_is_retried() {
    let overloaded = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let server = ScriptedModel::start(vec![
        Reply::raw(200, "text/event-stream", overloaded),
        Reply::new().text("ok"),
    ])
    .await;
    let (events, err) = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap();
    assert_eq!((text_of(&events), err), ("ok".to_string(), None));
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn a_stream_without_message_stop_is_stream_cut() {
    // message_start, ping, block start, "one" — then the connection resets.
    let server =
        ScriptedModel::start(vec![Reply::new().text("one").text("two").cut_after(4)]).await;
    let (events, err) = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap();
    assert_eq!(text_of(&events), "one");
    assert!(
        matches!(err, Some(ProviderError::StreamCut { .. })),
        "{err:?}"
    );

    // Everything but message_stop, ended cleanly: still incomplete.
    let server = ScriptedModel::start(vec![Reply::new().text("all").end_after(6)]).await;
    let (events, err) = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap();
    assert_eq!(text_of(&events), "all");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::Finish { .. }))
    );
    assert!(
        matches!(err, Some(ProviderError::StreamCut { .. })),
        "{err:?}"
    );
}

#[tokio::test]
async fn abort_mid_stream_ends_with_aborted() {
    let slow = (0..50)
        .fold(Reply::new(), |r, i| r.text(format!("{i} ")))
        .pace(Duration::from_millis(100));
    let server = ScriptedModel::start(vec![slow]).await;
    let abort = CancellationToken::new();
    let mut rx = client(&server)
        .stream(&request(vec![user("q")]), abort.clone())
        .await
        .unwrap();
    assert!(matches!(
        rx.recv().await,
        Some(Ok(StreamEvent::TextDelta { .. }))
    ));
    abort.cancel();
    let (_, err) = drain(rx).await;
    assert_eq!(err, Some(ProviderError::Aborted));
}

#[tokio::test]
async fn auth_errors_name_the_variable() {
    let server = ScriptedModel::start(vec![
        Reply::http_error(401, None).error_message("invalid x-api-key"),
    ])
    .await;
    let err = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap_err();
    assert!(
        err.to_string().starts_with(
            "anthropic returned HTTP 401: invalid x-api-key (check the API key in $TEST_API_KEY"
        ),
        "{err}"
    );
}
