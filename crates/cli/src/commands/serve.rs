//! `podcode serve` and `podcode web`: the HTTP + SSE API and the web page
//! (`podcode-server`). Wiring only: load the engine, read the token the user chose, and let
//! `podcode_server::launch::serve_on_console` print where the server listens, its token
//! (only one it made) and a sign-in link, and serve until Ctrl-C or SIGTERM.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use podcode_server::launch::{host_warning, serve_on_console};
use podcode_server::{ServeOptions, TOKEN_ENV};

use crate::start::{tokio_runtime, trusted_engine};

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
    #[arg(long, value_name = "DURATION", value_parser = podcode_server::launch::parse_ttl)]
    pub token_ttl: Option<Duration>,
}

pub fn run(cwd: Option<PathBuf>, args: ServeArgs) -> Result<ExitCode> {
    let token = std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty());
    if let Some(warning) = host_warning(&args.host) {
        eprintln!("{warning}");
    }
    let engine = trusted_engine(cwd)?;
    let opts = ServeOptions {
        host: args.host,
        port: args.port,
        token,
        token_ttl: args.token_ttl,
    };
    let served = tokio_runtime()?.block_on(serve_on_console(engine, opts, args.open))?;
    Ok(if served {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}
