//! `podcode serve` and `podcode web`: the HTTP + SSE API and the web page
//! (`podcode-server`). Wiring only: load the engine, check the options, print where the
//! server listens, its token (only one it made: a token the user chose is never echoed) and
//! a one-time sign-in link, serve until Ctrl-C or SIGTERM. When a token the server made
//! expires (`--token-ttl`, default 24 h) the next one is printed the same way.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use podcode_server::{ServeOptions, Server, TOKEN_ENV};

use crate::start::{tokio_runtime, trusted_engine};

/// How long the sign-in code given to a browser `podcode web` starts stays usable: the URL
/// is on the browser's command line (visible in `ps`) until the browser has spent it.
const BROWSER_CODE_TTL: Duration = Duration::from_secs(60);

/// What `podcode serve --help` adds after the options.
pub const SERVE_HELP: &str = "The API (every route, the event stream, auth) is described at
/openapi.json on the server and in docs/server-api.md. Clients send the token as
`Authorization: Bearer <token>` (the token printed at start, or the one you set in
PODCODE_SERVER_TOKEN, which is never printed). A token the server made lasts 24 hours
(--token-ttl); then the next one is printed here and the old one is refused with a note
saying so. A token you chose lasts until the server stops, unless --token-ttl is given.
The Open link signs a browser in once, within 10 minutes; after that, the page asks for the
token.

Examples:
  podcode serve                          loopback, a free port, a random token
  podcode web                            the same, and open the page in a browser
  podcode serve --port 4096
  PODCODE_SERVER_TOKEN=… podcode serve --host 0.0.0.0   reachable from other machines
  curl -H \"Authorization: Bearer $TOKEN\" http://127.0.0.1:4096/api/sessions";

#[derive(Args, Default, Clone)]
pub struct ServeArgs {
    /// The port to listen on (default: a free one).
    #[arg(long, short = 'p', default_value_t = 0)]
    pub port: u16,
    /// The address to listen on. Anything but loopback makes the agent reachable from other
    /// machines, so it needs a token you chose in PODCODE_SERVER_TOKEN.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Open the web page in a browser once the server listens.
    #[arg(long)]
    pub open: bool,
    /// How long a token lasts, e.g. 8h or 7days (default: 24h for the token the server
    /// makes, after which the next one is printed here; a token you chose lasts until the
    /// server stops).
    #[arg(long, value_name = "DURATION", value_parser = parse_ttl)]
    pub token_ttl: Option<Duration>,
}

fn parse_ttl(text: &str) -> Result<Duration, String> {
    let ttl = humantime::parse_duration(text)
        .map_err(|e| format!("{e}: give a duration such as 30min, 8h or 7days"))?;
    if ttl < Duration::from_secs(1) {
        return Err("a token must last at least 1s".into());
    }
    Ok(ttl)
}

/// Prints the next token each time a token the server made expires (the old one is then
/// refused with a note pointing here); for a chosen token, says once that it expired.
async fn renew_tokens(clock: podcode_server::TokenClock) {
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

fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_matches(|c| c == '[' || c == ']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

pub fn run(cwd: Option<PathBuf>, args: ServeArgs) -> Result<ExitCode> {
    let token = std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty());
    if !is_loopback(&args.host) {
        eprintln!(
            "warning: --host {} makes the server reachable from other machines: whoever has the \
             token can drive the agent, edit files and run commands here. The traffic is not \
             encrypted; prefer an SSH tunnel or a TLS proxy.",
            args.host
        );
    }
    let engine = trusted_engine(cwd)?;
    tokio_runtime()?.block_on(async move {
        let opts = ServeOptions {
            host: args.host.clone(),
            port: args.port,
            token,
            token_ttl: args.token_ttl,
        };
        let server = match Server::bind(engine, opts).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(2));
            }
        };
        println!("Podcode server on {}", server.url());
        if server.token_is_chosen() {
            println!("Token: the one in {TOKEN_ENV}");
        } else {
            println!("Token: {}", server.token());
        }
        println!("Open: {}", server.page_url()?);
        if args.open {
            // A code of its own, spent by the browser as the page loads: what `ps` shows
            // after that signs nobody in.
            open_browser(&server.sign_in_url(BROWSER_CODE_TTL)?);
        }
        tokio::spawn(renew_tokens(server.token_clock()));
        server.run(stop_signal()).await?;
        Ok(ExitCode::SUCCESS)
    })
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
