//! `podcode serve`'s API against a real server on 127.0.0.1, with reqwest as the client
//! and the scripted model speaking real SSE: auth, every route, the OpenAPI document, a
//! prompt streamed in order, a second prompt refused while a turn runs, and the read-only
//! workspace routes (config secrets masked).
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Running, Sse, TOKEN, Workspace, answer, text_of};
use podcode_providers::testing::{Gate, Reply, ScriptedModel};
use podcode_server::{MASK, ServeOptions, Server, ServerError};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_token_or_a_wrong_one_gets_401_and_nothing_else() {
    let model = ScriptedModel::start(vec![]).await;
    let ws = Workspace::new(&model);
    let server = Running::start(&ws).await;
    let c = &server.client;

    let none = answer(c.get(server.at("/api/sessions")).send().await.unwrap()).await;
    assert_eq!(none, (401, json!({"error": "unauthorized"})));
    let wrong = c
        .get(server.at("/api/sessions"))
        .bearer_auth("not-the-token")
        .send()
        .await
        .unwrap();
    assert_eq!(answer(wrong).await, (401, json!({"error": "unauthorized"})));
    // A route that does not exist answers 401 too: nothing is learnt without the token.
    let unknown = answer(c.get(server.at("/api/nope")).send().await.unwrap()).await;
    assert_eq!(unknown.0, 401);
    // A token in a URL (which proxies log) is never accepted, not even by the event streams.
    for path in [
        "/api/sessions",
        "/api/events",
        "/api/events?last_event_id=0",
    ] {
        let sep = if path.contains('?') { '&' } else { '?' };
        let in_query = c
            .get(server.at(&format!("{path}{sep}token={TOKEN}")))
            .send()
            .await
            .unwrap();
        assert_eq!(in_query.status().as_u16(), 401, "{path}");
    }
    // The scheme is case-insensitive (RFC 9110).
    let lower = c
        .get(server.at("/api/sessions"))
        .header("authorization", format!("bearer {TOKEN}"))
        .send()
        .await
        .unwrap();
    assert_eq!(lower.status().as_u16(), 200);

    assert_eq!(server.get("/api/sessions").await, (200, json!([])));
    // The page and the API description carry no data and need no token.
    let page = c.get(server.at("/")).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(
        page.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let doc = answer(c.get(server.at("/openapi.json")).send().await.unwrap()).await;
    assert_eq!(doc.0, 200);
    assert_eq!(doc.1["info"]["title"], "Podcode server API");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_loopback_host_needs_a_chosen_token_and_a_random_one_is_made_on_loopback() {
    let model = ScriptedModel::start(vec![]).await;
    let ws = Workspace::new(&model);
    let open = ServeOptions {
        host: "0.0.0.0".into(),
        ..ServeOptions::default()
    };
    let err = Server::bind(ws.engine(), open).await.err().unwrap();
    assert!(matches!(err, ServerError::TokenRequired(_)), "{err}");
    assert!(err.to_string().contains("PODCODE_SERVER_TOKEN"), "{err}");

    let a = Server::bind(ws.engine(), ServeOptions::default())
        .await
        .unwrap();
    let b = Server::bind(ws.engine(), ServeOptions::default())
        .await
        .unwrap();
    assert_ne!(a.token(), b.token());
    assert!(a.token().len() >= 32);
    assert!(a.url().starts_with("http://127.0.0.1:"));
    // The page's link carries a fresh one-time code, never the token.
    let (first, second) = (a.page_url().unwrap(), a.page_url().unwrap());
    assert!(first.starts_with(&format!("{}/#code=", a.url())), "{first}");
    assert_ne!(first, second);
    assert!(!first.contains(&a.token()));
}

/// Every route the server has, as `METHOD path` in OpenAPI form.
const ROUTES: &[&str] = &[
    "GET /api/info",
    "POST /api/login",
    "POST /api/logout",
    "GET /api/sessions",
    "POST /api/sessions",
    "GET /api/sessions/{id}",
    "DELETE /api/sessions/{id}",
    "PATCH /api/sessions/{id}",
    "GET /api/sessions/{id}/export",
    "POST /api/sessions/{id}/fork",
    "POST /api/sessions/{id}/prompt",
    "POST /api/sessions/{id}/command",
    "POST /api/sessions/{id}/attachments",
    "GET /api/sessions/{id}/attachments/{file}",
    "GET /api/sessions/{id}/calls/{call_id}/attachments/{index}",
    "POST /api/sessions/{id}/abort",
    "POST /api/sessions/{id}/model",
    "POST /api/sessions/{id}/agent",
    "GET /api/sessions/{id}/asks",
    "POST /api/sessions/{id}/asks/{request_id}",
    "GET /api/sessions/{id}/changes",
    "GET /api/sessions/{id}/changes/{change_id}",
    "POST /api/sessions/{id}/revert",
    "GET /api/sessions/{id}/events",
    "GET /api/events",
    "GET /api/tools",
    "GET /api/plugins",
    "GET /api/mcp",
    "GET /api/config",
    "GET /api/models",
    "GET /api/agents",
    "GET /api/commands",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_has_every_route_and_every_documented_route_answers() {
    let doc = serde_json::to_value(podcode_server::openapi()).unwrap();
    let mut documented = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if ["get", "post", "delete", "put", "patch"].contains(&method.as_str()) {
                documented.push(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    documented.sort();
    let mut expected: Vec<String> = ROUTES.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(documented, expected);
    assert!(doc["components"]["schemas"]["SessionInfo"].is_object());
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );

    // Each documented route is served (a missing one would answer the JSON 404 fallback).
    let model = ScriptedModel::start(vec![]).await;
    let ws = Workspace::new(&model);
    let server = Running::start(&ws).await;
    let id = server.session().await;
    for route in ROUTES {
        let (method, path) = route.split_once(' ').unwrap();
        if path.ends_with("/events") {
            continue; // streams: covered by their own tests
        }
        let path = path
            .replace("{id}", &id)
            .replace("{request_id}", "req_x")
            .replace("{change_id}", "chg_x")
            .replace("{file}", "x.png")
            .replace("{call_id}", "call_x")
            .replace("{index}", "0");
        let req = match method {
            "GET" => server.client.get(server.at(&path)),
            "POST" => server.client.post(server.at(&path)).json(&json!({})),
            "PATCH" => server
                .client
                .patch(server.at(&path))
                .json(&json!({"title": "renamed"})),
            _ => continue, // DELETE: its own test
        };
        let (status, body) = answer(req.bearer_auth(TOKEN).send().await.unwrap()).await;
        let fallback = body["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("no such route"));
        assert!(!fallback, "{route} is not served: {status} {body}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_streams_over_sse_in_order_and_a_second_prompt_waits_its_turn() {
    // The answer is held mid-stream until the busy answer was checked: the turn is
    // certainly still running then, however slow the machine.
    let gate = Gate::new();
    let model = ScriptedModel::start(vec![
        Reply::new()
            .text("Hel")
            .text("lo ")
            .text("world")
            .usage(10, 3)
            .hold_after(1, &gate),
    ])
    .await;
    let ws = Workspace::new(&model);
    let server = Running::start(&ws).await;
    let id = server.session().await;
    let mut sse = Sse::connect(&server, &format!("/api/sessions/{id}/events"), None).await;

    let (status, body) = server
        .post(
            &format!("/api/sessions/{id}/prompt"),
            json!({"text": "say hello"}),
        )
        .await;
    assert_eq!((status, body), (202, json!({"session_id": id})));
    let first = sse.until("turn_started").await;
    // The turn runs: a second prompt is refused, not raced.
    let (status, body) = server
        .post(
            &format!("/api/sessions/{id}/prompt"),
            json!({"text": "again"}),
        )
        .await;
    assert_eq!(status, 409);
    assert_eq!(body["error"], podcode_server::BUSY_TEXT);
    let (_, info) = server.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(info["session"]["busy"], true);
    // Mid-turn, the snapshot stops before the running turn's prompt, and the stream is to
    // resume right before it: the whole turn comes from the log, once.
    assert_eq!(info["transcript"], json!([]));
    assert_eq!(first[0].event, "user_message");
    assert_eq!(info["resume_after"].as_i64(), Some(first[0].id - 1));

    gate.open();
    let rest = sse.until("turn_finished").await;
    let all: Vec<_> = first.into_iter().chain(rest).collect();
    assert!(
        all.windows(2).all(|w| w[0].id < w[1].id),
        "ids increase: {all:?}"
    );
    assert!(all.iter().all(|m| m.data["session"] == id.as_str()));
    assert!(all.iter().all(|m| m.data["type"] == m.event.as_str()));
    assert_eq!(text_of(&all), "Hello world");
    let kinds: Vec<&str> = all
        .iter()
        .map(|m| m.event.as_str())
        .filter(|k| *k != "text_delta")
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message",
            "turn_started",
            "step_started",
            "step_finished",
            "usage",
            "turn_finished"
        ]
    );

    let (status, detail) = server.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(detail["session"]["busy"], false);
    assert_eq!(detail["session"]["open"], true);
    assert_eq!(detail["session"]["title"], "say hello");
    assert_eq!(
        detail["transcript"],
        json!([
            {"kind": "user", "message_id": all[0].data["message_id"], "text": "say hello", "files": []},
            {"kind": "assistant", "message_id": all[2].data["message_id"], "text": "Hello world"}
        ])
    );
    // Idle: the stored transcript is all of it, and the stream goes on after the last event.
    assert_eq!(detail["resume_after"].as_i64(), all.last().map(|m| m.id));
    assert_eq!(detail["usage"]["input_tokens"], 10);
    assert_eq!(detail["asks"], json!([]));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_listed_exported_reconfigured_and_deleted() {
    let model = ScriptedModel::start(vec![Reply::new().text("ok")]).await;
    let ws = Workspace::new(&model);
    let server = Running::start(&ws).await;

    let (status, created) = server
        .post("/api/sessions", json!({"title": "first", "agent": "plan"}))
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["agent"], "plan");
    assert_eq!(created["model"], "scripted/test");
    assert_eq!(created["open"], true);
    let id = created["id"].as_str().unwrap().to_string();
    let (status, body) = server
        .post("/api/sessions", json!({"agent": "nobody"}))
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"].as_str().unwrap().contains("nobody"), "{body}");

    let (_, list) = server.get("/api/sessions").await;
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["id"], id.as_str());
    assert_eq!(list[0]["title"], "first");

    let mut sse = Sse::connect(&server, &format!("/api/sessions/{id}/events"), None).await;
    let (status, body) = server
        .post(
            &format!("/api/sessions/{id}/model"),
            json!({"model": "nowhere/x"}),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, _) = server
        .post(
            &format!("/api/sessions/{id}/agent"),
            json!({"agent": "nobody"}),
        )
        .await;
    assert_eq!(status, 400);
    // A title is bounded: its first line, 60 characters at most.
    let long = format!("{}\nsecond line", "é".repeat(100));
    let (status, body) = server.post("/api/sessions", json!({ "title": long })).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["title"], "é".repeat(60));
    let long_id = body["id"].as_str().unwrap().to_string();
    let (status, _) = server.delete(&format!("/api/sessions/{long_id}")).await;
    assert_eq!(status, 204);
    // Renamed: one line of 1 to 100 characters.
    let rename = |title: &str| {
        server
            .client
            .patch(server.at(&format!("/api/sessions/{id}")))
            .bearer_auth(TOKEN)
            .json(&json!({ "title": title }))
            .send()
    };
    for bad in ["  ", "two\nlines", &"x".repeat(101)] {
        let (status, body) = answer(rename(bad).await.unwrap()).await;
        assert_eq!(
            (status, body),
            (400, json!({ "error": podcode_server::TITLE_TEXT }))
        );
    }
    let (status, body) = answer(rename("  A better name ").await.unwrap()).await;
    assert_eq!((status, &body["title"]), (200, &json!("A better name")));
    let (_, listed) = server.get(&format!("/api/sessions/{id}")).await;
    assert_eq!(listed["session"]["title"], "A better name");
    // A sub-agent runs only under a `task` call.
    let (status, body) = server
        .post(
            &format!("/api/sessions/{id}/agent"),
            json!({"agent": "general"}),
        )
        .await;
    assert_eq!(
        (status, body),
        (
            400,
            json!({"error": "agent \"general\" is a sub-agent (mode: subagent), which only the task tool starts; primary agents: build, plan"})
        )
    );
    let (status, _) = server
        .post(
            &format!("/api/sessions/{id}/agent"),
            json!({"agent": "build"}),
        )
        .await;
    assert_eq!(status, 202);
    let configured = sse.until("configured").await;
    assert_eq!(configured.last().unwrap().data["agent"], "build");
    let (status, _) = server
        .post(
            &format!("/api/sessions/{id}/model"),
            json!({"model": "scripted/test"}),
        )
        .await;
    assert_eq!(status, 202);
    sse.until("configured").await;
    let (status, _) = server
        .post(&format!("/api/sessions/{id}/abort"), json!({}))
        .await;
    assert_eq!(status, 202);
    let (status, body) = server
        .post(&format!("/api/sessions/{id}/prompt"), json!({"text": "  "}))
        .await;
    assert_eq!(
        (status, body["error"].clone()),
        (400, json!("the prompt is empty"))
    );

    server
        .post(&format!("/api/sessions/{id}/prompt"), json!({"text": "hi"}))
        .await;
    sse.until("turn_finished").await;
    let (status, export) = server.get(&format!("/api/sessions/{id}/export")).await;
    assert_eq!(status, 200);
    assert_eq!(export["session"]["id"], id.as_str());
    assert_eq!(export["messages"].as_array().unwrap().len(), 2);

    let (status, _) = server.delete(&format!("/api/sessions/{id}")).await;
    assert_eq!(status, 204);
    for path in [
        format!("/api/sessions/{id}"),
        format!("/api/sessions/{id}/export"),
        format!("/api/sessions/{id}/changes"),
    ] {
        let (status, body) = server.get(&path).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert!(body["error"].as_str().unwrap().contains(&id));
    }
    assert_eq!(server.delete(&format!("/api/sessions/{id}")).await.0, 404);
    assert_eq!(server.get("/api/sessions").await, (200, json!([])));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_routes_answer_and_the_config_masks_secrets() {
    let model = ScriptedModel::start(vec![]).await;
    let ws = Workspace::new(&model);
    let server = Running::start(&ws).await;

    let (status, info) = server.get("/api/info").await;
    assert_eq!(status, 200);
    assert_eq!(info["model"], "scripted/test");
    assert_eq!(info["agent"], "build");
    assert_eq!(
        info["cwd"],
        ws.repo().canonicalize().unwrap().display().to_string()
    );

    let (status, tools) = server.get("/api/tools").await;
    assert_eq!(status, 200);
    let ids: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    for id in ["read", "write", "edit", "bash", "grep"] {
        assert!(ids.contains(&id), "{id} in {ids:?}");
    }
    let (status, plugins) = server.get("/api/plugins").await;
    assert_eq!(status, 200);
    assert!(plugins.is_object(), "{plugins}");
    assert_eq!(server.get("/api/mcp").await, (200, json!([])));

    let (status, config) = server.get("/api/config").await;
    assert_eq!(status, 200);
    assert_eq!(
        config["provider"]["scripted"]["headers"]["X-Test-Secret"], MASK,
        "{config}"
    );
    assert!(!config.to_string().contains("sk-secret-value"));
    assert_eq!(config["model"], "scripted/test");

    let (status, models) = server.get("/api/models").await;
    assert_eq!(status, 200);
    assert_eq!(models["default"], "scripted/test");
    let scripted = models["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "scripted/test")
        .expect("the configured model is listed");
    assert_eq!(scripted["context"], 128000);
    assert_eq!(scripted["provider"], "scripted");
    assert!(
        models["models"].as_array().unwrap().len() > 5,
        "the catalog too"
    );

    let (status, agents) = server.get("/api/agents").await;
    assert_eq!(status, 200);
    let names: Vec<&str> = agents
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"build") && names.contains(&"plan"),
        "{names:?}"
    );
    server.stop().await;
}
