//! Permission cards in the web page, in a real headless Chromium: a long ask (a 400-line
//! write) stays within the screen with its full diff one click away, and the keys a card
//! offers work where the focus is.
// Test code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::browser::*;
use podcode_providers::testing::{Gate, Reply};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_takes_the_keys_esc_leaves_the_box_for_it_and_stop_closes_it() {
    let write = |id: &str, text: &str| {
        Reply::new().tool_call(
            id,
            "write",
            serde_json::json!({ "filePath": "notes.txt", "content": text }).to_string(),
        )
    };
    // The second write is held until the user is writing a draft.
    let second = Gate::new();
    let env = Env::start(
        vec![
            write("w1", "one\n"),
            write("w2", "two\n").hold_after(1, &second),
            Reply::new().text("never"),
        ],
        ASK_EDITS,
    )
    .await;
    env.write("notes.txt", "zero\n");
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    // Sent from the prompt box, which keeps the focus: the ask takes it when it opens, so
    // `y` answers it instead of typing a "y".
    let prompt = send_prompt(&page, "write twice").await;
    wait_for(
        &page,
        "document.activeElement?.classList.contains('perm')",
        "the ask with the focus",
    )
    .await;
    prompt.press_key("y").await.expect("key y");
    wait_for(
        &page,
        "document.querySelectorAll('.card.done').length === 1 && !document.querySelector('.perm')",
        "the first write, allowed",
    )
    .await;
    assert_eq!(
        eval(&page, "document.getElementById('prompt').value").await,
        ""
    );
    assert_eq!(env.read("notes.txt"), "one\n");

    // The second ask opens while the user writes in the box: the focus stays there; Esc
    // leaves the box for the card and does not stop the turn.
    let prompt = page.find_element("#prompt").await.expect("prompt box");
    prompt.click().await.expect("focus the prompt");
    prompt.type_str("draft").await.expect("type");
    second.open();
    wait_for(&page, "document.querySelector('.perm')", "the second ask").await;
    assert_eq!(
        eval(&page, "document.activeElement.id").await,
        "prompt",
        "a draft keeps the focus"
    );
    prompt.press_key("Escape").await.expect("Esc");
    wait_for(
        &page,
        "document.activeElement?.classList.contains('perm')",
        "the card with the focus",
    )
    .await;
    assert_eq!(
        eval(&page, "document.getElementById('abort').hidden").await,
        false,
        "the turn still runs"
    );
    assert_eq!(
        eval(&page, "document.getElementById('prompt').value").await,
        "draft"
    );

    // Stop while the ask is open: its buttons stop taking answers at once, and it closes.
    let answerable = eval(
        &page,
        "(() => { document.getElementById('abort').click(); \
         return [...document.querySelectorAll('.perm button')].filter((b) => !b.disabled).length; })()",
    )
    .await;
    assert_eq!(answerable, 0);
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('⏹ stopped') && !document.querySelector('.perm')",
        "the stopped turn, the ask closed",
    )
    .await;
    assert_eq!(env.read("notes.txt"), "one\n");
    close(browser, pump).await;
    env.stop().await;
}
