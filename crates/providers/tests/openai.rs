//! The OpenAI-compatible client against the scripted server over real HTTP.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::*;
use podcode_providers::testing::{Reply, ScriptedModel};
use podcode_providers::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn client(server: &ScriptedModel) -> OpenAiClient {
    let mut e = endpoint(&server.base_url());
    e.headers.insert("X-Extra".into(), "yes".into());
    OpenAiClient::new(ModelRef::parse("openai/gpt-test").unwrap(), e).unwrap()
}

#[tokio::test]
async fn text_deltas_usage_and_the_request_sent() {
    let server = ScriptedModel::start(vec![
        Reply::new()
            .text("Hel")
            .text("lo")
            .usage(100, 20)
            .cache(30, 0)
            .cost(0.0012),
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
                    input_tokens: 100,
                    output_tokens: 20,
                    cache_read_tokens: 30,
                    cache_write_tokens: 0,
                    reasoning_tokens: 0,
                    cost: Some(0.0012)
                }
            },
            StreamEvent::Finish {
                reason: FinishReason::Stop
            },
        ]
    );
    let recorded = server.recorded();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].path, "/v1/chat/completions");
    assert_eq!(recorded[0].headers["authorization"], "Bearer test-key");
    assert_eq!(recorded[0].headers["x-extra"], "yes");
    assert_eq!(
        recorded[0].body,
        json!({
            "model": "gpt-test",
            "stream": true,
            "stream_options": {"include_usage": true},
            "messages": [{"role": "system", "content": "You are a test."}, {"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "read", "description": "Read a file.",
                "parameters": {"type": "object", "properties": {"filePath": {"type": "string"}}}}}],
        })
    );
}

#[tokio::test]
async fn several_tool_calls_split_across_chunks_are_reassembled() {
    let args_a = r#"{"filePath":"src/main.rs","offset":10}"#;
    let args_b = r#"{"filePath":"docs/été.md"}"#;
    let server = ScriptedModel::start(vec![
        Reply::new()
            .text("Reading.")
            .tool_call("call_a", "read", args_a)
            .tool_call("call_b", "read", args_b)
            .split_args(5),
    ])
    .await;
    let (events, err) = run(&client(&server), request(vec![user("read")]))
        .await
        .unwrap();
    assert_eq!(err, None);
    assert_eq!(text_of(&events), "Reading.");
    assert_eq!(
        tool_calls(&events),
        vec![
            ("call_a".into(), "read".into(), args_a.to_string()),
            ("call_b".into(), "read".into(), args_b.to_string()),
        ]
    );
    let deltas = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCallDelta { .. }))
        .count();
    assert_eq!(deltas, 10, "each call's arguments arrived in 5 fragments");
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish {
            reason: FinishReason::ToolCalls
        })
    );
}

#[tokio::test]
async fn reasoning_content_streams_as_reasoning() {
    let server = ScriptedModel::start(vec![
        Reply::new().reasoning("thinking...", None).text("answer"),
    ])
    .await;
    let (events, _) = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap();
    assert_eq!(
        events[0],
        StreamEvent::ReasoningDelta {
            text: "thinking...".into()
        }
    );
    assert_eq!(
        events[1],
        StreamEvent::TextDelta {
            text: "answer".into()
        }
    );
}

#[tokio::test]
async fn tool_results_become_tool_messages_and_images_follow_as_user_content() {
    let server = ScriptedModel::start(vec![Reply::new().text("I see it.")]).await;
    run(&client(&server), request(history_with_image_result()))
        .await
        .unwrap();
    let body = &server.requests()[0];
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are a test."},
            {"role": "user", "content": "look at the screenshot"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"filePath\":\"s.png\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "Image read."},
            {"role": "user", "content": [
                {"type": "text", "text": "Attachments returned by tool call call_1:"},
                {"type": "image_url", "image_url": {"url": PNG}}]},
        ])
    );
}

#[tokio::test]
async fn rate_limit_waits_for_retry_after_then_retries() {
    let server = ScriptedModel::start(vec![
        Reply::http_error(429, Some(1)),
        Reply::new().text("ok"),
    ])
    .await;
    let started = Instant::now();
    let (events, err) = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited {:?}",
        started.elapsed()
    );
    assert_eq!((text_of(&events), err), ("ok".to_string(), None));
    assert_eq!(server.request_count(), 2);
    assert_eq!(
        server.requests()[0],
        server.requests()[1],
        "the same request is sent again"
    );
}

#[tokio::test]
async fn server_errors_are_retried_up_to_four_tries() {
    let server = ScriptedModel::start(vec![
        Reply::http_error(500, None),
        Reply::http_error(502, None),
        Reply::http_error(503, None),
        Reply::new().text("finally"),
    ])
    .await;
    let (events, err) = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap();
    assert_eq!((text_of(&events), err), ("finally".to_string(), None));
    assert_eq!(server.request_count(), 4);

    let errors = (0..4)
        .map(|_| Reply::http_error(500, None).error_message("The server had an error"))
        .collect();
    let server = ScriptedModel::start(errors).await;
    let err = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "openai returned HTTP 500: The server had an error"
    );
    assert_eq!(server.request_count(), 4);
}

#[tokio::test]
async fn x_should_retry_overrides_the_status() {
    let conflict = r#"{"error":{"message":"conflict"}}"#;
    let server = ScriptedModel::start(vec![Reply::raw(409, "application/json", conflict)]).await;
    // 409 is not retried by status alone…
    let err = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap_err();
    assert!(matches!(err, ProviderError::Http { status: 409, .. }));
    assert_eq!(server.request_count(), 1);
    // …but is when the server says so.
    server.push(Reply::raw(409, "application/json", conflict).header("x-should-retry", "true"));
    server.push(Reply::new().text("ok"));
    let (events, _) = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap();
    assert_eq!(text_of(&events), "ok");
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_auth_errors_name_the_key() {
    let server = ScriptedModel::start(vec![
        Reply::http_error(401, None).error_message("Incorrect API key provided"),
    ])
    .await;
    let err = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "openai returned HTTP 401: Incorrect API key provided (check the API key in $TEST_API_KEY (or set `api_key_env` under [provider.openai] in config.toml to the variable that holds it))"
    );
    let server = ScriptedModel::start(vec![
        Reply::http_error(400, None).error_message("bad tools"),
        Reply::new(),
    ])
    .await;
    let err = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ProviderError::Http { status: 400, .. }),
        "{err}"
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn a_stream_cut_after_the_first_event_is_stream_cut() {
    // Events: role chunk, "partial ", "answer", … — reset after three.
    let server = ScriptedModel::start(vec![
        Reply::new()
            .text("partial ")
            .text("answer")
            .text("never")
            .cut_after(3),
    ])
    .await;
    let (events, err) = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap();
    assert_eq!(text_of(&events), "partial answer");
    assert!(
        matches!(err, Some(ProviderError::StreamCut { .. })),
        "{err:?}"
    );
    assert_eq!(
        server.request_count(),
        1,
        "not retried once events were delivered"
    );

    // A clean end without finish_reason or [DONE] is a cut too.
    let server =
        ScriptedModel::start(vec![Reply::new().text("half").text("way").end_after(2)]).await;
    let (events, err) = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap();
    assert_eq!(text_of(&events), "half");
    let err = err.expect("cut");
    assert_eq!(
        err.to_string(),
        "the response from openai was cut off mid-stream (the stream ended before the turn was complete)"
    );
}

#[tokio::test]
async fn a_stream_cut_before_any_event_is_retried() {
    let server = ScriptedModel::start(vec![
        Reply::new().text("lost").cut_after(1),
        Reply::new().text("again"),
    ])
    .await;
    let (events, err) = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap();
    assert_eq!((text_of(&events), err), ("again".to_string(), None));
    assert_eq!(server.request_count(), 2);
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
    let (events, err) = drain(rx).await;
    assert_eq!(err, Some(ProviderError::Aborted));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::Finish { .. }))
    );
}

#[tokio::test]
async fn abort_while_waiting_for_the_response() {
    let server = ScriptedModel::start(vec![
        Reply::new().text("late").stall(Duration::from_secs(3600)),
    ])
    .await;
    let abort = CancellationToken::new();
    let c = client(&server);
    let req = request(vec![user("q")]);
    let pending = c.stream(&req, abort.clone());
    let canceller = async {
        assert!(server.wait_for_requests(1, Duration::from_secs(120)).await);
        abort.cancel();
    };
    let (result, ()) = tokio::join!(pending, canceller);
    assert_eq!(result.unwrap_err(), ProviderError::Aborted);
}

#[tokio::test]
async fn unreachable_servers_are_network_errors_after_retries() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let c = OpenAiClient::new(
        ModelRef::parse("local/m").unwrap(),
        endpoint(&format!("http://127.0.0.1:{port}/v1")),
    )
    .unwrap();
    let err = run(&c, request(vec![user("q")])).await.unwrap_err();
    assert!(
        matches!(err, ProviderError::Network { ref provider, .. } if provider == "local"),
        "{err}"
    );
}

#[tokio::test]
async fn an_exhausted_script_answers_a_clear_500_and_records_the_request() {
    let server = ScriptedModel::start(vec![]).await;
    let c = OpenAiClient::new(
        ModelRef::parse("openai/m").unwrap(),
        endpoint(&server.base_url()),
    )
    .unwrap();
    let err = run(&c, request(vec![user("q")])).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "openai returned HTTP 500: scripted model: the script is exhausted: request #1 (POST /v1/chat/completions) has no reply left (0 replies were scripted)"
    );
    assert_eq!(server.requests()[0]["messages"][1]["content"], "q");
    assert_eq!(
        server.request_count(),
        1,
        "x-should-retry: false stops the retries"
    );
    server.push(Reply::new().text("pushed"));
    let (events, _) = run(&c, request(vec![user("q")])).await.unwrap();
    assert_eq!(text_of(&events), "pushed");
}

#[tokio::test]
async fn json_instead_of_a_stream_is_a_protocol_error() {
    let server = ScriptedModel::start(vec![Reply::raw(
        200,
        "application/json",
        r#"{"error":{"message":"streaming unsupported"}}"#,
    )])
    .await;
    let err = run(&client(&server), request(vec![user("q")]))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "unexpected response from openai: expected an event stream but got JSON: streaming unsupported"
    );
}
