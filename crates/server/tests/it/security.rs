//! The server's guards against a real server on 127.0.0.1 (real engine, store and scripted
//! model): the OpenAPI document's parameters are where their routes take them; a browser
//! signs in with a one-time code for an `HttpOnly; SameSite=Strict` cookie that works for
//! the API and the event streams but not from another origin; wrong credentials are
//! limited per address; a client that stops reading its event stream is dropped instead of
//! buffered, and resumes from the log with `Last-Event-ID`, in order and complete.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::time::Duration;

use common::{Running, Sse, TOKEN, Workspace, answer, text_of};
use podcode_providers::testing::{Reply, ScriptedModel};
use podcode_server::{CODE_REFUSED, COOKIE_TTL};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[test]
fn every_openapi_parameter_is_where_its_route_takes_it() {
    let doc = serde_json::to_value(podcode_server::openapi()).unwrap();
    let mut query = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for p in op["parameters"].as_array().into_iter().flatten() {
                let name = p["name"].as_str().unwrap();
                let place = p["in"].as_str().unwrap();
                let templated = path.contains(&format!("{{{name}}}"));
                // A path parameter must be in the template (and is then required); a
                // templated name must be a path parameter.
                assert_eq!(place == "path", templated, "{method} {path}: {p}");
                if place == "path" {
                    assert_eq!(p["required"], true, "{method} {path}: {p}");
                }
                if place == "query" {
                    query.push(format!("{method} {path} {name}"));
                }
            }
            let names: Vec<&str> = path
                .split('{')
                .skip(1)
                .filter_map(|s| s.split_once('}').map(|(n, _)| n))
                .collect();
            for n in names {
                let declared = op["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|p| p["name"] == n && p["in"] == "path");
                assert!(declared, "{method} {path}: {{{n}}} is not declared");
            }
        }
    }
    query.sort();
    assert_eq!(
        query,
        [
            "get /api/events last_event_id",
            "get /api/sessions all",
            "get /api/sessions/{id}/events last_event_id",
            "post /api/sessions/{id}/attachments name",
        ]
    );
    // Signing in needs no credential; everything else does.
    assert_eq!(doc["paths"]["/api/login"]["post"]["security"], json!([{}]));
}

/// `Set-Cookie`'s `name=value` part, and the whole header.
fn set_cookie(r: &reqwest::Response) -> (String, String) {
    let whole = r.headers()["set-cookie"].to_str().unwrap().to_string();
    let pair = whole.split(';').next().unwrap().to_string();
    (pair, whole)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_time_code_signs_a_browser_in_with_a_strict_httponly_cookie() {
    let model = ScriptedModel::start(vec![]).await;
    let ws = Workspace::new(&model);
    let server = Running::start(&ws).await;
    let c = &server.client;
    let host = server.url.trim_start_matches("http://").to_string();
    let origin = server.url.clone();
    let code = server.page.split_once("#code=").unwrap().1.to_string();

    let login = |body: Value| {
        c.post(server.at("/api/login"))
            .header("origin", &origin)
            .json(&body)
            .send()
    };
    let r = login(json!({ "code": code })).await.unwrap();
    assert_eq!(r.status().as_u16(), 204);
    let (cookie, whole) = set_cookie(&r);
    let port = host.rsplit_once(':').unwrap().1;
    assert!(cookie.starts_with(&format!("podcode_{port}=")), "{whole}");
    for attr in [
        "HttpOnly",
        "SameSite=Strict",
        "Path=/",
        format!("Max-Age={}", COOKIE_TTL.as_secs()).as_str(),
    ] {
        assert!(whole.contains(attr), "{attr} in {whole}");
    }
    assert!(!whole.contains(TOKEN) && !whole.contains(&code), "{whole}");
    // The code works once.
    let again = answer(login(json!({ "code": code })).await.unwrap()).await;
    assert_eq!(again, (401, json!({ "error": CODE_REFUSED })));
    // The sign-in form trades the token the same way; a wrong one is refused.
    assert_eq!(
        login(json!({ "token": TOKEN }))
            .await
            .unwrap()
            .status()
            .as_u16(),
        204
    );
    let wrong = answer(login(json!({ "token": "nope" })).await.unwrap()).await;
    assert_eq!(wrong.0, 401);

    // The cookie opens the API and the event stream, with no secret in any URL.
    let get = |path: &str| c.get(server.at(path)).header("cookie", &cookie).send();
    assert_eq!(get("/api/sessions").await.unwrap().status().as_u16(), 200);
    let stream = get("/api/events").await.unwrap();
    assert_eq!(stream.status().as_u16(), 200);
    drop(stream);
    // A change needs the page's own Origin: another port of this host is another origin
    // (SameSite does not separate ports), and a missing Origin is refused.
    let create = |origin: Option<&str>, site: Option<&str>| {
        let mut r = c
            .post(server.at("/api/sessions"))
            .header("cookie", &cookie)
            .json(&json!({}));
        if let Some(o) = origin {
            r = r.header("origin", o);
        }
        if let Some(s) = site {
            r = r.header("sec-fetch-site", s);
        }
        r.send()
    };
    for (o, site) in [
        (None, None),
        (Some("http://127.0.0.1:1"), None),
        (Some("http://evil.example"), None),
        (Some(origin.as_str()), Some("same-site")),
    ] {
        let (status, body) = answer(create(o, site).await.unwrap()).await;
        assert_eq!(status, 403, "{o:?} {site:?}: {body}");
    }
    let made = create(Some(origin.as_str()), Some("same-origin"))
        .await
        .unwrap();
    assert_eq!(made.status().as_u16(), 201);
    let from_other_site = c
        .get(server.at("/api/sessions"))
        .header("cookie", &cookie)
        .header("sec-fetch-site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_eq!(from_other_site.status().as_u16(), 403);

    // Signing out ends the cookie's use.
    let out = c
        .post(server.at("/api/logout"))
        .header("cookie", &cookie)
        .header("origin", &origin)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status().as_u16(), 204);
    assert!(set_cookie(&out).1.contains("Max-Age=0"));
    assert_eq!(get("/api/sessions").await.unwrap().status().as_u16(), 401);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_credentials_are_limited_per_address_with_retry_after() {
    let model = ScriptedModel::start(vec![]).await;
    let ws = Workspace::new(&model);
    let server = Running::start(&ws).await;
    let c = &server.client;
    let guess = |token: &str| {
        c.get(server.at("/api/sessions"))
            .bearer_auth(token.to_string())
            .send()
    };
    // Guess until refused: at least nine wrong guesses in a row are answered 401 first.
    let mut refused_after = 0;
    let wait = loop {
        let r = guess(&format!("guess-{refused_after}")).await.unwrap();
        if r.status().as_u16() == 429 {
            let wait: u64 = r.headers()["retry-after"]
                .to_str()
                .unwrap()
                .parse()
                .unwrap();
            assert!((1..=60).contains(&wait), "{wait}");
            let (_, body) = answer(r).await;
            assert!(
                body["error"]
                    .as_str()
                    .unwrap()
                    .starts_with("too many failed sign-in attempts from this address"),
                "{body}"
            );
            break Duration::from_secs(wait);
        }
        assert_eq!(r.status().as_u16(), 401);
        refused_after += 1;
        assert!(refused_after < 40, "never limited");
    };
    assert!(refused_after >= 9, "{refused_after}");
    let blocked = std::time::Instant::now();
    // While blocked, even the right token waits (guessing cannot go on between tries), and
    // so does a sign-in code guess. Checked only while the wait cannot have run out.
    let right = guess(TOKEN).await.unwrap().status().as_u16();
    let code = c
        .post(server.at("/api/login"))
        .json(&json!({"code": "guess"}))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16();
    if blocked.elapsed() < wait {
        assert_eq!((right, code), (429, 429));
    }
    server.stop().await;
}

/// The body of a chunked HTTP/1.1 response read so far, and whether its last chunk came.
fn dechunk(raw: &[u8]) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut rest = raw;
    loop {
        let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") else {
            return (out, false);
        };
        let size_text = String::from_utf8_lossy(&rest[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        if size == 0 {
            return (out, true);
        }
        let start = line_end + 2;
        if rest.len() < start + size + 2 {
            return (out, false);
        }
        out.extend_from_slice(&rest[start..start + size]);
        rest = &rest[start + size + 2..];
    }
}

/// `(id, event type, text of a text_delta)` of each complete SSE message in `text`.
fn messages(text: &str) -> Vec<(i64, String, String)> {
    let mut out = Vec::new();
    let blocks: Vec<&str> = text.split("\n\n").collect();
    // The last piece may be cut off mid-message.
    for block in &blocks[..blocks.len().saturating_sub(1)] {
        let (mut id, mut kind, mut data) = (None, None, String::new());
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("id:") {
                id = v.trim().parse().ok();
            } else if let Some(v) = line.strip_prefix("event:") {
                kind = Some(v.trim().to_string());
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push_str(v.trim_start());
            }
        }
        if let (Some(id), Some(kind)) = (id, kind) {
            let v: Value = serde_json::from_str(&data).unwrap();
            let text = v["text"].as_str().unwrap_or_default().to_string();
            out.push((id, kind, text));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_dropped_and_resumes_from_the_log_in_order() {
    // 48 deltas of 256 KiB: 12 MiB, far more than the server may hold for one client plus
    // what the sockets buffer between it and the client.
    let mut reply = Reply::new();
    let mut whole = String::new();
    for i in 0..48 {
        let delta = format!("<{i:02}>{}", "x".repeat(256 * 1024 - 4));
        whole.push_str(&delta);
        reply = reply.text(delta);
    }
    let model = ScriptedModel::start(vec![reply]).await;
    let ws = Workspace::new(&model);
    let server = Running::start(&ws).await;
    let id = server.session().await;
    let addr: std::net::SocketAddr = server.url.trim_start_matches("http://").parse().unwrap();

    // A client with a small receive buffer reads the stream's start, then stops reading.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut slow = socket.connect(addr).await.unwrap();
    slow.write_all(
        format!(
            "GET /api/sessions/{id}/events HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nAccept: text/event-stream\r\n\r\n"
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut raw = Vec::new();
    let mut buf = vec![0u8; 4096];
    while !String::from_utf8_lossy(&raw).contains("ready") {
        let n = tokio::time::timeout(Duration::from_secs(30), slow.read(&mut buf))
            .await
            .expect("the stream starts")
            .unwrap();
        assert!(n > 0, "the stream ended early");
        raw.extend_from_slice(&buf[..n]);
    }

    // Another client reads the whole turn as it happens (reconnecting from its last id if
    // it too falls behind on a busy machine, as an EventSource does).
    let path = format!("/api/sessions/{id}/events");
    let mut follower = Sse::connect(&server, &path, None).await;
    let (status, body) = server
        .post(
            &format!("/api/sessions/{id}/prompt"),
            json!({"text": "flood"}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let mut seen: Vec<common::Msg> = Vec::new();
    loop {
        match follower.next_or_end().await {
            Some(m) => {
                let done = m.event == "turn_finished";
                seen.push(m);
                if done {
                    break;
                }
            }
            None => {
                // Everything of this new session's log is the turn: from 0 if nothing came.
                let last = seen.last().map_or(0, |m| m.id);
                follower = Sse::connect(&server, &path, Some(last)).await;
            }
        }
    }
    assert_eq!(text_of(&seen), whole);
    let finished = seen.last().unwrap().id;

    // Now the slow client reads again: its stream has ended (the last chunk came) short of
    // the turn's end — the server let it go instead of holding its backlog.
    let head_end = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let mut body = raw.split_off(head_end);
    let got = loop {
        let (text, ended) = dechunk(&body);
        let text = String::from_utf8_lossy(&text).into_owned();
        let got = messages(&text);
        assert!(
            !got.iter().any(|m| m.1 == "turn_finished"),
            "the client that stopped reading was held and sent the whole turn"
        );
        if ended {
            break got;
        }
        let n = tokio::time::timeout(Duration::from_secs(60), slow.read(&mut buf))
            .await
            .expect("the rest of the slow stream, or its end")
            .unwrap();
        assert!(n > 0, "the connection closed without the last chunk");
        body.extend_from_slice(&buf[..n]);
    };
    let ids: Vec<i64> = got.iter().map(|m| m.0).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    let mut text: String = got
        .iter()
        .filter(|m| m.1 == "text_delta")
        .map(|m| m.2.as_str())
        .collect();
    let last = ids.last().copied().unwrap_or(0);
    assert!(last < finished);

    // It resumes after the last id it saw and gets the rest, in order, nothing twice.
    let mut resumed =
        Sse::connect(&server, &format!("/api/sessions/{id}/events"), Some(last)).await;
    let rest = resumed.until("turn_finished").await;
    assert!(rest.first().unwrap().id > last);
    assert!(rest.windows(2).all(|w| w[0].id < w[1].id));
    assert_eq!(rest.last().unwrap().id, finished);
    text.push_str(&text_of(&rest));
    assert_eq!(text.len(), whole.len());
    assert!(text == whole, "the text arrives whole and in order");
    server.stop().await;
}
