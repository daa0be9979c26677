//! The web page's files, embedded at build time (`build.rs` lists everything under
//! `crates/server/web/` into `ASSETS` with `include_bytes!`), and the two routes that serve
//! them: `GET /` (index.html) and `GET /assets/{path}` (a file under `web/assets/`). Neither
//! needs the token: the files hold no data; the page asks for the token itself and sends it
//! with every API call. When the binary was built without a page, `/` says where the API is.
//!
//! Every response carries its content type (by extension), `nosniff`, and an `ETag` of its
//! bytes with `Cache-Control: no-cache`: the browser keeps its copy and revalidates it (a
//! `304` with no body), so an upgraded binary is never shadowed by a stale cached script.
//! The page is served with a Content-Security-Policy that allows only this origin's scripts,
//! styles and connections, and no remote images: text the model writes can neither load
//! anything from elsewhere nor send anything there, even if it slipped past the page's
//! sanitiser.

use std::collections::HashMap;
use std::sync::OnceLock;

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

include!(concat!(env!("OUT_DIR"), "/assets.rs"));

/// `/` of a build without `web/index.html` (user-facing).
pub const NO_PAGE: &str = "<!doctype html><meta charset=utf-8><title>Podcode</title>\
<p>The Podcode server is running. This build has no web page; the API is described at \
<a href=\"/openapi.json\">/openapi.json</a>.</p>";

/// Only this origin: scripts, styles, API calls and the event stream; images from here or
/// inline `data:` only; no frames, no plugins, no form posts elsewhere.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; \
base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The page's routes on their own (the server mounts `index` and `asset` itself).
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(index))
        .route("/assets/{*path}", get(asset))
}

/// The embedded file at `path` relative to `web/` (`index.html`, `assets/app.mjs`).
pub fn file(path: &str) -> Option<&'static [u8]> {
    ASSETS.iter().find(|(p, _)| *p == path).map(|(_, b)| *b)
}

/// Bytes of the whole page (index, styles, scripts, vendored code), for the report.
pub fn total_size() -> usize {
    ASSETS.iter().map(|(_, b)| b.len()).sum()
}

/// The `Content-Type` for an asset path, by extension.
pub fn content_type(path: &str) -> &'static str {
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

/// `GET /`: the web page.
pub async fn index(headers: HeaderMap) -> Response {
    let mut res = match file("index.html") {
        Some(bytes) => serve("index.html", bytes, &headers),
        None => serve("index.html", NO_PAGE.as_bytes(), &headers),
    };
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    res
}

/// `GET /assets/{path}`: one embedded file of the web page.
pub async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    let path = format!("assets/{path}");
    match file(&path) {
        Some(bytes) => serve(&path, bytes, &headers),
        None => (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "not found",
        )
            .into_response(),
    }
}

fn serve(path: &str, bytes: &'static [u8], req: &HeaderMap) -> Response {
    let tag = etag(bytes);
    let fresh = req
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag));
    let common = [
        // Revalidate each time: a new binary may ship a new page under the same names.
        (header::CACHE_CONTROL, "no-cache"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
    ];
    let Ok(tag_value) = HeaderValue::from_str(&tag) else {
        return (common, [(header::CONTENT_TYPE, content_type(path))], bytes).into_response();
    };
    if fresh {
        return (
            StatusCode::NOT_MODIFIED,
            common,
            [(header::ETAG, tag_value)],
        )
            .into_response();
    }
    (
        common,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static(content_type(path)),
            ),
            (header::ETAG, tag_value),
        ],
        bytes,
    )
        .into_response()
}

/// A strong validator of a file's bytes (FNV-1a and length), computed once per file.
fn etag(bytes: &'static [u8]) -> String {
    static TAGS: OnceLock<HashMap<usize, String>> = OnceLock::new();
    let key = bytes.as_ptr() as usize;
    if let Some(t) = TAGS
        .get_or_init(|| {
            ASSETS
                .iter()
                .map(|(_, b)| (b.as_ptr() as usize, fnv(b)))
                .collect()
        })
        .get(&key)
    {
        return t.clone();
    }
    fnv(bytes)
}

fn fnv(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("\"{h:016x}-{:x}\"", bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_embedded_and_tags_differ_per_file() {
        assert!(file("index.html").is_some());
        assert!(file("assets/app.mjs").is_some());
        assert!(file("assets/vendor/vendor.mjs").is_some());
        let a = etag(file("assets/app.mjs").unwrap_or_default());
        let b = etag(file("assets/app.css").unwrap_or_default());
        assert_ne!(a, b);
        assert_eq!(a, etag(file("assets/app.mjs").unwrap_or_default()));
    }
}
