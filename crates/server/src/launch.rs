//! What `podcode serve` does around the server on the console: check `--host` and
//! `--token-ttl`, print where it listens, its token and a sign-in link, print the next token
//! each time the one the server made expires, stop on Ctrl-C or SIGTERM, and open the page
//! in a browser (`podcode web`).

use std::sync::Arc;
use std::time::Duration;

use podcode_core::Engine;

use crate::{ServeOptions, Server, ServerError, TOKEN_ENV};

/// How long the sign-in code given to a browser `podcode web` starts stays usable: the URL
/// is on the browser's command line (visible in `ps`) until the browser has spent it.
const BROWSER_CODE_TTL: Duration = Duration::from_secs(60);

/// The warning for a `--host` that is not loopback.
pub fn host_warning(host: &str) -> Option<String> {
    (!is_loopback(host)).then(|| {
        format!(
            "warning: --host {host} makes the server reachable from other machines: whoever has the \
             token can drive the agent, edit files and run commands here. The traffic is not \
             encrypted; prefer an SSH tunnel or a TLS proxy."
        )
    })
}

/// Binds; prints where the server listens, its token (only one it made: a token the user
/// chose is never echoed) and a one-time sign-in link; opens the page in a browser when
/// `open`; prints each renewed token; serves until Ctrl-C or SIGTERM. `Ok(false)`: it could
/// not bind (said on stderr).
pub async fn serve_on_console(
    engine: Arc<Engine>,
    opts: ServeOptions,
    open: bool,
) -> Result<bool, ServerError> {
    let server = match Server::bind(engine, opts).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(false);
        }
    };
    println!("Podcode server on {}", server.url());
    if server.token_is_chosen() {
        println!("Token: the one in {TOKEN_ENV}");
    } else {
        println!("Token: {}", server.token());
    }
    println!("Open: {}", server.page_url()?);
    if open {
        // A code of its own, spent by the browser as the page loads: what `ps` shows
        // after that signs nobody in.
        let url = server.sign_in_url(BROWSER_CODE_TTL)?;
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        match opener(&env) {
            Err(why) => eprintln!("{}", no_browser_text(&why)),
            // Waited for on a thread of its own: an opener may run as long as the browser.
            Ok(program) => {
                std::thread::spawn(move || {
                    if let Some(why) = open_with(&program, &url) {
                        eprintln!("{}", no_browser_text(&why));
                    }
                });
            }
        }
    }
    tokio::spawn(renew_tokens(server.token_clock()));
    server.run(stop_signal()).await?;
    Ok(true)
}

/// Parses `--token-ttl` (`30min`, `8h`, `7days`; at least one second).
pub fn parse_ttl(text: &str) -> Result<Duration, String> {
    let ttl = humantime::parse_duration(text)
        .map_err(|e| format!("{e}: give a duration such as 30min, 8h or 7days"))?;
    if ttl < Duration::from_secs(1) {
        return Err("a token must last at least 1s".into());
    }
    Ok(ttl)
}

/// Whether `host` is a loopback address (`localhost`, `127.0.0.0/8`, `::1`).
pub fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_matches(|c| c == '[' || c == ']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Prints the next token each time a token the server made expires (the old one is then
/// refused with a note pointing here); for a chosen token, says once that it expired.
async fn renew_tokens(clock: crate::TokenClock) {
    while let Some(at) = clock.expires() {
        tokio::time::sleep_until(at.into()).await;
        match clock.renew() {
            Ok(Some(token)) => {
                let ttl = clock
                    .ttl()
                    .map(|t| humantime::format_duration(t).to_string())
                    .unwrap_or_default();
                println!("Token: {token} (the previous one expired; this one lasts {ttl})");
            }
            Ok(None) => {
                eprintln!("warning: {}", clock.expired_text());
                return;
            }
            Err(e) => {
                eprintln!("error: cannot make the next token: {e}; restart `podcode serve`");
                return;
            }
        }
    }
}

/// Ctrl-C or SIGTERM.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// What `podcode web` says when no browser opened the page (user-facing).
pub fn no_browser_text(why: &str) -> String {
    format!(
        "could not open a browser ({why}): open the link printed above yourself (it works once, \
         within 10 minutes), or set $BROWSER to a program that opens a URL"
    )
}

/// The program that opens a URL: `$BROWSER`, else the desktop's opener; `Err` with the
/// reason when there is clearly none (a Linux session without a display, over SSH say).
fn opener(env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    if let Some(browser) = env("BROWSER") {
        return Ok(browser);
    }
    if cfg!(target_os = "macos") {
        return Ok("open".into());
    }
    if env("DISPLAY").is_none() && env("WAYLAND_DISPLAY").is_none() {
        return Err("no display: DISPLAY and WAYLAND_DISPLAY are not set".into());
    }
    Ok("xdg-open".into())
}

/// Runs `program url` and waits for it; the reason when it could not start or failed
/// (`xdg-open` with nothing to open the URL with exits with an error and says nothing
/// we show).
fn open_with(program: &str, url: &str) -> Option<String> {
    let child = std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match child.map(|mut c| c.wait()) {
        Err(e) | Ok(Err(e)) => Some(format!("{program}: {e}")),
        Ok(Ok(status)) if status.success() => None,
        Ok(Ok(status)) => Some(format!("{program} failed: {status}")),
    }
}

#[cfg(test)]
mod tests {
    use super::{is_loopback, no_browser_text, open_with, opener};

    #[test]
    fn a_browser_that_cannot_be_opened_is_reported() {
        let none = |_: &str| None;
        assert_eq!(
            opener(&none).map_err(|why| no_browser_text(&why)),
            if cfg!(target_os = "macos") {
                Ok("open".to_string())
            } else {
                Err(
                    "could not open a browser (no display: DISPLAY and WAYLAND_DISPLAY are not \
                     set): open the link printed above yourself (it works once, within 10 \
                     minutes), or set $BROWSER to a program that opens a URL"
                        .to_string(),
                )
            }
        );
        let chosen = |k: &str| (k == "BROWSER").then(|| "my-browser".to_string());
        assert_eq!(opener(&chosen), Ok("my-browser".to_string()));
        if cfg!(unix) {
            assert_eq!(open_with("true", "http://127.0.0.1:1/"), None);
            assert_eq!(
                open_with("false", "http://127.0.0.1:1/"),
                Some("false failed: exit status: 1".to_string())
            );
            let missing = open_with("/nonexistent/opener", "http://127.0.0.1:1/");
            assert!(
                missing
                    .as_deref()
                    .is_some_and(|m| m.starts_with("/nonexistent/opener: ")),
                "{missing:?}"
            );
        }
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        for h in ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"] {
            assert!(is_loopback(h), "{h}");
        }
        for h in ["0.0.0.0", "192.168.1.2", "::", "example.com"] {
            assert!(!is_loopback(h), "{h}");
        }
    }
}
