//! What the web page says about a turn while it runs, in a real headless Chromium: the
//! session's title (from its first prompt) shows as soon as that prompt is sent; a call
//! waiting for the user's answer to its ask says so (live and after a reload) and runs again
//! once answered; a finished `task` card shows the sub-agent's answer and the notes after
//! it, not the wrapper the model reads.
// Test code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::browser::*;
use podcode_providers::testing::Reply;

const ASK_EDITS: &str =
    "[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"ask\"\n";

const TITLE: &str = "document.getElementById('session-title').textContent";
const LISTED: &str = "document.querySelector('#session-list li.active .open span')?.textContent";
const STATE: &str = "document.querySelector('.card[data-call] .st')?.textContent";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_title_shows_once_the_prompt_is_sent_and_a_call_waiting_for_its_answer_says_so() {
    let env = Env::start(
        vec![
            Reply::new().text("Writing.").tool_call(
                "w1",
                "write",
                r#"{"filePath": "notes.txt", "content": "new\n"}"#,
            ),
            Reply::new().text("written"),
        ],
        ASK_EDITS,
    )
    .await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    send_prompt(&page, "write the notes").await;
    // The turn waits on the ask, so whatever shows now shows during the turn.
    wait_for(&page, "document.querySelector('.perm')", "the ask").await;
    wait_for(
        &page,
        &format!("{TITLE} === 'write the notes' && {LISTED} === 'write the notes'"),
        "the session's title in the header and in the list, during the turn",
    )
    .await;
    assert_eq!(
        eval(&page, "document.getElementById('abort').hidden").await,
        false,
        "the turn still runs"
    );

    // The call waits for the user, and says so; a reload shows it the same.
    wait_for(
        &page,
        &format!("{STATE} === 'waiting for your answer'"),
        "the card waiting for the answer",
    )
    .await;
    page.reload().await.expect("reload");
    wait_for(
        &page,
        &format!("document.querySelector('.perm') && {STATE} === 'waiting for your answer'"),
        "the card waiting for the answer after a reload",
    )
    .await;
    assert_eq!(eval(&page, TITLE).await, "write the notes");

    // Answered, it runs again, then ends: every label the card shows is recorded.
    eval(
        &page,
        "window.labels = []; new MutationObserver((records) => { for (const r of records) \
         for (const n of r.addedNodes) window.labels.push(n.textContent); }) \
         .observe(document.querySelector('.card[data-call] .st'), { childList: true }); true",
    )
    .await;
    click(&page, ".perm button.primary").await;
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('written') && document.getElementById('abort').hidden",
        "the answer",
    )
    .await;
    let labels = eval(&page, "window.labels.join('|')").await;
    let labels = labels.as_str().unwrap_or_default().to_string();
    assert!(
        labels.starts_with("running|done · "),
        "the card's labels after the answer: {labels}"
    );
    assert_eq!(env.read("notes.txt"), "new\n");
    close(browser, pump).await;
    env.stop().await;
}

/// `shownOutput` of the page's transcript module, on `output` of `tool`.
async fn shown(page: &chromiumoxide::page::Page, tool: &str, output: &str) -> String {
    let expr = format!(
        "import('/assets/transcript.mjs').then((m) => m.shownOutput({}, {}))",
        serde_json::json!(tool),
        serde_json::json!(output)
    );
    eval(page, &expr)
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_task_card_shows_the_sub_agent_s_answer_without_the_wrapper() {
    let env = Env::start(
        vec![
            Reply::new().tool_call(
                "t1",
                "task",
                r#"{"description": "Count notes", "prompt": "Count the notes.", "subagent_type": "general"}"#,
            ),
            Reply::new().text("Found 3 notes."),
            Reply::new().text("The sub-agent counted them."),
        ],
        "",
    )
    .await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;

    // The rule itself, as the terminal's `shown_output` has it.
    let wrapped = "task_id: ses_1 (pass it as task_id to continue this sub-agent's session)\n\n<task_result>\nFound 3 notes.\n</task_result>\nThe sub-agent changed 1 file: a.txt\n";
    assert_eq!(
        shown(&page, "task", wrapped).await,
        "Found 3 notes.\nThe sub-agent changed 1 file: a.txt"
    );
    assert_eq!(shown(&page, "bash", wrapped).await, wrapped);
    assert_eq!(
        shown(&page, "task", "the sub-agent failed").await,
        "the sub-agent failed"
    );
    let bare =
        "task_id: ses_1 (pass it as task_id …)\n\n<task_result>\nonly the answer\n</task_result>\n";
    assert_eq!(shown(&page, "task", bare).await, "only the answer");

    send_prompt(&page, "count them").await;
    let body = "document.querySelector('details.card[data-call].done .body pre')?.textContent";
    let live = wait_for(&page, body, "the finished task card").await;
    let stored = {
        page.reload().await.expect("reload");
        wait_for(&page, body, "the stored task card").await
    };
    for out in [live, stored] {
        let out = out.as_str().unwrap_or_default().to_string();
        assert!(out.starts_with("Found 3 notes.\n"), "{out}");
        for gone in ["task_id", "task_result", "pass it as", "ses_"] {
            assert!(!out.contains(gone), "{gone} in {out}");
        }
    }
    close(browser, pump).await;
    env.stop().await;
}
