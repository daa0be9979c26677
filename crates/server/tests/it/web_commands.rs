//! Custom commands and the todo list in the web page, driven in a real headless Chromium
//! against the real server (real engine, SQLite store, the scripted model over HTTP):
//! typing `/rev` lists the repository's `/review` (its argument hint, description and
//! "from the repository"; a config command that does not match is left out), Tab puts
//! `/review ` in the box, Enter with an argument runs it and the model is sent the filled-in
//! template; a description holding HTML and a direction-changing character shows as text
//! with a visible marker; Esc closes the list without leaving the box; text starting with a slash that
//! names no command goes as a prompt. The model's `todowrite` shows as a checklist card
//! (marks, highlight, strike-through, what is left), a newer `todowrite` replaces it, and a
//! reload draws it again from the stored transcript — also on a phone-sized screen, where
//! the card, the list and the prompt box stay on screen.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::browser;

use browser::*;
use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use chromiumoxide::page::Page;
use podcode_providers::testing::Reply;
use serde_json::{Value, json};

const REVIEW: &str = "---\ndescription: Review a file for bugs\nargument-hint: <path>\n---\n\
     Review $1 for real bugs, then plan the fix.\n";

/// A repository's description is text, whatever it holds.
const TIDY: &str =
    "---\ndescription: Tidy <img src=x onerror=\"window.pwned=1\"> up \u{202e}now\n---\nTidy up.\n";

const DEPLOY: &str =
    "[commands.deploy]\ntemplate = \"Deploy $ARGUMENTS.\"\ndescription = \"Ship it\"\n";

fn todos(items: &[(&str, &str)]) -> String {
    let list: Vec<Value> = items
        .iter()
        .map(|(content, status)| json!({"content": content, "status": status, "priority": "high"}))
        .collect();
    json!({ "todos": list }).to_string()
}

fn script() -> Vec<Reply> {
    vec![
        // The command's turn: a plan as a todo list, then an answer.
        Reply::new().tool_call(
            "t1",
            "todowrite",
            todos(&[
                ("Read src/a.rs", "completed"),
                ("Find the division by zero", "in_progress"),
                ("Write a failing test", "pending"),
                ("Rewrite it in Go", "cancelled"),
            ]),
        ),
        Reply::new().text("Reviewing."),
        // A prompt that starts with a slash: the next step is done.
        Reply::new().tool_call(
            "t2",
            "todowrite",
            todos(&[
                ("Read src/a.rs", "completed"),
                ("Find the division by zero", "completed"),
                ("Write a failing test", "in_progress"),
                ("Rewrite it in Go", "cancelled"),
            ]),
        ),
        Reply::new().text("Yes, it is."),
    ]
}

async fn text_of(page: &Page, selector: &str) -> String {
    eval(
        page,
        &format!("document.querySelector('{selector}')?.innerText ?? ''"),
    )
    .await
    .as_str()
    .unwrap_or_default()
    .to_string()
}

/// The card shows `lines` (mark and text) in order and `left` as its count.
async fn assert_card(page: &Page, lines: &[&str], left: &str) {
    let expr = format!(
        "(() => {{ const t = document.getElementById('todos'); if (t.hidden) return ''; \
         return [...t.querySelectorAll('.todo')].map(li => li.querySelector('.todo-mark').textContent \
         + ' ' + li.querySelector('.todo-text').textContent).join('\\n') \
         + '|' + t.querySelector('.todo-count').textContent; }})() === {:?}",
        format!("{}|{left}", lines.join("\n"))
    );
    wait_for(page, &expr, &format!("the todo card: {lines:?}, {left}")).await;
}

/// The element `selector` finds lies inside the viewport.
async fn on_screen(page: &Page, selector: &str) -> bool {
    eval(
        page,
        &format!(
            "(() => {{ const r = document.querySelector('{selector}').getBoundingClientRect(); \
             return r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight; }})()"
        ),
    )
    .await
        == Value::Bool(true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_runs_from_the_prompt_box_and_the_todo_list_follows_the_session() {
    let env = Env::start(script(), DEPLOY).await;
    env.write(".podcode/commands/review.md", REVIEW);
    env.write(".claude/commands/tidy.md", TIDY);
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    // No session, no list: no card.
    assert_eq!(
        eval(&page, "document.getElementById('todos').hidden").await,
        true
    );

    // `/rev` lists the matching command, with what the file says about it.
    let prompt = page.find_element("#prompt").await.expect("prompt box");
    prompt.click().await.expect("focus the prompt");
    prompt.type_str("/rev").await.expect("type");
    wait_for(
        &page,
        "!document.getElementById('command-list').hidden",
        "the commands list",
    )
    .await;
    let list = text_of(&page, "#command-list").await;
    for part in [
        "/review",
        "<path>",
        "from the repository",
        "Review a file for bugs",
    ] {
        assert!(list.contains(part), "{part:?} in {list:?}");
    }
    assert!(!list.contains("/deploy"), "{list}");
    assert_eq!(
        eval(
            &page,
            "document.querySelectorAll('#command-list li').length"
        )
        .await,
        1
    );
    // Tab takes it; the arguments follow; Enter runs it.
    prompt.press_key("Tab").await.expect("Tab");
    assert_eq!(
        eval(&page, "document.getElementById('prompt').value").await,
        "/review "
    );
    assert_eq!(
        eval(&page, "document.getElementById('command-list').hidden").await,
        true
    );
    assert_eq!(
        eval(&page, "document.activeElement.id").await,
        "prompt",
        "the box keeps the focus"
    );
    prompt.type_str("src/a.rs").await.expect("type");
    prompt.press_key("Enter").await.expect("send");

    // The prompt on screen becomes what the model was sent.
    wait_for(
        &page,
        "document.querySelector('.msg.user')?.textContent.includes('Review src/a.rs for real bugs, then plan the fix.')",
        "the filled-in template in the transcript",
    )
    .await;
    assert_card(
        &page,
        &[
            "[x] Read src/a.rs",
            "[>] Find the division by zero",
            "[ ] Write a failing test",
            "[-] Rewrite it in Go",
        ],
        "2 of 4 left",
    )
    .await;
    wait_for(
        &page,
        "[...document.querySelectorAll('.msg.assistant')].some(m => m.textContent.includes('Reviewing.'))",
        "the answer",
    )
    .await;
    wait_for(
        &page,
        "document.getElementById('abort').hidden",
        "the turn's end",
    )
    .await;
    let sent = podcode_providers::testing::user_texts(&env.requests()[0]);
    assert!(
        sent.contains("Review src/a.rs for real bugs, then plan the fix."),
        "{sent}"
    );
    assert!(!sent.contains("$1") && !sent.contains("/review"), "{sent}");
    // The one in progress stands out; the cancelled one is struck through.
    assert_eq!(
        eval(
            &page,
            "getComputedStyle(document.querySelector('.todo.in_progress')).fontWeight"
        )
        .await,
        "600"
    );
    assert!(
        eval(
            &page,
            "getComputedStyle(document.querySelector('.todo.cancelled .todo-text')).textDecorationLine"
        )
        .await
        .as_str()
        .unwrap_or_default()
        .contains("line-through")
    );

    // Esc closes the list and leaves the box as it was, focused.
    prompt.type_str("/").await.expect("type");
    wait_for(
        &page,
        "document.querySelectorAll('#command-list li').length === 3",
        "every command for a bare slash",
    )
    .await;
    let list = text_of(&page, "#command-list").await;
    assert!(
        list.contains("Tidy <img src=x onerror=\"window.pwned=1\"> up <U+202E>now"),
        "{list}"
    );
    assert_eq!(
        eval(
            &page,
            "document.querySelectorAll('#command-list img').length"
        )
        .await,
        0
    );
    assert_eq!(eval(&page, "window.pwned ?? null").await, Value::Null);
    prompt.press_key("Escape").await.expect("Esc");
    assert_eq!(
        eval(&page, "document.getElementById('command-list').hidden").await,
        true
    );
    assert_eq!(eval(&page, "document.activeElement.id").await, "prompt");
    assert_eq!(
        eval(&page, "document.getElementById('prompt').value").await,
        "/"
    );
    // A slash that names no command is a prompt, sent as typed.
    prompt
        .type_str("usr/bin is on the PATH?")
        .await
        .expect("type");
    prompt.press_key("Enter").await.expect("send");
    wait_for(
        &page,
        "[...document.querySelectorAll('.msg.assistant')].some(m => m.textContent.includes('Yes, it is.'))",
        "the second answer",
    )
    .await;
    let sent = podcode_providers::testing::user_texts(&env.requests()[2]);
    assert!(sent.contains("/usr/bin is on the PATH?"), "{sent}");
    // The newer list replaced the first.
    let second = [
        "[x] Read src/a.rs",
        "[x] Find the division by zero",
        "[>] Write a failing test",
        "[-] Rewrite it in Go",
    ];
    assert_card(&page, &second, "1 of 4 left").await;

    // A reload draws the stored session's newest list again, also on a phone.
    page.reload().await.expect("reload");
    wait_for(
        &page,
        "document.querySelector('.msg.user')",
        "the stored session after a reload",
    )
    .await;
    assert_card(&page, &second, "1 of 4 left").await;
    page.execute(SetDeviceMetricsOverrideParams::new(390, 844, 3.0, true))
        .await
        .expect("phone viewport");
    page.reload().await.expect("reload");
    wait_for(
        &page,
        "document.querySelector('.msg.user')",
        "the stored session on a phone",
    )
    .await;
    assert_card(&page, &second, "1 of 4 left").await;
    assert_eq!(eval(&page, "innerWidth").await, 390);
    assert!(on_screen(&page, "#todos").await, "the card on a phone");
    assert!(
        on_screen(&page, "#prompt").await,
        "the prompt box on a phone"
    );
    let prompt = page.find_element("#prompt").await.expect("prompt box");
    prompt.click().await.expect("focus the prompt");
    prompt.type_str("/").await.expect("type");
    wait_for(
        &page,
        "!document.getElementById('command-list').hidden",
        "the commands list on a phone",
    )
    .await;
    assert!(
        on_screen(&page, "#command-list").await,
        "the list on a phone"
    );

    // Another session has no list: the card goes away.
    click(&page, "#toggle-sessions").await;
    click(&page, "#new-session").await;
    wait_for(
        &page,
        "document.getElementById('todos').hidden",
        "no card for a new session",
    )
    .await;

    close(browser, pump).await;
    env.stop().await;
}
