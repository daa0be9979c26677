//! A real `podcode serve` on 127.0.0.1 over a throwaway workspace (config pointing at the
//! scripted model, a real SQLite store), reqwest as the client, and a small SSE reader.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use podcode_core::Engine;
use podcode_core::testing::ScratchWorkspace;
use podcode_providers::testing::ScriptedModel;
use podcode_server::{ServeOptions, Server};
use serde_json::Value;
use tokio::sync::oneshot;

pub const TOKEN: &str = "test-token-0123456789";

/// The scratch workspace every server test runs over; the provider carries a secret header
/// that `/api/config` must mask.
pub struct Workspace(ScratchWorkspace);

const SECRET_HEADER: &str =
    "[provider.scripted.headers]\n\"X-Test-Secret\" = \"sk-secret-value\"\n";

impl Workspace {
    pub fn new(model: &ScriptedModel) -> Self {
        Self::with_config(model, "")
    }
    /// `extra_config`: more TOML for the user's config (permission rules).
    pub fn with_config(model: &ScriptedModel, extra_config: &str) -> Self {
        let extra = format!("{extra_config}{SECRET_HEADER}");
        Self(ScratchWorkspace::new(&model.base_url(), &extra).unwrap())
    }
    pub fn repo(&self) -> PathBuf {
        self.0.repo()
    }
    pub fn engine(&self) -> Arc<Engine> {
        self.0.engine().unwrap()
    }
}

pub const ALLOW_EDITS: &str =
    "[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"allow\"\n";

/// A running server; stops when dropped.
pub struct Running {
    pub url: String,
    /// The page's sign-in link (`/#code=…`), made at start.
    pub page: String,
    pub client: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    done: Option<tokio::task::JoinHandle<()>>,
}

impl Running {
    pub async fn start(ws: &Workspace) -> Self {
        let opts = ServeOptions {
            token: Some(TOKEN.into()),
            ..ServeOptions::default()
        };
        let server = Server::bind(ws.engine(), opts).await.unwrap();
        let url = server.url();
        let page = server.page_url().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let done = tokio::spawn(async move {
            server
                .run(async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Self {
            url,
            page,
            client: client(),
            stop: Some(stop),
            done: Some(done),
        }
    }

    pub fn at(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        let r = self
            .client
            .get(self.at(path))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        answer(r).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let r = self
            .client
            .post(self.at(path))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        answer(r).await
    }

    pub async fn delete(&self, path: &str) -> (u16, Value) {
        let r = self
            .client
            .delete(self.at(path))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        answer(r).await
    }

    /// Creates a session and returns its id.
    pub async fn session(&self) -> String {
        let (status, body) = self.post("/api/sessions", serde_json::json!({})).await;
        assert_eq!(status, 201, "{body}");
        body["id"].as_str().unwrap().to_string()
    }

    /// Stops the server and waits until it has.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(done) = self.done.take() {
            tokio::time::timeout(Duration::from_secs(30), done)
                .await
                .expect("the server stops within 30 s")
                .unwrap();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A reqwest client (reqwest is built without a TLS provider of its own).
pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

pub async fn answer(r: reqwest::Response) -> (u16, Value) {
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, body)
}

/// One SSE message.
#[derive(Debug, Clone)]
pub struct Msg {
    pub id: i64,
    pub event: String,
    pub data: Value,
}

/// An open event stream.
pub struct Sse {
    body: std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>,
    buf: String,
}

impl Sse {
    /// Connects to `path` (with the bearer header, and `Last-Event-ID` when given).
    pub async fn connect(server: &Running, path: &str, last: Option<i64>) -> Sse {
        let mut req = server.client.get(server.at(path)).bearer_auth(TOKEN);
        if let Some(id) = last {
            req = req.header("Last-Event-ID", id.to_string());
        }
        let r = req.send().await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
        assert!(
            r.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        Self::from_response(r)
    }

    pub fn from_response(r: reqwest::Response) -> Sse {
        Sse {
            body: Box::pin(r.bytes_stream()),
            buf: String::new(),
        }
    }

    /// The next event (comments skipped), within 30 s.
    pub async fn next(&mut self) -> Msg {
        self.next_or_end().await.expect("the stream stays open")
    }

    /// The next event, or `None` when the server ended the stream.
    pub async fn next_or_end(&mut self) -> Option<Msg> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut id = None;
                let mut event = None;
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = v.trim().parse().ok();
                    } else if let Some(v) = line.strip_prefix("event:") {
                        event = Some(v.trim().to_string());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.strip_prefix(' ').unwrap_or(v));
                    }
                }
                if let (Some(id), Some(event)) = (id, event) {
                    return Some(Msg {
                        id,
                        event,
                        data: serde_json::from_str(&data).unwrap(),
                    });
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.body.next())
                .await
                .expect("an event within 30 s")?
                .unwrap();
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// Events until (and with) the first one whose type is `kind`.
    pub async fn until(&mut self, kind: &str) -> Vec<Msg> {
        let mut seen = Vec::new();
        loop {
            let m = self.next().await;
            let done = m.event == kind;
            seen.push(m);
            if done {
                return seen;
            }
        }
    }
}

/// The text of every `text_delta`, joined.
pub fn text_of(msgs: &[Msg]) -> String {
    msgs.iter()
        .filter(|m| m.event == "text_delta")
        .map(|m| m.data["text"].as_str().unwrap().to_string())
        .collect()
}
