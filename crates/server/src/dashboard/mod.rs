//! The web dashboard: a page at `/` that shows the live stream, markets, the arbitrage history and the
//! caller's webhooks, built only on the public API.
//!
//! The page is plain HTML, CSS and JavaScript modules in `assets/`, compiled into the binary with
//! `include_bytes!`: no Node build step, no CDN, nothing fetched from anywhere but this service. Plain files
//! were chosen over server-rendered templates because every panel is fed by the API and the stream anyway: the
//! page is a client of the API like any other, so it follows the API's plan gating, masking and errors by
//! construction, and the server keeps no second rendering path to maintain. The one library is uPlot
//! (`assets/vendor/`, MIT, its licence beside it) for the depth and price charts.
//!
//! Every dashboard response carries a Content-Security-Policy that allows scripts, styles, images and
//! connections from this origin only ([`CSP`]). Assets are served with an `ETag` (revalidated on every load, so
//! an upgraded binary shows its new page at once) and gzip-compressed when the browser accepts it.

use std::sync::LazyLock;

use axum::{
    Router,
    extract::Path,
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};
use sha2::{Digest, Sha256};

use crate::{AppState, error::ApiError};

/// The policy of every dashboard response: this origin only, no inline script or style, no frames, no
/// plugins. `connect-src 'self'` covers the page's `fetch` calls and its WebSocket to `/v1/stream` (a
/// same-origin `ws:`/`wss:` URL matches `'self'`).
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                       connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; \
                       frame-ancestors 'none'";

/// Path prefix of the assets.
pub const ASSET_PREFIX: &str = "/ui/";

/// One compiled-in file.
struct Asset {
    path: &'static str,
    mime: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $mime:expr) => {
        Asset {
            path: $path,
            mime: $mime,
            body: include_bytes!(concat!("assets/", $path)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// Every file of the page. `index.html` is served at `/`, the others under [`ASSET_PREFIX`].
const ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("app.css", CSS),
    asset!("favicon.svg", "image/svg+xml"),
    asset!("js/app.js", JS),
    asset!("js/api.js", JS),
    asset!("js/dom.js", JS),
    asset!("js/stream.js", JS),
    asset!("js/charts.js", JS),
    asset!("js/live.js", JS),
    asset!("js/market.js", JS),
    asset!("js/history.js", JS),
    asset!("js/backtests.js", JS),
    asset!("js/keys.js", JS),
    asset!("js/opportunity.js", JS),
    asset!("vendor/uPlot.iife.min.js", JS),
    asset!("vendor/uPlot.min.css", CSS),
    asset!("vendor/uPlot.LICENSE", "text/plain; charset=utf-8"),
];

/// An asset ready to serve: its strong `ETag` and, for text, its gzip-compressed body.
struct Prepared {
    asset: &'static Asset,
    etag: HeaderValue,
    gzip: Option<Vec<u8>>,
}

/// Prepared once, on the first dashboard request (a few milliseconds for ~120 KB).
static PREPARED: LazyLock<Vec<Prepared>> = LazyLock::new(|| ASSETS.iter().map(prepare).collect());

fn prepare(asset: &'static Asset) -> Prepared {
    let digest = Sha256::digest(asset.body);
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let etag = HeaderValue::from_str(&format!("\"{hex}\"")).expect("hex is a valid header value");
    let gzip = (!asset.mime.starts_with("image/")).then(|| gzip(asset.body));
    Prepared { asset, etag, gzip }
}

fn gzip(body: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(body).expect("writing to a Vec cannot fail");
    enc.finish().expect("writing to a Vec cannot fail")
}

/// The dashboard's routes: the page at `/` and its assets. No key is needed to load the page; the key the
/// user enters is kept in the browser and sent by the page with each API call.
pub fn router() -> Router<AppState> {
    Router::new().route("/", get(index)).route("/ui/{*path}", get(asset))
}

async fn index(headers: HeaderMap) -> Response {
    serve("index.html", &headers)
}

async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    if path == "index.html" {
        return ApiError::not_found(format!("no dashboard file {ASSET_PREFIX}{path}")).into_response();
    }
    serve(&path, &headers)
}

fn serve(path: &str, headers: &HeaderMap) -> Response {
    let Some(p) = PREPARED.iter().find(|p| p.asset.path == path) else {
        return ApiError::not_found(format!("no dashboard file {ASSET_PREFIX}{path}")).into_response();
    };
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == p.etag || t.trim() == "*"));
    let accepts_gzip = headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|e| e.split(';').next().is_some_and(|e| e.trim() == "gzip"))
        });
    let mut resp = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        match (&p.gzip, accepts_gzip) {
            (Some(gz), true) => {
                let mut r = gz.clone().into_response();
                r.headers_mut()
                    .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
                r
            }
            _ => p.asset.body.into_response(),
        }
    };
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(p.asset.mime));
    h.insert(header::ETAG, p.etag.clone());
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file the page names is compiled in, and every compiled-in file is named by some other file, so
    /// neither a broken link nor a dead asset can ship.
    #[test]
    fn every_referenced_asset_exists_and_every_asset_is_referenced() {
        let text: String = ASSETS
            .iter()
            .filter(|a| !a.mime.starts_with("image/"))
            .map(|a| String::from_utf8_lossy(a.body).into_owned())
            .collect();
        for a in ASSETS.iter().filter(|a| a.path != "index.html") {
            let file = a.path.rsplit('/').next().unwrap();
            assert!(
                a.path.ends_with(".LICENSE") || text.contains(file),
                "{} is compiled in but no page file names it",
                a.path
            );
        }
        let index = index_html();
        for part in index.split(ASSET_PREFIX).skip(1) {
            let path = part.split('"').next().unwrap();
            assert!(
                ASSETS.iter().any(|a| a.path == path),
                "index.html names {path}, which is not compiled in"
            );
        }
        for a in ASSETS.iter().filter(|a| a.path.starts_with("js/")) {
            let js = std::str::from_utf8(a.body).unwrap();
            for part in js.split("from './").skip(1) {
                let file = part.split('\'').next().unwrap();
                assert!(
                    ASSETS.iter().any(|x| x.path == format!("js/{file}")),
                    "{} imports {file}, which is not compiled in",
                    a.path
                );
            }
        }
    }

    fn index_html() -> &'static str {
        let index = ASSETS.iter().find(|a| a.path == "index.html").unwrap();
        std::str::from_utf8(index.body).unwrap()
    }

    #[test]
    fn gzip_bodies_inflate_to_the_asset() {
        use std::io::Read;
        for p in PREPARED.iter() {
            let Some(gz) = &p.gzip else { continue };
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(&gz[..]).read_to_end(&mut out).unwrap();
            assert_eq!(out, p.asset.body, "{}", p.asset.path);
            assert!(
                gz.len() < p.asset.body.len() || p.asset.body.len() < 200,
                "{} did not shrink",
                p.asset.path
            );
        }
    }

    /// The page keeps to the policy: no inline script, no inline style attribute, no handler attribute and no
    /// address of another origin.
    #[test]
    fn the_page_needs_nothing_the_policy_forbids() {
        let index = index_html();
        assert!(!index.contains("style="), "inline style in index.html");
        assert!(!index.contains("<style"), "style element in index.html");
        let handler = index.split(" on").skip(1).any(|rest| {
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
            !name.is_empty() && rest[name.len()..].starts_with('=')
        });
        assert!(!handler, "a handler attribute in index.html");
        for part in index.split("<script").skip(1) {
            assert!(
                part.split('>').next().unwrap().contains("src=\"/ui/"),
                "inline script in index.html"
            );
        }
        for a in ASSETS
            .iter()
            .filter(|a| a.path.starts_with("js/") || a.path == "index.html")
        {
            let text = std::str::from_utf8(a.body).unwrap();
            assert!(!text.contains("innerHTML"), "{} writes HTML from strings", a.path);
            assert!(!text.contains("eval("), "{} evaluates strings", a.path);
            assert!(!text.contains("://"), "{} names an address of another origin", a.path);
        }
    }
}
