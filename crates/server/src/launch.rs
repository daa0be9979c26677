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
        open_browser(&server.sign_in_url(BROWSER_CODE_TTL)?);
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

/// `$BROWSER`, else the desktop's opener; says so when none works.
fn open_browser(url: &str) {
    let opener = std::env::var("BROWSER").ok().filter(|b| !b.is_empty());
    let program = opener.unwrap_or_else(|| {
        if cfg!(target_os = "macos") {
            "open".into()
        } else {
            "xdg-open".into()
        }
    });
    let spawned = std::process::Command::new(&program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        eprintln!("could not open a browser ({program}: {e}); open the URL above yourself");
    }
}

#[cfg(test)]
mod tests {
    use super::is_loopback;

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
