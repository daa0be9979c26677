//! The web page of `podcode serve`, driven in a real headless Chromium (chromiumoxide, as the
//! browser tools do) against the real server (in process, with a real engine, SQLite store
//! and the scripted model speaking SSE over HTTP): the page trades the one-time code in its
//! URL for an HttpOnly, SameSite=Strict cookie and keeps no secret anywhere a script or the
//! address bar could show it (a spent link leads to the sign-in form, which takes the
//! token), a prompt streams its answer in, a permission prompt for an `edit` is approved, the Changes
//! panel reverts the edit (through a conflict and "Revert anyway") and the file is restored
//! on disk. Model text that carries HTML runs nothing. A phone-sized viewport keeps the
//! prompt box and the Changes toggle on screen. A dropped event stream resumes without loss,
//! Esc stops a turn, a sub-agent shows as a compact card with its own permission ask (and its
//! cost counts in the usage line, the session's own beside it), and two
//! tabs follow one session: each sees the other's prompt, one answer closes both asks.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::browser;

use browser::*;
use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use chromiumoxide::page::Page;
use podcode_providers::testing::{Gate, Reply};
use serde_json::Value;
use std::time::Duration;

const ANSWER_HTML: &str = "<img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script>";

/// The second answer stops after its first words until `more` opens, so the page is
/// certainly seen mid-answer, however slow the machine.
fn script(more: &Gate) -> Vec<Reply> {
    vec![
        Reply::new()
            .text("I'll change the ")
            .text("greeting.")
            .tool_call(
                "c1",
                "edit",
                r#"{"filePath": "notes.txt", "oldString": "world", "newString": "web"}"#,
            )
            .usage(1000, 20),
        Reply::new()
            .text("Done: it now says ")
            .text("*hello web*.\n\n")
            .text(ANSWER_HTML)
            .text("\n\n```rust\nfn main() {}\n```\n")
            // The role frame and the first words.
            .hold_after(2, more)
            .usage(1200, 30),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_streams_asks_edits_and_the_changes_panel_reverts_it() {
    // Edits ask, so the page has a prompt to approve.
    let more = Gate::new();
    let env = Env::start(
        script(&more),
        "[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"ask\"\n",
    )
    .await;
    env.write("notes.txt", "hello world\n");
    let (browser, pump, _profile) = chromium().await;

    let page = open_page(&browser, &env.open_url).await;
    // The code left the address bar, and the page holds no secret a script could read.
    assert_eq!(
        eval(&page, "location.hash").await,
        Value::String(String::new())
    );
    assert_secretless(&page, &env).await;
    assert_eq!(
        eval(&page, "document.getElementById('model-picker').value").await,
        "scripted/test"
    );

    // Send with Enter.
    send_prompt(&page, "say hello to the web").await;
    wait_for(
        &page,
        "document.querySelector('.msg.user')?.textContent",
        "the prompt in the transcript",
    )
    .await;

    // The first step's text, then the permission prompt for the edit.
    wait_for(
        &page,
        "document.querySelector('.msg.assistant')?.textContent.includes(\"I'll change the greeting.\")",
        "the first streamed text",
    )
    .await;
    let ask = wait_for(
        &page,
        "document.querySelector('.perm')?.innerText",
        "the permission prompt",
    )
    .await;
    let ask = ask.as_str().unwrap_or_default().to_string();
    assert!(ask.contains("edit asks for edit"), "{ask}");
    assert!(ask.contains("notes.txt"), "{ask}");
    assert_eq!(
        env.read("notes.txt"),
        "hello world\n",
        "nothing is written before the answer"
    );
    // Answered from the keyboard: y (allow once) once the prompt box is left.
    page.evaluate("document.activeElement.blur()")
        .await
        .expect("leave the prompt box");
    page.find_element("body")
        .await
        .expect("body")
        .press_key("y")
        .await
        .expect("key y");
    wait_for(
        &page,
        "!document.querySelector('.perm')",
        "the prompt closed",
    )
    .await;

    // The answer streams in: a part of it is seen before the whole.
    wait_for(
        &page,
        "(() => { const t = [...document.querySelectorAll('.msg.assistant')].map(m => m.textContent).join('\\n'); return t.includes('Done: it now says') && !t.includes('fn main'); })()",
        "the first words of the answer alone",
    )
    .await;
    more.open();
    wait_for(
        &page,
        "[...document.querySelectorAll('.msg.assistant')].some(m => m.textContent.includes('fn main'))",
        "the rest of the answer",
    )
    .await;
    wait_for(
        &page,
        "document.querySelector('.msg.assistant em')?.textContent === 'hello web'",
        "rendered Markdown",
    )
    .await;
    // Fenced code is highlighted; the model's HTML ran nothing and left no handler behind.
    wait_for(
        &page,
        "document.querySelector('pre code.hljs .hljs-keyword')?.textContent === 'fn'",
        "highlighted code",
    )
    .await;
    assert_eq!(eval(&page, "window.pwned ?? null").await, Value::Null);
    assert_eq!(
        eval(
            &page,
            "document.querySelectorAll('#transcript script, #transcript [onerror]').length"
        )
        .await,
        0
    );
    // The tool card shows the edit as done.
    wait_for(
        &page,
        "document.querySelector('.card.done .tool')?.textContent === 'edit'",
        "the edit's card",
    )
    .await;
    wait_for(
        &page,
        "document.getElementById('abort').hidden",
        "the turn's end",
    )
    .await;
    assert_eq!(env.read("notes.txt"), "hello web\n");

    // The Changes panel lists the edit; someone edits the file meanwhile, so the revert
    // reports a conflict with its diff, and "Revert anyway" restores the file.
    click(&page, "#toggle-changes").await;
    wait_for(
        &page,
        "document.querySelector('.change .file')?.textContent === 'notes.txt'",
        "the change",
    )
    .await;
    assert!(
        eval(
            &page,
            "document.querySelector('.group .prompt').textContent"
        )
        .await
        .as_str()
        .unwrap_or_default()
        .contains("say hello to the web")
    );
    click(&page, ".change > summary").await;
    wait_for(
        &page,
        "document.querySelector('.change .diff .add')?.textContent === '+hello web'",
        "the change's diff",
    )
    .await;
    env.write("notes.txt", "hello web, and more\n");
    click(&page, ".change summary button").await;
    let conflict = wait_for(
        &page,
        "document.querySelector('.revert-result.conflict')?.innerText",
        "the conflict",
    )
    .await;
    assert!(
        conflict
            .as_str()
            .unwrap_or_default()
            .contains("changed since Podcode wrote it"),
        "{conflict}"
    );
    assert_eq!(
        env.read("notes.txt"),
        "hello web, and more\n",
        "a conflict writes nothing"
    );
    click(&page, ".revert-result button.danger").await;
    wait_for(&page, "document.querySelector('.revert-result:not(.conflict)')?.textContent.includes('Reverted 1 change')", "the revert").await;
    assert_eq!(env.read("notes.txt"), "hello world\n");
    wait_for(
        &page,
        "document.querySelector('.change.reverted')",
        "the change marked reverted",
    )
    .await;

    // A reload keeps the token (in the tab) and draws the stored session: the prompt, the
    // answer as Markdown, the edit's card.
    page.reload().await.expect("reload");
    wait_for(
        &page,
        "document.querySelector('.msg.assistant em')?.textContent === 'hello web'",
        "the stored answer after a reload",
    )
    .await;
    let stored = eval(&page, "document.getElementById('transcript').innerText").await;
    let stored = stored.as_str().unwrap_or_default().to_string();
    assert!(stored.contains("say hello to the web"), "{stored}");
    assert!(stored.contains("I'll change the greeting."), "{stored}");
    assert!(stored.contains("edit"), "{stored}");
    if let Ok(dir) = std::env::var("PODCODE_WEB_SCREENSHOTS") {
        click(&page, "#toggle-changes").await;
        wait_for(
            &page,
            "document.querySelector('.change .file')",
            "the change",
        )
        .await;
        click(&page, ".card > summary").await;
        let params = chromiumoxide::page::ScreenshotParams::builder().build();
        let png = page.screenshot(params).await.expect("screenshot");
        std::fs::write(format!("{dir}/desktop.png"), png).expect("write screenshot");
    }

    // A tab without the token says how to get one (a browser that is not signed in).
    browser.clear_cookies().await.expect("clear cookies");
    let bare = env
        .open_url
        .split('#')
        .next()
        .unwrap_or_default()
        .to_string();
    let other = new_tab(&browser, &bare).await;
    let login = wait_for(
        &other,
        "!document.getElementById('login').hidden && document.getElementById('login').innerText",
        "the sign-in note",
    )
    .await;
    assert!(
        login.as_str().unwrap_or_default().contains("podcode serve"),
        "{login}"
    );

    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_phone_sized_screen_the_prompt_and_the_changes_toggle_are_on_screen() {
    let env = Env::start(vec![], "").await;
    let (browser, pump, _profile) = chromium().await;
    let page = new_tab(&browser, "about:blank").await;
    page.execute(SetDeviceMetricsOverrideParams::new(390, 844, 3.0, true))
        .await
        .expect("phone viewport");
    page.goto(env.open_url.as_str())
        .await
        .expect("open the page");
    wait_for(
        &page,
        "document.getElementById('model-picker').options.length",
        "the page",
    )
    .await;
    let visible = |sel: &str| {
        format!(
            "(() => {{ const r = document.querySelector('{sel}').getBoundingClientRect(); \
             return r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight; }})()"
        )
    };
    assert_eq!(eval(&page, "innerWidth").await, 390);
    assert_eq!(eval(&page, &visible("#prompt")).await, true);
    assert_eq!(eval(&page, &visible("#toggle-changes")).await, true);
    assert_eq!(eval(&page, &visible("#send")).await, true);
    // The sessions list starts closed; the Changes panel opens as a sheet over the page.
    assert_eq!(
        eval(&page, "document.getElementById('sessions').hidden").await,
        true
    );
    click(&page, "#toggle-changes").await;
    assert_eq!(eval(&page, &visible("#changes")).await, true);
    assert_eq!(
        eval(
            &page,
            "document.getElementById('changes').getBoundingClientRect().width"
        )
        .await,
        390
    );
    // c closes it again from the keyboard.
    page.find_element("body")
        .await
        .expect("body")
        .press_key("c")
        .await
        .expect("key c");
    wait_for(
        &page,
        "document.getElementById('changes').hidden",
        "the sheet closed",
    )
    .await;

    close(browser, pump).await;
    env.stop().await;
}

/// Cuts the tab off the network (open connections drop) or lets it back on.
// `Network.emulateNetworkConditions` is deprecated for a by-rule form that older Chromium
// builds do not know; the tab-wide switch is all this needs.
#[allow(deprecated)]
async fn offline(page: &Page, offline: bool) {
    use chromiumoxide::cdp::browser_protocol::network::EmulateNetworkConditionsParams;
    page.execute(EmulateNetworkConditionsParams::new(
        offline, 0.0, -1.0, -1.0,
    ))
    .await
    .expect("network conditions");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_event_stream_reconnects_and_loses_nothing() {
    let words: Vec<String> = (0..16).map(|i| format!("w{i} ")).collect();
    // Held after the role frame and two words until the page is offline, so the rest is
    // certainly streamed while it is away.
    let rest = Gate::new();
    let mut reply = Reply::new().hold_after(3, &rest);
    for w in &words {
        reply = reply.text(w.clone());
    }
    let env = Env::start(vec![reply.pace(Duration::from_millis(20))], "").await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    send_prompt(&page, "count").await;
    wait_for(
        &page,
        "document.querySelector('.msg.assistant')?.textContent.includes('w1')",
        "the first words",
    )
    .await;

    // The network goes away mid-answer: the page notices, then comes back and catches up.
    offline(&page, true).await;
    wait_for(
        &page,
        "document.getElementById('status').textContent === 'reconnecting…'",
        "the lost connection",
    )
    .await;
    rest.open();
    // Let the rest of the answer flow while the page is away (it catches up either way).
    tokio::time::sleep(Duration::from_millis(600)).await;
    offline(&page, false).await;
    let text = wait_for(
        &page,
        "(() => { const t = document.querySelector('.msg.assistant')?.textContent || ''; return t.includes('w15') && t; })()",
        "the whole answer",
    )
    .await;
    assert_eq!(
        text.as_str().unwrap_or_default().trim(),
        words.concat().trim(),
        "every word once, in order"
    );
    wait_for(
        &page,
        "document.getElementById('status').textContent === ''",
        "the live stream again",
    )
    .await;

    close(browser, pump).await;
    env.stop().await;
}

/// How many times each of the 40 paragraphs shows in the transcript, and whether they come
/// in order: `[counts..., in_order]` as JSON.
const PARAGRAPHS: &str = "(() => { const t = document.getElementById('transcript').innerText; \
    const at = []; const n = []; \
    for (let i = 1; i <= 40; i++) { const k = `Paragraph ${String(i).padStart(2, '0')} ends.`; \
      n.push(t.split(k).length - 1); at.push(t.indexOf(k)); } \
    const shown = at.filter((x) => x >= 0); \
    return JSON.stringify({ n, ordered: shown.every((x, i) => i === 0 || x > shown[i - 1]), \
      looking: t.split('Looking first.').length - 1, cards: document.querySelectorAll('.card[data-call]').length, \
      prompts: document.querySelectorAll('.msg.user').length }); })()";

async fn paragraphs(page: &Page) -> Value {
    let v = eval(page, PARAGRAPHS).await;
    serde_json::from_str(v.as_str().unwrap_or("null")).unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_mid_answer_shows_every_paragraph_once() {
    // A turn of two steps: a read call, then a long answer held after its 20th paragraph
    // until the page has been reloaded.
    let rest = Gate::new();
    let mut answer = Reply::new();
    for i in 1..=40 {
        answer = answer.text(format!("Paragraph {i:02} ends.\n\n"));
    }
    let env = Env::start(
        vec![
            Reply::new().text("Looking first.").tool_call(
                "r1",
                "read",
                r#"{"filePath": "notes.txt"}"#,
            ),
            answer.hold_after(21, &rest),
        ],
        "",
    )
    .await;
    env.write("notes.txt", "hello\n");
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    send_prompt(&page, "write forty paragraphs").await;
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('Paragraph 20 ends.')",
        "the first twenty paragraphs",
    )
    .await;

    // Reloaded mid-answer: what was streamed shows once, from the start of the turn.
    page.reload().await.expect("reload");
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('Paragraph 20 ends.')",
        "the twenty paragraphs after the reload",
    )
    .await;
    let seen = paragraphs(&page).await;
    let n = seen["n"].as_array().expect("counts");
    assert!(n[..20].iter().all(|c| c == 1), "{seen}");
    assert!(n[20..].iter().all(|c| c == 0), "{seen}");
    assert_eq!(seen["ordered"], true, "{seen}");
    assert_eq!(
        (
            seen["looking"].as_u64(),
            seen["cards"].as_u64(),
            seen["prompts"].as_u64()
        ),
        (Some(1), Some(1), Some(1)),
        "{seen}"
    );

    // The rest streams into the same bubble: all forty, once each, in order.
    rest.open();
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('Paragraph 40 ends.')",
        "the whole answer",
    )
    .await;
    let seen = paragraphs(&page).await;
    assert!(
        seen["n"].as_array().expect("counts").iter().all(|c| c == 1),
        "{seen}"
    );
    assert_eq!(seen["ordered"], true, "{seen}");
    assert_eq!(seen["prompts"].as_u64(), Some(1), "{seen}");

    // And once more after the turn: the stored transcript says the same.
    wait_for(
        &page,
        "document.getElementById('status').textContent === ''",
        "the turn's end",
    )
    .await;
    page.reload().await.expect("reload");
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('Paragraph 40 ends.')",
        "the stored answer",
    )
    .await;
    let seen = paragraphs(&page).await;
    assert!(
        seen["n"].as_array().expect("counts").iter().all(|c| c == 1),
        "{seen}"
    );
    assert_eq!(
        (
            seen["looking"].as_u64(),
            seen["cards"].as_u64(),
            seen["prompts"].as_u64()
        ),
        (Some(1), Some(1), Some(1)),
        "{seen}"
    );

    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_stops_a_running_turn() {
    // The model never answers: only a stop ends this turn.
    let env = Env::start(
        vec![
            Reply::new()
                .text("too late")
                .stall(Duration::from_secs(3600)),
        ],
        "",
    )
    .await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    let prompt = send_prompt(&page, "wait for me").await;
    wait_for(
        &page,
        "!document.getElementById('abort').hidden",
        "the Stop button",
    )
    .await;
    prompt.press_key("Escape").await.expect("Esc");
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('⏹ stopped')",
        "the stopped turn",
    )
    .await;
    wait_for(
        &page,
        "document.getElementById('abort').hidden",
        "the Stop button gone",
    )
    .await;
    let text = eval(&page, "document.getElementById('transcript').innerText").await;
    assert!(
        !text.as_str().unwrap_or_default().contains("too late"),
        "{text}"
    );

    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_shows_as_a_compact_card_on_its_task_call() {
    let env = Env::start(
        vec![
            Reply::new()
                .tool_call(
                    "t1",
                    "task",
                    r#"{"description": "Edit notes", "prompt": "Write new to notes.txt.", "subagent_type": "general"}"#,
                )
                .usage(1000, 100)
                .cost(0.012),
            Reply::new()
                .tool_call(
                    "w1",
                    "write",
                    r#"{"filePath": "notes.txt", "content": "new\n"}"#,
                )
                .usage(2000, 100)
                .cost(0.022),
            Reply::new().text("notes edited").usage(2000, 50).cost(0.021),
            Reply::new()
                .text("The sub-agent edited the notes.")
                .usage(1500, 50)
                .cost(0.016),
        ],
        "",
    )
    .await;
    env.write("notes.txt", "old\n");
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    send_prompt(&page, "delegate it").await;
    // The sub-agent's own ask reaches this page, saying which sub-agent asks.
    let ask = wait_for(
        &page,
        "document.querySelector('.perm h3')?.textContent",
        "the sub-agent's ask",
    )
    .await;
    assert_eq!(ask, "write asks for edit (sub-agent general · Edit notes)");
    click(&page, ".perm button.primary").await;
    wait_for(
        &page,
        "document.querySelector('.msg.assistant')?.textContent.includes('The sub-agent edited the notes.')",
        "the parent's answer",
    )
    .await;
    let card = wait_for(
        &page,
        "document.querySelector('details.card + .card.subagent')?.textContent",
        "the sub-agent card on the task call",
    )
    .await;
    let card = card.as_str().unwrap_or_default().to_string();
    assert!(card.starts_with("↳ general: Edit notes"), "{card}");
    wait_for(
        &page,
        "document.querySelector('.card.subagent li')?.textContent.startsWith('write ') && document.querySelector('.card.subagent li').textContent.endsWith('✓')",
        "the sub-agent's write, done",
    )
    .await;
    assert_eq!(env.read("notes.txt"), "new\n");
    // The session's totals count its sub-agent's, with its own beside them.
    wait_for(
        &page,
        "document.getElementById('usage')?.textContent.startsWith('6.5k in · 300 out · $0.0710 (own 2.5k in · 150 out · $0.0280)')",
        "the tree's totals in the usage line",
    )
    .await;
    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tabs_follow_one_session_and_one_answer_closes_both_prompts() {
    let env = Env::start(
        vec![
            Reply::new().text("first answer"),
            Reply::new().tool_call(
                "c1",
                "edit",
                r#"{"filePath": "notes.txt", "oldString": "world", "newString": "tabs"}"#,
            ),
            Reply::new().text("second answer"),
        ],
        "[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"ask\"\n",
    )
    .await;
    env.write("notes.txt", "hello world\n");
    let (browser, pump, _profile) = chromium().await;
    let a = open_page(&browser, &env.open_url).await;
    send_prompt(&a, "one").await;
    wait_for(
        &a,
        "document.getElementById('transcript').innerText.includes('first answer')",
        "the first answer",
    )
    .await;

    // Tab B opens the same session by its address.
    let session = eval(&a, "location.search").await;
    let (base, token) = env.open_url.split_once('#').expect("a fragment");
    let b_url = format!("{base}{}#{token}", session.as_str().unwrap_or_default());
    let b = new_tab(&browser, &b_url).await;
    wait_for(
        &b,
        "document.getElementById('transcript').innerText.includes('first answer')",
        "the stored session in tab B",
    )
    .await;

    a.bring_to_front().await.expect("tab A in front");
    send_prompt(&a, "two").await;
    // B sees A's prompt and the same permission ask; A answers, B's prompt closes.
    wait_for(
        &b,
        "[...document.querySelectorAll('.msg.user')].some(m => m.textContent === 'two')",
        "A's prompt in tab B",
    )
    .await;
    wait_for(&b, "document.querySelector('.perm')", "the ask in tab B").await;
    wait_for(&a, "document.querySelector('.perm')", "the ask in tab A").await;
    click(&a, ".perm button.primary").await;
    wait_for(
        &b,
        "!document.querySelector('.perm')",
        "the ask closed in tab B",
    )
    .await;
    wait_for(
        &b,
        "document.getElementById('transcript').innerText.includes('second answer')",
        "the answer in tab B",
    )
    .await;
    assert_eq!(env.read("notes.txt"), "hello tabs\n");
    let users = eval(&a, "document.querySelectorAll('.msg.user').length").await;
    assert_eq!(
        users.as_u64(),
        Some(2),
        "tab A shows each of its prompts once"
    );

    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spent_sign_in_link_leads_to_the_form_which_takes_the_token() {
    let env = Env::start(vec![Reply::new().text("signed in again")], "").await;
    let (browser, pump, _profile) = chromium().await;
    // The link signs this browser in once.
    let first = open_page(&browser, &env.open_url).await;
    assert_secretless(&first, &env).await;
    // Another browser (no cookie) that got hold of the same link afterwards gets nothing.
    browser.clear_cookies().await.expect("clear cookies");
    let later = new_tab(&browser, &env.open_url).await;
    wait_for(
        &later,
        "!document.getElementById('login').hidden",
        "the sign-in form",
    )
    .await;
    assert_eq!(
        eval(&later, "location.hash").await,
        Value::String(String::new())
    );
    assert_eq!(
        eval(
            &later,
            "document.getElementById('model-picker').options.length"
        )
        .await,
        0
    );
    // A wrong token is refused; the right one signs in.
    let field = later
        .find_element("#login-token")
        .await
        .expect("token field");
    field.click().await.expect("focus");
    field.type_str("not-the-token").await.expect("type");
    field.press_key("Enter").await.expect("send");
    wait_for(
        &later,
        "!document.getElementById('login-error').hidden && document.getElementById('login-error').textContent",
        "the refusal",
    )
    .await;
    eval(&later, "document.getElementById('login-token').value = ''").await;
    field.click().await.expect("focus");
    field.type_str(&env.token).await.expect("type");
    field.press_key("Enter").await.expect("send");
    wait_for(
        &later,
        "document.getElementById('model-picker').options.length",
        "the page",
    )
    .await;
    send_prompt(&later, "hello").await;
    wait_for(
        &later,
        "document.getElementById('transcript').innerText.includes('signed in again')",
        "the answer over the cookie-authorised stream",
    )
    .await;
    let field_value = eval(&later, "document.getElementById('login-token').value").await;
    assert_eq!(field_value, Value::String(String::new()));
    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_pressed_while_the_prompt_is_on_its_way_still_stops_the_turn() {
    let env = Env::start(
        vec![
            Reply::new()
                .text("too late")
                .stall(Duration::from_secs(3600)),
        ],
        "",
    )
    .await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    // The prompt's request takes its time (a slow network): the stop is pressed before
    // the server has it, and must still stop the turn it starts.
    eval(
        &page,
        "(() => { const f = window.fetch; window.fetch = async (url, opts) => { \
         if (String(url).endsWith('/prompt')) await new Promise((r) => setTimeout(r, 1500)); \
         return f(url, opts); }; return true; })()",
    )
    .await;
    let prompt = send_prompt(&page, "wait for me").await;
    wait_for(
        &page,
        "!document.getElementById('abort').hidden",
        "the Stop button",
    )
    .await;
    prompt.press_key("Escape").await.expect("Esc");
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('⏹ stopped')",
        "the stopped turn",
    )
    .await;
    close(browser, pump).await;
    env.stop().await;
}
