//! How the web page lays out a turn, in a real headless Chromium: at 1280×800 the prompt box
//! lines up with the messages and a focused permission card has one frame (its own border,
//! in the focus colour); on a 390×844 phone nothing of the turn is cut at the screen's edge
//! (the ask's diff lines, the model's name, the usage line), the prompt box says plainly what
//! sends, the asking call's card shows whole above the ask, and an answer's table scrolls in
//! its own box with its words and inline code whole.
// Test code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::browser::*;
use chromiumoxide::cdp::browser_protocol::emulation::{
    SetDeviceMetricsOverrideParams, SetTouchEmulationEnabledParams,
};
use chromiumoxide::page::Page;
use podcode_providers::testing::Reply;

const ASK_EDITS: &str =
    "[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"ask\"\n";

const TABLE: &str = "Done: `src/greet.py` has a new `--shout` flag.\n\n\
    | Flag | Default | Effect |\n|---|---|---|\n\
    | `--name NAME` | `world` | who to greet |\n\
    | `--shout` | off | prints the greeting in capitals |\n\n\
    It prints `HELLO, ADA!`.\n";

/// A turn: some text and a write that asks (long lines in its diff), then a table.
fn script() -> Vec<Reply> {
    let content = "import argparse\n\ndef main() -> None:\n    parser = argparse.ArgumentParser(description=\"Greets someone by name, politely or loudly.\")\n    parser.add_argument(\"--shout\", action=\"store_true\", help=\"print the greeting in capitals\")\n";
    let args = serde_json::json!({ "filePath": "src/greet.py", "content": content }).to_string();
    vec![
        Reply::new()
            .text("Adding the flag and keeping the default output as it was.")
            .tool_call("w1", "write", &args)
            .usage(12000, 300)
            .cache(8000, 0)
            .cost(0.0123),
        Reply::new().text(TABLE).usage(13000, 450).cost(0.0131),
    ]
}

/// The left and right edges of what `sel` finds.
async fn edges(page: &Page, sel: &str) -> (f64, f64) {
    let v = eval(
        page,
        &format!(
            "(() => {{ const r = document.querySelector('{sel}').getBoundingClientRect(); \
             return [r.left, r.right]; }})()"
        ),
    )
    .await;
    (v[0].as_f64().unwrap(), v[1].as_f64().unwrap())
}

async fn assert_lined_up(page: &Page, sel: &str) {
    let (l, r) = edges(page, sel).await;
    let (pl, pr) = edges(page, "#prompt").await;
    assert!(
        (l - pl).abs() <= 1.0 && (r - pr).abs() <= 1.0,
        "{sel} spans {l}..{r}, the prompt box {pl}..{pr}"
    );
}

/// The computed colour of `css` (a colour or a `var(…)`), as the browser writes colours.
fn colour(css: &str) -> String {
    format!(
        "(() => {{ const d = document.createElement('i'); d.style.color = '{css}'; \
         document.body.append(d); const c = getComputedStyle(d).color; d.remove(); return c; }})()"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_1280_the_prompt_box_lines_up_with_the_messages_and_a_focused_ask_has_one_frame() {
    let env = Env::start(script(), ASK_EDITS).await;
    let (browser, pump, _profile) = chromium().await;
    let page = new_tab(&browser, "about:blank").await;
    page.execute(SetDeviceMetricsOverrideParams::new(1280, 800, 1.0, false))
        .await
        .expect("desktop viewport");
    page.goto(env.open_url.as_str()).await.expect("open");
    wait_for(
        &page,
        "document.getElementById('model-picker').options.length",
        "the page",
    )
    .await;
    send_prompt(&page, "add a --shout flag").await;
    wait_for(
        &page,
        "document.activeElement?.classList.contains('perm')",
        "the ask with the focus",
    )
    .await;

    // One frame: no focus ring around the card; its own border shows the focus instead,
    // in the focus colour (and amber again without the focus).
    let style = "(() => { const s = getComputedStyle(document.querySelector('.perm')); \
                 return [s.outlineStyle, s.borderTopColor]; })()";
    let focused = eval(&page, style).await;
    assert_eq!(focused[0], "none", "{focused}");
    assert_eq!(focused[1], eval(&page, &colour("var(--accent)")).await);
    eval(&page, "document.activeElement.blur(); true").await;
    let unfocused = eval(&page, style).await;
    assert_eq!(unfocused[1], eval(&page, &colour("var(--warn)")).await);

    // The prompt box, the messages and the ask share one column.
    assert_lined_up(&page, ".msg.user").await;
    assert_lined_up(&page, ".perm").await;
    assert_lined_up(&page, ".card[data-call]").await;
    click(&page, ".perm button.primary").await;
    wait_for(
        &page,
        "document.querySelector('.md table') && document.getElementById('abort').hidden",
        "the answer",
    )
    .await;
    assert_lined_up(&page, ".msg.user").await;
    assert_lined_up(&page, ".msg.assistant").await;
    close(browser, pump).await;
    env.stop().await;
}

/// Whether the element `sel` finds shows all of its content (nothing cut at its edge).
fn whole(sel: &str) -> String {
    format!(
        "(() => {{ const e = document.querySelector('{sel}'); const r = e.getBoundingClientRect(); \
         return e.scrollWidth <= e.clientWidth + 1 && r.left >= 0 && r.right <= innerWidth; }})()"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_phone_nothing_of_a_turn_is_cut_at_the_edge_and_tables_scroll_in_their_box() {
    let env = Env::start(script(), ASK_EDITS).await;
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
    page.goto(env.open_url.as_str()).await.expect("open");
    wait_for(
        &page,
        "document.getElementById('model-picker').options.length",
        "the page",
    )
    .await;
    assert_eq!(
        eval(&page, "document.getElementById('prompt').placeholder").await,
        "Message… (the Send button sends)"
    );
    // The model's whole name shows in its picker (the text, and room for the arrow).
    let fits = eval(
        &page,
        "(() => { const s = document.getElementById('model-picker'); \
         const c = document.createElement('canvas').getContext('2d'); \
         c.font = getComputedStyle(s).font; \
         return [c.measureText(s.selectedOptions[0].text).width + 28, s.clientWidth, s.selectedOptions[0].text]; })()",
    )
    .await;
    assert!(
        fits[0].as_f64().unwrap() <= fits[1].as_f64().unwrap(),
        "the model picker's text and arrow, its width, its text: {fits}"
    );
    assert_eq!(eval(&page, &whole("#model-picker")).await, true);
    assert_eq!(eval(&page, &whole("#toggle-changes")).await, true);

    let prompt = page.find_element("#prompt").await.expect("prompt box");
    prompt.click().await.expect("focus");
    prompt.type_str("add a --shout flag").await.expect("type");
    click(&page, "#send").await;
    wait_for(&page, "document.querySelector('.perm .diff')", "the ask").await;
    wait_for(
        &page,
        "document.getElementById('usage').textContent.includes('$0.0123')",
        "the usage line",
    )
    .await;
    // The ask's diff lines wrap within the card.
    let cut = eval(
        &page,
        "[...document.querySelectorAll('.perm .diff span')].filter((s) => s.scrollWidth > s.clientWidth + 1).map((s) => s.textContent)",
    )
    .await;
    assert_eq!(cut, serde_json::json!([]), "diff lines cut at the edge");
    assert_eq!(eval(&page, &whole(".perm .diff")).await, true);
    // The usage line shows whole beside the Stop and Send buttons.
    assert_eq!(
        eval(&page, "document.getElementById('abort').hidden").await,
        false
    );
    assert_eq!(
        eval(&page, &whole("#usage")).await,
        true,
        "{}",
        eval(&page, "document.getElementById('usage').textContent").await
    );
    assert_eq!(eval(&page, &whole("#send")).await, true);
    // Above the ask, the asking call's card shows whole, not a sliver of it.
    let card = eval(
        &page,
        "(() => { const c = document.querySelector('.card[data-call]').getBoundingClientRect(); \
         const t = document.getElementById('transcript').getBoundingClientRect(); \
         return [c.top >= t.top, c.bottom <= t.bottom, c.top, c.bottom, t.top, t.bottom]; })()",
    )
    .await;
    assert_eq!(card[0], true, "card, transcript: {card}");
    assert_eq!(card[1], true, "card, transcript: {card}");

    click(&page, ".perm button.primary").await;
    wait_for(
        &page,
        "document.querySelector('.md table') && document.getElementById('abort').hidden",
        "the answer's table",
    )
    .await;
    // The table scrolls in a box of its own within the message; a header and inline code
    // in a cell each stay on one line.
    let wrap = eval(
        &page,
        "(() => { const t = document.querySelector('.md table'); const w = t.parentElement; \
         const m = t.closest('.msg').getBoundingClientRect(); const r = w.getBoundingClientRect(); \
         return [w.classList.contains('table-wrap'), getComputedStyle(w).overflowX, r.left >= m.left - 1 && r.right <= m.right + 1]; })()",
    )
    .await;
    assert_eq!(wrap, serde_json::json!([true, "auto", true]));
    let lines = eval(
        &page,
        "[...document.querySelectorAll('.md th, .md td code')].map((e) => { const r = document.createRange(); \
         r.selectNodeContents(e); return `${e.textContent}:${new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size}`; })",
    )
    .await;
    assert_eq!(
        lines,
        serde_json::json!([
            "Flag:1",
            "Default:1",
            "Effect:1",
            "--name NAME:1",
            "world:1",
            "--shout:1"
        ])
    );
    // "Fork from here" shows on a touch screen, and below the prompt's text, not over it.
    wait_for(
        &page,
        "document.querySelector('.msg.user > button.fork')",
        "the fork button",
    )
    .await;
    let fork = eval(
        &page,
        "(() => { const m = document.querySelector('.msg.user'); const b = m.querySelector('button.fork'); \
         const r = document.createRange(); r.selectNodeContents(m.firstChild); \
         const text = [...r.getClientRects()]; const k = b.getBoundingClientRect(); \
         const over = text.some((t) => t.left < k.right && k.left < t.right && t.top < k.bottom && k.top < t.bottom); \
         return [over, getComputedStyle(b).opacity]; })()",
    )
    .await;
    assert_eq!(
        fork,
        serde_json::json!([false, "1"]),
        "covers the text, opacity"
    );
    close(browser, pump).await;
    env.stop().await;
}
