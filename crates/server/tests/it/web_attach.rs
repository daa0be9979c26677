//! Attachments on the web page, in a real headless Chromium: files set on the composer's file
//! input show as chips (one removed with its ×), go with the prompt (the PNG reaches the
//! model as an image part), and show in the transcript as the prompt's attachments (the image
//! as a thumbnail), as does an image a tool's result carried, live and after a reload.
// Test code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::api_attach::PNG;
use crate::browser::*;
use chromiumoxide::cdp::browser_protocol::dom::SetFileInputFilesParams;
use podcode_providers::testing::Reply;

const TRANSCRIPT: &str = "document.getElementById('transcript').innerText";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_attached_in_the_composer_go_with_the_prompt_and_show_as_thumbnails() {
    let env = Env::start(
        vec![
            Reply::new().text("a tiny picture"),
            Reply::new().tool_call("r1", "read", r#"{"filePath": "pic.png"}"#),
            Reply::new().text("read the picture"),
        ],
        "",
    )
    .await;
    let outside = tempfile::tempdir().unwrap();
    let png = outside.path().join("dot.png");
    let notes = outside.path().join("notes.txt");
    std::fs::write(&png, PNG).unwrap();
    std::fs::write(&notes, "words that are not sent\n").unwrap();
    std::fs::write(env.path("pic.png"), PNG).unwrap();
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    wait_for(&page, "document.getElementById('attach')", "the paperclip").await;

    let input = page
        .find_element("#attach-input")
        .await
        .expect("file input");
    let mut set =
        SetFileInputFilesParams::new(vec![png.display().to_string(), notes.display().to_string()]);
    set.backend_node_id = Some(input.backend_node_id);
    page.execute(set).await.expect("set the files");
    wait_for(
        &page,
        "document.querySelectorAll('#attachments .chip').length === 2 \
         && document.querySelector('#attachments .chip img.chip-thumb')",
        "two chips, the image's with its thumbnail",
    )
    .await;
    click(
        &page,
        "#attachments .chip-remove[aria-label='Remove notes.txt']",
    )
    .await;
    wait_for(
        &page,
        "document.querySelectorAll('#attachments .chip').length === 1",
        "the text file removed",
    )
    .await;

    send_prompt(&page, "what is this").await;
    wait_for(
        &page,
        &format!(
            "{TRANSCRIPT}.includes('a tiny picture') && document.getElementById('abort').hidden"
        ),
        "the answer",
    )
    .await;
    assert_eq!(
        eval(&page, "document.getElementById('attachments').hidden").await,
        true,
        "the chips went with the prompt"
    );
    let sent = serde_json::to_string(&env.requests()[0]["messages"]).unwrap();
    assert!(sent.contains("data:image/png;base64,"), "{sent}");
    assert!(sent.contains("what is this"), "{sent}");
    assert!(!sent.contains("words that are not sent"), "{sent}");
    let thumb = "(() => { const i = document.querySelector('.msg.user .note img.thumb'); \
                 return i && i.complete && i.naturalWidth === 1; })()";
    wait_for(&page, thumb, "the prompt's image as a thumbnail").await;
    let note = eval(
        &page,
        "document.querySelector('.msg.user .note').textContent",
    )
    .await;
    assert_eq!(note, "attached: dot.png");

    // An image a tool's result carried: live, then from the store.
    send_prompt(&page, "read pic.png").await;
    wait_for(
        &page,
        &format!(
            "{TRANSCRIPT}.includes('read the picture') && document.getElementById('abort').hidden"
        ),
        "the second answer",
    )
    .await;
    let card = "(() => { const i = document.querySelector('.card[data-call] img.thumb'); \
                return i && i.complete && i.naturalWidth === 1; })()";
    wait_for(&page, card, "the read's image on its card").await;
    page.reload().await.expect("reload");
    wait_for(&page, thumb, "the prompt's image after a reload").await;
    wait_for(&page, card, "the read's image after a reload").await;
    close(browser, pump).await;
    env.stop().await;
}
