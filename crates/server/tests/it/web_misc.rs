//! Smaller things of the web page, in a real headless Chromium: the browser's console
//! stays quiet through a whole session (no policy reports, no missing favicon); on a phone
//! "New session" closes the sessions sheet, Enter is a new line (Send sends), and an ask
//! shows what "Always" would remember; at load the page opens this project's newest session,
//! never another project's; a denied call keeps its command after a reload; `@path`
//! attaches a file.
// Test code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use crate::browser::*;
use chromiumoxide::cdp::browser_protocol::emulation::{
    SetDeviceMetricsOverrideParams, SetTouchEmulationEnabledParams,
};
use chromiumoxide::cdp::browser_protocol::log::EventEntryAdded;
use chromiumoxide::cdp::js_protocol::runtime::{EventConsoleApiCalled, EventExceptionThrown};
use futures_util::StreamExt;
use podcode_providers::testing::Reply;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_stays_quiet_through_a_session() {
    let env = Env::start(
        vec![
            Reply::new()
                .text("Looking.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n")
                .tool_call(
                    "e1",
                    "edit",
                    r#"{"filePath": "notes.txt", "oldString": "world", "newString": "web"}"#,
                ),
            Reply::new().text(
                "Done, see [the docs](https://example.invalid/) and ![a chart](https://example.invalid/x.png).\n\n```rust\nfn main() {}\n```\n\n<img src=\"https://example.invalid/y.png\"> <span style=\"color: red\">red</span>\n",
            ),
        ],
        "[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"ask\"\n",
    )
    .await;
    env.write("notes.txt", "hello world\n");
    let (browser, pump, _profile) = chromium().await;
    let page = new_tab(&browser, "about:blank").await;
    let said = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut logs = page.event_listener::<EventEntryAdded>().await.expect("log");
    let mut console = page
        .event_listener::<EventConsoleApiCalled>()
        .await
        .expect("console");
    let mut thrown = page
        .event_listener::<EventExceptionThrown>()
        .await
        .expect("exceptions");
    let keep = said.clone();
    let listen = tokio::spawn(async move {
        loop {
            let line = tokio::select! {
                Some(e) = logs.next() => format!("{:?}: {} ({})", e.entry.level, e.entry.text, e.entry.url.clone().unwrap_or_default()),
                Some(e) = console.next() => format!("console.{:?}: {:?}", e.r#type, e.args.iter().map(|a| a.value.clone()).collect::<Vec<_>>()),
                Some(e) = thrown.next() => format!("exception: {}", e.exception_details.text),
                else => break,
            };
            keep.lock().unwrap().push(line);
        }
    });
    page.goto(env.open_url.as_str())
        .await
        .expect("open the page");
    wait_for(
        &page,
        "document.getElementById('model-picker').options.length",
        "the page",
    )
    .await;
    send_prompt(&page, "edit the notes").await;
    wait_for(&page, "document.querySelector('.perm')", "the ask").await;
    click(&page, ".perm button.primary").await;
    wait_for(
        &page,
        "document.querySelector('pre code.hljs') && document.getElementById('abort').hidden",
        "the answer",
    )
    .await;
    click(&page, "#toggle-changes").await;
    click(&page, ".change > summary").await;
    wait_for(&page, "document.querySelector('.change .diff')", "the diff").await;
    click(&page, "#help-button").await;
    click(&page, "#help-close").await;
    page.reload().await.expect("reload");
    wait_for(
        &page,
        "document.querySelector('pre code.hljs')",
        "the stored answer",
    )
    .await;
    // Whatever the browser still had to say about the page has been said by now: the
    // last message of a round trip through the page comes after it.
    eval(&page, "console.debug('end of the session'); true").await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !said
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.contains("end of the session"))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the marker never came"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    listen.abort();
    let said: Vec<String> = said
        .lock()
        .unwrap()
        .iter()
        .filter(|l| !l.contains("end of the session"))
        .cloned()
        .collect();
    assert!(said.is_empty(), "the console said:\n{}", said.join("\n"));
    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_phone_new_session_closes_the_sheet_enter_is_a_new_line_and_always_says_what() {
    let env = Env::start(
        vec![
            Reply::new().tool_call(
                "e1",
                "edit",
                r#"{"filePath": "notes.txt", "oldString": "world", "newString": "phone"}"#,
            ),
            Reply::new().text("edited"),
        ],
        "[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"ask\"\n",
    )
    .await;
    env.write("notes.txt", "hello world\n");
    let (browser, pump, _profile) = chromium().await;
    let page = new_tab(&browser, "about:blank").await;
    page.execute(SetDeviceMetricsOverrideParams::new(390, 844, 3.0, true))
        .await
        .expect("phone viewport");
    page.execute(
        SetTouchEmulationEnabledParams::builder()
            .enabled(true)
            .max_touch_points(5)
            .build()
            .expect("touch"),
    )
    .await
    .expect("touch screen");
    page.goto(env.open_url.as_str())
        .await
        .expect("open the page");
    wait_for(
        &page,
        "document.getElementById('model-picker').options.length",
        "the page",
    )
    .await;

    click(&page, "#toggle-sessions").await;
    wait_for(
        &page,
        "!document.getElementById('sessions').hidden",
        "the sessions sheet",
    )
    .await;
    click(&page, "#new-session").await;
    wait_for(
        &page,
        "document.getElementById('sessions').hidden",
        "the sheet closed by New session",
    )
    .await;

    // Enter is a new line; the Send button sends.
    let prompt = page.find_element("#prompt").await.expect("prompt box");
    prompt.click().await.expect("focus");
    prompt.type_str("first line").await.expect("type");
    prompt.press_key("Enter").await.expect("Enter");
    prompt.type_str("second line").await.expect("type");
    assert_eq!(
        eval(&page, "document.getElementById('prompt').value").await,
        "first line\nsecond line"
    );
    assert_eq!(
        eval(&page, "document.querySelectorAll('.msg.user').length").await,
        0
    );
    click(&page, "#send").await;
    let ask = wait_for(
        &page,
        "document.querySelector('.perm')?.innerText",
        "the ask",
    )
    .await;
    assert_eq!(
        eval(&page, "document.querySelector('.msg.user').textContent").await,
        "first line\nsecond line"
    );
    // What "Always" remembers is on the card, not in a tooltip.
    let note = eval(
        &page,
        "document.querySelector('.perm .always-note').innerText",
    )
    .await;
    assert_eq!(
        note, "Always allows from now on, in this project: edit notes.txt",
        "{ask}"
    );
    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_load_the_page_opens_this_project_s_newest_session_not_another_project_s() {
    let env = Env::start(vec![Reply::new().text("answered here")], "").await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    send_prompt(&page, "mine").await;
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('answered here') && document.getElementById('abort').hidden",
        "the answer",
    )
    .await;
    let mine = eval(&page, "location.search").await;

    // Newer still: a session of another project, in the same store.
    let other = env.root.root().join("other");
    std::fs::create_dir_all(other.join(".git")).expect("another project");
    let engine = std::sync::Arc::new(
        podcode_core::Engine::load_in(Some(other), env.root.dirs()).expect("engine"),
    );
    let elsewhere = podcode_core::testing::open_build_session(&engine, "elsewhere")
        .await
        .expect("a session there");
    drop(elsewhere);

    let bare = env
        .open_url
        .split('#')
        .next()
        .unwrap_or_default()
        .to_string();
    let again = open_page(&browser, &bare).await;
    wait_for(
        &again,
        "document.getElementById('transcript').innerText.includes('answered here')",
        "this project's session",
    )
    .await;
    // The other project's session is listed (newest first), but not opened.
    assert_eq!(
        eval(
            &again,
            "[...document.querySelectorAll('#session-list .open span')].map((s) => s.textContent).join(',')"
        )
        .await,
        "elsewhere,mine"
    );
    assert_eq!(eval(&again, "location.search").await, mine);
    assert_eq!(
        eval(
            &again,
            "document.getElementById('session-title').textContent"
        )
        .await,
        "mine"
    );
    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_call_keeps_its_command_after_a_reload() {
    let env = Env::start(
        vec![
            Reply::new().tool_call(
                "b1",
                "bash",
                r#"{"command": "echo denied-command-here", "description": "Say it"}"#,
            ),
            Reply::new().text("not run"),
        ],
        "[[permission]]\npermission = \"bash\"\npattern = \"*\"\naction = \"ask\"\n",
    )
    .await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    send_prompt(&page, "run it").await;
    wait_for(&page, "document.querySelector('.perm')", "the ask").await;
    click(&page, ".perm button.danger").await;
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('not run') && document.getElementById('abort').hidden",
        "the turn's end",
    )
    .await;
    let card = "document.querySelector('.card[data-call] .ttl')?.textContent";
    let live = eval(&page, card).await;
    assert!(
        live.as_str()
            .unwrap_or_default()
            .contains("denied-command-here"),
        "{live}"
    );
    page.reload().await.expect("reload");
    let stored = wait_for(&page, card, "the stored card").await;
    assert!(
        stored
            .as_str()
            .unwrap_or_default()
            .contains("denied-command-here"),
        "{stored}"
    );
    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_mentioned_as_at_path_is_attached() {
    let env = Env::start(vec![Reply::new().text("read it")], "").await;
    env.write("docs/notes.txt", "the attached words\n");
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    send_prompt(&page, "summarise @docs/notes.txt, not @missing.txt").await;
    let note = wait_for(
        &page,
        "document.querySelector('.msg.user .note')?.textContent",
        "the attachment on the prompt",
    )
    .await;
    let path = env.path("docs/notes.txt");
    assert_eq!(
        note.as_str().unwrap_or_default(),
        format!("attached: {}", path.canonicalize().unwrap().display())
    );
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('read it')",
        "the answer",
    )
    .await;
    let sent = serde_json::to_string(&env.requests()[0]).unwrap();
    assert!(sent.contains("the attached words"), "{sent}");
    assert!(
        sent.contains("summarise @docs/notes.txt, not @missing.txt"),
        "{sent}"
    );
    close(browser, pump).await;
    env.stop().await;
}
