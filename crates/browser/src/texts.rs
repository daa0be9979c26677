//! Every model-facing text of the browser tools: descriptions and failures. Pinned by the
//! `browser` test suite, so a change here is a deliberate change of what models read.

pub(crate) const NAVIGATE: &str = "Opens a URL in a headless Chromium (one per session, fresh profile: none of the user's cookies or logins) and returns the final URL, HTTP status, title and a snapshot of the page: its accessibility tree, where each element you can act on has a ref like `[ref=e12]` for the other browser_* tools (offered once a page is open: click, type, select, scroll, snapshot, screenshot, look, measure, diff).
Use it to check a page you changed or serve; for static documentation webfetch is faster.
- The user may be asked to allow each new host and each localhost or private-address origin, also when a click or redirect navigates. file:// and chrome:// URLs are refused unless allowed in the configuration.
- Waits until the page and its requests settle (at most 10 s) and says when it stopped waiting.
Example: {\"url\": \"http://localhost:3000/login\"}";

pub(crate) const SNAPSHOT: &str = "Returns the current page as an accessibility-tree text: one line per element with its role, name and state, indented by nesting, e.g. `[ref=e12] button \"Save\"`. Refs stay the same for the same element until the page navigates. Long pages are cut with a note; act on what you need, scroll, and take a new snapshot.";

pub(crate) const CLICK: &str = "Clicks the element with the given ref (from the latest snapshot) like a user would: scrolls it into view and presses the mouse in its middle. Waits for what the click started (a navigation, requests) to settle and returns what changed in the page's snapshot. A navigation the click causes is checked like browser_navigate.
Example: {\"ref\": \"e12\"}";

pub(crate) const TYPE: &str = "Types text into the input, textarea or editable element with the given ref, replacing what it held. With `submit: true` it then presses Enter (submitting a form). Returns what changed in the page's snapshot.
Example: {\"ref\": \"e7\", \"text\": \"ada@example.com\", \"submit\": false}";

pub(crate) const SELECT: &str = "Chooses options in the <select> element with the given ref. `values` lists option values or visible labels (several for a multiple select); the others are deselected. Returns what changed in the page's snapshot.
Example: {\"ref\": \"e9\", \"values\": [\"Blue\"]}";

pub(crate) const SCROLL: &str = "Scrolls the page: with `ref`, until that element is in view; otherwise by `dx`/`dy` CSS pixels (positive `dy` scrolls down). Waits for content the scroll loads and returns what changed in the page's snapshot.
Example: {\"dy\": 800}";

pub(crate) const SCREENSHOT: &str = "Takes a PNG screenshot of the viewport, of the whole page (`fullPage: true`) or of one element (`ref`) and returns it as an attachment. The size follows the viewport (see browser_resize). Use browser_look to have the image shown to you with a question.";

pub(crate) const LOOK: &str = "Shows you the page (or the element with `ref`) as an image, together with your `question` and the page's visible text, so you can judge how it looks: layout, colours, overlaps, what is cut off. Models that cannot take images get the visible text and a note instead.
Example: {\"question\": \"Is the Save button aligned with the input?\"}";

pub(crate) const MEASURE: &str = "Measures the element with the given ref: its box (position and size in CSS pixels, margin, border, padding), whether it is visible and in the viewport, and the computed styles that matter for layout (display, position, font, colours, margins, padding, flex and grid settings).
Example: {\"ref\": \"e4\"}";

pub(crate) const DIFF: &str = "Tells what changed in the page: the snapshot lines that appeared (+) and disappeared (-) — since the last snapshot if the page changed since, otherwise what the last action changed — and the share of pixels that differ between a new screenshot and the previous one (browser_navigate, browser_screenshot, browser_look and browser_diff take screenshots).";

pub(crate) const RESIZE: &str = "Sets the viewport size in CSS pixels (`width` and `height`), or to a device: `desktop` (1280×720), `laptop` (1440×900), `tablet` (768×1024), `mobile` (390×844, touch, 3× pixels). Pages re-layout at once; screenshots follow the new size.
Example: {\"width\": 800, \"height\": 600}";

pub(crate) fn not_installed(tried: &str) -> String {
    format!(
        "no Chromium found ({tried}). Install it (Debian/Ubuntu: `sudo apt-get install chromium`; macOS: install Google Chrome) or set its path in the config: [browser] executable = \"/path/to/chromium\"."
    )
}

pub(crate) fn launch_failed(executable: &str, error: &str) -> String {
    format!("Chromium ({executable}) did not start: {error}")
}

/// Chromium exited before it printed its DevTools address; `tail` is the end of its stderr.
pub(crate) fn exited_at_start(tail: &str) -> String {
    if tail.is_empty() {
        "it exited at once without saying why".to_string()
    } else {
        format!("it exited at once; its last output: {tail}")
    }
}

pub(crate) const NO_DEVTOOLS_ADDRESS: &str =
    "it printed no DevTools address within 20 s (is the machine very busy?)";

pub(crate) const RESTARTED: &str = "[the browser had stopped (crashed or was killed); a new one was started: the page, its state and earlier refs are gone]\n";

pub(crate) const IDLE_RESTARTED: &str = "[the browser had been closed after going unused; a new one was started: earlier pages and refs are gone]\n";

pub(crate) fn invalid_url(url: &str, reason: &str) -> String {
    format!("`{url}` is not a valid URL ({reason}). Pass a full URL like http://localhost:3000/.")
}

pub(crate) fn blocked_scheme(url: &str, scheme: &str) -> String {
    format!(
        "Refused to open {url}: {scheme}: URLs are only opened when the user allowed them with a `browser_private` rule for the URL. The user can add to their config.toml:\n{}",
        allow_rules(&[("browser_private", url)])
    )
}

// The rules a refusal names, as TOML to paste: the text webfetch's refusals use too.
pub(crate) use podcode_tools::allow_rules;

pub(crate) const DENIED_BY_RULE: &str = "A permission rule in the user's configuration denies it.";

pub(crate) const CANNOT_ASK: &str =
    "Nobody allowed it, and only a navigation you start can ask the user.";

/// A private address refused (`why`); `rules` would allow it.
pub(crate) fn blocked_private(url: &str, host: &str, ip: &str, why: &str, rules: &str) -> String {
    format!(
        "Refused to open {url}: {host} is a private or loopback address ({ip}). {why} To allow it, the user can add to their config.toml:\n{rules}"
    )
}

pub(crate) fn dns_failed(url: &str, host: &str) -> String {
    format!("Could not open {url}: the host {host} was not found.")
}

pub(crate) fn blocked_navigation(url: &str, reason: &str) -> String {
    format!("The page tried to open {url}, which was blocked: {reason}")
}

pub(crate) fn download_blocked(url: &str) -> String {
    format!(
        "The download of {url} was blocked: the browser does not save files. To read the file, fetch it with webfetch (if it is allowed) or ask the user to download it."
    )
}

/// The note an action adds for the page's own requests (and frames) the gate refused.
pub(crate) fn blocked_requests(refused: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut out: String = refused
        .iter()
        .take(SHOWN)
        .map(|r| format!("[a request of the page was blocked: {r}]\n"))
        .collect();
    if refused.len() > SHOWN {
        out.push_str(&format!(
            "[and {} more requests of the page were blocked]\n",
            refused.len() - SHOWN
        ));
    }
    out
}

pub(crate) fn navigation_failed(url: &str, error: &str) -> String {
    format!("Could not open {url}: {error}")
}

pub(crate) fn stale_ref(r: &str) -> String {
    format!(
        "There is no element [ref={r}] on the page now (it was removed, or the page navigated). Take a new browser_snapshot and use a ref from it."
    )
}

pub(crate) fn bad_ref(r: &str) -> String {
    format!("`{r}` is not a ref. Pass a ref from browser_snapshot, like \"e12\".")
}

pub(crate) fn not_clickable(r: &str) -> String {
    format!(
        "[ref={r}] has no visible box to click (hidden, zero size or not rendered). Check it with browser_measure."
    )
}

pub(crate) fn not_editable(r: &str, what: &str) -> String {
    format!("[ref={r}] is not something you can type into ({what}).")
}

pub(crate) fn not_select(r: &str, what: &str) -> String {
    format!("[ref={r}] is not a <select> element ({what}); click the control instead.")
}

pub(crate) fn no_such_option(r: &str, missing: &str, available: &str) -> String {
    format!("[ref={r}] has no option {missing}. Its options: {available}")
}

pub(crate) fn scroll_args() -> String {
    "Pass either `ref` (scroll an element into view) or `dx`/`dy` (pixels to scroll).".into()
}

pub(crate) fn resize_args() -> String {
    "Pass either `width` and `height` (100 to 4000 CSS pixels) or a `device`: desktop, laptop, tablet or mobile.".into()
}

pub(crate) fn gave_up_waiting(ms: u64) -> String {
    format!(
        "[stopped waiting for the page to settle after {:.1} s; it may still be loading]\n",
        ms as f64 / 1000.0
    )
}

pub(crate) fn truncated(shown: usize, total: usize) -> String {
    format!(
        "\n[snapshot cut at {shown} of {total} lines; scroll or act on what you need and take a new snapshot]"
    )
}

pub(crate) const NO_CHANGE: &str = "The page's snapshot did not change.";

pub(crate) const LOOK_NOTE: &str = "The screenshot is attached as an image. If you cannot see images, judge from the visible text below.";

pub(crate) const LOOK_NO_IMAGES: &str = "No image is attached: the model of this session cannot take images. Judge from the visible text below, and use browser_measure for sizes, positions and colours.";

pub(crate) const BROWSER_FAILED: &str = "the browser stopped answering";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_the_rules_as_toml_to_paste() {
        assert_eq!(
            blocked_private(
                "http://localhost:5173/",
                "localhost",
                "127.0.0.1",
                DENIED_BY_RULE,
                &allow_rules(&[
                    ("browser_private", "http://localhost:5173"),
                    ("browser", "localhost")
                ])
            ),
            "Refused to open http://localhost:5173/: localhost is a private or loopback address (127.0.0.1). A permission rule in the user's configuration denies it. To allow it, the user can add to their config.toml:\n\n[[permission]]\npermission = \"browser_private\"\npattern = \"http://localhost:5173\"\naction = \"allow\"\n\n[[permission]]\npermission = \"browser\"\npattern = \"localhost\"\naction = \"allow\"\n"
        );
    }

    #[test]
    fn launch_failures_say_what_chromium_did() {
        assert_eq!(
            launch_failed("/usr/lib/chromium/chromium", &exited_at_start("")),
            "Chromium (/usr/lib/chromium/chromium) did not start: it exited at once without saying why"
        );
        assert_eq!(
            exited_at_start("Missing X server"),
            "it exited at once; its last output: Missing X server"
        );
        assert_eq!(
            NO_DEVTOOLS_ADDRESS,
            "it printed no DevTools address within 20 s (is the machine very busy?)"
        );
    }
}
