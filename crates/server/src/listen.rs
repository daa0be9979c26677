//! The accept loop: owns the listening socket and every connection's lifetime.
//!
//! `axum::serve` holds a connection until the peer finishes its headers, however long that
//! takes, and accepts without limit, so a few hundred sockets that never send a full request
//! exhaust the process's file descriptors and nobody can reach the server. Here each
//! connection needs a slot (at most [`connection_cap`], from the descriptor limit) before it
//! is accepted — beyond that, new connections wait in the kernel's backlog instead of failing
//! — and hyper closes any connection that has not finished a request's headers within
//! [`HEADER_TIMEOUT`] (a fresh one, or a kept-alive one idling between requests), which frees
//! its slot. Each request carries its peer's address (`ConnectInfo`) for the auth layer's
//! per-address limits. On shutdown the loop stops accepting and lets open requests finish.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower_service::Service;

/// How long a connection may take to send a request's headers (also the idle limit of a
/// kept-alive connection between requests).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long open requests get to finish once the server stops.
const DRAIN: Duration = Duration::from_secs(10);

/// How many connections are served at once: half the process's descriptor limit (the other
/// half stays for the engine: the store, tools, MCP servers, plugin hosts), between 16 and 1024.
pub fn connection_cap() -> usize {
    (descriptor_limit() / 2).clamp(16, 1024)
}

#[cfg(unix)]
fn descriptor_limit() -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct we pass, which lives for the call.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    if ok {
        usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX)
    } else {
        1024
    }
}

#[cfg(not(unix))]
fn descriptor_limit() -> usize {
    1024
}

/// Serves `app` on `listener` until `stop` is cancelled, then waits (bounded) for open
/// requests to finish.
pub async fn serve(listener: TcpListener, app: Router, cap: usize, stop: CancellationToken) {
    let slots = Arc::new(Semaphore::new(cap));
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
            _ = stop.cancelled() => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // Out of descriptors (or a peer that reset before we accepted): wait a
                    // little instead of spinning; connections closing free descriptors.
                    if !is_peer_error(&e) {
                        eprintln!("podcode serve: cannot accept a connection: {e}");
                        tokio::time::sleep(Duration::from_millis(250)).await;
                    }
                    continue;
                }
            },
            _ = stop.cancelled() => break,
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            let mut app = app.clone();
            async move { app.call(req.map(axum::body::Body::new)).await }
        });
        let conn = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            // An error here is the peer's (reset, timed out headers): nothing to report.
            let _ = conn.await;
            drop(slot);
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(DRAIN, graceful.shutdown()).await;
}

fn is_peer_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionRefused | ConnectionAborted | ConnectionReset
    )
}

/// The peer of a request served by [`serve`].
pub fn peer(request: &axum::extract::Request) -> Option<SocketAddr> {
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0)
}
