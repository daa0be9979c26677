//! The top bar of the web page, in a real headless Chromium: a model that cannot be used
//! here is marked in the picker (disabled, saying why), a refused switch leaves the picker
//! on the model the session keeps, and a session is renamed from the list or its title.
// Test code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::browser::*;
use podcode_providers::testing::Reply;
use serde_json::Value;

/// A provider of the user's whose key is in a variable nobody sets.
const KEYLESS: &str = "[provider.keyless]\nbase_url = \"http://127.0.0.1:9/v1\"\n\
    api_key_env = \"PODCODE_TEST_NEVER_SET_KEY\"\n\
    [provider.keyless.models.\"m1\"]\ncontext = 1000\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_models_are_marked_and_a_refused_switch_keeps_the_picker() {
    let env = Env::start(vec![Reply::new().text("hi")], KEYLESS).await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    let option = |id: &str| {
        format!(
            "(() => {{ const o = [...document.getElementById('model-picker').options].find((o) => o.value === '{id}'); \
             return o ? JSON.stringify({{disabled: o.disabled, text: o.textContent, title: o.title}}) : null; }})()"
        )
    };
    let parse = |v: Value| -> Value { serde_json::from_str(v.as_str().unwrap()).unwrap() };
    let usable = parse(eval(&page, &option("scripted/test")).await);
    assert_eq!(usable["disabled"], false, "{usable}");
    assert_eq!(usable["text"], "scripted/test");
    let keyless = parse(eval(&page, &option("keyless/m1")).await);
    assert_eq!(keyless["disabled"], true, "{keyless}");
    assert!(
        keyless["title"]
            .as_str()
            .unwrap()
            .contains("PODCODE_TEST_NEVER_SET_KEY"),
        "{keyless}"
    );
    assert!(
        keyless["text"].as_str().unwrap() == "keyless/m1 — needs an API key",
        "{keyless}"
    );

    // A switch the server refuses (the model chosen anyway, say its key went away since
    // the page loaded) leaves the picker on the session's model, and says why.
    send_prompt(&page, "hello").await;
    wait_for(
        &page,
        "document.getElementById('transcript').innerText.includes('hi') && document.getElementById('abort').hidden",
        "the answer",
    )
    .await;
    eval(
        &page,
        "(() => { const s = document.getElementById('model-picker'); s.value = 'keyless/m1'; \
         s.dispatchEvent(new Event('change')); return true; })()",
    )
    .await;
    let notice = wait_for(
        &page,
        "!document.getElementById('notice').hidden && document.getElementById('notice').textContent",
        "the refusal",
    )
    .await;
    assert!(
        notice
            .as_str()
            .unwrap()
            .contains("PODCODE_TEST_NEVER_SET_KEY"),
        "{notice}"
    );
    wait_for(
        &page,
        "document.getElementById('model-picker').value === 'scripted/test'",
        "the picker back on the session's model",
    )
    .await;
    close(browser, pump).await;
    env.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_renamed_from_the_list_and_from_its_title() {
    let env = Env::start(vec![Reply::new().text("hi")], "").await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    send_prompt(&page, "first words").await;
    wait_for(
        &page,
        "document.getElementById('session-title').textContent === 'first words'",
        "the title the first prompt gave",
    )
    .await;
    // The browser's own prompt dialog, answered as a user would.
    eval(&page, "window.prompt = () => '  Renamed here '; true").await;
    click(&page, "#session-list li.active .rename").await;
    wait_for(
        &page,
        "document.getElementById('session-title').textContent === 'Renamed here' && document.querySelector('#session-list li.active .open span').textContent === 'Renamed here'",
        "the new name",
    )
    .await;
    eval(&page, "window.prompt = () => 'From the title'; true").await;
    click(&page, "#session-title").await;
    wait_for(
        &page,
        "document.getElementById('session-title').textContent === 'From the title'",
        "the name given from the title",
    )
    .await;
    page.reload().await.expect("reload");
    wait_for(
        &page,
        "document.getElementById('session-title').textContent === 'From the title'",
        "the name kept",
    )
    .await;
    close(browser, pump).await;
    env.stop().await;
}
