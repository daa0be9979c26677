//! The web page's files, embedded in the binary at build time (`include_bytes!` of
//! `crates/server/web/`), and the two routes that serve them: `GET /` (index.html) and
//! `GET /assets/{path}`. Neither needs the token: the files hold no data, the page asks for
//! the token itself and sends it with every API call.
//!
//! Every response carries its content type, `nosniff`, and an `ETag` of its bytes with
//! `Cache-Control: no-cache`: the browser keeps its copy and revalidates it (a `304` with no
//! body), so an upgraded binary is never shadowed by a stale cached script. The page itself
//! is served with a Content-Security-Policy that allows only this origin's scripts, styles
//! and connections, and no remote images: text the model writes cannot load anything from
//! elsewhere or send anything there, even if it slipped past the page's sanitiser.

use std::collections::HashMap;
use std::sync::OnceLock;

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// One embedded file.
pub struct Asset {
    /// The path under `/assets/` (`""` for the page itself).
    pub path: &'static str,
    pub content_type: &'static str,
    pub body: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $ty:expr) => {
        Asset {
            path: $path,
            content_type: $ty,
            body: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/web/assets/", $path)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

/// The files under `web/assets/` (a new file is one more line here).
pub static ASSETS: &[Asset] = &[
    asset!("app.css", "text/css; charset=utf-8"),
    asset!("app.mjs", JS),
    asset!("api.mjs", JS),
    asset!("render.mjs", JS),
    asset!("transcript.mjs", JS),
    asset!("permissions.mjs", JS),
    asset!("changes.mjs", JS),
    asset!("vendor/vendor.mjs", JS),
];

/// The page: `GET /`.
pub static INDEX: Asset = Asset {
    path: "",
    content_type: "text/html; charset=utf-8",
    body: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/web/index.html")),
};

/// Only this origin: scripts, styles, API calls and the event stream; images from here or
/// inline `data:` only; no frames, no plugins, no form posts elsewhere.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; \
    base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The routes of the page, to merge into the server's router.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(index))
        .route("/assets/{*path}", get(asset))
}

/// The embedded file at `path` under `/assets/`, if there is one.
pub fn find(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.path == path)
}

/// Bytes of the whole page (index, styles, scripts, vendored code), for the report.
pub fn total_size() -> usize {
    INDEX.body.len() + ASSETS.iter().map(|a| a.body.len()).sum::<usize>()
}

async fn index(headers: HeaderMap) -> Response {
    let mut res = serve(&INDEX, &headers);
    if let Ok(csp) = HeaderValue::from_str(CONTENT_SECURITY_POLICY) {
        res.headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    res.headers_mut().insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    res
}

async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    match find(&path) {
        Some(a) => serve(a, &headers),
        None => (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "no such asset",
        )
            .into_response(),
    }
}

fn serve(a: &'static Asset, req: &HeaderMap) -> Response {
    let tag = etag(a);
    let fresh = req
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag));
    let common = [
        (header::CACHE_CONTROL, "no-cache"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::ETAG, tag),
    ];
    if fresh {
        return (StatusCode::NOT_MODIFIED, common).into_response();
    }
    (common, [(header::CONTENT_TYPE, a.content_type)], a.body).into_response()
}

/// A strong validator of the file's bytes (FNV-1a, computed once per file).
fn etag(a: &'static Asset) -> &'static str {
    static TAGS: OnceLock<HashMap<&'static str, String>> = OnceLock::new();
    let tags = TAGS.get_or_init(|| {
        std::iter::once(&INDEX)
            .chain(ASSETS.iter())
            .map(|a| {
                let mut h: u64 = 0xcbf2_9ce4_8422_2325;
                for b in a.body {
                    h ^= u64::from(*b);
                    h = h.wrapping_mul(0x0100_0000_01b3);
                }
                (a.path, format!("\"{h:016x}-{:x}\"", a.body.len()))
            })
            .collect()
    });
    tags.get(a.path).map_or("\"0\"", String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_under_web_assets_is_embedded() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("web/assets");
        let mut on_disk = Vec::new();
        let mut dirs = vec![root.clone()];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).expect("read web/assets") {
                let p = e.expect("entry").path();
                if p.is_dir() {
                    dirs.push(p);
                } else {
                    let rel = p.strip_prefix(&root).expect("under root");
                    on_disk.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        on_disk.sort();
        let mut embedded: Vec<String> = ASSETS.iter().map(|a| a.path.to_string()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded, "add the new file to ASSETS in assets.rs");
    }

    #[test]
    fn tags_differ_per_file_and_are_stable() {
        let a = etag(&ASSETS[0]);
        let b = etag(&ASSETS[1]);
        assert_ne!(a, b);
        assert_eq!(a, etag(&ASSETS[0]));
        assert_ne!(etag(&INDEX), a);
    }
}
