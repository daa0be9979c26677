//! Two front ends on one session in one process: `podcode serve`'s HTTP API and an ACP
//! connection hold handles from one `SessionRegistry`, over a real engine, a real SQLite
//! store, real HTTP on 127.0.0.1 and the scripted model server. While a turn started by one
//! front end runs, a prompt from the other gets the engine's busy text (HTTP 409, a
//! JSON-RPC error), exactly one turn runs, and the store holds no duplicated message.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use podcode_acp::{AcpOptions, serve};
use podcode_core::testing::ScratchWorkspace;
use podcode_core::{BUSY_TEXT, SessionRegistry};
use podcode_protocol::Event;
use podcode_providers::testing::{Gate, Reply, ScriptedModel};
use podcode_server::{ServeOptions, Server};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

const TOKEN: &str = "test-token-0123456789";
/// Generous: everything is local, however busy the machine is.
const WAIT: Duration = Duration::from_secs(180);

/// One HTTP/1.1 request with the token; the status and the JSON body.
async fn http(addr: std::net::SocketAddr, path: &str, body: Value) -> (u16, Value) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = body.to_string();
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    let status: u16 = out.split(' ').nth(1).unwrap().parse().unwrap();
    let (_, text) = out.split_once("\r\n\r\n").unwrap();
    (
        status,
        serde_json::from_str(text.trim()).unwrap_or(Value::Null),
    )
}

/// The client end of an in-process ACP connection.
struct Client {
    to_agent: DuplexStream,
    from_agent: Lines<BufReader<DuplexStream>>,
    next_id: u64,
}

impl Client {
    async fn send(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let line =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        self.to_agent
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        self.next_id
    }

    /// The answer to request `id`, skipping notifications.
    async fn answer(&mut self, id: u64) -> Value {
        loop {
            let line = tokio::time::timeout(WAIT, self.from_agent.next_line())
                .await
                .expect("no answer from the agent")
                .unwrap()
                .expect("the agent closed its output");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v.get("method").is_none() && v["id"] == json!(id) {
                return v;
            }
        }
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.answer(id).await
    }
}

/// Waits for the session's `TurnFinished`.
async fn turn_finished(events: &mut tokio::sync::broadcast::Receiver<Event>) {
    tokio::time::timeout(WAIT, async {
        loop {
            if let Ok(Event::TurnFinished { .. }) = events.recv().await {
                return;
            }
        }
    })
    .await
    .expect("the turn did not finish");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_and_acp_on_one_session_run_one_turn_at_a_time_and_share_the_busy_answer() {
    let (web_gate, acp_gate) = (Gate::new(), Gate::new());
    let model = ScriptedModel::start(vec![
        Reply::new()
            .text("web ")
            .text("answer")
            .hold_after(2, &web_gate),
        Reply::new()
            .text("acp ")
            .text("answer")
            .hold_after(2, &acp_gate),
        Reply::new().text("a third turn should never have run"),
    ])
    .await;
    let ws = ScratchWorkspace::new(&model.base_url(), "").unwrap();
    let sessions = Arc::new(SessionRegistry::for_engine(ws.engine().unwrap()));

    // The HTTP server and the ACP agent share the registry.
    let server = Server::bind_with(
        sessions.clone(),
        ServeOptions {
            token: Some(TOKEN.into()),
            ..ServeOptions::default()
        },
    )
    .await
    .unwrap();
    let addr = server.addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let web = tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));
    let (to_agent, agent_in) = tokio::io::duplex(1 << 20);
    let (agent_out, from_agent) = tokio::io::duplex(1 << 20);
    let acp = tokio::spawn(serve(
        agent_in,
        agent_out,
        AcpOptions {
            sessions: sessions.clone(),
            agent: "build".into(),
            model: None,
        },
    ));
    let mut client = Client {
        to_agent,
        from_agent: BufReader::new(from_agent).lines(),
        next_id: 0,
    };
    client
        .call("initialize", json!({"protocolVersion": 1}))
        .await;
    let new = client
        .call(
            "session/new",
            json!({"cwd": ws.repo().display().to_string(), "mcpServers": []}),
        )
        .await;
    let id = new["result"]["sessionId"].as_str().unwrap().to_string();
    let path = format!("/api/sessions/{id}/prompt");
    let live = sessions.live(&id).await.unwrap();
    let mut events = live.port().subscribe();

    // The web page prompts; the turn is held mid-answer. ACP's prompt is refused.
    let (status, body) = http(addr, &path, json!({"text": "from the web"})).await;
    assert_eq!(status, 202, "{body}");
    assert!(model.wait_for_requests(1, WAIT).await);
    let refused = client
        .call(
            "session/prompt",
            json!({"sessionId": id, "prompt": [{"type": "text", "text": "from the editor"}]}),
        )
        .await;
    assert_eq!(refused["error"]["message"], json!(BUSY_TEXT), "{refused}");
    assert_eq!(podcode_server::BUSY_TEXT, BUSY_TEXT);
    web_gate.open();
    turn_finished(&mut events).await;

    // The editor prompts; the web page is refused with the same text.
    let prompt = client
        .send(
            "session/prompt",
            json!({"sessionId": id, "prompt": [{"type": "text", "text": "from the editor"}]}),
        )
        .await;
    assert!(model.wait_for_requests(2, WAIT).await);
    let (status, body) = http(addr, &path, json!({"text": "from the web again"})).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"], json!(BUSY_TEXT));
    acp_gate.open();
    let done = client.answer(prompt).await;
    assert_eq!(done["result"]["stopReason"], json!("end_turn"), "{done}");

    // Two turns, one after the other: two model requests, no message twice.
    assert_eq!(model.request_count(), 2);
    let export = live.engine.session_export(&id).unwrap();
    let messages: Vec<(String, String)> = export["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text: String = m["parts"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|p| p["data"]["text"].as_str())
                .collect();
            (m["role"].as_str().unwrap().to_string(), text)
        })
        .collect();
    let roles: Vec<&str> = messages.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user", "assistant"],
        "{messages:?}"
    );
    assert!(messages[1].1.contains("web answer"), "{messages:?}");
    assert!(messages[3].1.contains("acp answer"), "{messages:?}");

    drop(live);
    drop(client);
    acp.await.unwrap().unwrap();
    let _ = stop.send(());
    web.await.unwrap().unwrap();
}
