//! What plugins change, as the web page shows it, in a real headless Chromium against the
//! real server (real engine and store, a real plugin in the Bun sidecar, the scripted model
//! over HTTP): a user-level opencode plugin's `experimental.text.complete` rewrites a finished
//! answer, and the page shows the rewritten text in place of what streamed — live and after a
//! reload (from the store).
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::browser;

use browser::*;
use podcode_providers::testing::Reply;

const SIGN: &str = r#"export const Sign = async () => ({
  "experimental.text.complete": async (_input, output) => {
    output.text = output.text.replace("internal-host-7", "[host]") + " -- signed"
  },
})
"#;

/// The page's assistant answers, in order.
const ANSWERS: &str =
    "[...document.querySelectorAll('.msg.assistant')].map(m => m.innerText.trim()).join('|')";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_rewritten_answer_replaces_what_streamed_live_and_after_a_reload() {
    let env = Env::start(vec![Reply::new().text("All good on internal-host-7.")], "").await;
    let plugin = env
        .root
        .root()
        .join("home/.config/opencode/plugins/sign.js");
    std::fs::create_dir_all(plugin.parent().unwrap()).unwrap();
    std::fs::write(&plugin, SIGN).unwrap();
    let (browser, pump, _profile) = chromium().await;
    let page = open_page(&browser, &env.open_url).await;

    send_prompt(&page, "check the host").await;
    let expected = "All good on [host]. -- signed";
    wait_for(
        &page,
        &format!("{ANSWERS} === {expected:?}"),
        "the rewritten answer",
    )
    .await;

    page.reload().await.expect("reload");
    wait_for(
        &page,
        &format!("{ANSWERS} === {expected:?}"),
        "the rewritten answer after a reload",
    )
    .await;
    close(browser, pump).await;
    env.stop().await;
}
