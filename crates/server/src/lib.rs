//! `podcode serve`: the engine behind an HTTP + Server-Sent Events API, and the web page.
//!
//! A front end like the TUI: it depends on `podcode-core` and `podcode-protocol` only.
//! `Server::bind` checks the address and token and binds; `run` serves until the shutdown
//! future resolves, then ends every event stream, closes the sessions it drove and stops
//! the engine's plugin hosts and MCP servers. Connections flow through `listen` (a cap on
//! connections, a deadline for headers), then requests through `guard` (the `Host` must be
//! ours) ▸ `auth` (bearer token or `login`'s sign-in cookie; failures limited per peer by
//! `limit`) ▸ a handler (`api_*`) ▸ the engine (`AppState` holds the sessions this server drives) ▸ an
//! answer; what a turn does flows back as events through the event log to `events`' SSE
//! streams. The contract is docs/server-api.md; `/openapi.json` is generated from the
//! handlers' annotations and the `dto` types by the same router that serves them.

mod api_attach;
mod api_catalog;
mod api_changes;
mod api_fork;
mod api_sessions;
pub mod assets;
mod auth;
mod dto;
mod dto_changes;
mod error;
mod events;
mod guard;
pub mod launch;
mod limit;
mod listen;
mod login;
mod state;
mod token;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use podcode_core::Engine;
use tokio::net::TcpListener;
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub use api_attach::TOO_LARGE_TEXT;
pub use api_catalog::{MASK, mask};
pub use api_sessions::{BUSY_TEXT, NO_COMMAND_NAME_TEXT, RESOLVED_TEXT, TITLE_TEXT};
pub use assets::NO_PAGE;
pub use auth::{MIN_TOKEN_CHARS, TOKEN_ENV, TOKEN_REFUSED, new_token};
pub use error::ErrorBody;
pub use listen::{HEADER_TIMEOUT, connection_cap};
pub use login::{CODE_REFUSED, CODE_TTL, COOKIE_TTL};
pub use state::DEFAULT_AGENT;
pub use token::DEFAULT_TTL as TOKEN_TTL;

use crate::state::AppState;

/// Why the server could not start (user-facing).
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(
        "refusing to listen on {0} without a token you chose: anyone who can reach this address \
         could drive the agent. Set {TOKEN_ENV} to a long random secret, or leave out --host to \
         stay on 127.0.0.1"
    )]
    /// A non-loopback address needs a token: serving the API open to the network is refused.
    TokenRequired(SocketAddr),
    #[error(
        "refusing to listen on {addr} with a weak token: {why}. Anyone who can reach this \
         address could guess it. Set {TOKEN_ENV} to a long random secret (for example the \
         output of `openssl rand -base64 32`), or leave out --host to stay on 127.0.0.1"
    )]
    /// The given token is too easy to guess for a non-loopback address.
    WeakToken {
        /// The address asked for.
        addr: SocketAddr,
        /// What makes the token weak.
        why: String,
    },
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address as given.
        addr: String,
        /// The bind error.
        source: std::io::Error,
    },
    /// No random token or sign-in code could be made (the OS random source failed).
    #[error("cannot make a token: {0}")]
    Token(String),
    /// The engine could not start.
    #[error("{0}")]
    Engine(#[from] podcode_core::EngineError),
}

/// Where and how to listen.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// An IP address or a host name (`127.0.0.1` by default).
    pub host: String,
    /// 0: a free port.
    pub port: u16,
    /// The token clients must send; `None`: a random one. Required for a non-loopback host.
    pub token: Option<String>,
    /// How long a token lasts. `None`: a token the server made lasts [`TOKEN_TTL`] (then
    /// the next is made, see [`Server::token_clock`]); a chosen one as long as the server.
    pub token_ttl: Option<std::time::Duration>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".into(),
            port: 0,
            token: None,
            token_ttl: None,
        }
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Podcode server API",
        description = "Drive Podcode sessions over HTTP; follow them over Server-Sent Events. \
            Every /api route but /api/login and /api/logout needs `Authorization: Bearer <token>` \
            or the sign-in cookie `POST /api/login` gives a browser. See docs/server-api.md."
    ),
    modifiers(&BearerAuth),
    tags(
        (name = "auth", description = "Signing a browser in and out"),
        (name = "sessions", description = "Stored and open sessions"),
        (name = "drive", description = "Prompt, custom commands, abort, model and agent, permission replies"),
        (name = "changes", description = "The change journal: list, diff, revert"),
        (name = "events", description = "Server-Sent Events"),
        (name = "workspace", description = "Tools, plugins, MCP servers, config, models, agents, custom commands"),
    )
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        openapi.security = Some(vec![utoipa::openapi::security::SecurityRequirement::new(
            "bearer",
            Vec::<String>::new(),
        )]);
    }
}

/// The API routes and their OpenAPI document, from one registration.
fn api() -> (Router<Arc<AppState>>, utoipa::openapi::OpenApi) {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(api_catalog::info))
        .routes(routes!(login::login))
        .routes(routes!(login::logout))
        .routes(routes!(
            api_sessions::list_sessions,
            api_sessions::create_session
        ))
        .routes(routes!(
            api_sessions::get_session,
            api_sessions::delete_session,
            api_sessions::rename_session
        ))
        .routes(routes!(api_sessions::export_session))
        .routes(routes!(api_fork::fork_session))
        .routes(routes!(api_sessions::prompt))
        .routes(routes!(api_sessions::command))
        .routes(routes!(api_attach::upload))
        .routes(routes!(api_attach::get_attachment))
        .routes(routes!(api_attach::call_attachment))
        .routes(routes!(api_sessions::abort))
        .routes(routes!(api_sessions::set_model))
        .routes(routes!(api_sessions::set_agent))
        .routes(routes!(api_sessions::list_asks))
        .routes(routes!(api_sessions::reply_ask))
        .routes(routes!(api_changes::list_changes))
        .routes(routes!(api_changes::get_change))
        .routes(routes!(api_changes::revert))
        .routes(routes!(events::session_events))
        .routes(routes!(events::all_events))
        .routes(routes!(api_catalog::tools))
        .routes(routes!(api_catalog::plugins))
        .routes(routes!(api_catalog::mcp))
        .routes(routes!(api_catalog::config))
        .routes(routes!(api_catalog::models))
        .routes(routes!(api_catalog::agents))
        .routes(routes!(api_catalog::commands))
        .split_for_parts()
}

/// The OpenAPI document `/openapi.json` serves.
pub fn openapi() -> utoipa::openapi::OpenApi {
    api().1
}

/// The token's lifetime, held by the front end that prints the token: it waits for
/// `expires` and shows what `renew` made.
pub struct TokenClock(Arc<AppState>);

impl TokenClock {
    /// When the current token expires (`None`: never).
    pub fn expires(&self) -> Option<std::time::Instant> {
        self.0.tokens.expires()
    }
    /// How long each token lasts (`None`: as long as the server).
    pub fn ttl(&self) -> Option<std::time::Duration> {
        self.0.tokens.ttl()
    }
    /// The next token, replacing an expired one the server made; `None` for a token the
    /// user chose (which only a restart with a new one replaces).
    pub fn renew(&self) -> Result<Option<String>, ServerError> {
        self.0
            .tokens
            .renew()
            .map_err(|e| ServerError::Token(e.to_string()))
    }
    /// What a client with an expired token is told (also right for the terminal).
    pub fn expired_text(&self) -> String {
        self.0.tokens.expired_text()
    }
}

/// A bound server, not yet serving.
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    state: Arc<AppState>,
    /// The token came from the options (the user chose it): never print it.
    chosen: bool,
}

impl Server {
    /// Checks the options, starts the event log and binds. A non-loopback address needs a
    /// token the user chose, and a strong one.
    pub async fn bind(engine: Arc<Engine>, opts: ServeOptions) -> Result<Server, ServerError> {
        let sessions = Arc::new(podcode_core::SessionRegistry::for_engine(engine));
        Self::bind_with(sessions, opts).await
    }

    /// `bind` driving the sessions of `sessions`, which other front ends of this process
    /// (an ACP connection) may drive too: a session has one busy state whoever prompts it.
    pub async fn bind_with(
        sessions: Arc<podcode_core::SessionRegistry>,
        opts: ServeOptions,
    ) -> Result<Server, ServerError> {
        let target = format!("{}:{}", opts.host, opts.port);
        let listener = TcpListener::bind((opts.host.as_str(), opts.port))
            .await
            .map_err(|source| ServerError::Bind {
                addr: target.clone(),
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServerError::Bind {
            addr: target,
            source,
        })?;
        let chosen = opts.token.filter(|t| !t.is_empty());
        let token = match &chosen {
            Some(t) if !addr.ip().is_loopback() => match auth::weakness(t) {
                Some(why) => return Err(ServerError::WeakToken { addr, why }),
                None => t.clone(),
            },
            Some(t) => t.clone(),
            None if addr.ip().is_loopback() => {
                new_token().map_err(|e| ServerError::Token(e.to_string()))?
            }
            None => return Err(ServerError::TokenRequired(addr)),
        };
        let log = sessions.event_log()?;
        let hosts = guard::Hosts::new(&opts.host);
        let ttl = match (opts.token_ttl, chosen.is_some()) {
            (Some(ttl), _) => Some(ttl),
            (None, false) => Some(token::DEFAULT_TTL),
            (None, true) => None,
        };
        let tokens = token::Tokens::new(token, ttl, chosen.is_some());
        let state = Arc::new(AppState::new(sessions, tokens, log, hosts, addr.port()));
        Ok(Server {
            listener,
            addr,
            state,
            chosen: chosen.is_some(),
        })
    }

    /// The address the server listens on (with the port the OS chose for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
    /// The token clients must send now.
    pub fn token(&self) -> String {
        self.state.tokens.value()
    }
    /// When the token expires and how to make the next: for the front end, which shows it.
    pub fn token_clock(&self) -> TokenClock {
        TokenClock(self.state.clone())
    }
    /// The token was given in the options (chosen by the user), not made here.
    pub fn token_is_chosen(&self) -> bool {
        self.chosen
    }
    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
    /// The page's address with a new one-time sign-in code in the fragment, usable once
    /// within [`CODE_TTL`]: the page trades it for a cookie and drops it from the address.
    pub fn page_url(&self) -> Result<String, ServerError> {
        self.sign_in_url(CODE_TTL)
    }
    /// The same with a code that lives only `ttl` (for a browser started with it, where the
    /// URL is visible in the process list until the browser has spent it).
    pub fn sign_in_url(&self, ttl: std::time::Duration) -> Result<String, ServerError> {
        let code = self
            .state
            .grants
            .code(ttl)
            .map_err(|e| ServerError::Token(e.to_string()))?;
        Ok(format!("{}/#code={code}", self.url()))
    }

    /// Serves until `shutdown` resolves, then ends the event streams, closes the sessions
    /// it drove and shuts the engine's tool sources down.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        let state = self.state.clone();
        let stop = state.stop.clone();
        let (api, doc) = api();
        let doc = Arc::new(doc);
        let api = api.with_state(state.clone());
        let app = Router::new()
            .route("/", get(assets::index))
            .route("/assets/{*path}", get(assets::asset))
            .route(
                "/openapi.json",
                get(move || {
                    let doc = doc.clone();
                    async move { axum::Json(doc.as_ref().clone()) }
                }),
            )
            .merge(api)
            .fallback(|| async {
                (
                    StatusCode::NOT_FOUND,
                    axum::Json(ErrorBody {
                        error: "no such route (see /openapi.json)".into(),
                    }),
                )
                    .into_response()
            })
            // Over everything, the fallback included: an unknown /api route is 401 too.
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                auth::require_auth,
            ))
            // Outermost: a request under a foreign name gets nothing, not even the page.
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                guard::require_host,
            ));
        let accepting = stop.clone();
        tokio::spawn(async move {
            shutdown.await;
            // Event streams never end by themselves: end them so the server can stop.
            accepting.cancel();
        });
        listen::serve(self.listener, app, connection_cap(), stop.clone()).await;
        stop.cancel();
        // Every session closed, every workspace's engine (this one too) shut down.
        state.close_all().await;
        Ok(())
    }
}
