//! The dashboard's files over HTTP: the page at `/`, its policy and caching headers, compression, and what
//! is not served. What the page does in a browser is `browser.rs`.

use crossbook_server::{config::Role, dashboard::CSP};
use crossbook_store::testing::sqlite_database;

use crate::util::TestApp;

#[tokio::test]
async fn the_page_and_its_files_are_served_with_the_policy() {
    let db = sqlite_database().await;
    db.store.migrate().await.unwrap();
    let app = TestApp::new(&db, |_| {});

    let page = app.get("/").await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(page.header("content-security-policy"), Some(CSP));
    assert!(
        CSP.contains("script-src 'self'") && CSP.contains("connect-src 'self'"),
        "{CSP}"
    );
    assert!(!CSP.contains("unsafe"), "{CSP}");
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    assert!(
        page.text
            .contains(r#"<script type="module" src="/ui/js/app.js"></script>"#),
        "{}",
        page.text
    );

    // Every file the page names is served, with its type, an ETag and the policy.
    for (path, mime) in [
        ("/ui/js/app.js", "text/javascript; charset=utf-8"),
        ("/ui/app.css", "text/css; charset=utf-8"),
        ("/ui/vendor/uPlot.iife.min.js", "text/javascript; charset=utf-8"),
        ("/ui/vendor/uPlot.LICENSE", "text/plain; charset=utf-8"),
        ("/ui/favicon.svg", "image/svg+xml"),
    ] {
        let r = app.get(path).await;
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("content-type"), Some(mime), "{path}");
        assert_eq!(r.header("content-security-policy"), Some(CSP), "{path}");
        assert_eq!(r.header("cache-control"), Some("no-cache"), "{path}");
        assert!(r.header("etag").is_some_and(|e| e.starts_with('"')), "{path}");
        assert!(
            r.header("content-encoding").is_none(),
            "{path}: compressed without being asked"
        );
    }
    let license = app.get("/ui/vendor/uPlot.LICENSE").await;
    assert!(license.text.contains("The MIT License"), "{}", license.text);

    // Revalidation: the same ETag answers 304 without a body.
    let js = app.get("/ui/js/app.js").await;
    let etag = js.header("etag").unwrap().to_string();
    let again = app.get_with("/ui/js/app.js", &[("if-none-match", &etag)]).await;
    assert_eq!(again.status, 304);
    assert!(again.text.is_empty());
    assert_eq!(again.header("etag"), Some(etag.as_str()));
    let other = app.get_with("/ui/js/app.js", &[("if-none-match", "\"0000\"")]).await;
    assert_eq!(other.status, 200);

    // Compression when accepted.
    let gz = app
        .get_with("/ui/vendor/uPlot.iife.min.js", &[("accept-encoding", "br, gzip;q=0.8")])
        .await;
    assert_eq!(gz.status, 200);
    assert_eq!(gz.header("content-encoding"), Some("gzip"));
    assert_eq!(gz.header("vary"), Some("Accept-Encoding"));
    let plain = app.get("/ui/vendor/uPlot.iife.min.js").await;
    let gz_len: usize = gz.header("content-length").unwrap().parse().unwrap();
    assert!(
        gz_len * 2 < plain.text.len(),
        "gzip {gz_len} against {} plain",
        plain.text.len()
    );
    let svg = app.get_with("/ui/favicon.svg", &[("accept-encoding", "gzip")]).await;
    assert!(svg.header("content-encoding").is_none(), "images are sent as they are");

    // Anything else under /ui/ is a 404 in the API's error body; index.html has one address, `/`.
    for path in ["/ui/nope.js", "/ui/index.html", "/ui/js/../app.css", "/ui/"] {
        let r = app.get(path).await;
        r.error(404, "not_found", None);
    }
    // HEAD works as GET without a body.
    let head = app
        .send(axum::http::Method::HEAD, "/", &[], axum::body::Body::empty())
        .await;
    assert_eq!(head.status, 200);
    assert!(head.text.is_empty());
    // Not a form target.
    let post = app
        .send(axum::http::Method::POST, "/", &[], axum::body::Body::empty())
        .await;
    post.error(405, "method_not_allowed", None);
}

/// A process that only ingests serves no API, so no page either.
#[tokio::test]
async fn an_ingest_only_process_serves_no_dashboard() {
    let db = sqlite_database().await;
    db.store.migrate().await.unwrap();
    let app = TestApp::new(&db, |c| c.role = Role::Ingest);
    app.get("/").await.error(404, "not_found", None);
    app.get("/ui/js/app.js").await.error(404, "not_found", None);
}
