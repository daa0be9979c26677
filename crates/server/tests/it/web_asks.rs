//! Permission cards in the web page, in a real headless Chromium: a long ask (a 400-line
//! write) stays within the screen with its full diff one click away, and the keys a card
//! offers work where the focus is.
// Test code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::browser::*;
use podcode_providers::testing::Reply;

const ASK_EDITS: &str =
    "[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"ask\"\n";

/// Whether the element `sel` finds is wholly inside the viewport.
fn on_screen(sel: &str) -> String {
    format!(
        "(() => {{ const e = document.querySelector('{sel}'); if (!e) return false; \
         const r = e.getBoundingClientRect(); \
         return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; }})()"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_ask_stays_on_screen_with_its_full_diff_one_click_away() {
    let content: String = (1..=400).map(|i| format!("line {i}\n")).collect();
    let args = serde_json::json!({ "filePath": "long.txt", "content": content }).to_string();
    let env = Env::start(
        vec![
            Reply::new().tool_call("w1", "write", &args),
            Reply::new().text("written"),
        ],
        ASK_EDITS,
    )
    .await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    send_prompt(&page, "write a long file").await;
    wait_for(&page, "document.querySelector('.perm .diff')", "the ask").await;

    // The card is bounded: the transcript keeps room, and the prompt box and the card's
    // answers stay on the screen.
    let card = eval(
        &page,
        "document.querySelector('.perm').getBoundingClientRect().height / innerHeight",
    )
    .await;
    assert!(
        card.as_f64().unwrap() <= 0.65,
        "card height / screen: {card}"
    );
    let transcript = eval(
        &page,
        "document.getElementById('transcript').getBoundingClientRect().height / innerHeight",
    )
    .await;
    assert!(
        transcript.as_f64().unwrap() >= 0.2,
        "transcript / screen: {transcript}"
    );
    assert_eq!(eval(&page, &on_screen("#prompt")).await, true);
    assert_eq!(eval(&page, &on_screen(".perm .actions")).await, true);
    // The head of the diff, and the rest a click away.
    let shown = eval(
        &page,
        "document.querySelectorAll('.perm .diff .add').length",
    )
    .await;
    assert!(shown.as_u64().unwrap() < 400, "{shown}");
    click(&page, ".perm .full-diff").await;
    wait_for(
        &page,
        "document.querySelectorAll('.perm .diff .add').length === 400",
        "the full diff",
    )
    .await;
    assert_eq!(eval(&page, &on_screen(".perm .actions")).await, true);
    assert_eq!(eval(&page, &on_screen("#prompt")).await, true);

    click(&page, ".perm button.primary").await;
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('written')",
        "the answer",
    )
    .await;
    assert_eq!(env.read("long.txt"), content);
    close(browser, pump).await;
    env.stop().await;
}
