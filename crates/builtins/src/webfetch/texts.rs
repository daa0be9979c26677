//! Every model-facing failure text of `webfetch`, one function each, so each failure reads
//! differently and the tests can pin them. Each says what happened and what to do next.

pub(crate) fn invalid_url(url: &str, error: &str) -> String {
    format!(
        "\"{url}\" is not a valid URL ({error}). Pass a full URL such as https://example.com/page."
    )
}

/// A URL that is neither http nor https, typed or redirected to: never fetched.
pub(crate) fn blocked_scheme(url: &str, scheme: &str) -> String {
    format!(
        "{url} was not fetched: only http:// and https:// URLs are fetched from the network, not {scheme}: URLs. Use the read tool for local files."
    )
}

/// A typed `file:` URL no `webfetch_private` rule allows; `rules` would allow it.
pub(crate) fn blocked_file(url: &str, rules: &str) -> String {
    format!(
        "{url} was not fetched: a file: URL is only read when the user allowed it with a webfetch_private rule for the URL. Use the read tool for local files, or the user can add to their config.toml:\n{rules}"
    )
}

/// A private address a permission rule refuses; `rules` would allow it.
pub(crate) fn blocked_private(url: &str, host: &str, ip: &str, rules: &str) -> String {
    format!(
        "{url} was not fetched: {host} is a private, loopback or link-local address ({ip}). A permission rule in the user's configuration denies it. To allow it, the user can add to their config.toml:\n{rules}"
    )
}

pub(crate) fn dns_failed(url: &str, host: &str) -> String {
    format!(
        "the host name {host} could not be resolved (DNS lookup failed) for {url}. Check the spelling of the domain; the site may not exist."
    )
}

pub(crate) fn tls_failed(url: &str, host: &str) -> String {
    format!(
        "no secure (TLS) connection could be opened to {host} for {url}: the certificate is invalid, expired or for another name, or the server does not speak HTTPS on that port. Do not retry the same URL; try http:// only if the site is meant to be served without TLS."
    )
}

pub(crate) fn connect_failed(url: &str, host: &str, detail: &str) -> String {
    format!(
        "could not connect to {host} for {url} ({detail}). The server is down or not reachable from here."
    )
}

pub(crate) fn network_failed(url: &str, detail: &str) -> String {
    format!("the connection broke while fetching {url} ({detail}). Try again.")
}

pub(crate) fn http_status(url: &str, code: u16, reason: &str) -> String {
    let status = format!("{code} {reason}").trim_end().to_string();
    if code >= 500 {
        format!(
            "{url} answered HTTP {status}: the server failed. This may be temporary; try again later or use another source."
        )
    } else {
        format!(
            "{url} answered HTTP {status}: the page does not exist or may not be fetched. Check the URL, or use another source."
        )
    }
}

pub(crate) fn timed_out(url: &str, seconds: u64) -> String {
    format!(
        "timed out after {seconds} s fetching {url}. The server is slow or unreachable; retry with a larger timeout (at most 120 seconds) or use another source."
    )
}

pub(crate) fn too_large(url: &str) -> String {
    format!(
        "stopped reading {url}: the response is larger than 5 MiB, the most webfetch downloads. Fetch a more specific page, or a raw file URL, instead."
    )
}

pub(crate) fn unsupported_type(url: &str, content_type: &str) -> String {
    format!(
        "{url} has content type {content_type}, which is not HTML, text or a png, jpeg, gif or webp image, so it cannot be shown. webfetch returns web pages, text files and images only."
    )
}

pub(crate) fn too_many_redirects(url: &str) -> String {
    format!(
        "gave up on {url} after 5 redirects, the most webfetch follows. The site redirects in a loop or through too many hops; fetch the final address directly if you know it."
    )
}

pub(crate) fn bad_redirect(url: &str, code: u16) -> String {
    format!(
        "{url} answered with a redirect (HTTP {code}) without a usable Location header, so there was nothing to follow."
    )
}

pub(crate) fn empty_page(url: &str) -> String {
    format!("(The page at {url} has no text content.)")
}

pub(crate) fn redirected(to: &str) -> String {
    format!("(Redirected to {to})\n\n")
}

pub(crate) fn too_deep() -> &'static str {
    "(The page is nested too deeply to convert to Markdown; this is its text.)\n\n"
}

pub(crate) fn image(url: &str, mime: &str, bytes: usize) -> String {
    format!("{url} is an image ({mime}, {bytes} bytes); it is attached to this result.")
}
