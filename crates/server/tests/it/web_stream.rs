//! How the web page keeps up with a session's stream, in a real headless Chromium: a long
//! answer is drawn incrementally (what is finished stays drawn, a block split across
//! deltas renders as one), and a tab whose server restarted asks for the new token and
//! carries on.
// Test code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::browser::*;
use podcode_providers::testing::{Gate, Reply};

const ANSWER: &str = "document.querySelector('.msg.assistant .md')";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_answer_is_drawn_incrementally_and_renders_as_a_whole() {
    let mut first: Vec<String> = vec!["# Title\n\nFirst paragraph.\n\n".into()];
    first.extend((1..=200).map(|i| format!("Paragraph {i} of many.\n\n")));
    // A fenced block split across the wait, with a blank line inside it.
    first.push("```rust\nfn a() {}\n\n".into());
    let rest = [
        "fn b() {}\n```\n\n",
        "- x\n- y\n\nBetween.\n\n",
        "    indented code\n\n    more of it\n\n",
        "Last paragraph.\n",
    ];
    let more = Gate::new();
    let mut reply = Reply::new();
    for part in &first {
        reply = reply.text(part.clone());
    }
    reply = reply.hold_after(1 + first.len(), &more);
    for part in rest {
        reply = reply.text(part);
    }
    let env = Env::start(vec![reply], "").await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    send_prompt(&page, "write a lot").await;
    wait_for(
        &page,
        &format!("{ANSWER}?.textContent.includes('fn a()')"),
        "the first part",
    )
    .await;
    // The nodes drawn so far stay: the rest of the answer adds to them.
    eval(
        &page,
        &format!(
            "(() => {{ window.firstP = [...{ANSWER}.querySelectorAll('p')].find((p) => p.textContent === 'First paragraph.'); \
             return !!window.firstP; }})()"
        ),
    )
    .await;
    more.open();
    wait_for(
        &page,
        &format!("{ANSWER}?.textContent.includes('Last paragraph.')"),
        "the whole answer",
    )
    .await;
    assert_eq!(eval(&page, "window.firstP.isConnected").await, true);

    let shape = format!(
        "(() => {{ const m = {ANSWER}; const pre = [...m.querySelectorAll('pre')]; \
         return JSON.stringify({{ h1: m.querySelectorAll('h1').length, p: m.querySelectorAll('p').length, \
         pre: pre.map((p) => p.textContent), highlighted: m.querySelectorAll('pre code.hljs').length, \
         li: m.querySelectorAll('ul li').length, text: m.innerText }}); }})()"
    );
    let live = eval(&page, &shape).await;
    let seen: serde_json::Value = serde_json::from_str(live.as_str().unwrap()).unwrap();
    assert_eq!(seen["h1"], 1, "{seen}");
    assert_eq!(seen["p"], 203, "{seen}");
    assert_eq!(
        seen["pre"],
        serde_json::json!(["fn a() {}\n\nfn b() {}\n", "indented code\n\nmore of it\n"]),
        "one block each, though split across deltas"
    );
    assert_eq!(seen["highlighted"], 1, "{seen}");
    assert_eq!(seen["li"], 2, "{seen}");

    // The stored answer, drawn at once after a reload, reads the same.
    wait_for(
        &page,
        "document.getElementById('abort').hidden",
        "the turn's end",
    )
    .await;
    page.reload().await.expect("reload");
    wait_for(
        &page,
        &format!("{ANSWER}?.textContent.includes('Last paragraph.')"),
        "the stored answer",
    )
    .await;
    assert_eq!(eval(&page, &shape).await, live);
    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_server_restart_an_open_tab_asks_for_the_new_token_and_carries_on() {
    let mut env = Env::start(
        vec![
            Reply::new().text("before the restart"),
            Reply::new().text("after the restart"),
        ],
        "",
    )
    .await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    send_prompt(&page, "one").await;
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('before the restart') && document.getElementById('abort').hidden",
        "the first answer",
    )
    .await;

    // The server restarts: the tab says so by itself, without waiting for a prompt.
    env.restart().await;
    let why = wait_for(
        &page,
        "!document.getElementById('login').hidden && document.getElementById('login-error').textContent",
        "the sign-in form",
    )
    .await;
    assert_eq!(
        why,
        "The server no longer takes this page's sign-in (it restarted, or the sign-in ended). \
         Paste the token it printed, or open the sign-in link it printed."
    );
    assert_eq!(
        eval(&page, "document.getElementById('status').textContent").await,
        "",
        "no endless reconnecting"
    );
    let field = page
        .find_element("#login-token")
        .await
        .expect("token field");
    field.click().await.expect("focus");
    field.type_str(&env.token).await.expect("type");
    field.press_key("Enter").await.expect("send");
    wait_for(
        &page,
        "document.getElementById('login').hidden && document.getElementById('transcript').innerText.includes('before the restart')",
        "the session again",
    )
    .await;
    send_prompt(&page, "two").await;
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('after the restart')",
        "the answer after the restart",
    )
    .await;
    close(browser, pump).await;
    env.stop().await;
}
