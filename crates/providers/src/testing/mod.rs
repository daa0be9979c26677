//! A scripted model server for tests (feature `test-support`): a real HTTP server on
//! `127.0.0.1:<random port>` that speaks both wire protocols Podcode uses, answering each
//! request with the next [`Reply`] of a script and recording every request it receives.
//!
//! ```no_run
//! # async fn demo() {
//! use podcode_providers::testing::{Reply, ScriptedModel};
//! let server = ScriptedModel::start(vec![
//!     Reply::new().tool_call("call_1", "read", r#"{"filePath":"a.txt"}"#).split_args(3),
//!     Reply::new().text("Hel").text("lo").usage(100, 20),
//! ])
//! .await;
//! // Point a client (or `[provider.x] base_url`) at `server.base_url()`:
//! //   OpenAI-compatible: POST {base_url}/chat/completions
//! //   Anthropic:         POST {base_url}/messages
//! // ... run the code under test, then assert what the model was sent:
//! let bodies = server.requests();
//! assert_eq!(bodies[1]["messages"][2]["role"], "tool");
//! # }
//! ```
//!
//! One script drives either client: a reply is rendered in the protocol of the request that
//! consumes it (chosen by path), with chunking that mirrors the real APIs — OpenAI
//! `chat.completion.chunk`s with `tool_calls` fragments by `index`, Anthropic
//! `message_start` / `content_block_*` / `message_delta` / `message_stop` events.
//!
//! When the script runs out, a request is still recorded and answered with HTTP 500 whose
//! error message says the script is exhausted, plus `x-should-retry: false` so clients do
//! not retry it.
//!
//! The server runs on its own thread and runtime, so a test may block its own thread (for
//! example waiting on a child `podcode` process) without starving it. It stops when the
//! [`ScriptedModel`] is dropped.

// Test support only (feature `test-support`): a failed setup panics so the test that uses it
// fails at that line, as `#[test]` code does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod render;
mod reply;
mod server;

pub use reply::{Gate, Reply};
pub use server::{RecordedRequest, Responder, ScriptedModel};

/// The content of every user message of a recorded request body (`ScriptedModel::requests`),
/// as JSON text, one per line: what a test searches for what the model was sent.
pub fn user_texts(request: &serde_json::Value) -> String {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}
