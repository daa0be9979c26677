//! "Fork from here" on a prompt of the web page, in a real headless Chromium: the page opens
//! a new session holding the conversation up to that prompt, and the model reads it there.
// Test code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::browser::*;
use podcode_providers::testing::Reply;

const TRANSCRIPT: &str = "document.getElementById('transcript').innerText";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_from_here_opens_a_session_with_the_conversation_up_to_that_prompt() {
    let env = Env::start(
        vec![
            Reply::new().text("answer one"),
            Reply::new().text("answer two"),
            Reply::new().text("forked answer"),
        ],
        "",
    )
    .await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    for (prompt, answer) in [
        ("first question", "answer one"),
        ("second question", "answer two"),
    ] {
        send_prompt(&page, prompt).await;
        wait_for(
            &page,
            &format!(
                "{TRANSCRIPT}.includes('{answer}') && document.getElementById('abort').hidden \
                 && document.querySelectorAll('.msg.user[data-message] > button.fork').length === {}",
                if prompt.starts_with("first") { 1 } else { 2 }
            ),
            answer,
        )
        .await;
    }
    let original = eval(&page, "location.search").await;
    // The button adds no text to the prompt: it is exactly what was sent.
    assert_eq!(
        eval(&page, "document.querySelector('.msg.user').textContent").await,
        "first question"
    );
    assert_eq!(
        eval(
            &page,
            "document.querySelector('.msg.user > button.fork').getAttribute('aria-label')"
        )
        .await,
        "Fork from here"
    );
    click(&page, ".msg.user[data-message] > button.fork").await;
    wait_for(
        &page,
        &format!(
            "location.search !== {original} \
             && document.getElementById('session-title').textContent.endsWith('(fork)') \
             && document.querySelectorAll('.msg.user').length === 1"
        ),
        "the fork, opened",
    )
    .await;
    let shown = eval(&page, TRANSCRIPT).await;
    let shown = shown.as_str().unwrap_or_default();
    assert!(shown.contains("first question"), "{shown}");
    assert!(
        !shown.contains("answer one") && !shown.contains("second question"),
        "{shown}"
    );
    wait_for(
        &page,
        "[...document.querySelectorAll('#session-list li')].length === 2",
        "both sessions listed",
    )
    .await;

    send_prompt(&page, "on the fork").await;
    wait_for(
        &page,
        &format!("{TRANSCRIPT}.includes('forked answer')"),
        "the fork's answer",
    )
    .await;
    let sent = serde_json::to_string(&env.requests().last().unwrap()["messages"]).unwrap();
    assert!(
        sent.contains("first question") && sent.contains("on the fork"),
        "{sent}"
    );
    assert!(!sent.contains("second question"), "{sent}");
    close(browser, pump).await;
    env.stop().await;
}
