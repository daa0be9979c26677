//! Attachments over the API: an uploaded text file and image are stored for the session,
//! read without an ask when a prompt names them (the image goes to the model as an image),
//! given back by name (an image as itself); an upload over 10 MB is refused with 413, an
//! empty one with 400, one for an unknown session with 404.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Running, Sse, TOKEN, Workspace, answer};
use podcode_providers::testing::{Reply, ScriptedModel};
use serde_json::{Value, json};

/// A 1×1 PNG.
pub const PNG: &[u8] = &[
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0,
    0, 0, 144, 119, 83, 222, 0, 0, 0, 12, 73, 68, 65, 84, 120, 156, 99, 248, 207, 192, 0, 0, 3, 1,
    1, 0, 201, 254, 146, 239, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

async fn upload(server: &Running, id: &str, name: &str, body: Vec<u8>) -> (u16, Value) {
    let r = server
        .client
        .post(server.at(&format!("/api/sessions/{id}/attachments?name={name}")))
        .bearer_auth(TOKEN)
        .body(body)
        .send()
        .await
        .unwrap();
    answer(r).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploaded_files_are_attached_to_a_prompt_and_given_back() {
    let model = ScriptedModel::start(vec![Reply::new().text("seen both")]).await;
    let ws = Workspace::new(&model);
    let server = Running::start(&ws).await;
    let id = server.session().await;

    let (status, text) = upload(
        &server,
        &id,
        "notes%20v1.txt",
        b"the uploaded words\n".to_vec(),
    )
    .await;
    assert_eq!(status, 201, "{text}");
    assert_eq!(text["size"], 19);
    assert_eq!(text["image"], Value::Null);
    let name = text["name"].as_str().unwrap();
    assert!(name.ends_with("-notes_v1.txt"), "{name}");
    let (status, image) = upload(&server, &id, "shot.png", PNG.to_vec()).await;
    assert_eq!(status, 201, "{image}");
    assert_eq!(image["image"], "image/png");
    let image_path = image["path"].as_str().unwrap();
    assert_eq!(std::fs::read(image_path).unwrap(), PNG);
    assert!(
        !image_path.starts_with(&ws.repo().display().to_string()),
        "{image_path}"
    );

    // Given back by name: the image as itself.
    let got = server
        .client
        .get(server.at(&format!(
            "/api/sessions/{id}/attachments/{}",
            image["name"].as_str().unwrap()
        )))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(got.status().as_u16(), 200);
    assert_eq!(got.headers()["content-type"], "image/png");
    assert_eq!(got.bytes().await.unwrap().as_ref(), PNG);
    for bad in ["..%2F..%2Fconfig.toml", "nope.png"] {
        let (status, _) = server
            .get(&format!("/api/sessions/{id}/attachments/{bad}"))
            .await;
        assert_eq!(status, 404, "{bad}");
    }

    // A prompt naming both: read without an ask; the image reaches the model as an image.
    let mut sse = Sse::connect(&server, &format!("/api/sessions/{id}/events"), None).await;
    let (status, body) = server
        .post(
            &format!("/api/sessions/{id}/prompt"),
            json!({"text": "look at these", "files": [text["path"], image["path"]]}),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let turn = sse.until("turn_finished").await;
    assert!(turn.iter().all(|m| m.event != "permission_asked"), "no ask");
    let sent = model.requests()[0]["messages"].to_string();
    assert!(sent.contains("the uploaded words"), "{sent}");
    assert!(sent.contains("data:image/png;base64,"), "{sent}");
    let (_, detail) = server.get(&format!("/api/sessions/{id}")).await;
    let user = &detail["transcript"][0];
    assert_eq!(
        user["files"],
        json!([text["path"], image["path"]]),
        "{detail}"
    );

    // A fork at that prompt rebuilds its history from the store: the image goes again.
    model.push(Reply::new().text("seen again"));
    let (status, fork) = server
        .post(
            &format!("/api/sessions/{id}/fork"),
            json!({"messageId": user["message_id"]}),
        )
        .await;
    assert_eq!(status, 201, "{fork}");
    let fork_id = fork["id"].as_str().unwrap();
    let mut sse = Sse::connect(&server, &format!("/api/sessions/{fork_id}/events"), None).await;
    server
        .post(
            &format!("/api/sessions/{fork_id}/prompt"),
            json!({"text": "and again"}),
        )
        .await;
    sse.until("turn_finished").await;
    let sent = model.requests().last().unwrap()["messages"].to_string();
    assert!(sent.contains("and again"), "{sent}");
    assert!(sent.contains("the uploaded words"), "{sent}");
    assert!(sent.contains("data:image/png;base64,"), "{sent}");

    // Refusals.
    let (status, body) = upload(&server, &id, "big.bin", vec![0u8; 10 * 1024 * 1024 + 1]).await;
    assert_eq!(
        (status, body),
        (413, json!({"error": podcode_server::TOO_LARGE_TEXT}))
    );
    let (status, _) = upload(&server, &id, "empty.txt", Vec::new()).await;
    assert_eq!(status, 400);
    let (status, _) = upload(&server, "ses_nope", "a.txt", b"x".to_vec()).await;
    assert_eq!(status, 404);

    // Deleting the session removes its uploads.
    assert_eq!(server.delete(&format!("/api/sessions/{id}")).await.0, 204);
    assert!(!std::path::Path::new(image_path).exists());
    server.stop().await;
}
