//! The Changes panel of the web page, in a real headless Chromium: a reverted change is
//! redone by its "Redo" button, and reverted again, the file on disk following each time;
//! a whole turn is undone and redone.
// Test code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::browser::*;
use crate::common::ALLOW_EDITS;
use podcode_providers::testing::Reply;

/// What the Changes panel's result box says, once it says `what`.
async fn result_says(page: &chromiumoxide::page::Page, what: &str) {
    wait_for(
        page,
        &format!(
            "(() => {{ const r = document.getElementById('revert-result'); \
             return !r.hidden && r.textContent.includes({what:?}); }})()"
        ),
        what,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redo_restores_a_reverted_change_and_it_can_be_reverted_again() {
    let env = Env::start(
        vec![
            Reply::new().tool_call(
                "e1",
                "edit",
                r#"{"filePath": "notes.txt", "oldString": "world", "newString": "web"}"#,
            ),
            Reply::new().text("edited"),
        ],
        ALLOW_EDITS,
    )
    .await;
    env.write("notes.txt", "hello world\n");
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    send_prompt(&page, "edit the notes").await;
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('edited') && document.getElementById('abort').hidden",
        "the turn's end",
    )
    .await;
    assert_eq!(env.read("notes.txt"), "hello web\n");
    click(&page, "#toggle-changes").await;

    click(&page, ".change summary button").await;
    result_says(&page, "Reverted 1 change").await;
    assert_eq!(env.read("notes.txt"), "hello world\n");
    wait_for(
        &page,
        "document.querySelector('.change.reverted summary button')?.textContent === 'Redo'",
        "the Redo button",
    )
    .await;

    click(&page, ".change.reverted summary button").await;
    result_says(&page, "Redid 1 change").await;
    assert_eq!(env.read("notes.txt"), "hello web\n");
    wait_for(
        &page,
        "document.querySelector('.change:not(.reverted) summary button')?.textContent === 'Revert'",
        "the change in effect again",
    )
    .await;
    assert_eq!(
        eval(
            &page,
            "document.getElementById('changes-count').textContent"
        )
        .await,
        "1"
    );

    click(&page, ".change summary button").await;
    result_says(&page, "Reverted 1 change").await;
    assert_eq!(env.read("notes.txt"), "hello world\n");
    wait_for(
        &page,
        "document.querySelector('.change.reverted summary button')?.textContent === 'Redo'",
        "reverted again",
    )
    .await;
    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_turn_is_undone_and_redone_and_later_turns_keep_theirs() {
    let write = |id: &str, file: &str, text: &str| {
        Reply::new().tool_call(
            id,
            "write",
            serde_json::json!({ "filePath": file, "content": text }).to_string(),
        )
    };
    let env = Env::start(
        vec![
            write("w1", "a.txt", "a1\n"),
            write("w2", "b.txt", "b1\n"),
            write("w3", "a.txt", "a2\n"),
            Reply::new().text("first turn done"),
            write("w4", "c.txt", "c1\n"),
            Reply::new().text("second turn done"),
        ],
        ALLOW_EDITS,
    )
    .await;
    env.write("a.txt", "a0\n");
    env.write("b.txt", "b0\n");
    env.write("c.txt", "c0\n");
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    for (prompt, done) in [("one", "first turn done"), ("two", "second turn done")] {
        send_prompt(&page, prompt).await;
        wait_for(
            &page,
            &format!(
                "document.getElementById('transcript').innerText.includes('{done}') && document.getElementById('abort').hidden"
            ),
            done,
        )
        .await;
    }
    let disk = || (env.read("a.txt"), env.read("b.txt"), env.read("c.txt"));
    assert_eq!(disk(), ("a2\n".into(), "b1\n".into(), "c1\n".into()));
    click(&page, "#toggle-changes").await;
    wait_for(
        &page,
        "document.querySelectorAll('.group .turn-toggle').length === 2",
        "a toggle per turn",
    )
    .await;

    // The first turn, undone whole: a.txt back through both of its writes; c.txt, the
    // second turn's, stays.
    click(&page, ".group .turn-toggle").await;
    result_says(&page, "Undid the turn: 3 changes").await;
    assert_eq!(disk(), ("a0\n".into(), "b0\n".into(), "c1\n".into()));
    wait_for(
        &page,
        "document.querySelector('.group .turn-toggle')?.textContent === 'Redo turn'",
        "the Redo turn button",
    )
    .await;
    click(&page, ".group .turn-toggle").await;
    result_says(&page, "Redid the turn: 3 changes").await;
    assert_eq!(disk(), ("a2\n".into(), "b1\n".into(), "c1\n".into()));
    wait_for(
        &page,
        "document.querySelector('.group .turn-toggle')?.textContent === 'Undo turn' && !document.querySelector('.change.reverted')",
        "every change in effect again",
    )
    .await;
    close(browser, pump).await;
    env.stop().await;
}
