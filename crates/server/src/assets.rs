//! The web page's files, embedded at build time (`build.rs` lists everything under
//! `crates/server/web/`): `GET /` is `index.html`, `GET /assets/{path}` a file under
//! `web/assets/`. They hold no data and need no token. When the binary was built without a
//! page, `/` says where the API is instead.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

include!(concat!(env!("OUT_DIR"), "/assets.rs"));

/// `/` of a build without `web/index.html` (user-facing).
pub const NO_PAGE: &str = "<!doctype html><meta charset=utf-8><title>Podcode</title>\
<p>The Podcode server is running. This build has no web page; the API is described at \
<a href=\"/openapi.json\">/openapi.json</a>.</p>";

fn file(path: &str) -> Option<&'static [u8]> {
    ASSETS.iter().find(|(p, _)| *p == path).map(|(_, b)| *b)
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" | "md" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn serve(path: &str, bytes: &'static [u8]) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type(path)),
            // Revalidate each time: a new binary may ship a new page under the same names.
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        bytes,
    )
        .into_response()
}

pub async fn index() -> Response {
    match file("index.html") {
        Some(bytes) => serve("index.html", bytes),
        None => serve("index.html", NO_PAGE.as_bytes()),
    }
}

pub async fn asset(Path(path): Path<String>) -> Response {
    let path = format!("assets/{path}");
    match file(&path) {
        Some(bytes) => serve(&path, bytes),
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}
